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
//! - [`chessnut`]: Chessnut boards over Bluetooth LE (whole positions).
//! - [`pegasus`]: the DGT Pegasus over Bluetooth LE (DGT messages,
//!   occupancy only).
//! - [`squareoff`]: Square Off boards over Bluetooth LE (ASCII, occupancy
//!   only).
//! - [`ichessone`]: iChessOne boards over Bluetooth LE (whole positions).
//! - [`chessup`]: ChessUp boards over Bluetooth LE (whole positions; every
//!   move acknowledged).
//! - The Millennium family is also read over Bluetooth LE (the same
//!   frames; its `Family` names the service).
//!
//! What the decoders share: [`queue`] (a framer and the items waiting),
//! [`frames`] (binary messages whose first bytes give their length),
//! [`position`] (reporting whole positions), [`uart`] (the Nordic UART
//! service several Bluetooth LE boards use).

pub mod certabo;
pub mod chessnut;
pub mod chessup;
pub mod dgt;
pub mod family;
pub mod frames;
pub mod ichessone;
pub mod link;
pub mod millennium;
pub mod pegasus;
pub(crate) mod position;
pub mod probe;
pub(crate) mod queue;
pub mod sentio;
pub mod squareoff;
pub mod uart;

use std::{fmt, str::FromStr};

use shakmaty::Bitboard;

pub use self::family::{
    Bluetooth, BoardDecoder, BoardLink, Calibrated, ClockMessages, FAMILIES, Family, Features, Leds, Probe, names_of,
};
use crate::sensor::SensorEvent;

/// What a capture or a board speaks: a board family's bytes, or decoded
/// sensor events (the capture format's `events`). Each family's folder
/// names its protocol (`Protocol::DGT` in `dgt/`), so that a new family
/// needs no variant here.
#[derive(Clone, Copy)]
pub struct Protocol(Option<&'static Family>);

impl Protocol {
    /// Decoded sensor events (the capture format's `events`).
    pub const EVENTS: Self = Self(None);

    /// The protocol of `family`'s bytes.
    pub const fn of(family: &'static Family) -> Self {
        Self(Some(family))
    }

    /// The family whose bytes this protocol is; `None` for `events`, whose
    /// records are already decoded.
    pub const fn family(self) -> Option<&'static Family> {
        self.0
    }

    /// The protocol's name in captures and configuration.
    pub const fn name(self) -> &'static str {
        match self.0 {
            Some(family) => family.name,
            None => "events",
        }
    }

    /// Every protocol this daemon reads, for error messages.
    pub const ALL: [Self; FAMILIES.len() + 1] = {
        let mut all = [Self::EVENTS; FAMILIES.len() + 1];
        let mut i = 0;
        while i < FAMILIES.len() {
            all[i] = Self::of(FAMILIES[i]);
            i += 1;
        }
        all
    };

    /// The board families read live (every protocol but `events`).
    pub const LIVE: [Self; FAMILIES.len()] = {
        let mut live = [Self::EVENTS; FAMILIES.len()];
        let mut i = 0;
        while i < FAMILIES.len() {
            live[i] = Self::of(FAMILIES[i]);
            i += 1;
        }
        live
    };

    /// A decoder for raw bytes of this protocol; `None` for `events`, whose
    /// records are already decoded.
    pub fn decoder(self) -> Option<Box<dyn BoardDecoder>> {
        self.family().map(|f| (f.decoder)())
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
    pub(crate) fn answers_board_request(self) -> bool {
        self.family().is_some_and(|f| f.answers_board_request)
    }

    /// What the family's boards can do that others cannot (`events`: none).
    pub fn features(self) -> Features {
        self.family().map_or_else(Features::default, |f| f.features)
    }
}

impl Family {
    /// The protocol of this family's bytes.
    pub const fn protocol(&'static self) -> Protocol {
        Protocol::of(self)
    }
}

/// Protocols are the same when their names are (a family is one constant,
/// but a constant may have several addresses).
impl PartialEq for Protocol {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Protocol {}

impl std::hash::Hash for Protocol {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a board's lights (LEDs) should show, in the board's own
/// orientation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lights {
    /// Lit steadily: the last move's squares.
    pub(crate) steady: Bitboard,
    /// Blinking: squares to put right (the board is out of sync).
    pub(crate) blinking: Bitboard,
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
    /// The board waits for the host to acknowledge what it just said by
    /// writing this byte (a ChessUp drops the link otherwise); the
    /// family's link writes it.
    Acknowledge(u8),
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
