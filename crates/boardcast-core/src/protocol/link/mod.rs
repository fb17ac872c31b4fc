//! The host's side of a connection to a live board, for every board
//! family: what to send after connecting, how to notice a board that went
//! quiet, what to show on its lights. Each family has its own sans-I/O link
//! (`dgt::link`, `millennium::link`, `certabo::link`), a
//! [`BoardLink`]; [`Link`] holds the one its [`super::Family`] gives, so
//! that the session and the shell need not know which it is.

pub(crate) mod retry;
pub(crate) mod settings;
pub(crate) mod watchdog;

pub use self::settings::{LinkConfig, LinkEvent};
use super::{BoardLink, Decoded, Lights, Protocol, dgt};
use crate::time::Timestamp;

/// The link to a live board of any family (the family's own, behind
/// [`BoardLink`]).
#[derive(Debug)]
pub struct Link(Box<dyn BoardLink>);

impl Link {
    /// The link for `protocol`; `None` for `events` (no live board).
    pub(crate) fn for_protocol(protocol: Protocol, config: LinkConfig) -> Option<Self> {
        protocol.family().map(|f| Self((f.link)(config)))
    }

    /// The port is open.
    pub fn handle_connected(&mut self, now: Timestamp) {
        self.0.handle_connected(now);
    }

    /// The port closed.
    pub fn handle_disconnected(&mut self) {
        self.0.handle_disconnected();
    }

    /// Bytes arrived (whatever they mean).
    pub(crate) fn handle_rx(&mut self, now: Timestamp) {
        self.0.handle_rx(now);
    }

    /// The decoder made sense of something, or reported lost bytes.
    pub(crate) fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded) {
        self.0.handle_decoded(now, decoded);
    }

    /// Acts on deadlines that have come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.0.handle_timeout(now);
    }

    /// The next bytes to send, if any.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        self.0.poll_transmit(now)
    }

    /// When to call [`Link::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.0.poll_timeout()
    }

    /// The next thing to report.
    pub fn poll_event(&mut self) -> Option<LinkEvent> {
        self.0.poll_event()
    }

    /// Asks the board for its whole picture before the reconstructor blames
    /// a player on it (a DGT board dump, a Millennium status). Streaming
    /// boards (Certabo, Sentio) report the whole board on every scan: their
    /// next report is the answer, nothing is sent.
    pub(crate) fn request_board(&mut self, now: Timestamp) {
        self.0.request_board(now);
    }

    /// What a DGT 3000 clock shows besides the times (other boards have no
    /// clock to show it on).
    pub fn set_clock_display(&mut self, settings: dgt::display::ClockDisplaySettings) {
        self.0.set_clock_display(settings);
    }

    /// Shows `text` on the clock for a moment, if the board has a DGT 3000
    /// and the display's rule allows; returns whether it will be shown.
    pub fn show_text(&mut self, now: Timestamp, text: dgt::command::ClockText) -> bool {
        self.0.show_text(now, text)
    }

    /// What the board's lights should show now (boards without lights
    /// ignore it).
    pub fn show(&mut self, lights: &Lights) {
        self.0.show(lights);
    }
}
