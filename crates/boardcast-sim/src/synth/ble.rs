//! Generated streams as the Bluetooth LE boards send them: a Chessnut
//! board's position notifications and a DGT Pegasus's DGT messages with
//! occupancy only. Bluetooth's link layer checks and repeats every packet,
//! so there is no line noise; what a BLE board does to its bytes is cut a
//! message over several notifications (20 bytes each at the default MTU).

use std::time::Duration;

use super::{DgtForm, ReportForm, Rng, dgt_capture};
use crate::board::{SimulatedBoard, chessnut::ChessnutSim, pegasus::PegasusSim};
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    protocol::chessnut::link::REAL_TIME,
    sensor::{ClockSide, SensorEvent},
    time::Timestamp,
};

/// A notification's payload at the default ATT MTU of 23 bytes.
pub const NOTIFICATION_BYTES: usize = 20;

/// A stream as a `chessnut` capture: the positions a Chessnut board
/// notifies, each time its scan finds the board changed (every
/// `form.every` at most); with chance `form.split` a position comes in
/// notifications of [`NOTIFICATION_BYTES`] (a board that did not get a
/// larger MTU), a few milliseconds apart. Clock events are dropped (the
/// board has no clock); `form.noise` is not used.
pub fn chessnut_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: ReportForm,
    rng: &mut Rng,
) -> String {
    let mut text = format_header(header);
    text.push('\n');
    let mut push = |t: Timestamp, body: RecordBody| {
        text.push_str(&format_record(&Record { t, body }));
        text.push('\n');
    };
    let mut board = ChessnutSim::new("", ClockSide::Left);
    push(Timestamp::ZERO, RecordBody::Tx(REAL_TIME.to_vec()));
    board.handle_host_bytes(&REAL_TIME);
    let end = events.last().map_or(Timestamp::ZERO, |(t, _)| *t) + form.tail;
    let mut next = events.iter().peekable();
    let mut t = Timestamp::ZERO;
    while t <= end {
        while let Some((_, event)) = next.next_if(|(at, _)| *at <= t) {
            board.handle_script_event(event);
        }
        board.handle_timeout(t);
        if let Some(bytes) = board.poll_transmit() {
            if rng.chance(form.split) {
                let mut at = t;
                for part in bytes.chunks(NOTIFICATION_BYTES) {
                    push(at, RecordBody::Rx(part.to_vec()));
                    at = at + Duration::from_millis(rng.range(1, 8));
                }
            } else {
                push(t, RecordBody::Rx(bytes));
            }
        }
        let late = Duration::from_micros(rng.range(0, form.jitter.as_micros() as u64));
        t = t + form.every + late;
    }
    text
}

/// A stream as a `pegasus` capture: the DGT messages of a Pegasus, whose
/// squares say only occupied (`01`) or empty, cut where notifications cut
/// them; no clock, no noise.
pub fn pegasus_capture(header: &CaptureHeader, events: &[(Timestamp, SensorEvent)], rng: &mut Rng) -> String {
    let mut board = PegasusSim::new("", ClockSide::Left);
    let seen: Vec<(Timestamp, SensorEvent)> = events
        .iter()
        .filter(|(_, event)| !matches!(event, SensorEvent::Clock(_)))
        .map(|(t, event)| {
            // The simulated Pegasus turns pieces into what it reports.
            board.handle_script_event(event);
            let event = match event {
                SensorEvent::Board(_) => SensorEvent::Board(Box::new(board.picture().clone())),
                &SensorEvent::Square { square, .. } => {
                    SensorEvent::Square { square, cell: board.picture().get(square) }
                }
                SensorEvent::Clock(_) => unreachable!("filtered out"),
            };
            (*t, event)
        })
        .collect();
    let form = DgtForm { white_side: ClockSide::Left, split: 0.3, merge: 0.3, noise: 0.0, answer_dumps: false };
    dgt_capture(header, &seen, form, rng)
}

#[cfg(test)]
mod tests {
    use boardcast_core::{
        capture::{CaptureReader, RecordBody},
        protocol::Protocol,
        sensor::Picture,
    };
    use shakmaty::{Board, Square};

    use super::*;
    use boardcast_core::sensor::Cell;

    fn events() -> Vec<(Timestamp, SensorEvent)> {
        vec![
            (Timestamp::ZERO, SensorEvent::Board(Box::new(Picture::from_board(&Board::new())))),
            (Timestamp::from_millis(1000), SensorEvent::Square { square: Square::E2, cell: Cell::Empty }),
            (
                Timestamp::from_millis(1300),
                SensorEvent::Square { square: Square::E4, cell: Cell::Piece(shakmaty::Color::White.pawn()) },
            ),
        ]
    }

    #[test]
    fn a_chessnut_capture_holds_one_position_per_change_split_into_notifications() {
        let form = ReportForm { split: 1.0, ..ReportForm::clean() };
        let text = chessnut_capture(&CaptureHeader::new(Protocol::CHESSNUT, "c"), &events(), form, &mut Rng::new(1));
        let rx: Vec<usize> = CaptureReader::new(&text)
            .unwrap()
            .filter_map(|r| if let RecordBody::Rx(bytes) = r.unwrap().body { Some(bytes.len()) } else { None })
            .collect();
        assert_eq!(rx, [20, 18, 20, 18, 20, 18], "three positions, each in two notifications");
    }
}
