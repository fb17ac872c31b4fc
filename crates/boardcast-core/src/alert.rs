//! Arbiter alerts: what the daemon saw that an arbiter may need to act on,
//! with the FIDE article, the squares and the sensor evidence.
//!
//! Alerts are evidence, not verdicts: a board cannot see a spoken
//! "j'adoube", a hand that still holds a piece, or who lifted a piece. Every
//! message says what was seen and which article it may concern.

use std::fmt;

use shakmaty::{Color, Square};

use crate::{
    publish::{
        payload::{AlertFields, EvidenceClock, EvidenceFields},
        render::color_name,
    },
    sensor::{Cell, ClockReading},
    time::Timestamp,
};

/// What an alert is about. Each kind has a fixed article (or a stable code
/// where no article applies) and a severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlertKind {
    /// I1, 7.5.1: the clock was pressed on a position no legal move reaches.
    IllegalMove,
    /// I2, A.5.2: the opponent answered an illegal move in rapid or blitz
    /// without adequate supervision; it stands.
    IllegalMoveStands,
    /// I3, 7.5.2: a pawn left on the last rank when the clock was pressed.
    PawnNotReplaced,
    /// I4, 7.5.3: the clock was pressed without a move.
    ClockWithoutMove,
    /// I5, 4.3.1: an own piece that could move was lifted first, then
    /// another piece moved.
    TouchedOwnPiece,
    /// I6, 4.3.2: an opponent's piece that could be captured was lifted
    /// first, then not captured.
    TouchedOpponentPiece,
    /// I7, 4.4.2: the rook was lifted before the king, then castling with it.
    RookBeforeKing,
    /// I8, 4.7: a piece released on a square was moved on before the move
    /// was completed.
    ReleasedPieceMoved,
    /// I9, 7.4.1: a piece of the side not to move left its square.
    DisplacedPiece,
    /// I10, 7.2.1: the initial position is not the start position.
    WrongInitialPosition,
    /// I11, A.5.4: both kings in check or a pawn on its last rank after a
    /// completed move.
    IrregularPosition,
    /// R9: the board shows something no legal move explains.
    OutOfSync,
    /// R10: several move sequences explain the board.
    AmbiguousMoves,
    /// E7, 6.9: a flag fell.
    FlagFallen,
    /// E7, III.3.1: both flags fell and which fell first cannot be told.
    BothFlagsFallen,
    /// C3, 6.4: a flag fell although the period's moves were completed.
    FlagAfterQuota,
    /// E6, 9.2: a threefold repetition can be claimed.
    ThreefoldRepetition,
    /// E6, 9.3: the 50-move rule can be claimed.
    FiftyMoves,
    /// R12: the board is turned 180°.
    RotatedBoard,
    /// R11: the result gesture disagrees with the result already known.
    ResultConflict,
    /// A new game was set up before the previous one had a result.
    GameWithoutResult,
    /// An occupancy-only board cannot tell which piece a pawn was promoted
    /// to; a queen was recorded and the operator should confirm.
    PromotionUnknown,
    /// I13, D.2.9: a visually impaired player's board and the game board
    /// have shown different positions for longer than copying a move takes.
    BoardsDiverge,
    /// I13, D.2.9: the two boards show the same position again.
    BoardsAgree,
    /// R9 after an outage: the board came back from a lost connection
    /// showing a position the moves the daemon can infer do not reach;
    /// moves played meanwhile are missing from the record.
    BoardGap,
}

/// How much an alert matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// Information for the arbiter (a draw that may be claimed, a board
    /// turned around); nothing irregular happened.
    Info,
    /// Something irregular may have happened.
    Irregularity,
}

impl AlertKind {
    /// Every kind, in the order of docs/alerts.md.
    pub const ALL: [Self; 25] = [
        Self::IllegalMove,
        Self::IllegalMoveStands,
        Self::PawnNotReplaced,
        Self::ClockWithoutMove,
        Self::TouchedOwnPiece,
        Self::TouchedOpponentPiece,
        Self::RookBeforeKing,
        Self::ReleasedPieceMoved,
        Self::DisplacedPiece,
        Self::WrongInitialPosition,
        Self::IrregularPosition,
        Self::OutOfSync,
        Self::AmbiguousMoves,
        Self::FlagFallen,
        Self::BothFlagsFallen,
        Self::FlagAfterQuota,
        Self::ThreefoldRepetition,
        Self::FiftyMoves,
        Self::RotatedBoard,
        Self::ResultConflict,
        Self::GameWithoutResult,
        Self::PromotionUnknown,
        Self::BoardsDiverge,
        Self::BoardsAgree,
        Self::BoardGap,
    ];

