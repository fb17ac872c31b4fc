//! A simulated ChessUp board, sans-I/O: `67` has it send its state at
//! once. Inside a session (`B9` and eleven bytes) it sends a move message
//! each time a scan finds the board changed (the squares emptied and
//! filled; a state asked for after it says the rest), and waits for the
//! host's `21`: with more than [`PATIENCE`] move messages left
//! unacknowledged it gives up on the host, as a real one drops the link,
//! and sends nothing more until a new session. It has no clock and makes
//! no promotion messages.

use super::{
    SimulatedBoard,
    scan::{Recorded, Scan},
};

use boardcast_core::protocol::chessup::{self, MOVE_ACK, STATE, move_message, state_message};
use boardcast_core::{
    sensor::{ClockSide, Picture, SensorEvent},
    time::Timestamp,
};
use shakmaty::{Bitboard, Square};

/// How many move messages may wait for their acknowledgement.
pub const PATIENCE: usize = 3;

/// A simulated ChessUp board.
#[derive(Debug)]
pub struct ChessUpSim {
    scan: Scan,
    /// Recorded bytes read back.
    recorded: Recorded,
    /// A session is open.
    session: bool,
    /// Move messages not acknowledged yet.
    unacknowledged: usize,
    /// Bytes of the session message still to skip.
    skipping: usize,
}

impl ChessUpSim {
    /// A board with nothing on it yet, no session.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self {
            scan: Scan::default(),
            recorded: Recorded::new(&chessup::FAMILY),
            session: false,
            unacknowledged: 0,
            skipping: 0,
        }
    }

    /// Whether the board gave up on a host that did not acknowledge.
    pub const fn gave_up(&self) -> bool {
        self.unacknowledged > PATIENCE
    }
}

impl SimulatedBoard for ChessUpSim {
    fn sends_updates(&self) -> bool {
        self.session && !self.gave_up()
    }
    /// A real one drops the link to a host that does not acknowledge.
    fn drops_host(&self) -> bool {
        self.gave_up()
    }
    fn picture(&self) -> &Picture {
        self.scan.picture()
    }
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            match byte {
                _ if self.skipping > 0 => self.skipping -= 1,
                0xB9 => {
                    self.session = true;
                    self.unacknowledged = 0;
                    self.skipping = 11;
                }
                STATE => {
                    let message = state_message(self.scan.picture());
                    self.scan.send(&message);
                }
                MOVE_ACK => self.unacknowledged = self.unacknowledged.saturating_sub(1),
                _ => {}
            }
        }
    }
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.recorded.play(bytes, &mut self.scan);
    }
    fn handle_script_event(&mut self, event: &SensorEvent) {
        self.scan.handle_script_event(event);
    }
    /// A scan: a move message for a change (the first square emptied and
    /// the first filled, either standing for the other when alone).
    fn handle_timeout(&mut self, now: Timestamp) {
        let sending = self.sends_updates();
        let Some((Some(before), after)) = self.scan.scan(now, sending) else { return };
        let changed = Square::ALL.into_iter().filter(|&s| before.get(s) != after.get(s));
        let (emptied, filled): (Bitboard, Bitboard) = changed.fold((Bitboard::EMPTY, Bitboard::EMPTY), |(e, f), s| {
            if after.get(s).is_occupied() { (e, f | Bitboard::from(s)) } else { (e | Bitboard::from(s), f) }
        });
        let (Some(from), Some(to)) = (emptied.first().or(filled.first()), filled.first().or(emptied.first())) else {
            return;
        };
        self.scan.send(&move_message(from, to));
        self.unacknowledged += 1;
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.scan.poll_timeout()
    }
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.scan.poll_transmit()
    }
    /// The link dropped: the session is over, and with it what waited for
    /// an acknowledgement.
    fn handle_unplugged(&mut self) {
        self.scan.unplugged();
        self.session = false;
        self.unacknowledged = 0;
        self.skipping = 0;
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::chessup::link::SESSION;
    use boardcast_core::sensor::Cell;
    use shakmaty::Board;

    use super::*;

    #[test]
    fn gives_up_on_a_host_that_does_not_acknowledge() {
        let mut board = ChessUpSim::new("", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&Board::new()))));
        board.handle_host_bytes(&SESSION);
        board.handle_timeout(Timestamp::ZERO);
        let mut t = 0;
        let mut moves = 0;
        for (square, cell) in [(Square::E2, Cell::Empty), (Square::E2, Cell::Piece(shakmaty::Color::White.pawn()))]
            .into_iter()
            .cycle()
            .take(8)
        {
            t += 50;
            board.handle_script_event(&SensorEvent::Square { square, cell });
            board.handle_timeout(Timestamp::from_millis(t));
            moves += usize::from(board.poll_transmit().is_some());
        }
        assert_eq!(moves, PATIENCE + 1, "then silence");
        assert!(board.gave_up());
    }
}
