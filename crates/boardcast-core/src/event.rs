//! What the reconstructor tells the rest of the daemon: game events, each
//! with the game it belongs to and a per-game sequence number.
//!
//! A move is never emitted twice. A made move that changes before it is
//! completed is *amended* or *retracted* explicitly, so every consumer can
//! follow the game by applying events in `seq` order.

use shakmaty::{Chess, Color, EnPassantMode, Position, Square, fen::Fen};

use crate::{
    alert::Alert,
    game::{GameResult, Notation},
    time::Timestamp,
};

/// One event.
#[derive(Clone, Debug)]
pub struct Event {
    /// Which game on this board (1 for the first).
    pub game: u32,
    /// Position of this event in the game's sequence, from 1.
    pub seq: u64,
    /// When it happened, in the session's time.
    pub t: Timestamp,
    /// What happened.
    pub kind: EventKind,
}

/// What happened.
#[derive(Clone, Debug)]
pub enum EventKind {
    /// A game started from `start`.
    GameStarted {
        /// The start position.
        start: Box<Chess>,
        /// Whether the game is Chess960.
        chess960: bool,
        /// Whether the board is turned 180° (and its squares are mapped).
        rotated: bool,
    },
    /// The board shows a new move (provisional until completed).
    MoveMade(MoveInfo),
    /// A move was completed (clock pressed, next move made, game over).
    MoveCompleted {
        /// The ply (1-based).
        ply: usize,
        /// The mover's remaining time after the move, if the clock was read.
        clock_ms: Option<u64>,
    },
    /// A made move was replaced by another before it was completed, or the
    /// operator corrected a move (the piece a pawn was promoted to, which an
    /// occupancy-only board cannot see, and each later move that changes
    /// with it).
    MoveAmended {
        /// The move that is no longer played.
        previous: Box<MoveInfo>,
        /// The move played instead (same ply).
        now: Box<MoveInfo>,
    },
    /// A made move was taken back before it was completed.
    MoveRetracted {
        /// The move taken back.
        previous: MoveInfo,
    },
    /// A clock reading changed.
    Clock(ClockState),
    /// The board's relation to the game changed.
    Status(BoardStatus),
    /// An arbiter alert.
    Alert(Box<Alert>),
    /// The game has a result (again, when the operator corrects it).
    GameEnded(GameResult),
    /// The game on the board was closed by the operator, with no result if
    /// it had none; the board waits for the next game.
    GameClosed,
    /// The game's PGN tags changed (the operator set players, the round …);
    /// these are all its tags now.
    TagsChanged(Vec<(String, String)>),
    /// The operator acknowledged an alert.
    AlertAcknowledged {
        /// The alert's game.
        game: u32,
        /// The alert's seq.
        seq: u64,
    },
}

/// A move as published.
#[derive(Clone, Debug)]
pub struct MoveInfo {
    /// The ply (1-based).
    pub ply: usize,
    /// Who moved.
    pub(crate) mover: Color,
    /// Standard English SAN.
    pub(crate) san: Notation,
    /// UCI, when the move is legal or its squares are known.
    pub uci: String,
    /// The position after the move.
    pub after: Box<Chess>,
    /// Filled in from a later board rather than seen (rules.md R10).
    pub inferred: bool,
    /// Filled in with other plies whose order the board did not show (the
    /// same moves in another order reach the same position).
    pub(crate) order_uncertain: bool,
}

impl MoveInfo {
    /// The FEN after the move.
    pub fn fen(&self) -> String {
        Fen::from_position(&*self.after, EnPassantMode::Legal).to_string()
    }

    /// Whether this is an illegal move that stood (A.5.2).
    pub fn illegal(&self) -> bool {
        matches!(self.san, Notation::Illegal(_))
    }
}

/// Remaining times by colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockState {
    /// White's remaining time in milliseconds.
    pub(crate) white_ms: u64,
    /// Black's remaining time in milliseconds.
    pub(crate) black_ms: u64,
    /// Whose clock runs; `None` when stopped.
    pub(crate) running: Option<Color>,
}

/// How the physical board relates to the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardStatus {
    /// No game is in progress; the daemon waits for a start position.
    AwaitingStart,
    /// The board shows the game position (pieces may be in the air).
    InSync,
    /// The board shows something no legal move explains.
    OutOfSync {
        /// The squares where board and game differ.
        squares: Vec<Square>,
    },
}

impl BoardStatus {
    /// `"awaiting_start"`, `"in_sync"` or `"out_of_sync"`.
    pub const fn name(&self) -> &'static str {
        match self {
            Self::AwaitingStart => "awaiting_start",
            Self::InSync => "in_sync",
            Self::OutOfSync { .. } => "out_of_sync",
        }
    }
}

impl std::fmt::Display for MoveInfo {
    /// `12... Nf6 (g8f6)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let number = self.after.fullmoves().get() - u32::from(self.mover == Color::Black);
        let dots = if self.mover == Color::White { "." } else { "..." };
        write!(f, "{number}{dots} {} ({})", self.san, self.uci)?;
        if self.order_uncertain {
            f.write_str(" inferred, order uncertain")?;
        } else if self.inferred {
            f.write_str(" inferred")?;
        }
        Ok(())
    }
}

impl std::fmt::Display for Event {
    /// One readable line: `game 1 #7 12.345s made 4. Nf3 (g1f3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "game {} #{} {} ", self.game, self.seq, self.t)?;
        match &self.kind {
            EventKind::GameStarted { start, chess960, rotated } => {
                write!(f, "game started from {}", Fen::from_position(&**start, EnPassantMode::Legal))?;
                if *chess960 {
                    f.write_str(" (Chess960)")?;
                }
                if *rotated {
                    f.write_str(" (board turned 180°)")?;
                }
                Ok(())
            }
            EventKind::MoveMade(m) => write!(f, "made {m}"),
            EventKind::MoveCompleted { ply, clock_ms: Some(ms) } => {
                write!(f, "completed ply {ply}, clock {}", clock_text(*ms))
            }
            EventKind::MoveCompleted { ply, clock_ms: None } => write!(f, "completed ply {ply}"),
            EventKind::MoveAmended { previous, now } => write!(f, "amended {previous} to {now}"),
            EventKind::MoveRetracted { previous } => write!(f, "retracted {previous}"),
            EventKind::Clock(c) => {
                let running = match c.running {
                    Some(Color::White) => "white runs",
                    Some(Color::Black) => "black runs",
                    None => "stopped",
                };
                write!(f, "clock white {} black {} {running}", clock_text(c.white_ms), clock_text(c.black_ms))
            }
            EventKind::Status(BoardStatus::OutOfSync { squares }) => {
                let squares: Vec<String> = squares.iter().map(ToString::to_string).collect();
                write!(f, "board out of sync ({})", squares.join(" "))
            }
            EventKind::Status(status) => write!(f, "board {}", status.name()),
            EventKind::Alert(alert) => write!(f, "alert {alert}"),
            EventKind::GameEnded(result) => {
                write!(f, "game ended {} ({})", result.pgn(), result.termination.describe())
            }
            EventKind::GameClosed => f.write_str("game closed by the operator"),
            EventKind::TagsChanged(tags) => {
                let tags: Vec<String> = tags.iter().map(|(k, v)| format!("{k} {v:?}")).collect();
                write!(f, "tags now {}", tags.join(", "))
            }
            EventKind::AlertAcknowledged { game, seq } => write!(f, "alert game {game} #{seq} acknowledged"),
        }
    }
}

/// `h:mm:ss` for a remaining time.
pub(crate) fn clock_text(ms: u64) -> String {
    let secs = ms / 1000;
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}
