//! What a board family is, in one place: its name, its serial line, what
//! its sensors can tell, how to decode its bytes, how to talk to a live
//! one, how to recognise one on a port, and what it can do that others
//! cannot. Each family's folder under `protocol/` defines its [`Family`]
//! (a `FAMILY` constant) and [`FAMILIES`] lists them: the rest of the
//! daemon asks the family instead of matching over names.
//!
//! A family's decoder and link are its own types implementing
//! [`BoardDecoder`] and [`BoardLink`]. What only some families can do is an
//! optional capability the family's type offers through an accessor that
//! returns `None` by default: LEDs ([`Leds`]), a clock that shows text
//! ([`ClockMessages`]), a calibration ([`Calibrated`]).

use super::{
    Decoded, Lights,
    dgt::{command::ClockText, display::ClockDisplaySettings},
    link::{LinkConfig, LinkEvent},
};
use crate::time::Timestamp;

/// A board family: everything the daemon needs to know to read one.
#[derive(Debug)]
pub struct Family {
    /// Its name in captures and configuration.
    pub name: &'static str,
    /// What `list-ports` and the log call a board of the family
    /// (`DGT board`).
    pub title: &'static str,
    /// The serial line's speed (8 data bits, no parity, one stop bit for
    /// all: the Millennium's 7-bit odd parity is done in software).
    pub baud: u32,
    /// Whether the board can tell which piece stands on a square (an
    /// occupancy-only board cannot: promotions are then unknown).
    pub identifies_pieces: bool,
    /// Whether the board answers a request for the whole board (a DGT dump,
    /// a Millennium status): the reconstructor then asks before blaming a
    /// player on what the board shows.
    pub(crate) answers_board_request: bool,
    /// What the family's boards can do that others cannot, for checking a
    /// configuration before anything runs.
    pub features: Features,
    /// How to recognise one of the family's boards on a port.
    pub probe: Probe,
    /// Whether its boards are read through a serial port (USB or
    /// Bluetooth Classic); a family that is not is never probed on one.
    pub on_serial: bool,
    /// How its boards speak Bluetooth LE, if they do.
    pub bluetooth: Option<Bluetooth>,
    /// A fresh decoder for the family's bytes.
    pub(crate) decoder: fn() -> Box<dyn BoardDecoder>,
    /// A fresh link to a live board of the family.
    pub link: fn(LinkConfig) -> Box<dyn BoardLink>,
}

