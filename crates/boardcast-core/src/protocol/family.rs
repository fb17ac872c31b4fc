//! What a board family is, in one place: its name, its serial line, what
//! its sensors can tell, how to decode its bytes and how to talk to a live
//! one. Each family's folder under `protocol/` defines its [`Family`]
//! (a `FAMILY` constant) and [`FAMILIES`] lists them: the rest of the
//! daemon asks the family instead of matching over protocols.

use super::{Decoded, Lights, Protocol, dgt, link::LinkConfig, link::LinkEvent};
use crate::time::Timestamp;

/// A board family: everything the daemon needs to know to read one.
#[derive(Debug)]
pub struct Family {
    /// The protocol whose bytes this family's boards speak.
    pub protocol: Protocol,
    /// Its name in captures and configuration.
    pub name: &'static str,
    /// The serial line's speed (8 data bits, no parity, one stop bit for
    /// all: the Millennium's 7-bit odd parity is done in software).
    pub baud: u32,
    /// Whether the board can tell which piece stands on a square (an
    /// occupancy-only board cannot: promotions are then unknown).
    pub identifies_pieces: bool,
    /// Whether the board answers a request for the whole board (a DGT dump,
    /// a Millennium status): the reconstructor then asks before blaming a
    /// player on what the board shows.
    pub answers_board_request: bool,
    /// A fresh decoder for the family's bytes.
    pub decoder: fn() -> Box<dyn BoardDecoder>,
    /// A fresh link to a live board of the family.
    pub link: fn(LinkConfig) -> Box<dyn BoardLink>,
}

/// Every board family the daemon reads (adding one is one folder and one
/// line here, plus its variant of [`Protocol`]).
pub const FAMILIES: [&Family; 4] =
    [&super::dgt::FAMILY, &super::millennium::FAMILY, &super::certabo::FAMILY, &super::sentio::FAMILY];

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

    /// Takes the board's calibration (tag number → piece, as in a capture
    /// header's `calibration`); only a family that needs one (Certabo)
    /// does anything with it.
    ///
    /// # Errors
    ///
    /// An entry that is not a tag number and a piece letter.
    fn set_calibration(&mut self, _entries: &[(String, char)]) -> Result<(), String> {
        Ok(())
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

    /// What the board's lights should show now (boards without lights
    /// ignore it).
    fn show(&mut self, lights: &Lights);

    /// Asks the board for its whole picture before the reconstructor blames
    /// a player on it. Boards that stream their whole picture on every scan
    /// need not be asked: their next report is the answer.
    fn request_board(&mut self, _now: Timestamp) {}

    /// What a DGT 3000 clock shows besides the times (boards without such a
    /// clock ignore it).
    fn set_clock_display(&mut self, _settings: dgt::display::ClockDisplaySettings) {}

    /// Shows `text` on the clock for a moment, if the board has a clock
    /// that can and its display's rule allows; returns whether it will be
    /// shown.
    fn show_text(&mut self, _now: Timestamp, _text: dgt::command::ClockText) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_is_listed_once_under_its_protocol() {
        for (i, family) in FAMILIES.iter().enumerate() {
            assert_eq!(family.protocol.family().map(|f| f.name), Some(family.name));
            assert_eq!(family.protocol.name(), family.name);
            assert!(FAMILIES[..i].iter().all(|f| f.protocol != family.protocol && f.name != family.name));
        }
        assert_eq!(Protocol::LIVE.len(), FAMILIES.len());
        assert!(Protocol::Events.family().is_none());
    }
}
