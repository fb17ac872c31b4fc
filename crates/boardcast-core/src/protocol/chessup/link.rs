//! The host's side of a ChessUp board, sans-I/O: the session, the
//! acknowledgements, and asking for the state.
//!
//! After every (re)connection the link opens a session in which the board
//! streams moves (`B9`, game mode 5, both players at the board, no
//! assistance) and asks for the state (`67`), again every
//! `keepalive_after` until one comes. Each move or promotion message is
//! acknowledged at once (`21`, `23`; the decoder says which), before
//! anything else: a board left waiting repeats the message until the link
//! drops. After each acknowledgement the link asks for the state, which
//! says where every piece stands (a move message names two squares only).

use std::collections::VecDeque;

use super::{MOVE_ACK, STATE};
use crate::protocol::{
    BoardInfo, BoardLink, Decoded,
    link::{LinkConfig, LinkEvent},
};
use crate::{sensor::SensorEvent, time::Timestamp};

/// `B9`: the session: game mode 5, then White and Black as players at the
/// board (type 0, assistance level 1, buttons not locked), no hints,
/// neither side remote, the device's user White.
pub const SESSION: [u8; 12] = [0xB9, 5, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0];

/// The host side of one ChessUp connection.
#[derive(Clone, Debug)]
pub(crate) struct ChessUpLink {
    config: LinkConfig,
    connected: bool,
    /// A state came since the connection opened.
    identified: bool,
    /// When to ask for the state (again) until one comes.
    next_ask: Option<Timestamp>,
    /// Acknowledgements to send, in order, before anything else.
    acks: VecDeque<u8>,
    /// Other bytes to send, in order.
    outgoing: VecDeque<Vec<u8>>,
    events: VecDeque<LinkEvent>,
}

impl ChessUpLink {
    /// A link that is not connected yet.
    pub(crate) const fn new(config: LinkConfig) -> Self {
        Self {
            config,
            connected: false,
            identified: false,
            next_ask: None,
            acks: VecDeque::new(),
            outgoing: VecDeque::new(),
            events: VecDeque::new(),
        }
    }
}

impl BoardLink for ChessUpLink {
    /// The session first, then the state.
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.identified = false;
        self.acks.clear();
        self.outgoing.clear();
        self.outgoing.push_back(SESSION.to_vec());
        self.next_ask = Some(now);
    }

    fn handle_disconnected(&mut self) {
        self.connected = false;
        self.next_ask = None;
        self.acks.clear();
        self.outgoing.clear();
    }

    fn handle_rx(&mut self, _now: Timestamp) {}

    /// A move to acknowledge (ahead of whatever waits), or the first state.
    fn handle_decoded(&mut self, _now: Timestamp, decoded: &Decoded) {
        match decoded {
            &Decoded::Info(BoardInfo::Acknowledge(ack)) => {
                self.acks.push_back(ack);
                if ack == MOVE_ACK {
                    self.outgoing.push_back(vec![STATE]);
                }
            }
            Decoded::Sensor(SensorEvent::Board(_)) if !self.identified => {
                self.identified = true;
                self.next_ask = None;
                self.events.push_back(LinkEvent::Identified { serial: None, version: None });
            }
            _ => {}
        }
    }

    fn handle_timeout(&mut self, _now: Timestamp) {}

    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if !self.connected {
            return None;
        }
        if let Some(ack) = self.acks.pop_front() {
            return Some(vec![ack]);
        }
        if let Some(bytes) = self.outgoing.pop_front() {
            return Some(bytes);
        }
        let due = self.next_ask.filter(|&at| at <= now)?;
        self.next_ask = Some(due.max(now) + self.config.keepalive_after);
        Some(vec![STATE])
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.next_ask.filter(|_| self.connected)
    }

    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    /// The state says the whole board.
    fn request_board(&mut self, _now: Timestamp) {
        if self.connected {
            self.outgoing.push_back(vec![STATE]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::chessup::{PROMOTION_ACK, move_message};
    use crate::protocol::{BoardDecoder, chessup::ChessUpDecoder};
    use shakmaty::Square;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn sent(link: &mut ChessUpLink, now: Timestamp) -> Vec<Vec<u8>> {
        std::iter::from_fn(|| link.poll_transmit(now)).collect()
    }

    #[test]
    fn every_move_is_acknowledged_before_anything_else_and_the_state_asked_for() {
        let mut link = ChessUpLink::new(LinkConfig::default());
        link.handle_connected(ms(0));
        assert_eq!(sent(&mut link, ms(0)), [SESSION.to_vec(), vec![STATE]]);
        link.request_board(ms(10));
        // The board's move message and promotion message, as decoded.
        let mut decoder = ChessUpDecoder::new();
        decoder.handle_bytes(&[&move_message(Square::E7, Square::E8)[..], &[0x97, 4]].concat());
        while let Some(decoded) = decoder.poll_decoded() {
            link.handle_decoded(ms(20), &decoded);
        }
        assert_eq!(
            sent(&mut link, ms(20)),
            [vec![MOVE_ACK], vec![PROMOTION_ACK], vec![STATE], vec![STATE]],
            "the acknowledgements first, then what waited"
        );
        assert_eq!(link.poll_timeout(), Some(ms(2000)), "the state again until one comes");
        link.handle_decoded(ms(30), &Decoded::Sensor(SensorEvent::Board(Box::default())));
        assert_eq!(link.poll_event(), Some(LinkEvent::Identified { serial: None, version: None }));
        assert_eq!(link.poll_timeout(), None);
        link.handle_disconnected();
        assert_eq!(sent(&mut link, ms(40)), Vec::<Vec<u8>>::new());
    }
}