/// A family is known by its name (a constant may have several addresses).
impl PartialEq for Family {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Family {}

/// What a family's boards can do that others cannot (the capabilities its
/// decoder and link offer).
#[derive(Clone, Copy, Debug, Default)]
pub struct Features {
    /// LEDs that show the last move and squares to put right (`leds`).
    pub lights: bool,
    /// A clock that can show moves and the operator's text (`clock_display`).
    pub clock_text: bool,
    /// A calibration file mapping its sensors' tags to pieces (`calibration`).
    pub calibration: bool,
}

/// How a family's boards speak Bluetooth LE: how one is recognised among
/// the devices in range, and which GATT characteristics carry its bytes
/// (the notifications are the bytes a serial board would send; what the
/// link sends is written to `write`).
#[derive(Debug)]
pub struct Bluetooth {
    /// A part of the name the board advertises (`Chessnut`), compared as
    /// [`Bluetooth::advertised_by`] says.
    pub name_contains: &'static str,
    /// The GATT service holding `notify`, which a board advertises.
    pub service: &'static str,
    /// The characteristic whose notifications carry the board's bytes.
    pub notify: &'static str,
    /// The characteristic the host writes its commands to.
    pub write: &'static str,
    /// The least time between two writes the board takes (a Millennium
    /// wants 100 ms between frames); zero for none.
    pub write_spacing: std::time::Duration,
}

impl Bluetooth {
    /// Whether a device advertising `name` is a board of this family: its
    /// name holds [`Bluetooth::name_contains`], letters compared without
    /// case and spaces, `_` and `-` left out (a Square Off advertises
    /// `Squareoff Pro` or `SquareOff`; both hold `SquareOff`, and a speaker
    /// called `Square 2` does not).
    pub fn advertised_by(&self, name: &str) -> bool {
        fn plain(text: &str) -> String {
            text.chars().filter(|c| !matches!(c, ' ' | '_' | '-')).flat_map(char::to_lowercase).collect()
        }
        plain(name).contains(&plain(self.name_contains))
    }
}

/// How to recognise a board of a family on a port, whose USB IDs say
/// nothing (generic bridge chips): by asking it, or by listening to a board
/// that streams by itself. Nothing asked changes anything on a board.
#[derive(Debug)]
pub struct Probe {
    /// What to send; empty for a board that streams by itself.
    pub ask: fn() -> Vec<u8>,
    /// Whether an item the family's decoder made of the answer shows that a
    /// board of this family is speaking.
    pub(crate) answers: fn(&Decoded) -> bool,
    /// Whether the answer names the board's serial number: such a board
    /// can be configured by serial number, and is found on any port.
    pub tells_serial: bool,
    /// Whether the answer names the firmware version.
    pub(crate) tells_version: bool,
    /// Probes run in rank order, lowest first. Listening comes first: it
    /// sends nothing to a board that might be of another family.
    pub(crate) rank: u8,
}

/// Every board family the daemon reads (adding one is one folder and one
/// line here).
pub const FAMILIES: [&Family; 9] = [
    &super::dgt::FAMILY,
    &super::millennium::FAMILY,
    &super::certabo::FAMILY,
    &super::sentio::FAMILY,
    &super::chessnut::FAMILY,
    &super::pegasus::FAMILY,
    &super::squareoff::FAMILY,
    &super::ichessone::FAMILY,
    &super::chessup::FAMILY,
];

/// The names of the families `which` picks, for messages (`certabo`,
/// `dgt or millennium`).
pub fn names_of(which: impl Fn(&Family) -> bool) -> String {
    let names: Vec<&str> = FAMILIES.into_iter().filter(|f| which(f)).map(|f| f.name).collect();
    match names.split_last() {
        None => "none".to_owned(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// A family's decoder: bytes in, protocol-neutral [`Decoded`] items out,
/// the same items however the input is split into chunks. Called per chunk
/// and per item (the per-byte work stays inside each decoder).
pub trait BoardDecoder: std::fmt::Debug + Send {
    /// Takes bytes received from the board.
    fn handle_bytes(&mut self, bytes: &[u8]);

    /// The next decoded item, or `None` when more bytes are needed.
    fn poll_decoded(&mut self) -> Option<Decoded>;

    /// Ends the stream, reporting a message left unfinished.
    fn finish(&mut self) -> Option<Decoded>;

    /// The decoder's calibration, if the family needs one (Certabo).
    fn calibration_mut(&mut self) -> Option<&mut dyn Calibrated> {
        None
    }
}

/// A family's link: the host's side of the connection to a live board.
/// Called per read, per decoded item and per deadline, never per byte.
pub trait BoardLink: std::fmt::Debug + Send {
    /// The port is open.
    fn handle_connected(&mut self, now: Timestamp);

    /// The port closed.
    fn handle_disconnected(&mut self);

    /// Bytes arrived (whatever they mean).
    fn handle_rx(&mut self, now: Timestamp);

    /// The decoder made sense of something, or reported lost bytes.
    fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded);

    /// Acts on deadlines that have come.
    fn handle_timeout(&mut self, now: Timestamp);

    /// The next bytes to send, if any.
    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>>;

    /// When to call [`BoardLink::handle_timeout`] next.
    fn poll_timeout(&self) -> Option<Timestamp>;

    /// The next thing to report.
    fn poll_event(&mut self) -> Option<LinkEvent>;

    /// Asks the board for its whole picture before the reconstructor blames
    /// a player on it. Boards that stream their whole picture on every scan
    /// need not be asked: their next report is the answer.
    fn request_board(&mut self, _now: Timestamp) {}

    /// The board's LEDs, if it has some the daemon drives.
    fn leds_mut(&mut self) -> Option<&mut dyn Leds> {
        None
    }

    /// The board's clock display, if its clock can show text (a DGT 3000).
    fn clock_mut(&mut self) -> Option<&mut dyn ClockMessages> {
        None
    }
}

/// A board's LEDs.
pub trait Leds {
    /// What the LEDs should show now, in the board's own orientation (sent
    /// when it differs from what they show).
    fn show(&mut self, lights: &Lights);
}

/// A clock that shows text besides the times.
pub trait ClockMessages {
    /// What the clock shows besides the times, and when.
    fn set_clock_display(&mut self, settings: ClockDisplaySettings);

    /// Shows `text` for a moment if the display's rule allows; returns
    /// whether it will be shown.
    fn show_text(&mut self, now: Timestamp, text: ClockText) -> bool;
}

/// A decoder that maps its sensors' tags to pieces through a calibration.
pub trait Calibrated {
    /// Takes the board's calibration (tag number → piece, as in a capture
    /// header's `calibration`).
    ///
    /// # Errors
    ///
    /// An entry that is not a tag number and a piece letter.
    fn set_calibration(&mut self, entries: &[(String, char)]) -> Result<(), String>;

    /// Learns a calibration from the next `reports` reports, the pieces in
    /// the start position (the console's Calibrate); `None` stops learning.
    fn learn(&mut self, reports: Option<usize>);

    /// What was learnt, once the reports are in: the calibration's entries
    /// (already in use), or why none was made (the one in use stays).
    fn poll_learnt(&mut self) -> Option<Result<Vec<(String, char)>, String>>;
}

#[cfg(test)]
mod tests {
    use super::{super::Protocol, *};

    #[test]
    fn every_family_is_listed_once_under_its_protocol() {
        for (i, family) in FAMILIES.iter().enumerate() {
            assert_eq!(family.protocol().family().map(|f| f.name), Some(family.name));
            assert_eq!(family.protocol().name(), family.name);
            assert!(FAMILIES[..i].iter().all(|f| f.name != family.name));
        }
        assert_eq!(Protocol::LIVE.len(), FAMILIES.len());
        assert!(Protocol::EVENTS.family().is_none());
    }

    #[test]
    fn a_family_offers_what_its_features_say() {
        for family in FAMILIES {
            let mut link = (family.link)(LinkConfig::default());
            assert_eq!(link.leds_mut().is_some(), family.features.lights, "{}", family.name);
            assert_eq!(link.clock_mut().is_some(), family.features.clock_text, "{}", family.name);
            let mut decoder = (family.decoder)();
            assert_eq!(decoder.calibration_mut().is_some(), family.features.calibration, "{}", family.name);
        }
    }
}
