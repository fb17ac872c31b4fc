//! The host's side of an iChessOne board, sans-I/O: after every
//! (re)connection `CPIRQ` (report every change) and `RP` (the position
//! now), `RP` again every `keepalive_after` until a position comes; then
//! the board reports by itself and the link sends nothing more but `RP`
//! when the reconstructor wants the whole board before blaming a player.

use std::collections::VecDeque;

use crate::protocol::{
    BoardLink, Decoded,
    link::{LinkConfig, LinkEvent},
};
use crate::{sensor::SensorEvent, time::Timestamp};

/// `CPIRQ`: report the position whenever it changes.
pub const REPORT_CHANGES: &[u8] = b"CPIRQ";
/// `RP`: the position now.
pub const REQUEST_POSITION: &[u8] = b"RP";

/// The host side of one iChessOne connection.
#[derive(Clone, Debug)]
pub(crate) struct IChessOneLink {
    config: LinkConfig,
    connected: bool,
    identified: bool,
    /// When to ask for the position (again) until one comes.
    next_ask: Option<Timestamp>,
    outgoing: VecDeque<&'static [u8]>,
    events: VecDeque<LinkEvent>,
}

impl IChessOneLink {
    /// A link that is not connected yet.
    pub(crate) const fn new(config: LinkConfig) -> Self {
        Self {
            config,
            connected: false,
            identified: false,
            next_ask: None,
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
        }
    }
}

impl BoardLink for IChessOneLink {
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.identified = false;
        self.outgoing.clear();
        self.outgoing.push_back(REPORT_CHANGES);
        self.next_ask = Some(now);
    }

    fn handle_disconnected(&mut self) {
        self.connected = false;
        self.next_ask = None;
        self.outgoing.clear();
    }

    fn handle_rx(&mut self, _now: Timestamp) {}

    fn handle_decoded(&mut self, _now: Timestamp, decoded: &Decoded) {
        if let Decoded::Sensor(SensorEvent::Board(_)) = decoded
            && !self.identified
        {
            self.identified = true;
            self.next_ask = None;
            self.events.push_back(LinkEvent::Identified { serial: None, version: None });
        }
    }

    fn handle_timeout(&mut self, _now: Timestamp) {}

    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if !self.connected {
            return None;
        }
        if let Some(bytes) = self.outgoing.pop_front() {
            return Some(bytes.to_vec());
        }
        let due = self.next_ask.filter(|&at| at <= now)?;
        self.next_ask = Some(due.max(now) + self.config.keepalive_after);
        Some(REQUEST_POSITION.to_vec())
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.next_ask.filter(|_| self.connected)
    }

    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    fn request_board(&mut self, _now: Timestamp) {
        if self.connected {
            self.outgoing.push_back(REQUEST_POSITION);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_for_changes_and_the_position_until_one_comes() {
        let mut link = IChessOneLink::new(LinkConfig::default());
        let at = Timestamp::from_millis;
        link.handle_connected(at(0));
        let sent: Vec<Vec<u8>> = std::iter::from_fn(|| link.poll_transmit(at(0))).collect();
        assert_eq!(sent, [b"CPIRQ".to_vec(), b"RP".to_vec()]);
        assert_eq!(link.poll_transmit(at(2000)), Some(b"RP".to_vec()), "again: no position came");
        link.handle_decoded(at(2100), &Decoded::Sensor(SensorEvent::Board(Box::default())));
        assert_eq!(link.poll_event(), Some(LinkEvent::Identified { serial: None, version: None }));
        assert_eq!(link.poll_timeout(), None, "the board reports by itself");
        link.request_board(at(3000));
        assert_eq!(link.poll_transmit(at(3000)), Some(b"RP".to_vec()));
    }
}
