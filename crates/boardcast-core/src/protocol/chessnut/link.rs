//! The host's side of a Chessnut board, sans-I/O: the real-time command.
//!
//! A Chessnut board says nothing until the host writes `21 01 00`; then it
//! notifies its position on every change. The command goes after every
//! (re)connection, and again every `keepalive_after` until a position
//! comes (a write lost while the board was still waking up). Once the board
//! streams, nothing more is sent: it notifies only when something changes,
//! so its silence means nothing, and a link that drops is reported by
//! Bluetooth itself (the shell sees the device disconnect).

use std::collections::VecDeque;

use crate::protocol::{
    BoardLink, Decoded,
    link::{LinkConfig, LinkEvent},
};
use crate::{sensor::SensorEvent, time::Timestamp};

/// `21 01 00`: notify the position on every change (real-time mode).
pub const REAL_TIME: [u8; 3] = [0x21, 0x01, 0x00];

/// The host side of one Chessnut connection.
#[derive(Clone, Debug)]
pub(crate) struct ChessnutLink {
    config: LinkConfig,
    connected: bool,
    /// A position came since the connection opened.
    streaming: bool,
    /// When the real-time command is due (again), until a position comes.
    next_command: Option<Timestamp>,
    events: VecDeque<LinkEvent>,
}

impl ChessnutLink {
    /// A link that is not connected yet.
    pub(crate) const fn new(config: LinkConfig) -> Self {
        Self { config, connected: false, streaming: false, next_command: None, events: VecDeque::new() }
    }
}

impl BoardLink for ChessnutLink {
    /// The board is connected: the real-time command is due now.
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.streaming = false;
        self.next_command = Some(now);
    }

    /// The board is gone.
    fn handle_disconnected(&mut self) {
        self.connected = false;
        self.next_command = None;
    }

    /// Bytes arrived.
    fn handle_rx(&mut self, _now: Timestamp) {}

    /// A position came: the board streams and has said all it says about
    /// itself.
    fn handle_decoded(&mut self, _now: Timestamp, decoded: &Decoded) {
        if let Decoded::Sensor(SensorEvent::Board(_)) = decoded
            && !self.streaming
        {
            self.streaming = true;
            self.next_command = None;
            self.events.push_back(LinkEvent::Identified { serial: None, version: None });
        }
    }

    /// Nothing to do but send (see `poll_transmit`).
    fn handle_timeout(&mut self, _now: Timestamp) {}

    /// The real-time command, when due.
    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        let due = self.next_command.filter(|&at| self.connected && at <= now)?;
        self.next_command = Some(due.max(now) + self.config.keepalive_after);
        Some(REAL_TIME.to_vec())
    }

    /// When the command is due again.
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.next_command.filter(|_| self.connected)
    }

    /// The next thing to report.
    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    #[test]
    fn asks_for_real_time_positions_until_one_comes() {
        let mut link = ChessnutLink::new(LinkConfig::default());
        assert_eq!(link.poll_transmit(ms(0)), None, "nothing before the connection");
        link.handle_connected(ms(0));
        assert_eq!(link.poll_transmit(ms(0)), Some(REAL_TIME.to_vec()));
        assert_eq!(link.poll_transmit(ms(0)), None);
        assert_eq!(link.poll_timeout(), Some(ms(2000)));
        link.handle_timeout(ms(2000));
        assert_eq!(link.poll_transmit(ms(2000)), Some(REAL_TIME.to_vec()), "again: no position came");
        link.handle_decoded(ms(2100), &Decoded::Sensor(SensorEvent::Board(Box::default())));
        assert_eq!(link.poll_event(), Some(LinkEvent::Identified { serial: None, version: None }));
        assert_eq!(link.poll_timeout(), None, "a streaming board is left alone");
        assert_eq!(link.poll_transmit(ms(9000)), None);
        link.handle_disconnected();
        link.handle_connected(ms(10_000));
        assert_eq!(link.poll_transmit(ms(10_000)), Some(REAL_TIME.to_vec()), "after every reconnection");
    }
}
