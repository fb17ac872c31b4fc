//! A simulated Chessnut board, sans-I/O: silent until the host writes the
//! real-time command (`21 01 00`), then it sends its whole position each
//! time a scan (every 50 ms of its own time) finds it changed, as a real
//! board notifies. It has no clock; LED and other commands are ignored.

use super::{
    SimulatedBoard,
    scan::{Commands, Scan},
};

use boardcast_core::protocol::chessnut::{
    frame::{Framed, Framer, POSITION, picture_of, position_message},
    link::REAL_TIME,
};
use boardcast_core::{
    sensor::{ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// A simulated Chessnut board.
#[derive(Clone, Debug)]
pub struct ChessnutSim {
    scan: Scan,
    /// The host asked for real-time positions.
    streaming: bool,
    host: Commands,
    script: Framer,
}

impl ChessnutSim {
    /// A board with nothing on it yet, not streaming.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self { scan: Scan::default(), streaming: false, host: Commands::new(&[&REAL_TIME]), script: Framer::default() }
    }
}

impl SimulatedBoard for ChessnutSim {
    fn sends_updates(&self) -> bool {
        self.streaming
    }
    fn picture(&self) -> &Picture {
        self.scan.picture()
    }
    /// The real-time command starts the stream (and sends the position at
    /// the next scan, changed or not); other commands are ignored.
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        for _ in self.host.handle(bytes) {
            self.streaming = true;
            self.scan.resend();
        }
    }
    /// Recorded positions become the board's.
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.script.push(bytes);
        while let Some(item) = self.script.next_item() {
            if let Framed::Message { id: POSITION, data } = item
                && let Ok(picture) = picture_of(&data)
            {
                self.scan.set_picture(picture);
            }
        }
    }
    fn handle_script_event(&mut self, event: &SensorEvent) {
        self.scan.handle_script_event(event);
    }
    /// A scan: the position goes out if it changed since the last one sent.
    fn handle_timeout(&mut self, now: Timestamp) {
        if let Some((_, picture)) = self.scan.scan(now, self.streaming) {
            self.scan.send(&position_message(&picture));
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.scan.poll_timeout()
    }
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.scan.poll_transmit()
    }
    /// The link dropped: the board waits for the command again.
    fn handle_unplugged(&mut self) {
        self.scan.unplugged();
        self.host.clear();
        self.streaming = false;
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
