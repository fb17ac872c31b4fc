//! A simulated Sentio-format board, sans-I/O: it streams the occupancy of
//! its squares ten times a second of its own time, whatever the host does.
//! It has no LEDs and no clock: host bytes and clock events are ignored.

use super::SimulatedBoard;
use std::collections::VecDeque;

use shakmaty::Square;

use super::certabo::REPORT_EVERY;
use boardcast_core::protocol::sentio::{occupancy, ranks};
use boardcast_core::{
    protocol::certabo::line::{Line, LineReader, OCCUPANCY_NUMBERS, encode_report},
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// A simulated Sentio-format board.
#[derive(Clone, Debug)]
pub struct SentioSim {
    /// The board as scripted (pieces kept as given: the board itself only
    /// tells occupied from empty).
    picture: Picture,
    /// When the next report is due.
    next_report: Timestamp,
    /// Splits scripted raw bytes into lines.
    script: LineReader,
    out: VecDeque<u8>,
}

impl SentioSim {
    /// A board with nothing on it yet.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self {
            picture: Picture::empty(),
            next_report: Timestamp::ZERO,
            script: LineReader::new(),
            out: VecDeque::new(),
        }
    }

    /// The report line the board sends for the board as it is now.
    pub fn report(&self) -> Vec<u8> {
        let mut line = Vec::with_capacity(40);
        encode_report(ranks(self.picture.occupied()), &mut line);
        line
    }
}

impl SimulatedBoard for SentioSim {
    /// Whether the board is sending (a Sentio board always is).
    fn sends_updates(&self) -> bool {
        true
    }
    /// The board as it is now.
    fn picture(&self) -> &Picture {
        &self.picture
    }
    /// Bytes the host sent: the board has no LEDs and ignores them.
    fn handle_host_bytes(&mut self, _bytes: &[u8]) {}
    /// Raw bytes of a recorded Sentio-format board: each whole report
    /// becomes the board's occupancy.
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.script.push(bytes);
        while let Some(line) = self.script.next_line() {
            if let Line::Numbers(numbers) = line
                && numbers.len() == OCCUPANCY_NUMBERS
            {
                let occupied = occupancy(&numbers);
                for square in Square::ALL {
                    let cell = if occupied.contains(square) { Cell::Occupied } else { Cell::Empty };
                    if self.picture.get(square).is_occupied() != cell.is_occupied() {
                        self.picture.set(square, cell);
                    }
                }
            }
        }
    }
    /// A decoded sensor event of a script: squares change; clock readings
    /// are ignored.
    fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => self.picture = (**board).clone(),
            &SensorEvent::Square { square, cell } => {
                self.picture.set(square, cell);
            }
            SensorEvent::Clock(_) => {}
        }
    }
    /// Time passes: a report is sent when one is due.
    fn handle_timeout(&mut self, now: Timestamp) {
        if now < self.next_report {
            return;
        }
        let report = self.report();
        self.out.extend(report);
        self.next_report = now + REPORT_EVERY;
    }
    /// When the next report is due.
    fn poll_timeout(&self) -> Option<Timestamp> {
        Some(self.next_report)
    }
    /// Bytes to send to the host.
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() { None } else { Some(self.out.drain(..).collect()) }
    }
    /// The cable was pulled: what was not sent is lost.
    fn handle_unplugged(&mut self) {
        self.out.clear();
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::BoardDecoder;
    use shakmaty::Board;

    use super::*;
    use boardcast_core::protocol::{Decoded, sentio::SentioDecoder};

    #[test]
    fn streams_the_occupancy_it_is_given() {
        let mut board = SentioSim::new("x", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&Board::new()))));
        board.handle_script_event(&SensorEvent::Square { square: Square::H1, cell: Cell::Empty });
        board.handle_timeout(Timestamp::ZERO);
        assert_eq!(board.poll_transmit().unwrap(), b":255 255 0 0 0 0 255 254 \r\n");
        assert_eq!(board.poll_timeout(), Some(Timestamp::from_millis(100)));
        let mut decoder = SentioDecoder::new();
        decoder.handle_bytes(&board.report());
        let Some(Decoded::Sensor(SensorEvent::Board(picture))) = decoder.poll_decoded() else { panic!() };
        assert_eq!(picture.occupied(), board.picture().occupied());
    }

    #[test]
    fn plays_recorded_reports() {
        let mut board = SentioSim::new("x", ClockSide::Left);
        board.handle_script_bytes(b":255 255 0 0 0 0 255 ");
        board.handle_script_bytes(b"254 \r\n");
        assert_eq!(board.picture().occupied().count(), 31);
        assert_eq!(board.picture().get(Square::A1), Cell::Occupied);
    }
}
