//! The phases of a board's games, and the game being played: its record
//! with what judging the board against it needs to remember, and what
//! changes only the game. The reconstructor holds a [`Phase`]; code that
//! needs a game in progress gets it from there, rather than checking a
//! flag beside an optional game.

use shakmaty::{Bitboard, ByColor, Color, KnownOutcome, Position};

use super::{config::ReconstructorConfig, gesture, known::Known, occupancy, play};
use crate::{
    event::{BoardStatus, ClockState, EventKind, MoveInfo},
    game::{GameRecord, GameResult, IllegalMove, MoveStatus, end::Claimable},
    sensor::Picture,
    time::Timestamp,
};

/// Where the board is in its games. The phase says what the board is
/// watched for, so a game that has ended is not judged for moves, and code
/// that needs a game in progress gets one from [`Phase::playing_mut`]
/// rather than checking a flag beside it.
#[derive(Debug)]
pub(super) enum Phase {
    /// No game yet, or the last one closed by the operator: the board is
    /// watched for a start position.
    Waiting,
    /// A game in progress: the board is judged against it.
    Playing(Game),
    /// The game has a result. It stays the board's current game (it may
    /// still be corrected, or reopened by a take-back) until the next one
    /// starts; the board is only watched for the result gesture and the
    /// next game's set-up.
    Over(Game),
}

impl Phase {
    /// The current game, in progress or over.
    pub(super) fn game(&self) -> Option<&Game> {
        match self {
            Self::Waiting => None,
            Self::Playing(game) | Self::Over(game) => Some(game),
        }
    }

    pub(super) fn game_mut(&mut self) -> Option<&mut Game> {
        match self {
            Self::Waiting => None,
            Self::Playing(game) | Self::Over(game) => Some(game),
        }
    }

    /// The game in progress.
    pub(super) fn playing(&self) -> Option<&Game> {
        match self {
            Self::Playing(game) => Some(game),
            _ => None,
        }
    }

    pub(super) fn playing_mut(&mut self) -> Option<&mut Game> {
        match self {
            Self::Playing(game) => Some(game),
            _ => None,
        }
    }

    /// Whether the current game has ended.
    pub(super) fn is_over(&self) -> bool {
        matches!(self, Self::Over(_))
    }

    /// Takes the current game away, leaving the board waiting.
    pub(super) fn take_game(&mut self) -> Option<Game> {
        match std::mem::replace(self, Self::Waiting) {
            Self::Waiting => None,
            Self::Playing(game) | Self::Over(game) => Some(game),
        }
    }

    /// The game in progress has ended.
    pub(super) fn end(&mut self) {
        if let Self::Playing(game) = std::mem::replace(self, Self::Waiting) {
            *self = Self::Over(game);
        }
    }

    /// The game that had ended is in progress again.
    pub(super) fn reopen(&mut self) {
        if let Self::Over(game) = std::mem::replace(self, Self::Waiting) {
            *self = Self::Playing(game);
        }
    }
}

/// A game on the board: its record, and what judging the board against it
/// needs to remember.
#[derive(Debug)]
pub(super) struct Game {
    pub(super) record: GameRecord,
    /// The game position with its legal moves, kept in step with `record`.
    pub(super) known: Known,
    /// The game started from a wrong initial position (7.2.1).
    pub(super) wrong_start: bool,
    /// Squares where the picture differs from the game position.
    pub(super) diff: Bitboard,
    /// The settled board has shown nothing the game explains since then.
    pub(super) unexplained_since: Option<Timestamp>,
    /// What the daemon last published about the board.
    pub(super) status: BoardStatus,
    /// The result gesture, since when.
    pub(super) gesture: Option<(Timestamp, KnownOutcome)>,
    /// The unexplained board (since when) whose out-of-sync verdict is
    /// held until then: a result gesture may be under way.
    pub(super) held: Option<(Timestamp, Timestamp)>,
    /// Completed illegal moves per player (7.5.5).
    pub(super) illegal: ByColor<u32>,
    /// A completed illegal move has not been put right on the board yet.
    pub(super) illegal_unresolved: bool,
    /// After a completed illegal move (or a press without a move) by one
    /// player, the opponent whose clock then runs: the next press by that
    /// opponent, before the offender presses again, sets the clock running
    /// for the offender again (the correction, 7.5.1) and is not judged.
    pub(super) restoring_press: Option<Color>,
    /// Flags fallen per player: the n-th ends the n-th period.
    pub(super) flags: ByColor<u32>,
    /// An illegal move completed in rapid or blitz, kept in case the
    /// opponent answers it and it stands (A.5.2).
    pub(super) standing: Option<Standing>,
    /// The board picture last alerted as ambiguous (R10), not to repeat it.
    pub(super) ambiguous: Option<Picture>,
    /// Claimable draws already announced for the current position.
    pub(super) claims: Vec<Claimable>,
    /// The ply count at which an irregular position (A.5.4) was first seen.
    pub(super) irregular_at: Option<usize>,
    /// The move under way.
    pub(super) pending: PendingMove,
    /// What only an occupancy board needs to read the game.
    pub(super) readings: occupancy::Readings,
}

