//! Occupancy-only boards in the Tabutronic Sentio line format: `:` and
//! eight numbers, one bitmask of occupied squares per rank, streamed by the
//! board (`../shared/research/eboard-protocols.md` section 3.5). Which
//! piece stands where comes from the game, not from the board: squares are
//! reported as occupied by an unknown piece.
//!
//! The first number is rank 8, the last rank 1; within a number bit 7 is
//! the a-file and bit 0 the h-file (the reverse of the Certabo LED bytes;
//! taken from one open-source driver's tests: `:255 255 0 0 0 0 255 254` is
//! the start position with h1 empty).
//!
//! The lines are read by `certabo::line`; the link is the streaming one of
//! `certabo::link` (without LEDs). A simulated board is in `boardcast-sim`.

use shakmaty::{Bitboard, File, Rank, Square};

use super::{BoardDecoder, Family, Features, Probe, Protocol};
use super::{
    DecodeProblem, Decoded,
    certabo::line::{self, Line, LineReader, OCCUPANCY_NUMBERS, TAG_NUMBERS},
    queue::{Out, Queue},
};
use crate::sensor::{Cell, Picture, SensorEvent};

/// Turns bytes from a Sentio-format board into [`Decoded`] items.
///
/// Every report shows the whole board, so the decoder reports a whole
/// [`Picture`] (every occupied square [`Cell::Occupied`], in the board's
/// own orientation), and only when it changed: the first one always, and
/// the first one after damaged bytes, which tells the reconstructor the
/// picture is whole again. There is no vote over several reports as for
/// Certabo boards: occupancy sensors do not flicker the way weak RFID
/// readings do, and the reconstructor already waits for the board to
/// settle.
#[derive(Clone, Debug, Default)]
pub struct SentioDecoder {
    queue: Queue<LineReader>,
    shown: Shown,
}

/// What was reported so far.
#[derive(Clone, Debug, Default)]
struct Shown {
    /// The occupancy last reported.
    occupied: Option<Bitboard>,
    /// Report the next picture even if unchanged (bytes were lost).
    refresh: bool,
}

impl SentioDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Shown {
    fn handle_line(&mut self, line: Line, out: &mut Out) {
        let problem = match line {
            Line::Numbers(numbers) if numbers.len() == OCCUPANCY_NUMBERS => {
                let occupied = occupancy(&numbers);
                if self.refresh || self.occupied != Some(occupied) {
                    self.refresh = false;
                    self.occupied = Some(occupied);
                    out.push_back(Decoded::Sensor(SensorEvent::Board(Box::new(picture(occupied)))));
                }
                return;
            }
            Line::Numbers(numbers) => {
                let hint = if numbers.len() == TAG_NUMBERS {
                    "; 320 numbers is a Certabo board's report: is the board configured as the wrong kind?"
                } else {
                    ""
                };
                DecodeProblem::BadMessage(format!(
                    "a report of {} numbers (a Sentio-format board sends {OCCUPANCY_NUMBERS}){hint}",
                    numbers.len()
                ))
            }
            // Certabo LED markers say nothing about the squares.
            Line::Marker(_) => return,
            Line::Junk { len, reason } => DecodeProblem::Garbage { len, reason },
            Line::Bad(why) => DecodeProblem::BadMessage(why),
        };
        self.refresh = true;
        out.push_back(Decoded::Problem(problem));
    }
}

/// The occupied squares of a report: rank 8 first, bit 7 the a-file.
pub fn occupancy(ranks: &[u8]) -> Bitboard {
    let mut occupied = Bitboard::EMPTY;
    for (row, &mask) in ranks.iter().take(8).enumerate() {
        for file in 0..8u32 {
            if mask & (0x80 >> file) != 0 {
                occupied.add(Square::from_coords(File::new(file), Rank::new(7 - row as u32)));
            }
        }
    }
    occupied
}

