//! The Millennium ChessLink protocol (Exclusive, Performance, eONE and
//! compatible boards): 7-bit ASCII with odd parity, a command letter, hex
//! parameters and an XOR block check (`../shared/research/eboard-protocols.md`
//! section 2).
//!
//! - [`wire`]: odd parity, hex pairs, the block check.
//! - [`frame`]: finding messages of fixed length in the character stream,
//!   with resynchronisation.
//! - [`reply`]: what the board's replies mean, and encoding them.
//! - [`command`]: what the host sends.
//! - [`leds`]: the 81 corner LEDs.
//! - [`link`]: what the host says to a live board.
//!
//! [`MillenniumDecoder`] turns the board's bytes into the protocol-neutral
//! [`Decoded`] items. A version reply becomes the board's firmware version.
//! Acknowledgements of register and LED commands carry nothing the rest of
//! the daemon uses and are passed over.
//!
//! A status is the whole board, but a board reporting on change sends one
//! for every change its scans see: it is a change report. It is therefore
//! passed on as the squares that changed since the previous status
//! (emptied squares first, as hands lift before they place), followed by
//! the whole board. The reconstructor judges single squares as seen
//! happening, at once, while it judges a whole board only once the board has
//! settled, as a dump in which nothing was seen happening. Statuses as whole
//! boards alone would make it wait whenever moves follow each other within
//! its settle time (quick replies), and then find several moves at once.
//! The whole board that follows changes nothing more. It says the picture is
//! whole, which ends the wait after lost bytes, and it answers the link's
//! status requests. The first status of a connection has nothing to be
//! compared with and is passed on as the whole board alone, like a dump.
//!
//! **Orientation.** The protocol document lists the status characters
//! from its A8 corner: a8, b8 … h8, a7 … h1. Other drivers read the first
//! character as h1 instead (the same board seen from the other side, with
//! its cable on the players' right), and pick between the two by looking
//! for the start position. This decoder takes the document's order as the
//! board's own orientation and leaves the choice to the reconstructor,
//! which already recognises a start position seen turned 180° and then
//! maps every square (or alerts, as configured). Turning a board is thus
//! handled the same way for every family, and a capture holds what the
//! board sent, not an interpretation of it. The LEDs are numbered in the
//! same coordinates ([`leds`]), so lights given in the board's own
//! orientation land on the right squares either way.

pub mod command;
pub mod frame;
pub mod leds;
pub mod link;
pub mod reply;
pub(crate) mod wire;

use std::collections::VecDeque;

use shakmaty::Square;

use self::{
    frame::{Framed, Framer, Speaker},
    reply::Reply,
};
use super::{Bluetooth, BoardDecoder, Family, Features, Probe, Protocol};
use super::{BoardInfo, DecodeProblem, Decoded};
use crate::sensor::{Cell, Picture, SensorEvent};

/// Turns bytes from a Millennium board into [`Decoded`] items, whatever
/// chunks they arrive in.
#[derive(Clone, Debug, Default)]
pub struct MillenniumDecoder {
    framer: Framer,
    /// The last status, to tell what the next one changed.
    last: Option<Picture>,
    /// Items decoded and not yet polled (the squares and the whole board of
    /// one status).
    ready: VecDeque<Decoded>,
}

impl MillenniumDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self { framer: Framer::new(Speaker::Board), ..Self::default() }
    }

    /// Queues what a status says: the squares it changed, then itself.
    fn status(&mut self, picture: Box<Picture>) {
        if let Some(last) = &self.last {
            let changed = |sq: &Square| last.get(*sq) != picture.get(*sq);
            let (emptied, filled): (Vec<Square>, Vec<Square>) =
                Square::ALL.into_iter().filter(changed).partition(|&sq| picture.get(sq) == Cell::Empty);
            for square in emptied.into_iter().chain(filled) {
                let cell = picture.get(square);
                self.ready.push_back(Decoded::Sensor(SensorEvent::Square { square, cell }));
            }
        }
        self.last = Some(picture.as_ref().clone());
        self.ready.push_back(Decoded::Sensor(SensorEvent::Board(picture)));
    }
}

/// The Bluetooth LE service of a Millennium board (Microchip's
/// transparent UART).
pub const BLE_SERVICE: &str = "49535343-fe7d-4ae5-8fa9-9fafd205e455";
/// The characteristic the board notifies its frames on.
pub const BLE_NOTIFY: &str = "49535343-1e4d-4bd9-ba61-23c647249616";
/// The characteristic the host writes its frames to.
pub const BLE_WRITE: &str = "49535343-8841-43f4-a8d4-ecbe34729bb3";

