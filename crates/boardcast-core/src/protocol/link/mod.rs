//! The host's side of a connection to a live board, for every board
//! family: what to send after connecting, how to notice a board that went
//! quiet, what to show on its lights. Each family has its own sans-I/O link
//! (`dgt::link`, `millennium::link`, `certabo::link`); [`Link`] picks the
//! one for a protocol, so that the session and the shell need not know
//! which it is.

pub(crate) mod settings;
pub(crate) mod watchdog;

pub use self::settings::{LinkConfig, LinkEvent};
use super::{Decoded, Lights, Protocol, certabo, dgt, millennium};
use crate::time::Timestamp;
use dgt::command::Command;

/// The link to a live board of any family.
#[derive(Clone, Debug)]
pub enum Link {
    /// A DGT board: update mode, keep-alive, board dumps, clock commands.
    Dgt(dgt::link::DgtLink),
    /// A Millennium ChessLink board: registers, status polls, LEDs.
    Millennium(millennium::link::MillenniumLink),
    /// A board that streams its reports by itself (Certabo, Sentio):
    /// silence detection and LEDs.
    Stream(certabo::link::StreamLink),
}

impl Link {
    /// The link for `protocol`; `None` for `events` (no live board).
    pub(crate) fn for_protocol(protocol: Protocol, config: LinkConfig) -> Option<Self> {
        match protocol {
            Protocol::Dgt => Some(Self::Dgt(dgt::link::DgtLink::new(config))),
            Protocol::Millennium => Some(Self::Millennium(millennium::link::MillenniumLink::new(config))),
            Protocol::Certabo | Protocol::Sentio => {
                Some(Self::Stream(certabo::link::StreamLink::new(protocol, config)))
            }
            Protocol::Events => None,
        }
    }

    /// The port is open.
    pub fn handle_connected(&mut self, now: Timestamp) {
        match self {
            Self::Dgt(l) => l.handle_connected(now),
            Self::Millennium(l) => l.handle_connected(now),
            Self::Stream(l) => l.handle_connected(now),
        }
    }

    /// The port closed.
    pub fn handle_disconnected(&mut self) {
        match self {
            Self::Dgt(l) => l.handle_disconnected(),
            Self::Millennium(l) => l.handle_disconnected(),
            Self::Stream(l) => l.handle_disconnected(),
        }
    }

    /// Bytes arrived (whatever they mean).
    pub(crate) fn handle_rx(&mut self, now: Timestamp) {
        match self {
            Self::Dgt(l) => l.handle_rx(now),
            Self::Millennium(l) => l.handle_rx(now),
            Self::Stream(l) => l.handle_rx(now),
        }
    }

    /// The decoder made sense of something, or reported lost bytes.
    pub(crate) fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded) {
        match self {
            Self::Dgt(l) => l.handle_decoded(now, decoded),
            Self::Millennium(l) => l.handle_decoded(now, decoded),
            Self::Stream(l) => l.handle_decoded(now, decoded),
        }
    }

    /// Acts on deadlines that have come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        match self {
            Self::Dgt(l) => l.handle_timeout(now),
            Self::Millennium(l) => l.handle_timeout(now),
            Self::Stream(l) => l.handle_timeout(now),
        }
    }

    /// The next bytes to send, if any.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        match self {
            Self::Dgt(l) => l.poll_transmit(now).map(Command::bytes),
            Self::Millennium(l) => l.poll_transmit(now),
            Self::Stream(l) => l.poll_transmit(now),
        }
    }

    /// When to call [`Link::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match self {
            Self::Dgt(l) => l.poll_timeout(),
            Self::Millennium(l) => l.poll_timeout(),
            Self::Stream(l) => l.poll_timeout(),
        }
    }

    /// The next thing to report.
    pub fn poll_event(&mut self) -> Option<LinkEvent> {
        match self {
            Self::Dgt(l) => l.poll_event(),
            Self::Millennium(l) => l.poll_event(),
            Self::Stream(l) => l.poll_event(),
        }
    }

    /// Asks the board for its whole picture before the reconstructor blames
    /// a player on it (a DGT board dump, a Millennium status). Streaming
    /// boards (Certabo, Sentio) report the whole board on every scan: their
    /// next report is the answer, nothing is sent.
    pub(crate) fn request_board(&mut self, now: Timestamp) {
        match self {
            Self::Dgt(l) => l.request_board(now),
            Self::Millennium(l) => l.request_board(now),
            Self::Stream(_) => {}
        }
    }

    /// What a DGT 3000 clock shows besides the times (other boards have no
    /// clock to show it on).
    pub fn set_clock_display(&mut self, settings: dgt::display::ClockDisplaySettings) {
        if let Self::Dgt(l) = self {
            l.set_clock_display(settings);
        }
    }

    /// Shows `text` on the clock for a moment, if the board has a DGT 3000
    /// and the display's rule allows; returns whether it will be shown.
    pub fn show_text(&mut self, now: Timestamp, text: dgt::command::ClockText) -> bool {
        match self {
            Self::Dgt(l) => l.show_text(now, text),
            Self::Millennium(_) | Self::Stream(_) => false,
        }
    }

    /// What the board's lights should show now (boards without lights
    /// ignore it).
    pub fn show(&mut self, lights: &Lights) {
        match self {
            Self::Dgt(l) => l.show(lights),
            Self::Millennium(l) => l.show(lights),
            Self::Stream(l) => l.show(lights),
        }
    }
}
