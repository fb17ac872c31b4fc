//! Square Off boards (Pro, Grand Kingdom, Neo) over Bluetooth LE (a Nordic
//! UART service, advertised name containing `Square`): ASCII messages
//! `<code>#<body>*` ([`frame`]). The board tells each square's change by
//! itself (`0#e2u*`: a piece lifted from e2, `0#e4d*`: one put down on
//! e4); the host asks for the whole board with `30#R*`, answered by `30#`
//! and 64 characters, `1` for an occupied square, `0` for an empty one.
//! Occupancy only: which piece stands where comes from the game, as for a
//! Sentio-format board or a DGT Pegasus.
//!
//! The order of the 64 characters: a1, a2, … a8, b1, … h8 (file by file).
//! The sources disagree: one driver lists squares rank by rank from h1,
//! while the published protocol notes say "a1-a8, b1-b8, …" and give two
//! recorded replies that only the file-by-file order reads as a position
//! (the start position is `11000011` eight times; after 1.e4 e5 the e-file
//! reads `10011001`). docs/boards.md says so. Nothing here was checked on
//! a board.
//!
//! - [`frame`]: reassembling messages.
//! - [`link`]: the host's side (asking for the board after every change).

pub mod frame;
pub mod link;

use shakmaty::{Bitboard, File, Rank, Square};

use self::frame::{Framed, Framer};
use super::{
    Bluetooth, BoardDecoder, DecodeProblem, Decoded, Family, Features, Probe, Protocol,
    queue::{Out, Queue},
    uart,
};
use crate::sensor::{Cell, Picture, SensorEvent};

/// The code of a square's change (`0#e2u*`).
pub const SQUARE: u8 = 0;
/// The code of the whole board (`30#R*` asks, `30#0101…*` answers).
pub const BOARD: u8 = 30;

/// The square of the reply's `index`-th character: a1, a2, … a8, b1, … h8.
fn square_of(index: usize) -> Square {
    Square::from_coords(File::new((index / 8) as u32), Rank::new((index % 8) as u32))
}

/// The occupied squares of a reply's 64 characters; `Err` says what is
/// wrong.
pub fn occupancy_of(body: &[u8]) -> Result<Bitboard, String> {
    if body.len() != 64 {
        return Err(format!("a board of {} squares", body.len()));
    }
    let mut occupied = Bitboard::EMPTY;
    for (i, &c) in body.iter().enumerate() {
        match c {
            b'1' => occupied.add(square_of(i)),
            b'0' => {}
            _ => return Err(format!("{:?} for {}", char::from(c), square_of(i))),
        }
    }
    Ok(occupied)
}

/// The reply a board sends for `occupied`.
pub fn board_message(occupied: Bitboard) -> Vec<u8> {
    let mut out = b"30#".to_vec();
    out.extend((0..64).map(|i| if occupied.contains(square_of(i)) { b'1' } else { b'0' }));
    out.push(b'*');
    out
}

/// The message for a square's change: lifted (`u`) or put down (`d`).
pub fn square_message(square: Square, occupied: bool) -> Vec<u8> {
    format!("0#{square}{}*", if occupied { 'd' } else { 'u' }).into_bytes()
}

/// Turns bytes from a Square Off board into [`Decoded`] items.
///
/// Every change is reported as the whole board (the last reply and the
/// changes since), as for a DGT Pegasus: the reconstructor judges a whole
/// board once it has stood still, which is what occupancy needs. A
/// square's change before the first reply cannot be placed and is dropped
/// (the link asks for the board at every connection).
#[derive(Clone, Debug, Default)]
pub struct SquareOffDecoder {
    queue: Queue<Framer>,
    shown: Shown,
}

/// What was reported so far.
#[derive(Clone, Debug, Default)]
struct Shown {
    /// The occupancy last reported.
    occupied: Option<Bitboard>,
    /// Report the next reply even if unchanged (bytes were lost).
    refresh: bool,
}

impl SquareOffDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Shown {
    fn handle(&mut self, item: Framed, out: &mut Out) {
        let problem = match item {
            Framed::Message { code: BOARD, body } => match occupancy_of(&body) {
                Ok(occupied) => return self.show(occupied, out),
                Err(why) => DecodeProblem::BadMessage(format!("{why} in a Square Off board")),
            },
            Framed::Message { code: SQUARE, body } => match square_change(&body) {
                Some((square, put)) => {
                    let Some(mut occupied) = self.occupied else { return };
                    occupied.set(square, put);
                    return self.show(occupied, out);
                }
                None => DecodeProblem::BadMessage(format!("a square's change {:?}", String::from_utf8_lossy(&body))),
            },
            // The game's start, the battery, …: nothing about the squares.
            Framed::Message { .. } => return,
            Framed::Garbage(len) => DecodeProblem::Garbage { len, reason: "bytes outside any Square Off message" },
        };
        self.refresh = true;
        out.push_back(Decoded::Problem(problem));
    }