/// The family of Millennium ChessLink boards.
pub const FAMILY: Family = Family {
    name: "millennium",
    title: "Millennium ChessLink board",
    baud: 38_400,
    identifies_pieces: true,
    answers_board_request: true,
    features: Features { lights: true, clock_text: false, calibration: false },
    probe: Probe {
        // The version; a board that answers with a status is one too.
        ask: || command::Command::SendVersion.encode(),
        answers: |decoded| matches!(decoded, Decoded::Info(BoardInfo::Version(_)) | Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: true,
        rank: 1,
    },
    on_serial: true,
    // The Exclusive, Performance and eONE also speak Bluetooth LE: the same
    // frames through Microchip's transparent UART service. One family for
    // both: a board is `protocol = "millennium"` however it is reached.
    bluetooth: Some(Bluetooth {
        name_contains: "MILLENNIUM CHESS",
        service: BLE_SERVICE,
        notify: BLE_NOTIFY,
        write: BLE_WRITE,
        write_spacing: link::LED_SPACING,
    }),
    decoder: || Box::new(MillenniumDecoder::new()),
    link: |config| Box::new(link::MillenniumLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a Millennium ChessLink board.
    pub const MILLENNIUM: Self = Self::of(&FAMILY);
}

impl BoardDecoder for MillenniumDecoder {
    /// Takes bytes received from the board.
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.framer.push(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    fn poll_decoded(&mut self) -> Option<Decoded> {
        while self.ready.is_empty() {
            let frame = match self.framer.next_item()? {
                Framed::Frame(frame) => frame,
                Framed::Garbage { len, reason } => {
                    return Some(Decoded::Problem(DecodeProblem::Garbage { len, reason: reason.describe() }));
                }
            };
            match Reply::parse(&frame) {
                Ok(Reply::Status(picture)) => self.status(picture),
                Ok(Reply::Version { major, minor }) => {
                    return Some(Decoded::Info(BoardInfo::Version(format!("{major}.{minor}"))));
                }
                Ok(Reply::RegisterWritten { .. } | Reply::RegisterRead { .. } | Reply::LedsSet | Reply::LedsOut) => {}
                Err(error) => return Some(Decoded::Problem(DecodeProblem::BadMessage(error.to_string()))),
            }
        }
        self.ready.pop_front()
    }

    /// Ends the stream: whatever is buffered is reported as a cut-off
    /// message (a board unplugged mid-message, or the end of a capture).
    /// What the board showed is forgotten: the first status of the next
    /// connection is a whole board.
    fn finish(&mut self) -> Option<Decoded> {
        self.last = None;
        match self.framer.flush()? {
            Framed::Garbage { len, reason } => {
                Some(Decoded::Problem(DecodeProblem::Garbage { len, reason: reason.describe() }))
            }
            Framed::Frame(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Square};

    use super::*;
    use crate::sensor::{Cell, Picture};

    fn decode_chunks(chunks: &[&[u8]]) -> Vec<Decoded> {
        let mut decoder = MillenniumDecoder::new();
        let mut out = Vec::new();
        for chunk in chunks {
            decoder.handle_bytes(chunk);
            out.extend(std::iter::from_fn(|| decoder.poll_decoded()));
        }
        out.extend(decoder.finish());
        out
    }

    #[test]
    fn decodes_version_status_and_passes_over_acknowledgements() {
        let mut after_e4 = Picture::from_board(&shakmaty::Board::new());
        after_e4.set(Square::E2, Cell::Empty);
        after_e4.set(Square::E4, Cell::Piece(Color::White.pawn()));
        let mut bytes = wire::seal(b"v0108");
        bytes.extend(wire::seal(b"w0204"));
        bytes.extend(wire::seal(b"srnbqkbnrpppppppp....................P...........PPPP.PPPRNBQKBNR"));
        bytes.extend(wire::seal(b"l"));
        let expected = vec![
            Decoded::Info(BoardInfo::Version("1.8".into())),
            Decoded::Sensor(SensorEvent::Board(Box::new(after_e4))),
        ];
        assert_eq!(decode_chunks(&[&bytes]), expected);
        // Byte by byte, the same.
        let bytes: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_chunks(&bytes), expected);
    }

    #[test]
    fn passes_a_status_on_as_the_squares_it_changed_then_the_whole_board() {
        let start = Picture::from_board(&shakmaty::Board::new());
        // 1. e4 d5 2. exd5, the capture seen by one scan.
        let mut after = start.clone();
        after.set(Square::E2, Cell::Empty);
        after.set(Square::D7, Cell::Empty);
        after.set(Square::D5, Cell::Piece(Color::White.pawn()));
        let status = |p: &Picture| reply::Reply::Status(Box::new(p.clone())).encode();
        let mut bytes = status(&start);
        bytes.push(0x03); // noise: changes nothing in what follows
        bytes.extend(status(&after));
        let board = |p: &Picture| Decoded::Sensor(SensorEvent::Board(Box::new(p.clone())));
        let square = |square, cell| Decoded::Sensor(SensorEvent::Square { square, cell });
        let mut decoder = MillenniumDecoder::new();
        decoder.handle_bytes(&bytes);
        let items: Vec<Decoded> = std::iter::from_fn(|| decoder.poll_decoded()).collect();
        assert_eq!(
            items,
            [
                board(&start),
                Decoded::Problem(DecodeProblem::Garbage { len: 1, reason: "line noise (bytes with even parity)" }),
                square(Square::E2, Cell::Empty),
                square(Square::D7, Cell::Empty),
                square(Square::D5, Cell::Piece(Color::White.pawn())),
                board(&after),
            ]
        );
        // The same status again (an answer to a keep-alive) changes nothing.
        decoder.handle_bytes(&status(&after));
        assert_eq!(decoder.poll_decoded(), Some(board(&after)));
        // A new connection starts from a whole board.
        assert_eq!(decoder.finish(), None);
        decoder.handle_bytes(&status(&start));
        assert_eq!(decoder.poll_decoded(), Some(board(&start)));
        assert_eq!(decoder.poll_decoded(), None);
    }

    #[test]
    fn reports_line_noise_and_a_cut_off_reply() {
        let mut bytes = vec![0x03]; // even parity: noise
        bytes.extend(wire::seal(b"x"));
        bytes.extend(&wire::seal(b"v0108")[..4]);
        assert_eq!(
            decode_chunks(&[&bytes]),
            [
                Decoded::Problem(DecodeProblem::Garbage { len: 1, reason: "line noise (bytes with even parity)" }),
                Decoded::Problem(DecodeProblem::Garbage {
                    len: 4,
                    reason: "a message cut off by the end of the stream"
                }),
            ]
        );
    }
}
