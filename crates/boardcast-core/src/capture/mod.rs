//! The sensor capture format, version 1 (`docs/capture-format.md`): what one
//! board said, with times, as JSON Lines.
//!
//! A capture is a header line and then records. Records of raw protocols
//! (`dgt`, …) carry the bytes received (`rx`) or sent (`tx`); records of the
//! `events` protocol carry decoded sensor events. The format is a public
//! contract that other tools write to test the daemon, so the reader accepts
//! exactly what the document allows and names the line and the problem for
//! anything else.
//!
//! This module only turns text into values and back; reading files is the
//! caller's business.

mod read;
mod write;

pub use read::{CaptureError, CaptureErrorKind, CaptureReader, MAX_LINE_BYTES};
pub use write::{format_header, format_record};

use crate::{protocol::Protocol, sensor::SensorEvent, time::Timestamp};

/// The version of the format this daemon reads and writes.
pub const VERSION: u64 = 1;

/// The first line of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaptureHeader {
    /// What the records hold.
    pub protocol: Protocol,
    /// The board's identity (its serial number where it has one).
    pub board: String,
    /// Wall-clock time of `t_us = 0`, RFC 3339, as written.
    pub started_at: Option<String>,
    /// PGN header values for the game (`Event`, `White`, `TimeControl`, …),
    /// in the order written.
    pub game: Vec<(String, String)>,
    /// The game is Chess960.
    pub chess960: bool,
    /// Which Laws apply (`rules`: standard, rapid or blitz), when set
    /// rather than taken from the `TimeControl` tag.
    pub rules: Option<crate::game::Tempo>,
    /// A rapid or blitz game under adequate supervision (A.4, B.2).
    pub supervised: bool,
    /// Certabo boards: which RFID tag is which piece (`calibration`: tag
    /// numbers joined by `-`, and a FEN letter), so that a replay reads the
    /// tags as the live daemon did.
    pub calibration: Vec<(String, char)>,
}

impl CaptureHeader {
    /// A header with only the required keys.
    pub fn new(protocol: Protocol, board: impl Into<String>) -> Self {
        Self {
            protocol,
            board: board.into(),
            started_at: None,
            game: Vec::new(),
            chess960: false,
            rules: None,
            supervised: false,
            calibration: Vec::new(),
        }
    }

    /// The value of a PGN header in `game`, if given.
    pub fn game_tag(&self, name: &str) -> Option<&str> {
        self.game.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// One record: something that happened at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// When, since the start of the capture.
    pub t: Timestamp,
    /// What.
    pub body: RecordBody,
}

/// What a record holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordBody {
    /// Bytes received from the board.
    Rx(Vec<u8>),
    /// Bytes sent to the board (kept for the record, not replayed).
    Tx(Vec<u8>),
    /// A decoded sensor event (`events` captures).
    Event(SensorEvent),
    /// An operator command (any capture; see `operator.rs`).
    Command(crate::operator::Command),
    /// The port to the board opened or closed (any capture the daemon
    /// records): a replay then knows, as the live daemon did, that the
    /// board was away and for how long.
    Link(LinkChange),
}

/// What became of the port to the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkChange {
    /// The port opened.
    Connected,
    /// The port closed (the cable pulled, the board gone silent).
    Disconnected,
}

impl LinkChange {
    /// `"connected"` or `"disconnected"`, as a capture writes it.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Connected => "connected",
            Self::Disconnected => "disconnected",
        }
    }
}
