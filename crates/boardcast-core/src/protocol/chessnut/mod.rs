//! Chessnut boards (Air, Air+, Pro, Go) over Bluetooth LE: once the host
//! writes `21 01 00` the board notifies its whole position (`01 24` and 32
//! bytes, two squares a byte) whenever it changes; every square names its
//! piece. `../shared/research/eboard-protocols.md` section 4.1 and
//! `ble-boards.md` give the sources; nothing here was checked on a board.
//!
//! - [`frame`]: reassembling messages split over notifications, and the
//!   position's square order and piece codes.
//! - [`link`]: the host's side (the real-time command).
//!
//! The decoder reports a position only when it changed: the squares that
//! changed, in the order they are taken to have changed, then the whole
//! [`crate::sensor::Picture`] (as the Certabo decoder does).

pub mod frame;
pub mod link;

use std::collections::VecDeque;

use self::frame::{BATTERY, Framed, Framer, POSITION};
use super::{Bluetooth, BoardDecoder, BoardInfo, DecodeProblem, Decoded, Family, Features, Probe, Protocol};
use crate::sensor::{Cell, Picture, SensorEvent};
use shakmaty::Square;

/// The Bluetooth LE service whose characteristic notifies positions.
pub const POSITION_SERVICE: &str = "1b7e8261-2877-41c3-b46e-cf057c562023";
/// The characteristic that notifies positions.
pub const POSITION_CHARACTERISTIC: &str = "1b7e8262-2877-41c3-b46e-cf057c562023";
/// The characteristic commands are written to.
pub const COMMAND_CHARACTERISTIC: &str = "1b7e8272-2877-41c3-b46e-cf057c562023";

/// Turns bytes from a Chessnut board into [`Decoded`] items.
#[derive(Clone, Debug, Default)]
pub struct ChessnutDecoder {
    framer: Framer,
    /// The position last reported.
    shown: Option<Picture>,
    /// Report the next position even if unchanged (bytes were lost).
    refresh: bool,
    out: VecDeque<Decoded>,
}

impl ChessnutDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    fn handle(&mut self, item: Framed) {
        let problem = match item {
            Framed::Message { id: POSITION, data } => match frame::picture_of(&data) {
                Ok(picture) => {
                    if self.refresh || self.shown.as_ref() != Some(&picture) {
                        if let Some(shown) = self.shown.as_ref().filter(|_| !self.refresh) {
                            for square in changes_in_order(shown, &picture).unwrap_or_default() {
                                let cell = picture.get(square);
                                self.out.push_back(Decoded::Sensor(SensorEvent::Square { square, cell }));
                            }
                        }
                        self.refresh = false;
                        self.shown = Some(picture.clone());
                        self.out.push_back(Decoded::Sensor(SensorEvent::Board(Box::new(picture))));
                    }
                    return;
                }
                Err(why) => DecodeProblem::BadMessage(format!("a position with {why}")),
            },
            Framed::Message { id: BATTERY, data } => {
                self.out.push_back(Decoded::Info(BoardInfo::Battery(data[0].min(100))));
                return;
            }
            // Replies this daemon does not use.
            Framed::Message { .. } => return,
            Framed::Garbage(len) => DecodeProblem::Garbage { len, reason: "bytes outside any Chessnut message" },
        };
        self.refresh = true;
        self.out.push_back(Decoded::Problem(problem));
    }
}

/// The squares that changed between two positions, in the order they are
/// taken to have changed, so that the reconstructor sees each move happen
/// (a whole position alone is judged only once the board is still, which
/// a quick reply may not leave it). The board names its pieces, which tell
/// which piece went where. First the squares filled by a piece not seen
/// leaving a square (one lifted earlier, now put down: the end of
/// something under way); then each piece that moved, its square emptied
/// and then the one it went to; last the squares emptied by pieces not
/// seen elsewhere (taken in hand: the start of something).
///
/// `None` when pieces of both colours moved: two moves whose order the
/// position cannot tell. The position then goes alone, and the
/// reconstructor fills in the moves from the game (rules.md R10).
fn changes_in_order(before: &Picture, after: &Picture) -> Option<Vec<Square>> {
    let (emptied, mut filled): (Vec<Square>, Vec<Square>) = Square::ALL
        .into_iter()
        .filter(|&square| before.get(square) != after.get(square))
        .partition(|&square| after.get(square) == Cell::Empty);
    let mut moved = Vec::new();
    let mut lifted = Vec::new();
    for from in emptied {
        let piece = before.get(from);
        match filled.iter().position(|&to| after.get(to) == piece && before.get(to) != piece) {
            Some(at) => moved.extend([from, filled.remove(at)]),
            None => lifted.push(from),
        }
    }
    let mut colours = moved.iter().step_by(2).filter_map(|&from| before.get(from).piece().map(|p| p.color));
    if let Some(first) = colours.next()
        && colours.any(|c| c != first)
    {
        return None;
    }
    Some(filled.into_iter().chain(moved).chain(lifted).collect())
}

