//! Arbiter alerts: what the daemon saw that an arbiter may need to act on,
//! with the FIDE article, the squares and the sensor evidence.
//!
//! Alerts are evidence, not verdicts: a board cannot see a spoken
//! "j'adoube", a hand that still holds a piece, or who lifted a piece. Every
//! message says what was seen and which article it may concern.

use std::fmt;

use shakmaty::{Color, Square};

use crate::{
    sensor::{Cell, ClockReading},
    time::Timestamp,
};

/// What an alert is about. Each kind has a fixed article (or a stable code
/// where no article applies) and a severity: its row of [`KINDS`].
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

/// What an alert kind is: its stable code, its article, its severity and
/// what it says, in one row.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    /// The kind.
    pub kind: AlertKind,
    /// A stable snake-case name (`illegal_move`).
    pub code: &'static str,
    /// The FIDE article, or a stable code where no article applies.
    pub article: &'static str,
    /// Whether it reports an irregularity or only informs.
    pub severity: Severity,
    /// What it means, in a few words (docs/alerts.md says it at length).
    pub says: &'static str,
}

/// Every alert kind, one row each, in the order of docs/alerts.md (and of
/// [`AlertKind`]'s variants: a test holds them together). The docs test and
/// the simulator's injections read this table.
pub const KINDS: [KindInfo; 25] = [
    KindInfo {
        kind: AlertKind::IllegalMove,
        code: "illegal_move",
        article: "7.5.1",
        severity: Severity::Irregularity,
        says: "the clock was pressed on a position no legal move reaches",
    },
    KindInfo {
        kind: AlertKind::IllegalMoveStands,
        code: "illegal_move_stands",
        article: "A.5.2",
        severity: Severity::Irregularity,
        says: "an illegal move was answered by the opponent in rapid or blitz without adequate supervision: it stands",
    },
    KindInfo {
        kind: AlertKind::PawnNotReplaced,
        code: "pawn_not_replaced",
        article: "7.5.2",
        severity: Severity::Irregularity,
        says: "a pawn was left on the last rank when the clock was pressed",
    },
    KindInfo {
        kind: AlertKind::ClockWithoutMove,
        code: "clock_without_move",
        article: "7.5.3",
        severity: Severity::Irregularity,
        says: "the clock was pressed without a move",
    },
    KindInfo {
        kind: AlertKind::TouchedOwnPiece,
        code: "touched_own_piece",
        article: "4.3.1",
        severity: Severity::Irregularity,
        says: "an own piece that could move was lifted first, then another piece moved",
    },
    KindInfo {
        kind: AlertKind::TouchedOpponentPiece,
        code: "touched_opponent_piece",
        article: "4.3.2",
        severity: Severity::Irregularity,
        says: "an opponent's piece that could be captured was lifted first, then not captured",
    },
    KindInfo {
        kind: AlertKind::RookBeforeKing,
        code: "rook_before_king",
        article: "4.4.2",
        severity: Severity::Irregularity,
        says: "the rook was lifted before the king, then castling with it",
    },
    KindInfo {
        kind: AlertKind::ReleasedPieceMoved,
        code: "released_piece_moved",
        article: "4.7",
        severity: Severity::Irregularity,
        says: "a piece released on a square was moved on before the move was completed",
    },
    KindInfo {
        kind: AlertKind::DisplacedPiece,
        code: "displaced_piece",
        article: "7.4.1",
        severity: Severity::Irregularity,
        says: "a piece of the side not to move left its square",
    },
    KindInfo {
        kind: AlertKind::WrongInitialPosition,
        code: "wrong_initial_position",
        article: "7.2.1",
        severity: Severity::Irregularity,
        says: "the initial position is not the start position",
    },
    KindInfo {
        kind: AlertKind::IrregularPosition,
        code: "irregular_position",
        article: "A.5.4",
        severity: Severity::Irregularity,
        says: "both kings in check, or a pawn on its last rank, after a completed move",
    },
    KindInfo {
        kind: AlertKind::OutOfSync,
        code: "out_of_sync",
        article: "out_of_sync",
        severity: Severity::Irregularity,
        says: "the board shows something no legal move explains",
    },
    KindInfo {
        kind: AlertKind::AmbiguousMoves,
        code: "ambiguous_moves",
        article: "ambiguous_moves",
        severity: Severity::Irregularity,
        says: "several move sequences explain the board",
    },
    KindInfo {
        kind: AlertKind::FlagFallen,
        code: "flag_fallen",
        article: "6.9",
        severity: Severity::Irregularity,
        says: "a flag fell",
    },
    KindInfo {
        kind: AlertKind::BothFlagsFallen,
        code: "both_flags_fallen",
        article: "III.3.1",
        severity: Severity::Irregularity,
        says: "both flags fell and which fell first cannot be told",
    },
    KindInfo {
        kind: AlertKind::FlagAfterQuota,
        code: "flag_after_quota",
        article: "6.4",
        severity: Severity::Irregularity,
        says: "a flag fell although the period's moves were completed",
    },
    KindInfo {
        kind: AlertKind::ThreefoldRepetition,
        code: "threefold_repetition",
        article: "9.2",
        severity: Severity::Info,
        says: "a threefold repetition can be claimed",
    },
    KindInfo {
        kind: AlertKind::FiftyMoves,
        code: "fifty_moves",
        article: "9.3",
        severity: Severity::Info,
        says: "the 50-move rule can be claimed",
    },
    KindInfo {
        kind: AlertKind::RotatedBoard,
        code: "rotated_board",
        article: "rotated_board",
        severity: Severity::Info,
        says: "the board is turned 180°",
    },
    KindInfo {
        kind: AlertKind::ResultConflict,
        code: "result_conflict",
        article: "result_conflict",
        severity: Severity::Irregularity,
        says: "the result gesture disagrees with the result already known",
    },
    KindInfo {
        kind: AlertKind::GameWithoutResult,
        code: "game_without_result",
        article: "game_without_result",
        severity: Severity::Info,
        says: "a new game was set up before the previous one had a result",
    },
    KindInfo {
        kind: AlertKind::PromotionUnknown,
        code: "promotion_unknown",
        article: "promotion_unknown",
        severity: Severity::Irregularity,
        says: "an occupancy-only board cannot tell the promoted piece: a queen was recorded",
    },
    KindInfo {
        kind: AlertKind::BoardsDiverge,
        code: "boards_diverge",
        article: "D.2.9",
        severity: Severity::Irregularity,
        says: "a visually impaired player's board and the game board differ for longer than copying a move takes",
    },
    KindInfo {
        kind: AlertKind::BoardsAgree,
        code: "boards_agree",
        article: "D.2.9",
        severity: Severity::Info,
        says: "the two boards of a pair show the same position again",
    },
    KindInfo {
        kind: AlertKind::BoardGap,
        code: "board_gap",
        article: "board_gap",
        severity: Severity::Irregularity,
        says: "the board came back from a lost connection showing a position the inferred moves do not reach",
    },
];

