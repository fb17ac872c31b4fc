//! Generated streams as a Certabo board would send them: a report of every
//! square's tag about ten times a second, showing the board as it is at
//! that moment, split into read chunks at random, with line noise if asked.
//! The same machinery makes the reports of Sentio-format boards
//! (`sentio.rs`).
//!
//! Reports sample the board: a state that lasts less than a report's
//! interval (a flicker, a piece crossing a square) may never be seen,
//! exactly as on a real board.

use crate::board::SimulatedBoard;
use std::time::Duration;

use super::Rng;
use crate::board::certabo::CertaboSim;
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    sensor::{ClockSide, SensorEvent},
    time::Timestamp,
};

/// How to turn a stream into the reports of a board that streams.
#[derive(Clone, Copy, Debug)]
pub struct ReportForm {
    /// Time between two reports.
    pub every: Duration,
    /// Random lateness of a report, up to this much.
    pub jitter: Duration,
    /// Chance that a report arrives in several read chunks.
    pub split: f64,
    /// Chance of a few bytes of line noise before a report, and chance that
    /// a report loses its end (the next one then follows it on the line).
    pub noise: f64,
    /// How long the board goes on reporting after the last event.
    pub tail: Duration,
}

impl ReportForm {
    /// Ten reports a second, cleanly, each in one read chunk.
    pub fn clean() -> Self {
        Self {
            every: Duration::from_millis(100),
            jitter: Duration::ZERO,
            split: 0.0,
            noise: 0.0,
            tail: Duration::from_secs(3),
        }
    }

    /// Ten reports a second with a little lateness, random chunking and
    /// some line noise.
    pub fn varied(rng: &mut Rng) -> Self {
        Self {
            every: Duration::from_millis(100),
            jitter: Duration::from_millis(rng.range(0, 15)),
            split: 0.5,
            noise: 0.01,
            tail: Duration::from_secs(3),
        }
    }
}

/// A stream as a `certabo` capture: the reports a Certabo board with the
/// simulator's set of pieces ([`CertaboSim`]) sends. The header gets the
/// set's calibration, spare pieces for every promotion included
/// ([`CertaboSim::full_calibration`]), so that a replay identifies every
/// piece; clock events are dropped (the board has no clock).
pub fn certabo_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: ReportForm,
    rng: &mut Rng,
) -> String {
    let mut header = header.clone();
    header.calibration = CertaboSim::full_calibration().entries();
    let mut board = CertaboSim::new("", ClockSide::Left);
    reports_capture(&header, events, form, rng, &mut board)
}

/// A simulated board that reports its squares at intervals.
pub(super) trait Reporting {
    /// Applies one scripted event (a lift, a placement, ...).
    fn apply(&mut self, event: &SensorEvent);
    /// The bytes of one report of the board as it is now.
    fn report(&self) -> Vec<u8>;
}

impl Reporting for CertaboSim {
    fn apply(&mut self, event: &SensorEvent) {
        self.handle_script_event(event);
    }
    fn report(&self) -> Vec<u8> {
        Self::report(self)
    }
}

/// The capture of a board that reports every `form.every`: the board takes
/// the events up to each report's time, then makes the report's line.
pub(super) fn reports_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: ReportForm,
    rng: &mut Rng,
    board: &mut impl Reporting,
) -> String {
    let mut text = format_header(header);
    text.push('\n');
    let mut push = |t: Timestamp, bytes: Vec<u8>| {
        text.push_str(&format_record(&Record { t, body: RecordBody::Rx(bytes) }));
        text.push('\n');
    };
    let end = events.last().map_or(Timestamp::ZERO, |(t, _)| *t) + form.tail;
    let mut next = events.iter().peekable();
    let mut t = Timestamp::ZERO;
    while t <= end {
        while let Some((_, event)) = next.next_if(|(at, _)| *at <= t) {
            board.apply(event);
        }
        let mut bytes = Vec::new();
        if rng.chance(form.noise) {
            // Noise is 7-bit, as a disturbed line mostly gives.
            bytes.extend((0..rng.range(1, 5)).map(|_| (rng.next_u64() & 0x7F) as u8));
        }
        bytes.extend(board.report());
        if rng.chance(form.noise) {
            let cut = rng.range(1, bytes.len() as u64 - 1) as usize;
            bytes.truncate(cut);
        }
        // A line arrives over a few milliseconds, in one read or several.
        let mut at = t;
        if bytes.len() > 2 && rng.chance(form.split) {
            let parts = rng.range(2, 4) as usize;
            let mut cuts: Vec<usize> = (1..parts).map(|_| rng.range(1, bytes.len() as u64 - 1) as usize).collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut start = 0;
            for cut in cuts {
                push(at, bytes[start..cut].to_vec());
                start = cut;
                at = at + Duration::from_millis(rng.range(1, 5));
            }
            push(at, bytes[start..].to_vec());
        } else {
            push(at, bytes);
        }
        let late = Duration::from_micros(rng.range(0, form.jitter.as_micros() as u64));
        t = t + form.every + late;
    }
    text
}