    fn show(&mut self, occupied: Bitboard, out: &mut Out) {
        if self.refresh || self.occupied != Some(occupied) {
            self.refresh = false;
            self.occupied = Some(occupied);
            let mut picture = Picture::empty();
            for square in occupied {
                picture.set(square, Cell::Occupied);
            }
            out.push_back(Decoded::Sensor(SensorEvent::Board(Box::new(picture))));
        }
    }
}

/// The square and whether a piece was put down (`e4d`) or lifted (`e2u`).
fn square_change(body: &[u8]) -> Option<(Square, bool)> {
    let [file, rank, how] = *body else { return None };
    let square = Square::from_ascii(&[file, rank]).ok()?;
    match how {
        b'd' => Some((square, true)),
        b'u' => Some((square, false)),
        _ => None,
    }
}

impl BoardDecoder for SquareOffDecoder {
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.queue.push(bytes);
    }

    fn poll_decoded(&mut self) -> Option<Decoded> {
        let shown = &mut self.shown;
        self.queue.poll(|item, out| shown.handle(item, out))
    }

    /// Ends the stream; the next reply is reported whole.
    fn finish(&mut self) -> Option<Decoded> {
        self.shown.refresh = true;
        self.queue.finish("a message cut off by the end of the stream")
    }
}

/// The family of Square Off boards.
pub const FAMILY: Family = Family {
    name: "squareoff",
    title: "Square Off board (occupancy only)",
    // Bluetooth LE has no line speed; this is for a port nobody opens.
    baud: 9600,
    identifies_pieces: false,
    answers_board_request: true,
    features: Features { lights: false, clock_text: false, calibration: false },
    probe: Probe {
        // Found over Bluetooth by its advertised name, never on a port.
        ask: || link::REQUEST_BOARD.to_vec(),
        answers: |decoded| matches!(decoded, Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: false,
        rank: 3,
    },
    on_serial: false,
    bluetooth: Some(Bluetooth {
        name_contains: "SquareOff",
        service: uart::SERVICE,
        notify: uart::NOTIFY,
        write: uart::WRITE,
        write_spacing: std::time::Duration::ZERO,
    }),
    decoder: || Box::new(SquareOffDecoder::new()),
    link: |config| Box::new(link::SquareOffLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a Square Off board (its notifications).
    pub const SQUAREOFF: Self = Self::of(&FAMILY);
}

#[cfg(test)]
mod tests {
    use shakmaty::Board;

    use super::*;

    fn decode(decoder: &mut SquareOffDecoder, bytes: &[u8]) -> Vec<Decoded> {
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    fn board(occupied: Bitboard) -> Decoded {
        let mut picture = Picture::empty();
        for square in occupied {
            picture.set(square, Cell::Occupied);
        }
        Decoded::Sensor(SensorEvent::Board(Box::new(picture)))
    }

    #[test]
    fn the_recorded_replies_read_file_by_file() {
        let start = Board::new().occupied();
        assert_eq!(board_message(start), [&b"30#"[..], &b"11000011".repeat(8), b"*"].concat());
        // Recorded after 1.e4 e5.
        let after = b"1100001111000011110000111100001110011001110000111100001111000011";
        let moved = start
            ^ Bitboard::from(Square::E2)
            ^ Bitboard::from(Square::E4)
            ^ Bitboard::from(Square::E7)
            ^ Bitboard::from(Square::E5);
        assert_eq!(occupancy_of(after), Ok(moved));
    }

    #[test]
    fn square_changes_move_the_last_board_and_come_before_it_dropped() {
        let mut decoder = SquareOffDecoder::new();
        assert_eq!(decode(&mut decoder, &square_message(Square::E2, false)), []);
        let start = Board::new().occupied();
        assert_eq!(decode(&mut decoder, &board_message(start)), [board(start)]);
        let lifted = start ^ Bitboard::from(Square::E2);
        assert_eq!(decode(&mut decoder, b"0#e2u*"), [board(lifted)]);
        assert_eq!(decode(&mut decoder, &board_message(lifted)), [], "unchanged");
        assert_eq!(decode(&mut decoder, b"0#e4d*"), [board(lifted | Bitboard::from(Square::E4))]);
        assert!(matches!(decode(&mut decoder, b"0#z9u*")[..], [Decoded::Problem(DecodeProblem::BadMessage(_))]));
        assert_eq!(decode(&mut decoder, &board_message(start)), [board(start)], "after a problem: whole");
    }
}