impl AlertKind {
    /// Every kind, in the order of docs/alerts.md.
    pub const ALL: [Self; KINDS.len()] = {
        let mut all = [Self::IllegalMove; KINDS.len()];
        let mut i = 0;
        while i < KINDS.len() {
            all[i] = KINDS[i].kind;
            i += 1;
        }
        all
    };

    /// The kind's row of [`KINDS`].
    pub const fn info(self) -> &'static KindInfo {
        &KINDS[self as usize]
    }

    /// The kind with this [`code`](Self::code), if any.
    pub fn from_code(code: &str) -> Option<Self> {
        KINDS.iter().find(|k| k.code == code).map(|k| k.kind)
    }

    /// The FIDE article, or a stable code where no article applies.
    pub const fn article(self) -> &'static str {
        self.info().article
    }

    /// A stable snake-case name.
    pub const fn code(self) -> &'static str {
        self.info().code
    }

    /// Whether the alert reports an irregularity or only informs.
    pub const fn severity(self) -> Severity {
        self.info().severity
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
        for (i, row) in KINDS.iter().enumerate() {
            assert_eq!(
                row.kind as usize, i,
                "KINDS[{i}] is {:?}: the table and the enum must keep one order",
                row.kind
            );
        }
        let mut codes: Vec<&str> = AlertKind::ALL.iter().map(|k| k.code()).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), AlertKind::ALL.len());
        assert_eq!(AlertKind::from_code("resign"), None);
    }
}
