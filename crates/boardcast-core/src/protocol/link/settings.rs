//! What every family's link shares: how patient it is ([`LinkConfig`]) and
//! what it reports ([`LinkEvent`]). A leaf, so that the family links and
//! [`super::Link`], which picks among them, do not depend on each other.

use std::time::Duration;

/// How patient the link is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkConfig {
    /// Ask the board to say something after this long without a byte.
    pub keepalive_after: Duration,
    /// Report the board silent after this long without a byte.
    pub silent_after: Duration,
    /// How long the clock has to acknowledge a command before it is sent
    /// again (up to three times).
    pub clock_ack_within: Duration,
    /// How long a board dump asked for after lost bytes may take before it
    /// is asked for again (up to three times).
    pub dump_within: Duration,
    /// The developer key a DGT Pegasus needs before it reports the real
    /// board (DGT gives one to each developer); `None` sends none.
    pub pegasus_key: Option<[u8; 6]>,
}

impl Default for LinkConfig {
    fn default() -> Self {
        Self {
            keepalive_after: Duration::from_secs(2),
            silent_after: Duration::from_secs(6),
            clock_ack_within: Duration::from_secs(2),
            dump_within: Duration::from_millis(500),
            pegasus_key: None,
        }
    }
}

/// What the link reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    /// Nothing has come from the board for `silent_after`: it is gone or
    /// hung; the shell should reconnect.
    Silent,
    /// The board told who it is: its serial number (boards that have
    /// one) and its firmware version, as far as known.
    Identified {
        /// The serial number.
        serial: Option<String>,
        /// The firmware version.
        version: Option<String>,
    },
    /// A clock command was not acknowledged after three tries and was
    /// dropped (which one, for the log).
    ClockCommandDropped(String),
    /// Text is to be shown on the clock, but the clock said it is not a
    /// DGT 3000 (a DGT XL has no text display): nothing will be shown.
    ClockShowsNoText,
}