    /// The kind with this [`code`](Self::code), if any.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The FIDE article, or a stable code where no article applies.
    pub const fn article(self) -> &'static str {
        match self {
            Self::IllegalMove => "7.5.1",
            Self::IllegalMoveStands => "A.5.2",
            Self::PawnNotReplaced => "7.5.2",
            Self::ClockWithoutMove => "7.5.3",
            Self::TouchedOwnPiece => "4.3.1",
            Self::TouchedOpponentPiece => "4.3.2",
            Self::RookBeforeKing => "4.4.2",
            Self::ReleasedPieceMoved => "4.7",
            Self::DisplacedPiece => "7.4.1",
            Self::WrongInitialPosition => "7.2.1",
            Self::IrregularPosition => "A.5.4",
            Self::OutOfSync => "out_of_sync",
            Self::AmbiguousMoves => "ambiguous_moves",
            Self::FlagFallen => "6.9",
            Self::BothFlagsFallen => "III.3.1",
            Self::FlagAfterQuota => "6.4",
            Self::ThreefoldRepetition => "9.2",
            Self::FiftyMoves => "9.3",
            Self::RotatedBoard => "rotated_board",
            Self::ResultConflict => "result_conflict",
            Self::GameWithoutResult => "game_without_result",
            Self::PromotionUnknown => "promotion_unknown",
            Self::BoardsDiverge | Self::BoardsAgree => "D.2.9",
            Self::BoardGap => "board_gap",
        }
    }

    /// A stable snake-case name.
    pub const fn code(self) -> &'static str {
        match self {
            Self::IllegalMove => "illegal_move",
            Self::IllegalMoveStands => "illegal_move_stands",
            Self::PawnNotReplaced => "pawn_not_replaced",
            Self::ClockWithoutMove => "clock_without_move",
            Self::TouchedOwnPiece => "touched_own_piece",
            Self::TouchedOpponentPiece => "touched_opponent_piece",
            Self::RookBeforeKing => "rook_before_king",
            Self::ReleasedPieceMoved => "released_piece_moved",
            Self::DisplacedPiece => "displaced_piece",
            Self::WrongInitialPosition => "wrong_initial_position",
            Self::IrregularPosition => "irregular_position",
            Self::OutOfSync => "out_of_sync",
            Self::AmbiguousMoves => "ambiguous_moves",
            Self::FlagFallen => "flag_fallen",
            Self::BothFlagsFallen => "both_flags_fallen",
            Self::FlagAfterQuota => "flag_after_quota",
            Self::ThreefoldRepetition => "threefold_repetition",
            Self::FiftyMoves => "fifty_moves",
            Self::RotatedBoard => "rotated_board",
            Self::ResultConflict => "result_conflict",
            Self::GameWithoutResult => "game_without_result",
            Self::PromotionUnknown => "promotion_unknown",
            Self::BoardsDiverge => "boards_diverge",
            Self::BoardsAgree => "boards_agree",
            Self::BoardGap => "board_gap",
        }
    }

    /// Whether the alert reports an irregularity or only informs.
    pub const fn severity(self) -> Severity {
        match self {
            Self::ThreefoldRepetition
            | Self::FiftyMoves
            | Self::RotatedBoard
            | Self::GameWithoutResult
            | Self::BoardsAgree => Severity::Info,
            _ => Severity::Irregularity,
        }
    }
}

impl Severity {
    /// `"info"` or `"irregularity"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Irregularity => "irregularity",
        }
    }
}

/// One alert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alert {
    /// What it is about.
    pub kind: AlertKind,
    /// Half-moves completed in the record when the irregular action began.
    pub ply: usize,
    /// The side concerned, if one is.
    pub side: Option<Color>,
    /// When the irregular action began (or was seen).
    pub t: Timestamp,
    /// One readable sentence for an arbiter.
    pub message: String,
    /// The squares concerned.
    pub squares: Vec<Square>,
    /// The sensor observations, with times, that show it.
    pub evidence: Vec<Evidence>,
}

