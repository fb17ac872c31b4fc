//! A simulated Certabo board, sans-I/O: it streams a report of every
//! square's tag ten times a second of its own time, whatever the host does,
//! as the real board does. `boardcast simulate --protocol certabo` puts it
//! behind a pseudo-terminal; the synthetic captures and the tests use its
//! tags.
//!
//! Every physical piece of the simulated set carries its own fixed tag
//! ([`tag_of`]): the 32 pieces of the start position, a spare queen of each
//! colour, and further spare pieces of every kind for promotions. A piece
//! lifted and put down again keeps its tag (the most recently lifted piece
//! of a kind is the one put down), and a promotion takes a piece of that
//! kind from beside the board: one captured earlier if there is one, else
//! the first spare. A placement the script shows before the lift it
//! belongs to (a scan that reached the target square first) would need a
//! piece from outside play; when the very next event lifts a piece of that
//! kind from another square, the placed piece is taken to be that one (see
//! `CertaboSim::set`). [`CertaboSim::calibration`] is what `boardcast
//! calibrate` learns from this set (start position and spare queens);
//! [`CertaboSim::full_calibration`] also knows the other spares, as a
//! calibration file with those pieces added does.
//!
//! LED frames from the host are kept ([`CertaboSim::lit`]) but change
//! nothing. The board has no clock: clock events of a script are ignored.

use super::SimulatedBoard;
use std::{collections::VecDeque, time::Duration};

use shakmaty::{Bitboard, Color, Piece, Role, Square};

