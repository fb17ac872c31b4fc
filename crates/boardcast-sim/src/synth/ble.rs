//! Generated streams as the Bluetooth LE boards send them. Bluetooth's
//! link layer checks and repeats every packet, so there is no line noise;
//! what a BLE board does to its bytes is cut a message over several
//! notifications (20 bytes each at the default MTU).
//!
//! Most are made by [`link_capture`]: the family's own link (what the
//! daemon says to a live board) talks to the family's simulated board, so
//! that a capture holds what a live session writes (`tx`: the commands,
//! the acknowledgements a ChessUp wants) and what it reads (`rx`). A DGT
//! Pegasus's are made as a DGT board's ([`pegasus_capture`]).

use std::time::Duration;

use super::{DgtForm, ReportForm, Rng, dgt_capture};
use crate::board::{SimulatedBoard, pegasus::PegasusSim, simulator};
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    protocol::link::LinkConfig,
    sensor::{ClockSide, SensorEvent},
    time::Timestamp,
};

/// A notification's payload at the default ATT MTU of 23 bytes.
pub const NOTIFICATION_BYTES: usize = 20;

/// A stream as a `chessnut` capture: the positions a Chessnut board
/// notifies once asked (see [`link_capture`]).
pub fn chessnut_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: ReportForm,
    rng: &mut Rng,
) -> String {
    link_capture(header, events, form, rng)
}

/// A stream as a capture of `header.protocol`'s board, talked to by the
/// family's link from the start: the board looks at its squares every
/// `form.every` (with `form.jitter`) and sends what it sends, each message
/// cut into notifications of [`NOTIFICATION_BYTES`] with chance
/// `form.split` (a board that did not get a larger MTU), a few
/// milliseconds apart. The link reads them through the family's decoder
/// and answers as it does live. Clock events are dropped (these boards
/// have no clock); `form.noise` is not used.
///
/// # Panics
///
/// For a protocol the simulator cannot play (`events`).
pub fn link_capture(
    header: &CaptureHeader,
    events: &[(Timestamp, SensorEvent)],
    form: ReportForm,
    rng: &mut Rng,
) -> String {
    let protocol = header.protocol;
    let family = protocol.family().expect("a board family");
    let mut board = simulator(protocol, "", ClockSide::Left).expect("a simulated board of the family");
    let mut link = (family.link)(LinkConfig::default());
    let mut decoder = protocol.decoder().expect("a decoder of the family");
    let mut text = format_header(header);
    text.push('\n');
    // Records go in time order: what follows a notification cut over a few
    // milliseconds is written after its last part.
    let mut last = Timestamp::ZERO;
    let mut push = |t: Timestamp, body: RecordBody| {
        last = last.max(t);
        text.push_str(&format_record(&Record { t: last, body }));
        text.push('\n');
        last
    };
    link.handle_connected(Timestamp::ZERO);
    let end = events.last().map_or(Timestamp::ZERO, |(t, _)| *t) + form.tail;
    let mut next = events.iter().peekable();
    let mut t = Timestamp::ZERO;
    while t <= end {
        while let Some((_, event)) = next.next_if(|(at, _)| *at <= t) {
            board.handle_script_event(event);
        }
        if link.poll_timeout().is_some_and(|at| at <= t) {
            link.handle_timeout(t);
        }
        let mut scanned = false;
        loop {
            let mut quiet = true;
            while let Some(bytes) = link.poll_transmit(t) {
                quiet = false;
                push(t, RecordBody::Tx(bytes.clone()));
                board.handle_host_bytes(&bytes);
            }
            if !scanned {
                scanned = true;
                quiet = false;
                board.handle_timeout(t);
            }
            while let Some(bytes) = board.poll_transmit() {
                quiet = false;
                let mut at = t;
                if rng.chance(form.split) {
                    for part in bytes.chunks(NOTIFICATION_BYTES) {
                        at = push(at, RecordBody::Rx(part.to_vec())) + Duration::from_millis(rng.range(1, 8));
                    }
                } else {
                    push(at, RecordBody::Rx(bytes.clone()));
                }
                decoder.handle_bytes(&bytes);
                link.handle_rx(t);
                while let Some(decoded) = decoder.poll_decoded() {
                    link.handle_decoded(t, &decoded);
                }
            }
            if quiet {
                break;
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