/// One sensor observation kept as evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence {
    /// When.
    pub t: Timestamp,
    /// What.
    pub seen: Seen,
}

/// What a sensor saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// A square changed to `cell`.
    Square {
        /// The square (after any correction for a turned board).
        square: Square,
        /// What it holds now.
        cell: Cell,
    },
    /// The clock.
    Clock(ClockReading),
    /// What the two boards of a pair (appendix D) hold on a square where
    /// they differ: the game board's reconstructed position, and the
    /// mirror's.
    Boards {
        /// The square.
        square: Square,
        /// On the game board.
        game: Cell,
        /// On the visually impaired player's board.
        mirror: Cell,
    },
}

impl fmt::Display for Alert {
    /// The readable one-line form: `ply 12, White, 4.3.1: message [t=…]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ply {}", self.ply)?;
        if let Some(side) = self.side {
            write!(f, ", {}", side_name(side))?;
        }
        write!(f, ", {} ({}): {} [t={}", self.kind.article(), self.kind.severity().name(), self.message, self.t)?;
        if !self.squares.is_empty() {
            let squares: Vec<String> = self.squares.iter().map(ToString::to_string).collect();
            write!(f, ", squares {}", squares.join(" "))?;
        }
        f.write_str("]")
    }
}

/// `"White"` or `"Black"`.
pub(crate) const fn side_name(color: Color) -> &'static str {
    match color {
        Color::White => "White",
        Color::Black => "Black",
    }
}

impl Alert {
    /// The alert's fields for `board` (game `game`, `seq`): a line of the
    /// alerts file with `board`, the payload published to arbiters
    /// without (its envelope names the board).
    pub fn fields<'a>(&'a self, board: Option<&'a str>, game: u32, seq: u64) -> AlertFields<'a> {
        AlertFields {
            article: self.kind.article(),
            kind: self.kind.code(),
            severity: self.kind.severity().name(),
            board,
            game,
            seq,
            ply: self.ply,
            side: self.side.map(color_name),
            t_us: self.t.as_micros(),
            message: &self.message,
            squares: self.squares.iter().map(ToString::to_string).collect(),
            evidence: self.evidence.iter().map(Evidence::fields).collect(),
        }
    }

    /// The alert as one JSON object: a line of the alerts file.
    pub fn to_json(&self, board: &str, game: u32, seq: u64) -> serde_json::Value {
        crate::publish::payload::to_value(&self.fields(Some(board), game, seq))
    }
}

impl Evidence {
    /// The observation in the form of a capture record.
    pub fn fields(&self) -> EvidenceFields {
        let t_us = self.t.as_micros();
        let piece = |cell: &Cell| cell.letter().map(String::from);
        match &self.seen {
            Seen::Square { square, cell } => {
                EvidenceFields::Square { t_us, square: square.to_string(), piece: piece(cell) }
            }
            Seen::Clock(ClockReading::ByColor { white_ms, black_ms, running }) => EvidenceFields::Clock {
                t_us,
                clock: EvidenceClock::ByColor {
                    white_ms: *white_ms,
                    black_ms: *black_ms,
                    running: running.map(color_name),
                },
            },
            Seen::Clock(ClockReading::BySide { left, right, running }) => EvidenceFields::Clock {
                t_us,
                clock: EvidenceClock::BySide {
                    left_ms: left.ms,
                    right_ms: right.ms,
                    running: running.map(|s| s.name()),
                },
            },
            Seen::Boards { square, game, mirror } => EvidenceFields::Boards {
                t_us,
                square: square.to_string(),
                game_board: piece(game),
                mirror: piece(mirror),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_code_and_is_documented() {
        let docs = include_str!("../../../docs/alerts.md");
        for kind in AlertKind::ALL {
            assert_eq!(AlertKind::from_code(kind.code()), Some(kind));
            assert!(docs.contains(&format!("`{}`", kind.code())), "docs/alerts.md says nothing of {}", kind.code());
        }
        let mut codes: Vec<&str> = AlertKind::ALL.iter().map(|k| k.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), AlertKind::ALL.len());
        assert_eq!(AlertKind::from_code("resign"), None);
    }
}
