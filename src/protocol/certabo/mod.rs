//! Certabo RFID boards: lines of `:` and 320 numbers (five per square, the
//! tag of the piece standing there), streamed by the board by itself at
//! 38400 baud (`../shared/research/eboard-protocols.md` section 3). A tag
//! says nothing by itself: a [`Calibration`] maps tags to pieces.
//!
//! - [`line`]: the line format (shared with Sentio-format boards).
//! - [`calibration`]: tags to pieces.
//! - [`link`]: the host's side of a streaming board (also used for
//!   Sentio boards): silence and LEDs.
//! - [`sim`]: a simulated board.
//!
//! [`CertaboDecoder`] reads the lines, outvotes flicker and reports the
//! board as pictures.

pub mod calibration;
pub mod line;
pub mod link;
pub mod sim;

use std::collections::VecDeque;

pub use self::calibration::{Calibration, CalibrationError};
use self::{
    calibration::{EMPTY, Tags, square_of},
    line::{Leds, Line, LineReader, OCCUPANCY_NUMBERS, TAG_NUMBERS},
};
use super::{BoardInfo, DecodeProblem, Decoded};
use crate::sensor::{Cell, Picture, SensorEvent};

/// How many recent reports each square's tag is voted over.
const VOTES: usize = 3;

/// Turns bytes from a Certabo board into [`Decoded`] items, whatever
/// chunks they arrive in.
///
/// Every report shows the whole board, so the decoder reports a whole
/// [`Picture`] (squares in the board's own orientation: the report's first
/// square is a8), and only when it changed (the first one always, and the
/// first one after damaged bytes, which tells the reconstructor the picture
/// is whole again).
///
/// Boards with little antenna gain read a piece now and then as absent or
/// as another tag for one report. Each square therefore shows the tag read
/// in at least two of the last three reports; while no tag has two, the
/// square stays as it was. A real change thus shows one report late
/// (about a tenth of a second).
///
/// A tag the calibration knows is that piece; an unknown tag on a square is
/// [`Cell::Occupied`]. Without a calibration the decoder learns one from
/// the first picture with the start position's occupancy (ranks 1, 2, 7 and
/// 8 full, the rest empty): the tags there become the start position's
/// pieces. That is what makes an uncalibrated board usable, with two
/// limits: a promotion to a piece that was not on the board at the start
/// (the usual spare queen) is unknown, and a board turned round before it
/// was calibrated is learnt the wrong way round (the start position's
/// occupancy looks the same both ways), so it must be calibrated.
#[derive(Clone, Debug, Default)]
pub struct CertaboDecoder {
    lines: LineReader,
    calibration: Calibration,
    /// The calibration was learnt from the start position, not given.
    learned: bool,
    /// The last good reports, oldest first.
    recent: VecDeque<Tags>,
    /// Each square's tag after the vote.
    voted: Option<Tags>,
    /// The picture last reported.
    shown: Option<Picture>,
    /// Report the next picture even if unchanged (bytes were lost).
    refresh: bool,
    /// The LED hardware the board announced.
    leds: Option<Leds>,
    out: VecDeque<Decoded>,
}

impl CertaboDecoder {
    /// A decoder at the start of a stream, without a calibration yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The board's calibration. An empty one means: learn it from the
    /// start position.
    pub fn set_calibration(&mut self, calibration: Calibration) {
        self.calibration = calibration;
        self.learned = false;
    }

    /// The calibration in use (given, or learnt from the start position).
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Whether the calibration was learnt from the start position rather
    /// than given.
    pub fn learned(&self) -> bool {
        self.learned
    }

    /// The LED hardware the board announced, if it did.
    pub fn leds(&self) -> Option<Leds> {
        self.leds
    }

