//! Board protocols: bytes from a board family in, protocol-neutral
//! [`Decoded`] items out. Each family has a sans-I/O decoder that gives the
//! same items however its input is split into chunks, a link (what the host
//! says to a live board, [`link`]). The simulated boards that speak each
//! family's bytes live in the `boardcast-sim` crate.
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
pub mod link;
pub mod millennium;
pub mod sentio;

use std::{fmt, str::FromStr};

use shakmaty::Bitboard;

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
    /// The protocol's name in captures and configuration.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Dgt => "dgt",
            Self::Millennium => "millennium",
            Self::Certabo => "certabo",
            Self::Sentio => "sentio",
            Self::Events => "events",
        }
    }

    /// Every protocol this daemon reads, for error messages.
    pub const ALL: [Self; 5] = [Self::Dgt, Self::Millennium, Self::Certabo, Self::Sentio, Self::Events];

    /// The board families read live (every protocol but `events`).
    pub const LIVE: [Self; 4] = [Self::Dgt, Self::Millennium, Self::Certabo, Self::Sentio];

    /// A decoder for raw bytes of this protocol; `None` for `events`, whose
    /// records are already decoded.
    pub fn decoder(self) -> Option<Decoder> {
        match self {
            Self::Dgt => Some(Decoder::Dgt(dgt::DgtDecoder::new())),
            Self::Millennium => Some(Decoder::Millennium(millennium::MillenniumDecoder::new())),
            Self::Certabo => Some(Decoder::Certabo(Box::new(certabo::CertaboDecoder::new()))),
            Self::Sentio => Some(Decoder::Sentio(sentio::SentioDecoder::new())),
            Self::Events => None,
        }
    }

    /// The serial line's speed (8 data bits, no parity, one stop bit for
    /// all: the Millennium's 7-bit odd parity is done in software).
    pub const fn baud(self) -> u32 {
        match self {
            Self::Dgt | Self::Events => 9600,
            Self::Millennium | Self::Certabo | Self::Sentio => 38_400,
        }
    }

    /// Whether the board can tell which piece stands on a square (an
    /// occupancy-only board cannot: promotions are then unknown).
    pub const fn identifies_pieces(self) -> bool {
        !matches!(self, Self::Sentio)
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
#[error("unknown protocol {0:?} (known: dgt, millennium, certabo, sentio, events)")]
pub struct UnknownProtocol(pub String);

/// A decoder for one board family.
#[derive(Clone, Debug)]
pub enum Decoder {
    /// DGT boards.
    Dgt(dgt::DgtDecoder),
    /// Millennium ChessLink boards.
    Millennium(millennium::MillenniumDecoder),
    /// Certabo RFID boards (boxed: the vote over recent reports makes it
    /// ten times the size of the others).
    Certabo(Box<certabo::CertaboDecoder>),
    /// Occupancy-only boards (Sentio line format).
    Sentio(sentio::SentioDecoder),
}

impl Decoder {
    /// Gives a Certabo decoder the board's calibration (tag number → piece,
    /// as in a capture header's `calibration`); other decoders need none.
    ///
    /// # Errors
    ///
    /// An entry that is not a tag number and a piece letter.
    pub fn set_calibration(&mut self, entries: &[(String, char)]) -> Result<(), String> {
        match self {
            Self::Certabo(d) => d.set_calibration(certabo::Calibration::from_entries(entries)?),
            Self::Dgt(_) | Self::Millennium(_) | Self::Sentio(_) => {}
        }
        Ok(())
    }

    /// Takes bytes received from the board.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        match self {
            Self::Dgt(d) => d.handle_bytes(bytes),
            Self::Millennium(d) => d.handle_bytes(bytes),
            Self::Certabo(d) => d.handle_bytes(bytes),
            Self::Sentio(d) => d.handle_bytes(bytes),
        }
    }

    /// The next decoded item, or `None` when more bytes are needed.
    pub fn poll_decoded(&mut self) -> Option<Decoded> {
        match self {
            Self::Dgt(d) => d.poll_decoded(),
            Self::Millennium(d) => d.poll_decoded(),
            Self::Certabo(d) => d.poll_decoded(),
            Self::Sentio(d) => d.poll_decoded(),
        }
    }

    /// Ends the stream, reporting a message left unfinished.
    pub fn finish(&mut self) -> Option<Decoded> {
        match self {
            Self::Dgt(d) => d.finish(),
            Self::Millennium(d) => d.finish(),
            Self::Certabo(d) => d.finish(),
            Self::Sentio(d) => d.finish(),
        }
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
