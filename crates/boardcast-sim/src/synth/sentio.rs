//! Generated streams as a Sentio-format (occupancy-only) board would send
//! them: a line of eight rank bitmasks about ten times a second, showing
//! which squares are occupied at that moment (see `certabo.rs` for the
//! chunking and noise).

use super::{
    ReportForm, Rng,
    certabo::{Reporting, reports_capture},
};
use crate::board::SimulatedBoard;
use crate::board::sentio::SentioSim;
use boardcast_core::{
    capture::CaptureHeader,
    sensor::{ClockSide, SensorEvent},
    time::Timestamp,
};

/// A stream as a `sentio` capture: the reports of an occupancy-only board
/// ([`SentioSim`]); which piece stands where and clock events are lost.
pub fn sentio_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: ReportForm,
    rng: &mut Rng,
) -> String {
    let mut board = SentioSim::new("", ClockSide::Left);
    reports_capture(header, events, form, rng, &mut board)
}

impl Reporting for SentioSim {
    fn apply(&mut self, event: &SensorEvent) {
        self.handle_script_event(event);
    }
    fn report(&self) -> Vec<u8> {
        Self::report(self)
    }
}
