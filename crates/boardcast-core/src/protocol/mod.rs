//! Board protocols: bytes from a board family in, protocol-neutral
//! [`Decoded`] items out. Each family has a sans-I/O decoder that gives the
//! same items however its input is split into chunks, a link (what the host
//! says to a live board, [`link`]), and a [`Family`] that names them
//! ([`family`]: the one list of families). The simulated boards that speak
//! each family's bytes live in the `boardcast-sim` crate.
//!
//! - [`dgt`]: DGT e-boards (binary messages, 9600 baud).
//! - [`millennium`]: Millennium ChessLink boards (ASCII with odd parity and
//!   a block check, 38400 baud).
//! - [`certabo`]: Certabo RFID boards (lines of 320 tag numbers, 38400
//!   baud), identified through a calibration.
//! - [`sentio`]: occupancy-only boards in the Tabutronic Sentio line format
//!   (a bitmask per rank): pieces are known only from the game.

pub mod certabo;
pub mod dgt;
pub mod family;
pub mod link;
pub mod millennium;
pub mod sentio;

use std::{fmt, str::FromStr};

use shakmaty::Bitboard;

pub use self::family::{BoardDecoder, BoardLink, FAMILIES, Family};
use crate::sensor::SensorEvent;

/// What a capture or a board speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Raw bytes of a DGT board.
    Dgt,
    /// Raw bytes of a Millennium ChessLink board.
    Millennium,
    /// Raw bytes of a Certabo (RFID) board.
    Certabo,
    /// Raw bytes of an occupancy-only board in the Sentio line format.
    Sentio,
    /// Decoded sensor events (the capture format's `events`).
    Events,
}

impl Protocol {
    /// The family whose bytes this protocol is; `None` for `events`, whose
    /// records are already decoded.
    pub fn family(self) -> Option<&'static Family> {
        FAMILIES.into_iter().find(|f| f.protocol == self)
    }

    /// The protocol's name in captures and configuration.
    pub fn name(self) -> &'static str {
        self.family().map_or("events", |f| f.name)
    }

    /// Every protocol this daemon reads, for error messages.
    pub const ALL: [Self; FAMILIES.len() + 1] = {
        let mut all = [Self::Events; FAMILIES.len() + 1];
        let mut i = 0;
        while i < FAMILIES.len() {
            all[i] = FAMILIES[i].protocol;
            i += 1;
        }
        all
    };

    /// The board families read live (every protocol but `events`).
    pub const LIVE: [Self; FAMILIES.len()] = {
        let mut live = [Self::Events; FAMILIES.len()];
        let mut i = 0;
        while i < FAMILIES.len() {
            live[i] = FAMILIES[i].protocol;
            i += 1;
        }
        live
    };

    /// A decoder for raw bytes of this protocol; `None` for `events`, whose
    /// records are already decoded.
    pub fn decoder(self) -> Option<Decoder> {
        self.family().map(|f| Decoder((f.decoder)()))
    }

    /// The serial line's speed (see [`Family::baud`]); `events` has no line.
    pub fn baud(self) -> u32 {
        self.family().map_or(9600, |f| f.baud)
    }

    /// Whether the board can tell which piece stands on a square (an
    /// occupancy-only board cannot: promotions are then unknown).
    pub fn identifies_pieces(self) -> bool {
        self.family().is_none_or(|f| f.identifies_pieces)
    }

    /// Whether the board answers a request for the whole board (see
    /// [`Family::answers_board_request`]).
    pub fn answers_board_request(self) -> bool {
        self.family().is_some_and(|f| f.answers_board_request)
    }
}

/// What a board's lights (LEDs) should show, in the board's own
/// orientation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lights {
    /// Lit steadily: the last move's squares.
    pub steady: Bitboard,
    /// Blinking: squares to put right (the board is out of sync).
    pub blinking: Bitboard,
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|p| p.name() == s).ok_or_else(|| UnknownProtocol(s.to_owned()))
    }
}

/// A protocol name this daemon does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol {0:?} (known: {known})", known = known_names())]
pub struct UnknownProtocol(pub String);

/// The names of every protocol, for [`UnknownProtocol`].
fn known_names() -> String {
    Protocol::ALL.map(Protocol::name).join(", ")
}

/// A decoder for one board family (each family's own, behind
/// [`BoardDecoder`]: one call per chunk and per decoded item).
#[derive(Debug)]
pub struct Decoder(Box<dyn BoardDecoder>);

impl Decoder {
    /// Gives a Certabo decoder the board's calibration (tag number → piece,
    /// as in a capture header's `calibration`); other decoders need none.
    ///
    /// # Errors
    ///
    /// An entry that is not a tag number and a piece letter.
    pub fn set_calibration(&mut self, entries: &[(String, char)]) -> Result<(), String> {
        self.0.set_calibration(entries)
    }

    /// Takes bytes received from the board.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        self.0.handle_bytes(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    pub fn poll_decoded(&mut self) -> Option<Decoded> {
        self.0.poll_decoded()
    }

    /// Ends the stream, reporting a message left unfinished.
    pub fn finish(&mut self) -> Option<Decoded> {
        self.0.finish()
    }
}

/// One item decoded from a board's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decoded {
    /// Something the sensors or the clock saw.
    Sensor(SensorEvent),
    /// Something the board says about itself.
    Info(BoardInfo),
    /// Bytes that made no sense; the decoder has resynchronised.
    Problem(DecodeProblem),
}

/// What a board says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoardInfo {
    /// Firmware version, e.g. `"1.2"`.
    Version(String),
    /// Serial number.
    Serial(String),
    /// Trademark text.
    Trademark(String),
    /// Battery charge in percent.
    Battery(u8),
    /// The board reports that no clock is connected.
    ClockAbsent,
    /// The clock acknowledged a command or reported a button (four bytes).
    ClockAck([u8; 4]),
}

/// Bytes a decoder could not use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeProblem {
    /// Bytes dropped while resynchronising.
    Garbage {
        /// How many bytes.
        len: usize,
        /// Why.
        reason: &'static str,
    },
    /// A well-framed message whose content is impossible.
    BadMessage(String),
}

impl fmt::Display for DecodeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Garbage { len, reason } => write!(f, "dropped {len} byte(s): {reason}"),
            Self::BadMessage(why) => write!(f, "dropped a message: {why}"),
        }
    }
}