use boardcast_core::protocol::certabo::{
    Calibration,
    calibration::{EMPTY, Tags, index_of, square_of},
    line::{Leds, Line, LineReader, TAG_NUMBERS, encode_report},
};
use boardcast_core::{
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// How often the board sends a report, in its own time.
pub const REPORT_EVERY: Duration = Duration::from_millis(100);

/// How often an RGB board repeats its `D` marker line (in reports).
const MARKER_EVERY: u32 = 10;

/// The tag of spare piece `index` of a kind (0 is the first piece of the
/// kind in the start position; the spare queens are index 1).
///
/// The numbers are made up and distinct: the first two bytes say the kind
/// and the index, the rest only make the tag look like one.
pub fn tag_of(piece: Piece, index: u8) -> [u8; 5] {
    let kind = 0x10 + u8::from(piece.color == Color::Black) * 6 + piece.role as u8;
    let n = index + 1;
    [kind, n, kind.wrapping_mul(37) ^ n.wrapping_mul(101), 0xA7, 0x3C ^ n]
}

/// How many pieces of a kind the simulated set has, spares included: as
/// many as the rules allow on the board at once.
pub fn pieces_of(role: Role) -> u8 {
    match role {
        Role::King => 1,
        Role::Pawn => 8,
        Role::Queen => 9,
        Role::Rook | Role::Bishop | Role::Knight => 10,
    }
}

/// A simulated Certabo board.
#[derive(Clone, Debug)]
pub struct CertaboSim {
    picture: Picture,
    /// The tag on each square, in report order (a8 first).
    tags: Tags,
    /// Which piece of the set stands on each square (report order).
    pieces: [Option<(Piece, u8)>; 64],
    /// Pieces taken off the board, the most recent last.
    beside: Vec<(Piece, u8)>,
    /// The last scripted event was a placement of a piece that had to come
    /// from outside play: it may be a piece seen before its lift.
    placed: Option<Placed>,
    /// When the next report is due.
    next_report: Timestamp,
    /// Reports sent.
    reports: u32,
    leds: Leds,
    /// The last LED frame the host sent.
    frame: Option<Vec<u8>>,
    /// Host bytes not yet a whole frame.
    host: Vec<u8>,
    /// Splits scripted raw bytes into lines.
    script: LineReader,
    out: VecDeque<u8>,
}

impl CertaboSim {
    /// A board with nothing on it yet, with classic LEDs.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        Self {
            picture: Picture::empty(),
            tags: [EMPTY; 64],
            pieces: [None; 64],
            beside: Vec::new(),
            placed: None,
            next_report: Timestamp::ZERO,
            reports: 0,
            leds: Leds::Classic,
            frame: None,
            host: Vec::new(),
            script: LineReader::new(),
            out: VecDeque::new(),
        }
    }

    /// The same board with RGB LEDs: it announces them with a `D` line
    /// once a second and takes RGB frames.
    pub fn with_rgb_leds(mut self) -> Self {
        self.leds = Leds::Rgb;
        self
    }

    /// What calibrating this board's set gives (`boardcast calibrate`: the
    /// start position plus a spare queen of each colour).
    pub fn calibration() -> Calibration {
        let mut calibration = Calibration::default();
        for color in Color::ALL {
            for role in Role::ALL {
                let count = match role {
                    Role::King | Role::Queen => 1,
                    Role::Pawn => 8,
                    Role::Rook | Role::Bishop | Role::Knight => 2,
                } + u8::from(role == Role::Queen);
                for index in 0..count {
                    calibration.insert(tag_of(Piece { color, role }, index), Piece { color, role });
                }
            }
        }
        calibration
    }

    /// Every tag of the set, spares for any promotion included.
    pub fn full_calibration() -> Calibration {
        let mut calibration = Calibration::default();
        for color in Color::ALL {
            for role in Role::ALL {
                for index in 0..pieces_of(role) {
                    calibration.insert(tag_of(Piece { color, role }, index), Piece { color, role });
                }
            }
        }
        calibration
    }

    /// The tag on each square now, in report order (a8 first).
    pub fn tags(&self) -> &Tags {
        &self.tags
    }

    /// The report line the board sends for the board as it is now.
    pub fn report(&self) -> Vec<u8> {
        let mut line = Vec::with_capacity(1024);
        encode_report(self.tags.iter().flatten().copied(), &mut line);
        line
    }

    /// The squares the host's last classic LED frame lights.
    pub fn lit(&self) -> Bitboard {
        match self.frame.as_deref() {
            Some(frame) if self.leds == Leds::Classic => {
                Bitboard(u64::from_be_bytes(frame.try_into().expect("classic frames are 8 bytes")))
            }
            _ => Bitboard::EMPTY,
        }
    }

    /// The last LED frame the host sent, as sent.
    pub fn led_frame(&self) -> Option<&[u8]> {
        self.frame.as_deref()
    }

    /// Puts `cell` on `square`, with the tag of the piece that goes there.
    ///
    /// Hands lift a piece before they put it down, but a script may show
    /// the placement first: the board scanned the target square before the
    /// source, a few milliseconds apart. No piece of the kind is then off
    /// the board, so the placement gets a spare's tag (or a stranger's, for
    /// a kind without spares: pawns, kings). Left like that, the piece
    /// would carry the wrong tag for the rest of the game, on a real board
    /// an impossible one: a ninth pawn. So when the very next event lifts a
    /// piece of that kind from another square, the placed piece was that
    /// one: it takes that piece's tag and the spare goes back unused.
    /// Only a report made between the two events shows the spare's tag,
    /// as a real board might misread a piece in motion.
    fn set(&mut self, square: Square, cell: Cell) {
        let placed = self.placed.take();
        if self.picture.get(square) == cell {
            return;
        }
        let index = index_of(square);
        if let Some(placed) = placed
            && cell == Cell::Empty
            && placed.index != index
            && let Some((piece, n)) = self.pieces[index].filter(|&(p, _)| p == placed.piece)
        {
            self.pieces[index] = None;
            self.tags[index] = EMPTY;
            self.picture.set(square, Cell::Empty);
            self.pieces[placed.index] = Some((piece, n));
            self.tags[placed.index] = tag_of(piece, n);
            return;
        }
        self.picture.set(square, cell);
        if let Some(piece) = self.pieces[index].take() {
            self.beside.push(piece);
        }
        self.tags[index] = match cell {
            Cell::Empty => EMPTY,
            Cell::Occupied => stranger(index),
            Cell::Piece(piece) => {
                let (tag, from_beside) = match self.take(piece) {
                    Some((n, from_beside)) => {
                        self.pieces[index] = Some((piece, n));
                        (tag_of(piece, n), from_beside)
                    }
                    // More pieces of a kind than a set has: one from
                    // another set, which no calibration knows.
                    None => (stranger(index), false),
                };
                if !from_beside {
                    self.placed = Some(Placed { index, piece });
                }
                tag
            }
        };
    }

    /// The piece of a kind to put down: the one last taken off, else the
    /// first of the set neither on the board nor beside it; and whether it
    /// was one taken off.
    fn take(&mut self, piece: Piece) -> Option<(u8, bool)> {
        if let Some(at) = self.beside.iter().rposition(|(p, _)| *p == piece) {
            return Some((self.beside.remove(at).1, true));
        }
        let used = |n: u8| self.pieces.iter().flatten().chain(&self.beside).any(|&(p, m)| p == piece && m == n);
        (0..pieces_of(piece.role)).find(|&n| !used(n)).map(|n| (n, false))
    }
}