/// The move under way, from the first sight of it on the board to its
/// completion (6.2.1): until then it may still change, and what it was
/// made from, what it replaced and what pressed for it is kept here. Most
/// of it goes once the move is completed or the game position changes.
#[derive(Debug, Default)]
pub(super) struct PendingMove {
    /// A move the board showed but that was left to settle (a piece that
    /// could have been on its way): evidence for telling apart sequences
    /// that reach the same board (R10).
    /// Not boxed, unlike `before`: it is set for many moves (a piece
    /// sliding, a pawn pushed one square), and a box would be allocated for
    /// each.
    pub(super) seen: Option<(shakmaty::Move, Known)>,
    /// The position before the last ply with its legal moves, while that
    /// ply is only made (to tell a changed move from a new one).
    pub(super) before: Option<Box<Known>>,
    /// The move last taken back before completion, with its ply number: a
    /// different move then made for the same ply breaks 4.7.
    pub(super) retracted: Option<(usize, MoveInfo, Timestamp)>,
    /// A clock press waiting for its move to appear on the board.
    pub(super) press: Option<Press>,
    /// Without a clock: when the made move counts as completed. While lines
    /// are followed (`occupancy.rs`), with or without a clock: when no
    /// piece can still be in a hand.
    pub(super) quiet_at: Option<Timestamp>,
}

/// A clock press not yet matched to a move.
#[derive(Clone, Copy, Debug)]
pub(super) struct Press {
    pub(super) by: Color,
    pub(super) at: Timestamp,
    pub(super) deadline: Timestamp,
    pub(super) clock: ClockState,
}

/// An illegal move that stands if the opponent answers it (A.5.2).
#[derive(Clone, Debug)]
pub(super) struct Standing {
    pub(super) at: Timestamp,
    pub(super) mv: IllegalMove,
    pub(super) position: Known,
    pub(super) clock: ClockState,
}

impl Game {
    /// When the unexplained board is published as out of sync (and its
    /// displaced pieces alerted). Not while the result gesture is being
    /// held; and a king put on a centre square may be the first half of
    /// the gesture, whose second king comes once the players have cleared
    /// the square: such a board gets `gesture_hold` more before anyone is
    /// blamed. A king really displaced is still alerted then.
    /// The hold only ever grows, so the deadline never moves into the past.
    pub(super) fn out_of_sync_due(&self, config: &ReconstructorConfig) -> Option<Timestamp> {
        let since = self.unexplained_since?;
        if self.gesture.is_some() {
            return None;
        }
        let due = since + config.out_of_sync_after;
        let held = self.held.filter(|&(s, _)| s == since).map(|(_, until)| until);
        Some(held.map_or(due, |until| until.max(due)))
    }

    /// Holds the out-of-sync verdict on the current unexplained board until
    /// at least `until`.
    pub(super) fn hold_out_of_sync(&mut self, until: Timestamp) {
        let Some(since) = self.unexplained_since else { return };
        let held = self.held.filter(|&(s, _)| s == since).map_or(until, |(_, t)| t.max(until));
        self.held = Some((since, held));
    }