/// The family of Chessnut boards.
pub const FAMILY: Family = Family {
    name: "chessnut",
    title: "Chessnut board",
    // Bluetooth LE has no line speed; this is for a port nobody opens.
    baud: 9600,
    identifies_pieces: true,
    answers_board_request: false,
    features: Features { lights: false, clock_text: false, calibration: false },
    probe: Probe {
        // Found over Bluetooth by its advertised name, never on a serial
        // port; were it probed, it would only listen.
        ask: Vec::new,
        answers: |decoded| matches!(decoded, Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: false,
        rank: 0,
    },
    on_serial: false,
    bluetooth: Some(Bluetooth {
        name_contains: "Chessnut",
        service: POSITION_SERVICE,
        notify: POSITION_CHARACTERISTIC,
        write: COMMAND_CHARACTERISTIC,
    }),
    decoder: || Box::new(ChessnutDecoder::new()),
    link: |config| Box::new(link::ChessnutLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a Chessnut board (its notifications).
    pub const CHESSNUT: Self = Self::of(&FAMILY);
}

impl BoardDecoder for ChessnutDecoder {
    /// Takes bytes received from the board.
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.framer.push(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    fn poll_decoded(&mut self) -> Option<Decoded> {
        loop {
            if let Some(decoded) = self.out.pop_front() {
                return Some(decoded);
            }
            let item = self.framer.next_item()?;
            self.handle(item);
        }
    }

    /// Ends the stream, reporting a message left unfinished; the next
    /// position is reported whole.
    fn finish(&mut self) -> Option<Decoded> {
        self.refresh = true;
        let len = self.framer.flush()?;
        Some(Decoded::Problem(DecodeProblem::Garbage { len, reason: "a message cut off by the end of the stream" }))
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Board;

    use super::*;

    fn decode(decoder: &mut ChessnutDecoder, bytes: &[u8]) -> Vec<Decoded> {
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    fn start() -> Picture {
        Picture::from_board(&Board::new())
    }

    #[test]
    fn a_position_split_over_notifications_is_reported_once() {
        let mut decoder = ChessnutDecoder::new();
        let message = frame::position_message(&start());
        assert_eq!(decode(&mut decoder, &message[..20]), []);
        assert_eq!(decode(&mut decoder, &message[20..]), [Decoded::Sensor(SensorEvent::Board(Box::new(start())))]);
        assert_eq!(decode(&mut decoder, &message), [], "unchanged");
        let mut moved = start();
        moved.set(Square::E2, Cell::Empty);
        assert_eq!(
            decode(&mut decoder, &frame::position_message(&moved)),
            [
                Decoded::Sensor(SensorEvent::Square { square: Square::E2, cell: Cell::Empty }),
                Decoded::Sensor(SensorEvent::Board(Box::new(moved)))
            ]
        );
    }

    #[test]
    fn garbage_and_bad_codes_are_reported_and_the_next_position_comes_whole() {
        let mut decoder = ChessnutDecoder::new();
        decode(&mut decoder, &frame::position_message(&start()));
        let mut bad = frame::position_message(&start());
        bad[2] = 0x0F;
        assert_eq!(
            decode(&mut decoder, &bad),
            [Decoded::Problem(DecodeProblem::BadMessage("a position with piece code 15 on h8".into()))]
        );
        let out = decode(&mut decoder, &[&[0x77, 0x13][..], &frame::position_message(&start())].concat());
        assert_eq!(
            out,
            [
                Decoded::Problem(DecodeProblem::Garbage { len: 2, reason: "bytes outside any Chessnut message" }),
                Decoded::Sensor(SensorEvent::Board(Box::new(start()))),
            ]
        );
        assert_eq!(decode(&mut decoder, &[0x2A, 0x02, 0x40, 0x00]), [Decoded::Info(BoardInfo::Battery(64))]);
        decode(&mut decoder, &[0x01, 0x24, 0x00]);
        assert!(matches!(decoder.finish(), Some(Decoded::Problem(DecodeProblem::Garbage { len: 3, .. }))));
    }
}
