//! Generated streams as a DGT board would send them: board dump, field
//! updates and clock messages as bytes, split into read chunks at random,
//! with line noise between messages if asked.

use shakmaty::Color;

use super::Rng;
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    protocol::dgt::{
        clock::{BwTime, ClockTimes},
        message::Message,
    },
    sensor::{ClockReading, ClockSide, SensorEvent},
    time::Timestamp,
};

/// How to turn a stream into DGT bytes.
#[derive(Clone, Copy, Debug)]
pub struct DgtForm {
    /// The display White's time is on.
    pub white_side: ClockSide,
    /// Chance that a message is split across two read chunks.
    pub split: f64,
    /// Chance that a message shares its read chunk with the next one when
    /// they are close in time.
    pub merge: f64,
    /// Chance of a few bytes of line noise (bit 7 clear) before a message.
    pub noise: f64,
    /// After line noise the board sends its whole picture, as a live board
    /// answers the dump the daemon asks for when it notices lost bytes
    /// (docs/alerts.md, "Asking the board"): without it a replay waits the
    /// whole `LOST_BYTES_WAIT` on a picture it may not trust.
    pub answer_dumps: bool,
}

impl DgtForm {
    /// Random chunking and noise, White's clock on a random side.
    pub fn varied(rng: &mut Rng) -> Self {
        Self {
            white_side: if rng.chance(0.5) { ClockSide::Left } else { ClockSide::Right },
            split: 0.3,
            merge: 0.3,
            noise: 0.05,
            answer_dumps: true,
        }
    }
}

/// A stream as a `dgt` capture: the bytes a board with a clock would send.
/// Clock readings are rounded down to whole seconds, as the clock shows them.
pub fn dgt_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: DgtForm,
    rng: &mut Rng,
) -> String {
    let mut messages: Vec<(Timestamp, Vec<u8>)> = Vec::with_capacity(events.len());
    // The board's own picture, for the dumps it sends on request.
    let mut picture: Option<boardcast_core::sensor::Picture> = None;
    for (i, (t, event)) in events.iter().enumerate() {
        match event {
            SensorEvent::Board(p) => picture = Some((**p).clone()),
            &SensorEvent::Square { square, cell } => {
                if let Some(p) = &mut picture {
                    p.set(square, cell);
                }
            }
            SensorEvent::Clock(_) => {}
        }
        let message = match event {
            SensorEvent::Board(picture) => Message::BoardDump(picture.clone()),
            &SensorEvent::Square { square, cell } => Message::FieldUpdate { square, cell },
            &SensorEvent::Clock(ClockReading::ByColor { white_ms, black_ms, running }) => {
                let (left, right) =
                    if form.white_side == ClockSide::Left { (white_ms, black_ms) } else { (black_ms, white_ms) };
                let side = |c: Color| if c == Color::White { form.white_side } else { form.white_side.other() };
                Message::Clock(BwTime::Times(ClockTimes::from_reading(left, right, running.map(side))))
            }
            SensorEvent::Clock(ClockReading::BySide { .. }) => continue,
        };
        let mut bytes = Vec::new();
        let noisy = rng.chance(form.noise);
        if noisy {
            for _ in 0..rng.range(1, 6) {
                bytes.push((rng.next_u64() & 0x7F) as u8);
            }
        }
        message.encode(&mut bytes);
        messages.push((*t, bytes));
        if noisy
            && form.answer_dumps
            && let Some(p) = &picture
        {
            // The answer comes some 40 ms later, before anything the
            // board reports after that.
            let mut at = *t + std::time::Duration::from_millis(40);
            if let Some((next, _)) = events.get(i + 1) {
                at = at.min(*next);
            }
            let mut dump = Vec::new();
            Message::BoardDump(Box::new(p.clone())).encode(&mut dump);
            messages.push((at, dump));
        }
    }
    let mut text = format_header(header);
    text.push('\n');
    let mut push = |t: Timestamp, bytes: Vec<u8>| {
        text.push_str(&format_record(&Record { t, body: RecordBody::Rx(bytes) }));
        text.push('\n');
    };
    let mut pending: Option<(Timestamp, Vec<u8>)> = None;
    for (t, bytes) in messages {
        // Messages a few milliseconds apart may arrive in one read.
        if let Some((pt, mut pbytes)) = pending.take() {
            if t.saturating_since(pt).as_millis() <= 5 && rng.chance(form.merge) {
                pbytes.extend_from_slice(&bytes);
                pending = Some((t, pbytes));
                continue;
            }
            push(pt, pbytes);
        }
        if bytes.len() > 1 && rng.chance(form.split) {
            // The first part of the message arrives in an earlier read; the
            // message is complete when the rest arrives at its time.
            let cut = rng.range(1, bytes.len() as u64 - 1) as usize;
            let previous = t;
            push(previous, bytes[..cut].to_vec());
            pending = Some((t, bytes[cut..].to_vec()));
        } else {
            pending = Some((t, bytes));
        }
    }
    if let Some((t, bytes)) = pending {
        push(t, bytes);
    }
    text
}