/// The eight numbers of a report for the occupied squares.
pub fn ranks(occupied: Bitboard) -> [u8; 8] {
    let mut ranks = [0u8; 8];
    for square in occupied {
        let row = 7 - usize::from(square.rank());
        ranks[row] |= 0x80 >> u32::from(square.file());
    }
    ranks
}

fn picture(occupied: Bitboard) -> Picture {
    let mut picture = Picture::empty();
    for square in occupied {
        picture.set(square, Cell::Occupied);
    }
    picture
}

/// The family of occupancy-only boards (Sentio line format).
pub const FAMILY: Family = Family {
    name: "sentio",
    title: "occupancy-only board (Sentio format)",
    baud: 38_400,
    identifies_pieces: false,
    answers_board_request: false,
    features: Features { lights: false, clock_text: false, calibration: false },
    probe: Probe {
        // It streams by itself, like a Certabo board, in lines of eight.
        ask: Vec::new,
        answers: |decoded| matches!(decoded, Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: false,
        rank: 0,
    },
    on_serial: true,
    bluetooth: None,
    decoder: || Box::new(SentioDecoder::new()),
    link: |config| Box::new(super::certabo::link::StreamLink::new(false, config)),
};

impl Protocol {
    /// Raw bytes of an occupancy-only board in the Sentio line format.
    pub const SENTIO: Self = Self::of(&FAMILY);
}

impl BoardDecoder for SentioDecoder {
    /// Takes bytes received from the board.
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.queue.push(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    fn poll_decoded(&mut self) -> Option<Decoded> {
        let shown = &mut self.shown;
        self.queue.poll(|line, out| shown.handle_line(line, out))
    }

    /// Ends the stream, reporting a line left unfinished; the next report
    /// is reported whole.
    fn finish(&mut self) -> Option<Decoded> {
        self.shown.refresh = true;
        self.queue.finish(line::CUT_OFF)
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Board;

    use super::*;

    fn decode(decoder: &mut SentioDecoder, bytes: &[u8]) -> Vec<Decoded> {
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    #[test]
    fn reads_the_start_position_with_h1_empty() {
        let mut decoder = SentioDecoder::new();
        let out = decode(&mut decoder, b":255 255 0 0 0 0 255 254 \r\n");
        let mut expected = Board::new().occupied();
        expected.discard(Square::H1);
        assert_eq!(out, [Decoded::Sensor(SensorEvent::Board(Box::new(picture(expected))))]);
        assert_eq!(decode(&mut decoder, b":255 255 0 0 0 0 255 254 \r\n"), [], "unchanged");
    }

    #[test]
    fn ranks_and_occupancy_agree() {
        let occupied = Board::new().occupied() ^ Bitboard::from(Square::E2) ^ Bitboard::from(Square::E4);
        assert_eq!(ranks(occupied), [255, 255, 0, 0, 0x08, 0, 0xF7, 255]);
        assert_eq!(occupancy(&ranks(occupied)), occupied);
    }

    #[test]
    fn reports_bad_lines_and_then_the_whole_board() {
        let mut decoder = SentioDecoder::new();
        decode(&mut decoder, b":255 255 0 0 0 0 255 255\r\n");
        let out = decode(&mut decoder, b":255 255 0 0 0 0 255\r\n");
        assert_eq!(
            out,
            [Decoded::Problem(DecodeProblem::BadMessage(
                "a report of 7 numbers (a Sentio-format board sends 8)".into()
            ))]
        );
        let out = decode(&mut decoder, b":255 255 0 0 0 0 255 255\r\n");
        assert!(matches!(out.as_slice(), [Decoded::Sensor(SensorEvent::Board(_))]), "{out:?}");
        decode(&mut decoder, b":255 25");
        assert_eq!(decoder.finish(), Some(Decoded::Problem(DecodeProblem::Garbage { len: 7, reason: line::CUT_OFF })));
    }
}
