//! Certabo RFID boards: lines of `:` and 320 numbers (five per square, the
//! tag of the piece standing there), streamed by the board by itself at
//! 38400 baud (`../shared/research/eboard-protocols.md` section 3). A tag
//! says nothing by itself: a [`Calibration`] maps tags to pieces.
//!
//! - [`line`]: the line format (shared with Sentio-format boards).
//! - [`calibration`]: tags to pieces.
//! - [`link`]: the host's side of a streaming board (also used for
//!   Sentio boards): silence and LEDs.
//!
//! [`CertaboDecoder`] reads the lines, outvotes flicker and reports the
//! board as the squares that changed and whole pictures.

pub mod calibration;
pub mod line;
pub mod link;

use std::collections::VecDeque;

use shakmaty::Square;

pub use self::calibration::{Calibration, CalibrationError};
use self::{
    calibration::{EMPTY, Tags, square_of},
    line::{Leds, Line, LineReader, OCCUPANCY_NUMBERS, TAG_NUMBERS},
};
use super::{BoardDecoder, Calibrated, Family, Features, Probe, Protocol};
use super::{BoardInfo, DecodeProblem, Decoded};
use crate::sensor::{Cell, Picture, SensorEvent};

/// Turns bytes from a Certabo board into [`Decoded`] items, whatever
/// chunks they arrive in.
///
/// Every report shows the whole board (squares in the board's own
/// orientation: the report's first square is a8). The decoder passes a
/// report on only when its [`Picture`] changed, and then as the squares that
/// changed, in the order hands most likely changed them
/// (`changes_in_order`), followed by the whole picture, as the Millennium
/// decoder does with its statuses. The reconstructor judges single squares as seen happening, at
/// once, but a whole board only once the board has been still for its
/// settle time, as a dump in which nothing was seen happening. A board that
/// reports ten times a second would, as whole pictures alone, keep it
/// waiting whenever moves follow each other within that time (quick
/// replies), until it finds several moves at once whose order it cannot
/// tell. The first picture of a stream has nothing to be compared with and
/// goes alone, like a dump. After damaged bytes the next picture is passed
/// on even if unchanged: the whole board tells the reconstructor, which
/// suspects the picture after every loss, that it is whole again. A lost
/// report does not make what the next one shows a dump, though: every
/// report shows the whole board, so the changes were only seen two tenths
/// of a second apart instead of one, and go on as squares. A report that
/// lost its end is told as soon as the next one starts (`line`), before the
/// board's silence could pass for a still board: the reconstructor holds
/// back judging the board settled until it is whole again (see
/// `Reconstructor::handle_lost_bytes`), so a sliding piece last seen
/// crossing a square is not judged as put down there.
///
/// Boards with little antenna gain read a piece now and then as absent or
/// as another tag for one report; they do not read a tag where no piece
/// is. Each report is therefore passed on only once the next one has come,
/// and a square that read something else for that one report, between two
/// reports agreeing on a piece there, shows that piece (`despike`). Every
/// change thus shows one report late (about a tenth of a second), all
/// alike, so changes keep their order. A piece of the set that stood on a
/// square for a single report (crossing it, or put down and taken at once
/// by a quick recapture) is still seen, as a tag cannot be read where no
/// piece was: a vote of two reports out of three would hide it, and the
/// moves around it would reach the reconstructor as one jump, in an order
/// it may not be able to tell.
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
    /// The last good report, passed on (again) once the next one says
    /// whether it misread a square.
    pending: Option<Tags>,
    /// Each square's tag as last passed on.
    decided: Option<Tags>,
    /// The picture last reported, and the tags it was made from.
    shown: Option<(Picture, Tags)>,
    /// Report the next picture even if unchanged (bytes were lost).
    refresh: bool,
    /// The LED hardware the board announced.
    leds: Option<Leds>,
    /// Learning a calibration (the console's Calibrate): how many reports
    /// it takes, and those read so far, as read.
    learning: Option<(usize, Vec<Tags>)>,
    /// What the learning gave, until asked for.
    learnt: Option<Result<Vec<(String, char)>, String>>,
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
    #[cfg(test)]
    pub(crate) fn learned(&self) -> bool {
        self.learned
    }

    /// The LED hardware the board announced, if it did.
    pub fn leds(&self) -> Option<Leds> {
        self.leds
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
        self.learn_from(&tags);
        let decided = match self.pending.replace(tags) {
            // The first report of a stream has nothing to be compared with:
            // it is taken as read now (and passed on again, corrected if
            // need be, when the next one comes).
            None => tags,
            Some(middle) => despike(&self.calibration, self.decided.as_ref().unwrap_or(&middle), &middle, &tags),
        };
        self.decided = Some(decided);
        if self.calibration.is_empty()
            && let Some(learned) = Calibration::from_start_position(&decided)
        {
            self.calibration = learned;
            self.learned = true;
        }
        let picture = self.picture(&decided);
        if !self.refresh && self.shown.as_ref().is_some_and(|(shown, _)| *shown == picture) {
            return;
        }
        if let Some((shown, shown_tags)) = &self.shown {
            for square in changes_in_order(shown, shown_tags, &picture, &decided).unwrap_or_default() {
                let cell = picture.get(square);
                self.out.push_back(Decoded::Sensor(SensorEvent::Square { square, cell }));
            }
        }
        self.refresh = false;
        self.shown = Some((picture.clone(), decided));
        self.out.push_back(Decoded::Sensor(SensorEvent::Board(Box::new(picture))));
    }

    /// One more report for the calibration being learnt; the last one
    /// makes it, and it is used from this report on (the picture is passed
    /// on again, read with it).
    fn learn_from(&mut self, tags: &Tags) {
        let Some((wanted, reports)) = &mut self.learning else { return };
        reports.push(*tags);
        if reports.len() < *wanted {
            return;
        }
        let made = Calibration::from_start_reports(reports);
        self.learning = None;
        self.learnt = Some(match made {
            Ok(calibration) => {
                let entries = calibration.entries();
                self.set_calibration(calibration);
                self.refresh = true;
                Ok(entries)
            }
            Err(why) => Err(why.to_string()),
        });
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

/// The squares that differ between two pictures, in the order hands most
/// likely changed them. One report can hold what happened over a tenth of a
/// second, more when a report was lost: the end of one move and the start
/// of the reply, say. The tags tell which piece went where. First come the
/// squares filled by a piece not seen leaving a square in this report (one
/// lifted earlier, now put down: the end of something already under way);
/// then each piece that moved, its square emptied and then the one it went
/// to; last the squares emptied by pieces not seen elsewhere (taken in
/// hand: the start of something). A move finished is thus seen before the
/// next one starts.
///
/// `None` when pieces of both colours moved: two moves, one of each side,
/// whose order the tags cannot tell. The picture then goes alone, as a
/// dump: the reconstructor fills in moves it did not see happen from the
/// game (rules.md R10), which knows whose turn it was.
fn changes_in_order(before: &Picture, before_tags: &Tags, after: &Picture, after_tags: &Tags) -> Option<Vec<Square>> {
    let tag = |tags: &Tags, square: Square| tags[calibration::index_of(square)];
    let (emptied, mut filled): (Vec<Square>, Vec<Square>) = Square::ALL
        .into_iter()
        .filter(|&square| before.get(square) != after.get(square))
        .partition(|&square| after.get(square) == Cell::Empty);
    let mut moved = Vec::new();
    let mut lifted = Vec::new();
    for from in emptied {
        let left = tag(before_tags, from);
        match filled.iter().position(|&to| left != EMPTY && tag(after_tags, to) == left) {
            Some(at) => moved.extend([from, filled.remove(at)]),
            None => lifted.push(from),
        }
    }
    let colour = |square: Square| match before.get(square) {
        Cell::Piece(piece) => Some(piece.color),
        Cell::Empty | Cell::Occupied => None,
    };
    let mut colours = moved.iter().step_by(2).filter_map(|&from| colour(from));
    if let Some(first) = colours.next()
        && colours.any(|c| c != first)
    {
        return None;
    }
    Some(filled.into_iter().chain(moved).chain(lifted).collect())
}

/// Each square's tag in report `middle`, now that the report `after` it
/// has come (`before` is what was passed on for the report before it): as
/// read, unless `before` and `after` agree on the square and `middle` does
/// not. Then it is either a piece read once as absent or as another tag,
/// and the piece stays; or a tag read once on an empty square. A board
/// reads no tag where no piece is, so a piece of the set that shows there
/// for one report was there (crossing the square, or put down and taken
/// at once); a tag the calibration does not know is more likely a line
/// damaged on the wire in a way that kept its shape (a digit changed), and
/// is dropped.
fn despike(calibration: &Calibration, before: &Tags, middle: &Tags, after: &Tags) -> Tags {
    let mut tags = *middle;
    for (index, tag) in tags.iter_mut().enumerate() {
        let spike = before[index] == after[index] && *tag != before[index];
        if spike && (before[index] != EMPTY || calibration.piece(tag).is_none()) {
            *tag = before[index];
        }
    }
    tags
}

/// The family of Certabo RFID boards.
pub const FAMILY: Family = Family {
    name: "certabo",
    title: "Certabo board (RFID)",
    baud: 38_400,
    identifies_pieces: true,
    answers_board_request: false,
    features: Features { lights: true, clock_text: false, calibration: true },
    probe: Probe {
        // A Certabo board streams its reports by itself: a line of tags is
        // the answer (a Sentio line is a problem to this decoder).
        ask: Vec::new,
        answers: |decoded| matches!(decoded, Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: false,
        rank: 0,
    },
    on_serial: true,
    bluetooth: None,
    decoder: || Box::new(CertaboDecoder::new()),
    link: |config| Box::new(link::StreamLink::new(true, config)),
};

impl Protocol {
    /// Raw bytes of a Certabo (RFID) board.
    pub const CERTABO: Self = Self::of(&FAMILY);
}

impl BoardDecoder for CertaboDecoder {
    /// Takes bytes received from the board.
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.lines.push(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    fn poll_decoded(&mut self) -> Option<Decoded> {
        loop {
            if let Some(decoded) = self.out.pop_front() {
                return Some(decoded);
            }
            let line = self.lines.next_line()?;
            self.handle_line(line);
        }
    }

    /// Ends the stream, reporting a line left unfinished. The next report
    /// (a board plugged back in) is compared with nothing before it: it is
    /// taken as read and reported whole.
    fn finish(&mut self) -> Option<Decoded> {
        self.pending = None;
        self.shown = None;
        let len = self.lines.flush()?;
        Some(Decoded::Problem(DecodeProblem::Garbage { len, reason: line::CUT_OFF }))
    }

    fn calibration_mut(&mut self) -> Option<&mut dyn Calibrated> {
        Some(self)
    }
}

impl Calibrated for CertaboDecoder {
    fn set_calibration(&mut self, entries: &[(String, char)]) -> Result<(), String> {
        Self::set_calibration(self, Calibration::from_entries(entries)?);
        Ok(())
    }

    fn learn(&mut self, reports: Option<usize>) {
        self.learning = reports.map(|n| (n.max(calibration::MIN_REPORTS), Vec::new()));
        self.learnt = None;
    }

    fn poll_learnt(&mut self) -> Option<Result<Vec<(String, char)>, String>> {
        self.learnt.take()
    }
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
        let out = decode(&mut decoder, &line(&moved));
        let [after] = pictures(&out).try_into().unwrap();
        assert_eq!(after.get(Square::E4), Cell::Piece(Color::White.pawn()));
        assert_eq!(after.get(Square::E2), Cell::Empty);
        assert_eq!(
            out[..2],
            [
                Decoded::Sensor(SensorEvent::Square { square: Square::E2, cell: Cell::Empty }),
                Decoded::Sensor(SensorEvent::Square { square: Square::E4, cell: Cell::Piece(Color::White.pawn()) }),
            ],
            "the squares that changed, emptied first, then the whole board"
        );
    }

    #[test]
    fn a_piece_seen_in_one_report_only_is_shown() {
        // A pawn put down on d5 and taken off again by the opponent's
        // capture before the next report: one report shows it.
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut placed = start;
        placed[index_of(Square::D5)] = placed[index_of(Square::E2)];
        placed[index_of(Square::E2)] = EMPTY;
        let mut taken = placed;
        taken[index_of(Square::D5)] = EMPTY;
        decode(&mut decoder, &line(&start));
        let out: Vec<Decoded> =
            [&placed, &taken, &taken, &taken].into_iter().flat_map(|t| decode(&mut decoder, &line(t))).collect();
        let d5: Vec<Cell> = pictures(&out).iter().map(|p| p.get(Square::D5)).collect();
        assert_eq!(d5, [Cell::Piece(Color::White.pawn()), Cell::Empty]);
    }

    #[test]
    fn a_piece_read_as_absent_or_as_another_for_one_report_is_outvoted_even_when_just_put_down() {
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut placed = start;
        placed[index_of(Square::E4)] = placed[index_of(Square::E2)];
        placed[index_of(Square::E2)] = EMPTY;
        let mut misread = placed;
        misread[index_of(Square::E4)] = [200, 1, 1, 1, 1];
        let mut absent = placed;
        absent[index_of(Square::E4)] = EMPTY;
        decode(&mut decoder, &line(&start));
        decode(&mut decoder, &line(&start));
        let out: Vec<Decoded> = [&placed, &absent, &placed, &misread, &placed, &absent, &placed]
            .into_iter()
            .flat_map(|t| decode(&mut decoder, &line(t)))
            .collect();
        let [picture] = pictures(&out).try_into().unwrap();
        assert_eq!(picture.get(Square::E4), Cell::Piece(Color::White.pawn()));
        assert_eq!(picture.get(Square::E2), Cell::Empty);
    }

    #[test]
    fn an_unknown_tag_on_an_empty_square_for_one_report_is_dropped() {
        // A digit changed on the wire: the line keeps its shape.
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut damaged = start;
        damaged[index_of(Square::E4)] = [0, 0, 1, 0, 0];
        let out: Vec<Decoded> = [&start, &start, &damaged, &start, &start]
            .into_iter()
            .flat_map(|t| decode(&mut decoder, &line(t)))
            .collect();
        assert_eq!(pictures(&out), [Picture::from_board(&Board::new())]);
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
    fn after_a_lost_report_changes_still_go_on_as_squares() {
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut moved = start;
        moved[index_of(Square::E4)] = moved[index_of(Square::E2)];
        moved[index_of(Square::E2)] = EMPTY;
        decode(&mut decoder, &line(&start));
        decode(&mut decoder, &line(&start));
        let mut bytes = line(&moved)[..300].to_vec();
        bytes.extend(line(&moved));
        decode(&mut decoder, &bytes);
        let out = decode(&mut decoder, &line(&moved));
        let square = |square, cell| Decoded::Sensor(SensorEvent::Square { square, cell });
        assert_eq!(
            out[..2],
            [square(Square::E2, Cell::Empty), square(Square::E4, Cell::Piece(Color::White.pawn()))],
            "{out:?}"
        );
        assert_eq!(pictures(&out).len(), 1);
    }

    #[test]
    fn a_move_finished_comes_before_the_reply_begun_in_the_same_report() {
        // Black's bishop, in hand at the last report, is put down on f5;
        // White's e-pawn slides from e2 over e3 to e4; Black lifts the
        // pawn on a6 to take it: one report shows all three.
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut before = start;
        let bishop = before[index_of(Square::C8)];
        before[index_of(Square::C8)] = EMPTY;
        before[index_of(Square::A6)] = before[index_of(Square::A7)];
        before[index_of(Square::A7)] = EMPTY;
        let mut after = before;
        after[index_of(Square::F5)] = bishop;
        after[index_of(Square::E4)] = after[index_of(Square::E2)];
        after[index_of(Square::E2)] = EMPTY;
        after[index_of(Square::A6)] = EMPTY;
        for tags in [&start, &before, &before, &after] {
            decode(&mut decoder, &line(tags));
        }
        let out = decode(&mut decoder, &line(&after));
        let squares: Vec<Square> = out
            .iter()
            .filter_map(|d| match d {
                Decoded::Sensor(SensorEvent::Square { square, .. }) => Some(*square),
                _ => None,
            })
            .collect();
        assert_eq!(squares, [Square::F5, Square::E2, Square::E4, Square::A6]);
    }

    #[test]
    fn moves_of_both_sides_in_one_report_go_as_a_whole_board() {
        // A lost report: Black's knight move and White's reply are seen
        // at once, and the tags cannot tell which came first.
        let mut decoder = CertaboDecoder::new();
        let start = start_tags();
        let mut after = start;
        after[index_of(Square::F3)] = after[index_of(Square::G1)];
        after[index_of(Square::G1)] = EMPTY;
        after[index_of(Square::C6)] = after[index_of(Square::B8)];
        after[index_of(Square::B8)] = EMPTY;
        for tags in [&start, &start, &after] {
            decode(&mut decoder, &line(tags));
        }
        let out = decode(&mut decoder, &line(&after));
        assert!(matches!(out.as_slice(), [Decoded::Sensor(SensorEvent::Board(_))]), "{out:?}");
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