    /// A king stands on a centre square where the game has none: possibly
    /// the first half of the result gesture. (On an occupancy board: a
    /// centre square the game has empty is filled, and a king's square is
    /// empty.)
    pub(super) fn king_on_centre(&self, picture: &Picture) -> bool {
        if !picture.unknown().is_empty() {
            let kings = self.known.pos.board().kings();
            let king_gone = (kings & self.diff).into_iter().any(|sq| picture.get(sq) == crate::sensor::Cell::Empty);
            let centre_filled =
                gesture::centre().any(|sq| self.diff.contains(sq) && picture.get(sq) != crate::sensor::Cell::Empty);
            return king_gone && centre_filled;
        }
        gesture::centre().any(|sq| {
            self.diff.contains(sq)
                && matches!(picture.get(sq), crate::sensor::Cell::Piece(p) if p.role == shakmaty::Role::King)
        })
    }

    /// Brings `known` and `diff` in step with the record after it changed.
    pub(super) fn resync(&mut self, picture: &Picture) {
        if self.known.pos != *self.record.position() {
            self.known = Known::new(self.record.position().clone());
        }
        self.diff = picture.diff(self.known.pos.board());
    }

    /// Completes the last ply if it is only made, with the mover's clock if
    /// a press completed it: the event to publish when it was only made.
    pub(super) fn complete_last(&mut self, now: Timestamp, press: Option<ClockState>) -> Option<EventKind> {
        let index = self.record.plies.len();
        let ply = self.record.plies.last_mut()?;
        if let Some(clock) = press {
            ply.pressed_at = Some(now);
            ply.clock_ms = Some(if ply.mover == Color::White { clock.white_ms } else { clock.black_ms });
        }
        if ply.status != MoveStatus::Made {
            return None;
        }
        ply.status = MoveStatus::Completed;
        ply.completed_at = Some(now);
        self.pending.quiet_at = None;
        Some(EventKind::MoveCompleted { ply: index, clock_ms: ply.clock_ms })
    }

    /// Takes the made move back before completion: the move taken back,
    /// to publish.
    pub(super) fn retract(&mut self, picture: &Picture) -> MoveInfo {
        let index = self.record.plies.len() - 1;
        let previous = play::move_info(&self.record, index);
        self.pending.retracted = Some((index + 1, previous.clone(), self.record.plies[index].made_at));
        self.record.pop();
        self.pending.quiet_at = None;
        self.pending.seen = None;
        if let Some(before) = self.pending.before.take() {
            self.known = *before;
        }
        self.resync(picture);
        previous
    }

    /// A move went on the record: what was about the position before it
    /// goes. `quiet_at` is when the move counts as completed without a
    /// clock. Whether the board was out of sync and is back in sync now.
    pub(super) fn after_move(&mut self, picture: &Picture, quiet_at: Option<Timestamp>) -> bool {
        self.resync(picture);
        self.unexplained_since = None;
        self.gesture = None;
        self.ambiguous = None;
        self.pending.seen = None;
        self.standing = None;
        self.illegal_unresolved = false;
        self.pending.quiet_at = quiet_at;
        self.back_in_sync()
    }

    /// The status goes back to in sync; whether it was out of sync (and
    /// the change is to be published).
    pub(super) fn back_in_sync(&mut self) -> bool {
        let was_out = matches!(self.status, BoardStatus::OutOfSync { .. });
        if was_out {
            self.status = BoardStatus::InSync;
        }
        was_out
    }

    /// The operator takes the last ply back: the game goes on from the
    /// position before it, without a result, and with nothing pending,
    /// held or followed. The ply taken back, to publish; `None`, and
    /// nothing changed, if there is none.
    pub(super) fn take_back(&mut self, picture: &Picture) -> Option<MoveInfo> {
        let index = self.record.plies.len().checked_sub(1)?;
        let previous = play::move_info(&self.record, index);
        self.record.pop();
        self.record.result = None;
        self.known = Known::new(self.record.position().clone());
        self.pending = PendingMove::default();
        self.standing = None;
        self.ambiguous = None;
        self.gesture = None;
        self.illegal_unresolved = false;
        self.claims.clear();
        self.readings.lines = None;
        self.resync(picture);
        Some(previous)
    }

    /// The game has a result: nothing is pending or held any more.
    pub(super) fn end(&mut self, result: GameResult) {
        self.record.result = Some(result);
        self.pending.press = None;
        self.pending.quiet_at = None;
        self.unexplained_since = None;
        self.gesture = None;
        self.status = BoardStatus::AwaitingStart;
    }
}
