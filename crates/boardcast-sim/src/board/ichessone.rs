//! A simulated iChessOne board, sans-I/O: after `CPIRQ` it sends its
//! position each time a scan finds it changed; `RP` has it send the
//! position at once. It has no clock; other commands are ignored.

use super::{
    SimulatedBoard,
    scan::{Commands, Recorded, Scan},
};

use boardcast_core::protocol::ichessone::{
    self,
    link::{REPORT_CHANGES, REQUEST_POSITION},
    position_message,
};
use boardcast_core::{
    sensor::{ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// A simulated iChessOne board.
#[derive(Debug)]
pub struct IChessOneSim {
    scan: Scan,
    /// Recorded bytes read back.
    recorded: Recorded,
    /// The host asked for every change.
    streaming: bool,
    host: Commands,
}

impl IChessOneSim {
    /// A board with nothing on it yet, not reporting.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self {
            scan: Scan::default(),
            recorded: Recorded::new(&ichessone::FAMILY),
            streaming: false,
            host: Commands::new(&[REPORT_CHANGES, REQUEST_POSITION]),
        }
    }
}

impl SimulatedBoard for IChessOneSim {
    fn sends_updates(&self) -> bool {
        self.streaming
    }
    fn picture(&self) -> &Picture {
        self.scan.picture()
    }
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        for command in self.host.handle(bytes) {
            if command == REPORT_CHANGES {
                self.streaming = true;
            } else {
                let message = position_message(self.scan.picture());
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
    fn handle_unplugged(&mut self) {
        self.scan.unplugged();
        self.host.clear();
        self.streaming = false;
    }
}