/// A piece just put down that had to come from outside play (a spare, or
/// a stranger): perhaps a piece seen on its target before its lift.
#[derive(Clone, Copy, Debug)]
struct Placed {
    /// Its square, in report order.
    index: usize,
    /// Which piece the script put there.
    piece: Piece,
}

/// The tag of a piece from outside the set, on report square `index`.
fn stranger(index: usize) -> [u8; 5] {
    [0xEE, 0x01, index as u8, 0x55, 0x99]
}

impl SimulatedBoard for CertaboSim {
    /// Whether the board is sending (a Certabo board always is).
    fn sends_updates(&self) -> bool {
        true
    }
    /// The board as it is now.
    fn picture(&self) -> &Picture {
        &self.picture
    }
    /// Bytes the host sent: LED frames (8 bytes, or `FF 55` … `0D 0A` on an
    /// RGB board).
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        self.host.extend_from_slice(bytes);
        loop {
            let len = match self.leds {
                Leds::Classic => 8,
                Leds::Rgb => {
                    // Anything before a frame's start is not a frame.
                    let start = self.host.windows(2).position(|w| w == [0xFF, 0x55]);
                    self.host.drain(..start.unwrap_or(self.host.len().saturating_sub(1)));
                    2 + 81 * 3 + 2
                }
            };
            if self.host.len() < len {
                break;
            }
            self.frame = Some(self.host.drain(..len).collect());
        }
    }
    /// Raw bytes of a recorded Certabo board: each whole report becomes the
    /// board's tags (sent on at the board's own pace); the picture reads
    /// them with [`CertaboSim::full_calibration`], unknown tags as occupied.
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.script.push(bytes);
        while let Some(line) = self.script.next_line() {
            match line {
                Line::Numbers(numbers) if numbers.len() == TAG_NUMBERS => {
                    self.placed = None;
                    let calibration = Self::full_calibration();
                    for (index, group) in numbers.chunks_exact(5).enumerate() {
                        self.tags[index].copy_from_slice(group);
                        self.pieces[index] = None;
                        let cell = match calibration.piece(&self.tags[index]) {
                            _ if self.tags[index] == EMPTY => Cell::Empty,
                            Some(piece) => Cell::Piece(piece),
                            None => Cell::Occupied,
                        };
                        self.picture.set(square_of(index), cell);
                    }
                }
                Line::Marker(leds) => self.leds = leds,
                _ => {}
            }
        }
    }
    /// A decoded sensor event of a script: squares change (a whole board
    /// as if lifted, then put down); clock readings are ignored.
    fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => {
                let changed: Vec<Square> =
                    Square::ALL.into_iter().filter(|&sq| self.picture.get(sq) != board.get(sq)).collect();
                for &square in &changed {
                    self.set(square, Cell::Empty);
                }
                for &square in &changed {
                    self.set(square, board.get(square));
                }
                // A whole board is put down at once: none of its pieces
                // is waiting for a lift.
                self.placed = None;
            }
            &SensorEvent::Square { square, cell } => self.set(square, cell),
            SensorEvent::Clock(_) => {}
        }
    }
    /// Time passes: a report is sent when one is due.
    fn handle_timeout(&mut self, now: Timestamp) {
        if now < self.next_report {
            return;
        }
        if self.leds == Leds::Rgb && self.reports.is_multiple_of(MARKER_EVERY) {
            self.out.extend(b"D\r\n");
        }
        let report = self.report();
        self.out.extend(report);
        self.reports += 1;
        self.next_report = now + REPORT_EVERY;
    }
    /// When the next report is due.
    fn poll_timeout(&self) -> Option<Timestamp> {
        Some(self.next_report)
    }
    /// Bytes to send to the host.
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() { None } else { Some(self.out.drain(..).collect()) }
    }
    /// The cable was pulled: what was not sent is lost; the board goes on
    /// reporting once powered again.
    fn handle_unplugged(&mut self) {
        self.out.clear();
        self.host.clear();
        self.reports = 0;
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::BoardDecoder;
    use shakmaty::Board;

    use super::*;
    use boardcast_core::protocol::{Decoded, certabo::CertaboDecoder};

    fn start() -> SensorEvent {
        SensorEvent::Board(Box::new(Picture::from_board(&Board::new())))
    }

    fn decode(decoder: &mut CertaboDecoder, bytes: &[u8]) -> Vec<Picture> {
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded())
            .filter_map(|d| match d {
                Decoded::Sensor(SensorEvent::Board(p)) => Some(*p),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn streams_a_report_ten_times_a_second() {
        let mut board = CertaboSim::new("x", ClockSide::Left);
        board.handle_script_event(&start());
        assert_eq!(board.poll_timeout(), Some(Timestamp::ZERO));
        board.handle_timeout(Timestamp::ZERO);
        let sent = board.poll_transmit().unwrap();
        assert_eq!(sent, board.report());
        assert!(sent.starts_with(b":") && sent.ends_with(b" \r\n"));
        assert_eq!(board.poll_timeout(), Some(Timestamp::from_millis(100)));
        board.handle_timeout(Timestamp::from_millis(50));
        assert_eq!(board.poll_transmit(), None, "not yet");
        board.handle_timeout(Timestamp::from_millis(100));
        assert_eq!(board.poll_transmit().unwrap(), sent);
    }

    #[test]
    fn its_calibration_reads_its_pieces() {
        let mut board = CertaboSim::new("x", ClockSide::Left);
        board.handle_script_event(&start());
        let mut decoder = CertaboDecoder::new();
        decoder.set_calibration(CertaboSim::calibration());
        assert_eq!(decoder.calibration().len(), 34);
        assert_eq!(decode(&mut decoder, &board.report()), [Picture::from_board(&Board::new())]);
    }

    #[test]
    fn a_piece_keeps_its_tag_and_a_promotion_takes_a_spare() {
        let mut board = CertaboSim::new("x", ClockSide::Left);
        board.handle_script_event(&start());
        let knight = board.tags()[index_of(Square::G1)];
        board.handle_script_event(&SensorEvent::Square { square: Square::G1, cell: Cell::Empty });
        board
            .handle_script_event(&SensorEvent::Square { square: Square::F3, cell: Cell::Piece(Color::White.knight()) });
        assert_eq!(board.tags()[index_of(Square::F3)], knight);
        board.handle_script_event(&SensorEvent::Square { square: Square::A7, cell: Cell::Empty });
        board.handle_script_event(&SensorEvent::Square { square: Square::A8, cell: Cell::Piece(Color::White.queen()) });
        assert_eq!(board.tags()[index_of(Square::A8)], tag_of(Color::White.queen(), 1), "the spare queen");
        board.handle_script_event(&SensorEvent::Square { square: Square::B8, cell: Cell::Piece(Color::White.queen()) });
        let third = board.tags()[index_of(Square::B8)];
        assert_eq!(third, tag_of(Color::White.queen(), 2));
        assert_eq!(CertaboSim::calibration().piece(&third), None, "a calibration knows two queens a side");
        assert_eq!(CertaboSim::full_calibration().piece(&third), Some(Color::White.queen()));
    }

    #[test]
    fn a_placement_seen_before_its_lift_is_the_piece_lifted() {
        let mut board = CertaboSim::new("x", ClockSide::Left);
        board.handle_script_event(&start());
        let pawn = board.tags()[index_of(Square::E2)];
        let knight = board.tags()[index_of(Square::G1)];
        let square = |square, cell| SensorEvent::Square { square, cell };
        // All eight pawns are on the board: the pawn seen on e4 first is a
        // stranger until e2 is seen lifted.
        board.handle_script_event(&square(Square::E4, Cell::Piece(Color::White.pawn())));
        assert_eq!(CertaboSim::full_calibration().piece(&board.tags()[index_of(Square::E4)]), None);
        board.handle_script_event(&square(Square::E2, Cell::Empty));
        assert_eq!(board.tags()[index_of(Square::E4)], pawn);
        assert_eq!(board.tags()[index_of(Square::E2)], EMPTY);
        // The same with a spare: a knight seen on f3 before g1 is lifted.
        board.handle_script_event(&square(Square::F3, Cell::Piece(Color::White.knight())));
        board.handle_script_event(&square(Square::G1, Cell::Empty));
        assert_eq!(board.tags()[index_of(Square::F3)], knight);
        // A promotion: the new queen is put down, then a pawn is lifted.
        board.handle_script_event(&square(Square::A7, Cell::Empty));
        board.handle_script_event(&square(Square::A8, Cell::Piece(Color::White.queen())));
        board.handle_script_event(&square(Square::A2, Cell::Empty));
        assert_eq!(board.tags()[index_of(Square::A8)], tag_of(Color::White.queen(), 1), "the spare queen stays");
        assert_eq!(board.picture().get(Square::A2), Cell::Empty);
    }

    #[test]
    fn keeps_the_hosts_led_frames() {
        let mut board = CertaboSim::new("x", ClockSide::Left);
        board.handle_host_bytes(&[0, 0, 0, 0]);
        board.handle_host_bytes(&[0x08, 0, 0x08, 0]);
        assert_eq!(board.lit(), Bitboard::from(Square::D2) | Bitboard::from(Square::D4));
        let mut rgb = CertaboSim::new("x", ClockSide::Left).with_rgb_leds();
        let mut frame = vec![0x12, 0xFF, 0x55];
        frame.extend([7; 243]);
        frame.extend([0x0D, 0x0A]);
        rgb.handle_host_bytes(&frame[..100]);
        assert_eq!(rgb.led_frame(), None);
        rgb.handle_host_bytes(&frame[100..]);
        assert_eq!(rgb.led_frame().map(<[u8]>::len), Some(247));
        rgb.handle_timeout(Timestamp::ZERO);
        assert!(rgb.poll_transmit().unwrap().starts_with(b"D\r\n:"));
    }

    #[test]
    fn plays_recorded_reports() {
        let mut recorded = CertaboSim::new("x", ClockSide::Left);
        recorded.handle_script_event(&start());
        let line = recorded.report();
        let mut board = CertaboSim::new("x", ClockSide::Left);
        board.handle_script_bytes(&line[..300]);
        assert_eq!(board.picture(), &Picture::empty());
        board.handle_script_bytes(&line[300..]);
        assert_eq!(board.picture(), &Picture::from_board(&Board::new()));
        board.handle_timeout(Timestamp::ZERO);
        assert_eq!(board.poll_transmit().unwrap(), line);
    }
}
