//! A simulated DGT Pegasus, sans-I/O: a simulated DGT board (it answers
//! the same commands) whose squares say only empty or occupied, and which
//! takes the developer-key message (`63 LEN …`) without answering it.

use super::{DgtSim, SimulatedBoard};

use boardcast_core::protocol::pegasus::DEVELOPER_KEY;
use boardcast_core::{
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    time::Timestamp,
};
use shakmaty::Color;

/// A simulated Pegasus.
#[derive(Clone, Debug)]
pub struct PegasusSim {
    dgt: DgtSim,
    /// Host bytes of a developer-key message still to skip (`None`: the
    /// length byte is still to come).
    skipping: Option<Option<usize>>,
    /// The developer key the host sent last.
    key: Vec<u8>,
}

/// What a Pegasus reports for a cell: occupied squares hold "a white pawn"
/// (code `01`).
fn occupancy(cell: Cell) -> Cell {
    if cell.is_occupied() { Cell::Piece(Color::White.pawn()) } else { Cell::Empty }
}

impl PegasusSim {
    /// A board with nothing on it yet, idle.
    pub fn new(serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self { dgt: DgtSim::new(serial, ClockSide::Left), skipping: None, key: Vec::new() }
    }

    /// The developer-key message's payload the host sent last (empty if
    /// none).
    pub fn key(&self) -> &[u8] {
        &self.key
    }
}

impl SimulatedBoard for PegasusSim {
    fn sends_updates(&self) -> bool {
        self.dgt.sends_updates()
    }
    fn picture(&self) -> &Picture {
        self.dgt.picture()
    }
    /// DGT commands, with the developer-key message taken out.
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        let mut commands = Vec::with_capacity(bytes.len());
        for &byte in bytes {
            match self.skipping {
                Some(None) => {
                    self.skipping = Some(Some(usize::from(byte)));
                    self.key.clear();
                }
                Some(Some(left)) => {
                    self.key.push(byte);
                    self.skipping = (left > 1).then_some(Some(left - 1));
                }
                None if byte == DEVELOPER_KEY => self.skipping = Some(None),
                None => commands.push(byte),
            }
        }
        self.dgt.handle_host_bytes(&commands);
    }
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.dgt.handle_script_bytes(bytes);
    }
    /// Pieces become occupancy; a Pegasus has no clock.
    fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => {
                let mut seen = Picture::empty();
                for square in board.occupied() {
                    seen.set(square, occupancy(board.get(square)));
                }
                self.dgt.handle_script_event(&SensorEvent::Board(Box::new(seen)));
            }
            &SensorEvent::Square { square, cell } => {
                self.dgt.handle_script_event(&SensorEvent::Square { square, cell: occupancy(cell) });
            }
            SensorEvent::Clock(_) => {}
        }
    }
    fn handle_timeout(&mut self, now: Timestamp) {
        self.dgt.handle_timeout(now);
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.dgt.poll_timeout()
    }
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.dgt.poll_transmit()
    }
    fn handle_unplugged(&mut self) {
        self.skipping = None;
        self.dgt.handle_unplugged();
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::{BoardDecoder, Decoded, pegasus::PegasusDecoder};
    use shakmaty::Board;

    use super::*;

    #[test]
    fn takes_the_key_and_reports_occupancy() {
        let mut board = PegasusSim::new("12345", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&Board::new()))));
        board.handle_host_bytes(&[0x63, 0x07, 0x42, 0x42]);
        board.handle_host_bytes(&[3, 4, 5, 6, 0x00, 0x42]);
        assert_eq!(board.key(), [0x42, 0x42, 3, 4, 5, 6, 0]);
        let bytes = board.poll_transmit().expect("the dump asked for after the key");
        let mut decoder = PegasusDecoder::new();
        decoder.handle_bytes(&bytes);
        let out: Vec<Decoded> = std::iter::from_fn(|| decoder.poll_decoded()).collect();
        let [Decoded::Sensor(SensorEvent::Board(picture))] = out.as_slice() else { panic!("{out:?}") };
        assert_eq!(picture.occupied(), Board::new().occupied());
        assert_eq!(picture.get(shakmaty::Square::E8), Cell::Occupied);
    }
}