    /// Takes bytes received from the board.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    pub fn poll_decoded(&mut self) -> Option<Decoded> {
        loop {
            if let Some(decoded) = self.out.pop_front() {
                return Some(decoded);
            }
            let line = self.lines.next_line()?;
            self.handle_line(line);
        }
    }

    /// Ends the stream, reporting a line left unfinished. The next report
    /// (a board plugged back in) starts the vote afresh and is reported
    /// whole.
    pub fn finish(&mut self) -> Option<Decoded> {
        self.recent.clear();
        self.refresh = true;
        let len = self.lines.flush()?;
        Some(Decoded::Problem(DecodeProblem::Garbage { len, reason: line::CUT_OFF }))
    }

    fn handle_line(&mut self, line: Line) {
        match line {
            Line::Numbers(numbers) if numbers.len() == TAG_NUMBERS => self.handle_report(&numbers),
            Line::Numbers(numbers) => {
                let hint = if numbers.len() == OCCUPANCY_NUMBERS {
                    "; eight numbers is the occupancy-only Sentio format: is the board configured as the wrong kind?"
                } else {
                    ""
                };
                self.problem(DecodeProblem::BadMessage(format!(
                    "a report of {} numbers (a Certabo board sends {TAG_NUMBERS}){hint}",
                    numbers.len()
                )));
            }
            Line::Marker(leds) => {
                if self.leds != Some(leds) {
                    self.leds = Some(leds);
                    self.out.push_back(Decoded::Info(BoardInfo::Trademark(leds.describe().to_owned())));
                }
            }
            Line::Junk { len, reason } => self.problem(DecodeProblem::Garbage { len, reason }),
            Line::Bad(why) => self.problem(DecodeProblem::BadMessage(why)),
        }
    }

    fn problem(&mut self, problem: DecodeProblem) {
        self.refresh = true;
        self.out.push_back(Decoded::Problem(problem));
    }

    fn handle_report(&mut self, numbers: &[u8]) {
        let mut tags = [EMPTY; 64];
        for (tag, group) in tags.iter_mut().zip(numbers.chunks_exact(5)) {
            tag.copy_from_slice(group);
        }
        if self.recent.len() == VOTES {
            self.recent.pop_front();
        }
        self.recent.push_back(tags);
        let voted = vote(&self.recent, self.voted.as_ref());
        self.voted = Some(voted);
        if self.calibration.is_empty()
            && let Some(learned) = Calibration::from_start_position(&voted)
        {
            self.calibration = learned;
            self.learned = true;
        }
        let picture = self.picture(&voted);
        if self.refresh || self.shown.as_ref() != Some(&picture) {
            self.refresh = false;
            self.shown = Some(picture.clone());
            self.out.push_back(Decoded::Sensor(SensorEvent::Board(Box::new(picture))));
        }
    }

    fn picture(&self, tags: &Tags) -> Picture {
        let mut picture = Picture::empty();
        for (index, tag) in tags.iter().enumerate() {
            let cell = match self.calibration.piece(tag) {
                _ if *tag == EMPTY => Cell::Empty,
                Some(piece) => Cell::Piece(piece),
                None => Cell::Occupied,
            };
            picture.set(square_of(index), cell);
        }
        picture
    }
}

/// Each square's tag: the one read in at least two of the recent reports;
/// failing that the square's previous tag (the latest one before there is
/// any).
fn vote(recent: &VecDeque<Tags>, previous: Option<&Tags>) -> Tags {
    let latest = recent.back().expect("a report was just added");
    let mut voted = *latest;
    for (index, tag) in voted.iter_mut().enumerate() {
        let readings = || recent.iter().map(|r| r[index]);
        let majority = readings().find(|t| readings().filter(|u| u == t).count() * 2 > recent.len().max(2));
        *tag = match (majority, previous) {
            (Some(t), _) => t,
            (None, Some(p)) => p[index],
            (None, None) => latest[index],
        };
    }
    voted
}

#[cfg(test)]
mod tests {
    use shakmaty::{Board, Color, Square};

    use super::{calibration::index_of, *};

    fn tag(index: usize) -> [u8; 5] {
        [index as u8 + 1, 2, 3, 4, 5]
    }

    fn start_tags() -> Tags {
        let mut tags = [EMPTY; 64];
        for index in (0..16).chain(48..64) {
            tags[index] = tag(index);
        }
        tags
    }

    fn line(tags: &Tags) -> Vec<u8> {
        let mut out = Vec::new();
        line::encode_report(tags.iter().flatten().copied(), &mut out);
        out
    }

