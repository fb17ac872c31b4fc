//! A simulated Chessnut board, sans-I/O: silent until the host writes the
//! real-time command (`21 01 00`), then it sends its whole position each
//! time a scan (every 50 ms of its own time) finds it changed, as a real
//! board notifies. It has no clock; LED and other commands are ignored.

use super::SimulatedBoard;
use std::{collections::VecDeque, time::Duration};

use boardcast_core::protocol::chessnut::{
    frame::{Framed, Framer, POSITION, picture_of, position_message},
    link::REAL_TIME,
};
use boardcast_core::{
    sensor::{ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// How often the board looks at its squares.
pub const SCAN_EVERY: Duration = Duration::from_millis(50);

/// A simulated Chessnut board.
#[derive(Clone, Debug)]
pub struct ChessnutSim {
    picture: Picture,
    /// The host asked for real-time positions.
    streaming: bool,
    /// The position last sent (`None`: send at the next scan).
    sent: Option<Picture>,
    next_scan: Timestamp,
    host: Vec<u8>,
    script: Framer,
    out: VecDeque<u8>,
}

impl ChessnutSim {
    /// A board with nothing on it yet, not streaming.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self {
            picture: Picture::empty(),
            streaming: false,
            sent: None,
            next_scan: Timestamp::ZERO,
            host: Vec::new(),
            script: Framer::default(),
            out: VecDeque::new(),
        }
    }
}

impl SimulatedBoard for ChessnutSim {
    fn sends_updates(&self) -> bool {
        self.streaming
    }
    fn picture(&self) -> &Picture {
        &self.picture
    }
    /// The real-time command starts the stream (and sends the position at
    /// the next scan, changed or not); other commands are ignored.
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        self.host.extend_from_slice(bytes);
        while let Some(at) = self.host.windows(3).position(|w| w == REAL_TIME) {
            self.host.drain(..at + 3);
            self.streaming = true;
            self.sent = None;
        }
        let keep = self.host.len().min(2);
        self.host.drain(..self.host.len() - keep);
    }
    /// Recorded positions become the board's.
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.script.push(bytes);
        while let Some(item) = self.script.next_item() {
            if let Framed::Message { id: POSITION, data } = item
                && let Ok(picture) = picture_of(&data)
            {
                self.picture = picture;
            }
        }
    }
    fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => self.picture = (**board).clone(),
            &SensorEvent::Square { square, cell } => {
                self.picture.set(square, cell);
            }
            SensorEvent::Clock(_) => {}
        }
    }
    /// A scan: the position goes out if it changed since the last one sent.
    fn handle_timeout(&mut self, now: Timestamp) {
        if now < self.next_scan {
            return;
        }
        self.next_scan = now + SCAN_EVERY;
        if self.streaming && self.sent.as_ref() != Some(&self.picture) {
            self.out.extend(position_message(&self.picture));
            self.sent = Some(self.picture.clone());
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        Some(self.next_scan)
    }
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() { None } else { Some(self.out.drain(..).collect()) }
    }
    /// The link dropped: the board waits for the command again.
    fn handle_unplugged(&mut self) {
        self.out.clear();
        self.streaming = false;
        self.sent = None;
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::{BoardDecoder, Decoded, chessnut::ChessnutDecoder};
    use shakmaty::{Board, Square};

    use super::*;
    use boardcast_core::sensor::Cell;

    #[test]
    fn streams_changed_positions_once_asked() {
        let mut board = ChessnutSim::new("", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&Board::new()))));
        board.handle_timeout(Timestamp::ZERO);
        assert_eq!(board.poll_transmit(), None, "silent until asked");
        board.handle_host_bytes(&REAL_TIME[..1]);
        board.handle_host_bytes(&REAL_TIME[1..]);
        board.handle_timeout(Timestamp::from_millis(50));
        let bytes = board.poll_transmit().unwrap();
        board.handle_timeout(Timestamp::from_millis(100));
        assert_eq!(board.poll_transmit(), None, "unchanged: nothing sent");
        board.handle_script_event(&SensorEvent::Square { square: Square::E2, cell: Cell::Empty });
        board.handle_timeout(Timestamp::from_millis(150));
        let next = board.poll_transmit().unwrap();
        let mut decoder = ChessnutDecoder::new();
        decoder.handle_bytes(&[bytes, next].concat());
        let pictures: Vec<Decoded> = std::iter::from_fn(|| decoder.poll_decoded()).collect();
        // The first position whole; then the changed square, then the
        // whole position again (the decoder says what changed first).
        assert_eq!(pictures.len(), 3, "{pictures:?}");
        assert!(matches!(&pictures[1], Decoded::Sensor(SensorEvent::Square { square: Square::E2, .. })));
        let Decoded::Sensor(SensorEvent::Board(last)) = &pictures[2] else { panic!() };
        assert_eq!(**last, *board.picture());
    }
}
