//! Noticing a board that went quiet, for every family's link: after
//! `keepalive_after` without a byte the board is asked to say something
//! (once), after `silent_after` it is reported silent (once per silence;
//! the shell reconnects). Boards that stream by themselves (Certabo,
//! Sentio) are never asked: their silence alone tells.

use super::settings::LinkConfig;
use crate::time::Timestamp;

/// What the watchdog asks of the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Watch {
    /// Ask the board to say something.
    KeepAlive,
    /// The board is silent: report it.
    Silent,
}

/// The last byte heard, and whether the board was asked since.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watchdog {
    last_rx: Timestamp,
    keepalive_sent: bool,
    /// Whether the board is asked at all before it is reported silent.
    asks: bool,
}

impl Default for Watchdog {
    /// A board that is asked.
    fn default() -> Self {
        Self::new(true)
    }
}

impl Watchdog {
    /// A watchdog for a board that is asked (`asks`) or only listened to.
    pub(crate) const fn new(asks: bool) -> Self {
        Self { last_rx: Timestamp::ZERO, keepalive_sent: false, asks }
    }

    /// Bytes arrived, or the port opened: the quiet starts again.
    pub(crate) fn handle_rx(&mut self, now: Timestamp) {
        self.last_rx = now;
        self.keepalive_sent = false;
    }

    /// What to do now, if anything.
    pub(crate) fn handle_timeout(&mut self, now: Timestamp, config: &LinkConfig) -> Option<Watch> {
        let quiet = now.saturating_since(self.last_rx);
        if quiet >= config.silent_after {
            // Reported once per silence: the shell reconnects, which
            // starts the quiet again.
            self.handle_rx(now);
            Some(Watch::Silent)
        } else if self.asks && quiet >= config.keepalive_after && !self.keepalive_sent {
            self.keepalive_sent = true;
            Some(Watch::KeepAlive)
        } else {
            None
        }
    }

    /// When [`Self::handle_timeout`] has something to do next.
    pub(crate) fn poll_timeout(&self, config: &LinkConfig) -> Timestamp {
        let quiet = if self.keepalive_sent || !self.asks { config.silent_after } else { config.keepalive_after };
        self.last_rx + quiet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    #[test]
    fn a_quiet_board_is_asked_once_then_reported_silent_once() {
        let config = LinkConfig::default(); // asked after 2 s, silent after 6 s
        let mut watchdog = Watchdog::new(true);
        watchdog.handle_rx(ms(1000));
        assert_eq!(watchdog.poll_timeout(&config), ms(3000));
        assert_eq!(watchdog.handle_timeout(ms(2999), &config), None);
        assert_eq!(watchdog.handle_timeout(ms(3000), &config), Some(Watch::KeepAlive));
        assert_eq!(watchdog.handle_timeout(ms(4000), &config), None, "asked once");
        assert_eq!(watchdog.poll_timeout(&config), ms(7000));
        assert_eq!(watchdog.handle_timeout(ms(7000), &config), Some(Watch::Silent));
        assert_eq!(watchdog.handle_timeout(ms(7001), &config), None, "reported once per silence");
        // A byte starts the quiet again.
        watchdog.handle_rx(ms(8000));
        assert_eq!(watchdog.handle_timeout(ms(10_000), &config), Some(Watch::KeepAlive));
    }

    #[test]
    fn a_streaming_board_is_never_asked() {
        let config = LinkConfig::default();
        let mut watchdog = Watchdog::new(false);
        watchdog.handle_rx(ms(0));
        assert_eq!(watchdog.poll_timeout(&config), ms(6000));
        assert_eq!(watchdog.handle_timeout(ms(3000), &config), None);
        assert_eq!(watchdog.handle_timeout(ms(6000), &config), Some(Watch::Silent));
    }
}
