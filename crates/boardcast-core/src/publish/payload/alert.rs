//! An arbiter alert on `…/<board>/alerts` (docs/mqtt.md, "`alerts`";
//! its fields are docs/alerts.md's), and the same alert as a line of the
//! alerts file `boardcast replay --alerts` writes.

use serde::Serialize;

use super::Envelope;
use crate::{
    alert::{Alert, Evidence, Seen},
    publish::render::color_name,
    sensor::{Cell, ClockReading},
};

/// `…/<board>/alerts`: the alert inside the envelope. Live tree only.
#[derive(Clone, Debug, Serialize)]
pub struct AlertPayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// The alert, without `board` (the envelope has it).
    #[serde(flatten)]
    pub alert: AlertFields<'a>,
}

/// An alert's fields (docs/alerts.md).
#[derive(Clone, Debug, Serialize)]
pub struct AlertFields<'a> {
    /// The FIDE article, or a stable code where no article applies.
    pub article: &'static str,
    /// What it is about (`illegal_move` …).
    pub kind: &'static str,
    /// `irregularity` or `info`.
    pub severity: &'static str,
    /// The board's name: in a line of the alerts file; absent in a
    /// payload, whose envelope names the board first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub board: Option<&'a str>,
    /// Which game of the session.
    pub game: u32,
    /// The alert's place in the game's sequence.
    pub seq: u64,
    /// Half-moves completed when the irregular action began.
    pub ply: usize,
    /// `white`, `black`, or `null` when no side is concerned.
    pub side: Option<&'static str>,
    /// When the irregular action began, in session microseconds.
    pub t_us: u64,
    /// One readable sentence for an arbiter.
    pub message: &'a str,
    /// The squares concerned.
    pub squares: Vec<String>,
    /// The sensor observations that show it, in the form of capture
    /// records.
    pub evidence: Vec<EvidenceFields>,
}

/// One sensor observation kept as evidence: a square, a clock, or what
/// the two boards of a pair hold on a square.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum EvidenceFields {
    /// A square changed.
    Square {
        /// When, in session microseconds.
        t_us: u64,
        /// The square.
        square: String,
        /// The piece letter on it now, or `null` for empty.
        piece: Option<String>,
    },
    /// A clock reading.
    Clock {
        /// When, in session microseconds.
        t_us: u64,
        /// The reading.
        clock: EvidenceClock,
    },
    /// The two boards of a pair differ on a square.
    Boards {
        /// When, in session microseconds.
        t_us: u64,
        /// The square.
        square: String,
        /// The piece letter on the game board, or `null`.
        game_board: Option<String>,
        /// The piece letter on the mirror, or `null`.
        mirror: Option<String>,
    },
}

/// A clock reading in evidence, as the clock reported it.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum EvidenceClock {
    /// By colour.
    ByColor {
        /// White's time.
        white_ms: u64,
        /// Black's time.
        black_ms: u64,
        /// `white`, `black` or `null`.
        running: Option<&'static str>,
    },
    /// By display, before it is known which is White's.
    BySide {
        /// The left display.
        left_ms: u64,
        /// The right display.
        right_ms: u64,
        /// `left`, `right` or `null`.
        running: Option<&'static str>,
    },
}

impl<'a> AlertFields<'a> {
    /// The fields of `alert` for `board` (game `game`, `seq`): a line of the
    /// alerts file with `board`, the payload published to arbiters without
    /// (its envelope names the board).
    pub fn of(alert: &'a Alert, board: Option<&'a str>, game: u32, seq: u64) -> Self {
        Self {
            article: alert.kind.article(),
            kind: alert.kind.code(),
            severity: alert.kind.severity().name(),
            board,
            game,
            seq,
            ply: alert.ply,
            side: alert.side.map(color_name),
            t_us: alert.t.as_micros(),
            message: &alert.message,
            squares: alert.squares.iter().map(ToString::to_string).collect(),
            evidence: alert.evidence.iter().map(EvidenceFields::of).collect(),
        }
    }
}

/// `alert` as one JSON object: a line of the alerts file.
pub fn alert_line(alert: &Alert, board: &str, game: u32, seq: u64) -> serde_json::Value {
    super::to_value(&AlertFields::of(alert, Some(board), game, seq))
}

impl EvidenceFields {
    /// An observation in the form of a capture record.
    pub fn of(evidence: &Evidence) -> Self {
        let t_us = evidence.t.as_micros();
        let piece = |cell: &Cell| cell.letter().map(String::from);
        match &evidence.seen {
            Seen::Square { square, cell } => Self::Square { t_us, square: square.to_string(), piece: piece(cell) },
            Seen::Clock(ClockReading::ByColor { white_ms, black_ms, running }) => Self::Clock {
                t_us,
                clock: EvidenceClock::ByColor {
                    white_ms: *white_ms,
                    black_ms: *black_ms,
                    running: running.map(color_name),
                },
            },
            Seen::Clock(ClockReading::BySide { left, right, running }) => Self::Clock {
                t_us,
                clock: EvidenceClock::BySide {
                    left_ms: left.ms,
                    right_ms: right.ms,
                    running: running.map(|s| s.name()),
                },
            },
            Seen::Boards { square, game, mirror } => {
                Self::Boards { t_us, square: square.to_string(), game_board: piece(game), mirror: piece(mirror) }
            }
        }
    }
}