    fn decode(decoder: &mut CertaboDecoder, bytes: &[u8]) -> Vec<Decoded> {
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    fn pictures(items: &[Decoded]) -> Vec<Picture> {
        items
            .iter()
            .filter_map(|d| match d {
                Decoded::Sensor(SensorEvent::Board(p)) => Some((**p).clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn learns_the_start_position_without_a_calibration() {
        let mut decoder = CertaboDecoder::new();
        let out = decode(&mut decoder, &line(&start_tags()));
        assert_eq!(pictures(&out), [Picture::from_board(&Board::new())]);
        assert!(decoder.learned());
        assert_eq!(decoder.calibration().piece(&tag(60)), Some(Color::White.king()));
        assert_eq!(decoder.calibration().piece(&tag(3)), Some(Color::Black.queen()));
    }

    #[test]
    fn an_unknown_tag_is_an_occupied_square() {
        let mut decoder = CertaboDecoder::new();
        let mut tags = [EMPTY; 64];
        tags[index_of(Square::E4)] = [9, 9, 9, 9, 9];
        let out = decode(&mut decoder, &line(&tags));
        let [picture] = pictures(&out).try_into().unwrap();
        assert_eq!(picture.get(Square::E4), Cell::Occupied);
        assert_eq!(picture.occupied().count(), 1);
        assert!(decoder.calibration().is_empty(), "nothing learnt from a board that is not the start position");
    }

    #[test]
    fn a_given_calibration_is_used_and_not_replaced() {
        let mut decoder = CertaboDecoder::new();
        let mut calibration = Calibration::default();
        calibration.insert([7, 7, 7, 7, 7], Color::White.queen());
        decoder.set_calibration(calibration);
        let mut tags = start_tags();
        tags[index_of(Square::D1)] = [7, 7, 7, 7, 7];
        let [picture] = pictures(&decode(&mut decoder, &line(&tags))).try_into().unwrap();
        assert_eq!(picture.get(Square::D1), Cell::Piece(Color::White.queen()));
        assert_eq!(picture.get(Square::E1), Cell::Occupied, "not in the calibration");
        assert!(!decoder.learned());
    }

    #[test]
    fn a_change_shows_when_two_of_three_reports_agree() {
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut moved = start;
        moved[index_of(Square::E4)] = moved[index_of(Square::E2)];
        moved[index_of(Square::E2)] = EMPTY;
        assert_eq!(pictures(&decode(&mut decoder, &line(&start))).len(), 1);
        assert_eq!(pictures(&decode(&mut decoder, &line(&start))), [], "unchanged: nothing reported");
        assert_eq!(pictures(&decode(&mut decoder, &line(&moved))), [], "one report of the move is not enough");
        let [after] = pictures(&decode(&mut decoder, &line(&moved))).try_into().unwrap();
        assert_eq!(after.get(Square::E4), Cell::Piece(Color::White.pawn()));
        assert_eq!(after.get(Square::E2), Cell::Empty);
    }

    #[test]
    fn a_flicker_of_one_report_is_outvoted() {
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut flicker = start;
        flicker[index_of(Square::A2)] = EMPTY;
        flicker[index_of(Square::B2)] = [200, 1, 1, 1, 1];
        let mut out = Vec::new();
        for tags in [&start, &start, &flicker, &start, &start, &flicker, &start] {
            out.extend(decode(&mut decoder, &line(tags)));
        }
        assert_eq!(pictures(&out), [Picture::from_board(&Board::new())]);
    }

    #[test]
    fn reports_damaged_lines_and_then_the_whole_board_again() {
        let mut decoder = CertaboDecoder::new();
        let start = line(&start_tags());
        decode(&mut decoder, &start);
        let out = decode(&mut decoder, b":1 2 3 \r\n");
        assert_eq!(
            out,
            [Decoded::Problem(DecodeProblem::BadMessage("a report of 3 numbers (a Certabo board sends 320)".into()))]
        );
        let out = decode(&mut decoder, &start[..200]);
        assert_eq!(out, []);
        let out = decode(&mut decoder, &start);
        assert_eq!(out[0], Decoded::Problem(DecodeProblem::Garbage { len: 200, reason: "a report cut short" }));
        assert_eq!(pictures(&out).len(), 1, "the unchanged board is reported after lost bytes: {out:?}");
        assert_eq!(decode(&mut decoder, &start), []);
    }

    #[test]
    fn says_when_a_line_is_in_the_sentio_format() {
        let mut decoder = CertaboDecoder::new();
        let out = decode(&mut decoder, b":255 255 0 0 0 0 255 254 \r\n");
        let [Decoded::Problem(DecodeProblem::BadMessage(why))] = out.as_slice() else { panic!("{out:?}") };
        assert!(why.contains("Sentio"), "{why}");
    }

    #[test]
    fn reports_the_led_hardware_once() {
        let mut decoder = CertaboDecoder::new();
        let mut bytes = b"L\r\n".to_vec();
        bytes.extend(line(&start_tags()));
        bytes.extend(b"L\r\n");
        let out = decode(&mut decoder, &bytes);
        assert_eq!(out[0], Decoded::Info(BoardInfo::Trademark(line::CLASSIC_LEDS.into())));
        assert_eq!(out.len(), 2);
        assert_eq!(decode(&mut decoder, b"D\r\n"), [Decoded::Info(BoardInfo::Trademark(line::RGB_LEDS.into()))]);
        assert_eq!(decoder.leds(), Some(Leds::Rgb));
    }

    #[test]
    fn a_line_cut_by_the_end_of_the_stream_is_reported() {
        let mut decoder = CertaboDecoder::new();
        decode(&mut decoder, &line(&start_tags())[..50]);
        assert_eq!(
            decoder.finish(),
            Some(Decoded::Problem(DecodeProblem::Garbage {
                len: 50,
                reason: "a line cut off by the end of the stream"
            }))
        );
        assert_eq!(decoder.finish(), None);
    }
}
