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
//! The decoder reports a position only when it changed (see
//! [`super::position`]).

pub mod frame;
pub mod link;

use self::frame::{BATTERY, Framed, Framer, POSITION};
use super::{
    Bluetooth, BoardInfo, DecodeProblem, Decoded, Family, Features, Probe, Protocol,
    position::{PositionDecoder, Positions, WholePositions},
    queue::Out,
};

/// The Bluetooth LE service whose characteristic notifies positions.
pub const POSITION_SERVICE: &str = "1b7e8261-2877-41c3-b46e-cf057c562023";
/// The characteristic that notifies positions.
pub const POSITION_CHARACTERISTIC: &str = "1b7e8262-2877-41c3-b46e-cf057c562023";
/// The characteristic commands are written to.
pub const COMMAND_CHARACTERISTIC: &str = "1b7e8272-2877-41c3-b46e-cf057c562023";

/// Turns bytes from a Chessnut board into [`Decoded`] items.
#[derive(Clone, Debug)]
pub struct ChessnutDecoder(PositionDecoder<Framer>);

impl ChessnutDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self(PositionDecoder::new(Framer::default(), handle))
    }
}

impl Default for ChessnutDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl WholePositions for ChessnutDecoder {
    type Framer = Framer;
    fn decoder(&mut self) -> &mut PositionDecoder<Framer> {
        &mut self.0
    }
}

/// What a framed item means.
fn handle(positions: &mut Positions, item: Framed, out: &mut Out) {
    let problem = match item {
        Framed::Message { id: POSITION, data } => match frame::picture_of(&data) {
            Ok(picture) => return positions.report(picture, out),
            Err(why) => DecodeProblem::BadMessage(format!("a position with {why}")),
        },
        Framed::Message { id: BATTERY, data } => {
            out.push_back(Decoded::Info(BoardInfo::Battery(data[0].min(100))));
            return;
        }
        // Replies this daemon does not use.
        Framed::Message { .. } => return,
        Framed::Garbage(len) => DecodeProblem::Garbage { len, reason: "bytes outside any Chessnut message" },
    };
    positions.lost();
    out.push_back(Decoded::Problem(problem));
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
        write_spacing: std::time::Duration::ZERO,
    }),
    decoder: || Box::new(ChessnutDecoder::new()),
    link: |config| Box::new(link::ChessnutLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a Chessnut board (its notifications).
    pub const CHESSNUT: Self = Self::of(&FAMILY);
}

#[cfg(test)]
mod tests {
    use crate::protocol::BoardDecoder;
    use shakmaty::{Board, Square};

    use super::*;
    use crate::sensor::{Cell, Picture, SensorEvent};

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
