//! Generated streams as a Millennium board would send them: the board
//! scans its squares every 41 ms or so and, reporting on change (as the
//! link sets it up), sends its whole status whenever what it scanned has
//! changed and held for the debounce. The statuses go out at 38400 baud,
//! split into read chunks at random, with line noise before some of them
//! if asked. A Millennium board has no clock: clock readings are dropped.

use shakmaty::Square;

use super::Rng;
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    protocol::millennium::{command::REG_REPORTING, link::REPORTING, reply::Reply},
    sensor::{Picture, SensorEvent},
    time::Timestamp,
};

/// How long one character takes on the line: ten bits at 38400 baud.
const CHAR_US: u64 = 260;

/// How to turn a stream into Millennium bytes.
#[derive(Clone, Copy, Debug)]
pub struct MillenniumForm {
    /// The time between two scans, in microseconds (40 960 at the board's
    /// default scan time).
    pub scan_us: u64,
    /// How many consecutive scans must see a change before it is reported:
    /// 1 for register 2 = 3 (every change), 2 to 5 for its debounces 4 to 7.
    pub debounce_scans: u64,
    /// Chance that a status arrives in two read chunks.
    pub split: f64,
    /// Chance of a few bytes of line noise before a status.
    pub noise: f64,
}

impl MillenniumForm {
    /// A board set up as the link sets it up, every status in one read and
    /// no noise.
    pub fn linked() -> Self {
        // Register values 4 to 7 debounce over 2 to 5 scans.
        Self { scan_us: 40_960, debounce_scans: u64::from(REPORTING - 2), split: 0.0, noise: 0.0 }
    }

    /// Random chunking and noise, and a debounce of one to three scans.
    pub fn varied(rng: &mut Rng) -> Self {
        Self { scan_us: 40_960, debounce_scans: rng.range(1, 3), split: 0.3, noise: 0.05 }
    }
}

/// A stream as a `millennium` capture: the replies to the link's start-up
/// (version and register acknowledgement), the status as the stream begins,
/// then a status for every change the board's scans see.
pub fn millennium_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: MillenniumForm,
    rng: &mut Rng,
) -> String {
    let mut messages = vec![
        (Timestamp::ZERO, Reply::Version { major: 1, minor: 8 }.encode()),
        (Timestamp::ZERO, Reply::RegisterWritten { address: REG_REPORTING, value: REPORTING }.encode()),
    ];
    for (t, picture) in reports(events, form) {
        let mut bytes = Vec::new();
        if rng.chance(form.noise) {
            bytes.extend((0..rng.range(1, 5)).map(|_| (rng.next_u64() & 0x7F) as u8));
        }
        bytes.extend(Reply::Status(Box::new(picture)).encode());
        messages.push((t, bytes));
    }
    let mut text = format_header(header);
    text.push('\n');
    let mut push = |t: u64, bytes: &[u8]| {
        let record = Record { t: Timestamp::from_micros(t), body: RecordBody::Rx(bytes.to_vec()) };
        text.push_str(&format_record(&record));
        text.push('\n');
    };
    // When the line is free again: a message waits for the one before it.
    let mut line_free = 0;
    for (t, bytes) in messages {
        let start = t.as_micros().max(line_free);
        let cut = if bytes.len() > 1 && rng.chance(form.split) { rng.range(1, bytes.len() as u64 - 1) } else { 0 };
        // Each read returns what has arrived by then.
        if cut > 0 {
            push(start + cut * CHAR_US, &bytes[..cut as usize]);
        }
        line_free = start + bytes.len() as u64 * CHAR_US;
        push(line_free, &bytes[cut as usize..]);
    }
    text
}

