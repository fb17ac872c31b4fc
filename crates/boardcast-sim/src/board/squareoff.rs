//! A simulated Square Off board, sans-I/O: once the host has started a
//! game (`14#1*`, answered `14#GO*`) it tells each square whose occupancy
//! a scan finds changed (`0#e2u*`, `0#e4d*`: the lifts first), and
//! answers `30#R*` with the whole board at once. The game goes on when the
//! link drops. It has no clock and tells only occupancy.

use super::{
    SimulatedBoard,
    scan::{Commands, Recorded, Scan},
};

use boardcast_core::protocol::squareoff::{
    self, board_message,
    link::{REQUEST_BOARD, START_GAME},
    square_message,
};
use boardcast_core::{
    sensor::{ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// A simulated Square Off board.
#[derive(Debug)]
pub struct SquareOffSim {
    scan: Scan,
    /// Recorded bytes read back.
    recorded: Recorded,
    /// The host started a game.
    started: bool,
    host: Commands,
}

impl SquareOffSim {
    /// A board with nothing on it yet, no game started.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self {
            scan: Scan::default(),
            recorded: Recorded::new(&squareoff::FAMILY),
            started: false,
            host: Commands::new(&[START_GAME, REQUEST_BOARD]),
        }
    }
}

impl SimulatedBoard for SquareOffSim {
    fn sends_updates(&self) -> bool {
        self.started
    }
    fn picture(&self) -> &Picture {
        self.scan.picture()
    }
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        for command in self.host.handle(bytes) {
            if command == START_GAME {
                self.started = true;
                self.scan.send(b"14#GO*");
            } else {
                let message = board_message(self.scan.picture().occupied());
                self.scan.send(&message);
            }
        }
    }
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.recorded.play(bytes, &mut self.scan);
    }
    fn handle_script_event(&mut self, event: &SensorEvent) {
        self.scan.handle_script_event(event);
    }
    /// A scan: each square whose occupancy changed, lifts first. The first
    /// scan after a start sends nothing (the host asks for the board).
    fn handle_timeout(&mut self, now: Timestamp) {
        let Some((Some(before), after)) = self.scan.scan(now, self.started) else { return };
        let changed = before.occupied() ^ after.occupied();
        for (square, put) in (changed & before.occupied())
            .into_iter()
            .map(|s| (s, false))
            .chain((changed & after.occupied()).into_iter().map(|s| (s, true)))
        {
            self.scan.send(&square_message(square, put));
        }
    }
    fn poll_timeout(&self) -> Option<Timestamp> {
        self.scan.poll_timeout()
    }
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.scan.poll_transmit()
    }
    fn handle_unplugged(&mut self) {
        self.scan.unplugged();
        self.host.clear();
    }
}
