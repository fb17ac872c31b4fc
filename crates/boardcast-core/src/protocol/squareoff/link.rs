//! The host's side of a Square Off board, sans-I/O.
//!
//! At the first connection the link starts the board's game (`14#1*`,
//! answered `14#GO*`), which the board wants before it reports; not again
//! after a reconnection, which would start the board's own game afresh.
//! Then it asks for the board (`30#R*`), again every `keepalive_after`
//! until it comes. The board tells each square's change but not the whole
//! board: after every change the decoder reports, the link asks for the
//! whole board, so that a change missed (a lost notification) is put
//! right at once. The decoder reports a board only when it changed, so
//! the asking ends with the first answer that changes nothing.

use std::collections::VecDeque;

use crate::protocol::{
    BoardLink, Decoded,
    link::{LinkConfig, LinkEvent},
};
use crate::{sensor::SensorEvent, time::Timestamp};

/// `14#1*`: start a game.
pub const START_GAME: &[u8] = b"14#1*";
/// `30#R*`: the whole board.
pub const REQUEST_BOARD: &[u8] = b"30#R*";

/// The host side of one Square Off connection.
#[derive(Clone, Debug)]
pub(crate) struct SquareOffLink {
    config: LinkConfig,
    connected: bool,
    /// The game was started (at the first connection).
    started: bool,
    identified: bool,
    /// When to ask for the board (again) until one comes.
    next_ask: Option<Timestamp>,
    outgoing: VecDeque<&'static [u8]>,
    events: VecDeque<LinkEvent>,
}

impl SquareOffLink {
    /// A link that is not connected yet.
    pub(crate) const fn new(config: LinkConfig) -> Self {
        Self {
            config,
            connected: false,
            started: false,
            identified: false,
            next_ask: None,
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    fn ask(&mut self) {
        if self.connected && !self.outgoing.contains(&REQUEST_BOARD) {
            self.outgoing.push_back(REQUEST_BOARD);
        }
    }
}

impl BoardLink for SquareOffLink {
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.identified = false;
        self.outgoing.clear();
        if !self.started {
            self.started = true;
            self.outgoing.push_back(START_GAME);
        }
        self.next_ask = Some(now);
    }

    fn handle_disconnected(&mut self) {
        self.connected = false;
        self.next_ask = None;
        self.outgoing.clear();
    }

    fn handle_rx(&mut self, _now: Timestamp) {}

    /// A board reported: the first says the board is there; each asks for
    /// the whole board.
    fn handle_decoded(&mut self, _now: Timestamp, decoded: &Decoded) {
        if let Decoded::Sensor(SensorEvent::Board(_)) = decoded {
            if !self.identified {
                self.identified = true;
                self.next_ask = None;
                self.events.push_back(LinkEvent::Identified { serial: None, version: None });
            }
            self.ask();
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
        Some(REQUEST_BOARD.to_vec())
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.next_ask.filter(|_| self.connected)
    }

    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    fn request_board(&mut self, _now: Timestamp) {
        self.ask();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(link: &mut SquareOffLink, now: Timestamp) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| link.poll_transmit(now)).collect()
    }

    #[test]
    fn starts_the_game_once_and_asks_for_the_board_after_every_change() {
        let at = Timestamp::from_millis;
        let mut link = SquareOffLink::new(LinkConfig::default());
        link.handle_connected(at(0));
        assert_eq!(sent(&mut link, at(0)), [START_GAME.to_vec(), REQUEST_BOARD.to_vec()]);
        let board = Decoded::Sensor(SensorEvent::Board(Box::default()));
        link.handle_decoded(at(100), &board);
        assert_eq!(link.poll_event(), Some(LinkEvent::Identified { serial: None, version: None }));
        link.handle_decoded(at(100), &board);
        assert_eq!(sent(&mut link, at(100)), [REQUEST_BOARD.to_vec()], "asked once for two changes");
        link.handle_disconnected();
        link.handle_connected(at(5000));
        assert_eq!(sent(&mut link, at(5000)), [REQUEST_BOARD.to_vec()], "the board's game goes on");
    }
}