/// The statuses a board reporting on change sends for `events`, with their
/// times: the first one at once (the answer to the link's `S`), each later
/// one at the first scan where a square's new state has been seen by
/// `debounce_scans` scans in a row (each square is debounced by itself,
/// as its switch bounces by itself). Changes between two scans are seen
/// together by the later one, and a change undone before its debounce is
/// over is never reported.
fn reports(events: &[(Timestamp, SensorEvent)], form: MillenniumForm) -> Vec<(Timestamp, Picture)> {
    let scan = form.scan_us.max(1);
    let debounce = form.debounce_scans.max(1);
    let mut picture = Picture::empty();
    // What the scans see, for the scans that see a change.
    let mut scans: Vec<(u64, Picture)> = Vec::new();
    for (t, event) in events {
        match event {
            SensorEvent::Board(board) => picture = board.as_ref().clone(),
            &SensorEvent::Square { square, cell } => {
                picture.set(square, cell);
            }
            SensorEvent::Clock(_) => continue,
        }
        let tick = t.as_micros().div_ceil(scan);
        match scans.last_mut() {
            Some((last, seen)) if *last == tick => *seen = picture.clone(),
            _ => scans.push((tick, picture.clone())),
        }
    }
    let Some((first_tick, first)) = scans.first() else { return Vec::new() };
    let mut out = vec![(Timestamp::from_micros(first_tick * scan), first.clone())];
    let (mut seen, mut reported) = (first.clone(), first.clone());
    // The scan from which each square has read as it does now.
    let mut since = [*first_tick; 64];
    // Only the scans that see a change, and the scans where a change has
    // been seen long enough, can change what the board reports.
    let mut ticks: Vec<u64> = scans[1..].iter().flat_map(|(tick, _)| [*tick, tick + debounce - 1]).collect();
    ticks.sort_unstable();
    ticks.dedup();
    let mut next = 1;
    for tick in ticks {
        while let Some((at, picture)) = scans.get(next).filter(|(at, _)| *at <= tick) {
            for square in Square::ALL {
                if picture.get(square) != seen.get(square) {
                    since[square as usize] = *at;
                }
            }
            seen = picture.clone();
            next += 1;
        }
        let mut changed = false;
        for square in Square::ALL {
            if since[square as usize] + debounce - 1 <= tick && reported.get(square) != seen.get(square) {
                reported.set(square, seen.get(square));
                changed = true;
            }
        }
        if changed {
            out.push((Timestamp::from_micros(tick * scan), reported.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::BoardDecoder;
    use shakmaty::Color;

    use super::*;
    use boardcast_core::{
        protocol::{Decoded, Protocol, millennium::MillenniumDecoder},
        replay::read_capture,
        sensor::{Cell, ClockReading},
    };

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn square(t: u64, square: Square, cell: Cell) -> (Timestamp, SensorEvent) {
        (ms(t), SensorEvent::Square { square, cell })
    }

    fn start() -> Picture {
        Picture::from_board(&shakmaty::Board::new())
    }

    #[test]
    fn reports_what_the_scans_see_after_the_debounce() {
        let pawn = Cell::Piece(Color::White.pawn());
        let events = vec![
            (ms(0), SensorEvent::Board(Box::new(start()))),
            // A flicker shorter than a scan: never seen.
            square(1000, Square::A2, Cell::Empty),
            square(1010, Square::A2, pawn),
            // e2e4 with the placement seen by the same scan as the lift.
            square(2000, Square::E2, Cell::Empty),
            square(2020, Square::E4, pawn),
            (ms(2500), SensorEvent::Clock(ClockReading::ByColor { white_ms: 1, black_ms: 1, running: None })),
        ];
        let form = MillenniumForm::linked();
        let got = reports(&events, form);
        let mut after = start();
        after.set(Square::E2, Cell::Empty);
        after.set(Square::E4, pawn);
        // Scan 49 (at 2007 ms) sees the lift, which holds through scan 50:
        // reported then. Scan 50 sees the placement, reported at scan 51.
        let mut lifted = start();
        lifted.set(Square::E2, Cell::Empty);
        let at = |scan: u64| Timestamp::from_micros(scan * 40_960);
        assert_eq!(got, [(ms(0), start()), (at(50), lifted), (at(51), after)]);
    }

    #[test]
    fn a_capture_decodes_to_the_reported_statuses() {
        let events = vec![(ms(0), SensorEvent::Board(Box::new(start()))), square(3000, Square::G1, Cell::Empty)];
        let mut rng = Rng::new(7);
        let form = MillenniumForm { split: 1.0, noise: 1.0, ..MillenniumForm::linked() };
        let text = millennium_capture(&CaptureHeader::new(Protocol::MILLENNIUM, "b"), &events, form, &mut rng);
        let capture = read_capture(&text).unwrap();
        assert!(capture.error.is_none());
        let mut decoder = MillenniumDecoder::new();
        let mut boards = Vec::new();
        let mut last = Timestamp::ZERO;
        for record in &capture.records {
            assert!(record.t >= last, "records in time order");
            last = record.t;
            let RecordBody::Rx(bytes) = &record.body else { panic!("only rx records") };
            decoder.handle_bytes(bytes);
            while let Some(decoded) = decoder.poll_decoded() {
                if let Decoded::Sensor(SensorEvent::Board(picture)) = decoded {
                    boards.push((record.t, *picture));
                }
            }
        }
        let mut lifted = start();
        lifted.set(Square::G1, Cell::Empty);
        assert_eq!(boards.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>(), [start(), lifted]);
        assert!(boards[1].0 > ms(3000) && boards[1].0 < ms(3150), "{:?}", boards[1].0);
    }
}
