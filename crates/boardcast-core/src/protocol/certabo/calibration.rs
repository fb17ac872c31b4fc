//! Which RFID tag is which piece. A Certabo board reports only the tag under
//! each square; the calibration says what the tags are, learnt once per set
//! of pieces by showing the board every piece on a known square: the start
//! position plus a spare black queen on d6 and a spare white queen on d3
//! (`boardcast calibrate`, [`Calibration::from_reports`]).
//!
//! A calibration knows only the pieces it was shown. With the start set and
//! the two spare queens, a third queen, or a rook, bishop or knight from
//! outside the set used for an under-promotion, is a tag it has never seen:
//! the decoder reports the square occupied by an unknown piece, and the
//! reconstructor records a queen and raises an alert for the operator.
//! Such spare pieces become known when their tags are added to the
//! calibration file (`"tag": "letter"`, one entry per piece).

use std::collections::HashMap;

use shakmaty::{Color, File, Piece, Rank, Role, Square};

/// A Certabo board's tags and the pieces they are in.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calibration {
    pieces: HashMap<[u8; 5], Piece>,
}

/// The tags of one report, one per square in the order the board sends
/// them: index 0 is a8, 7 is h8, 8 is a7 … 63 is h1. All zeros is an empty
/// square.
pub type Tags = [[u8; 5]; 64];

/// The fewest reports a calibration is made from: a tag must be read the
/// same in most of them.
pub const MIN_REPORTS: usize = 7;

/// Why reports could not be turned into a calibration; each says what to put
/// right on the board.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CalibrationError {
    /// Too few reports to tell a steady tag from a flickering one.
    #[error("only {got} report(s) from the board; a calibration needs at least {MIN_REPORTS}")]
    TooFewReports {
        /// How many there were.
        got: usize,
    },
    /// A square of the set-up reads empty in most reports.
    #[error("no piece on {square}: put the {} there", piece_name(*.piece))]
    Missing {
        /// The square.
        square: Square,
        /// The piece the set-up has there.
        piece: Piece,
    },
    /// A square's tag is not the same in more than half of the reports.
    #[error(
        "the {} on {square} does not read steadily (its most frequent tag {} in {count} of {of} reports): set it in the middle of the square and keep it still",
        piece_name(*.piece), tag_text(.tag)
    )]
    Unsteady {
        /// The square.
        square: Square,
        /// The piece the set-up has there.
        piece: Piece,
        /// The tag read most often.
        tag: [u8; 5],
        /// In how many reports.
        count: usize,
        /// Out of how many.
        of: usize,
    },
    /// Two squares read the same tag: two pieces cannot carry one tag, so
    /// one of the readings is wrong.
    #[error("{first} and {second} both read tag {}: one of the two pieces is not read right", tag_text(.tag))]
    SameTag {
        /// The tag.
        tag: [u8; 5],
        /// The first square reading it.
        first: Square,
        /// The second.
        second: Square,
    },
    /// The spare queens stand on e3 and e6 as the board sees it, d6 and d3
    /// are empty: the board is turned round (its a1 must be on White's
    /// left).
    #[error(
        "d6 and d3 are empty but e3 and e6 hold pieces: the board seems turned round (its a1 corner must be at White's left); turn it, or put the spare queens on d6 and d3 as the board counts squares"
    )]
    TurnedRound,
    /// A piece stands where the start position has none.
    #[error(
        "{square} is not empty: the pieces must stand in the start position (ranks 3 to 6 empty; spare queens only on d6 and d3, both)"
    )]
    NotStartPosition {
        /// The square.
        square: Square,
    },
}

impl Calibration {
    /// From a capture header's `calibration` entries: a tag written as five
    /// numbers joined by `-` (`"45-17-238-10-3"`) and a FEN piece letter.
    ///
    /// # Errors
    ///
    /// An entry that is not a tag and a piece letter.
    pub(crate) fn from_entries(entries: &[(String, char)]) -> Result<Self, String> {
        let mut pieces = HashMap::new();
        for (tag, letter) in entries {
            let numbers: Vec<u8> = tag
                .split('-')
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(|_| format!("calibration tag {tag:?} is not five numbers 0–255 joined by '-'"))?;
            let tag: [u8; 5] =
                numbers.try_into().map_err(|_| format!("calibration tag {tag:?} is not five numbers joined by '-'"))?;
            let piece =
                Piece::from_char(*letter).ok_or_else(|| format!("calibration piece {letter:?} is not a FEN letter"))?;
            pieces.insert(tag, piece);
        }
        Ok(Self { pieces })
    }

    /// From reports of the board set up for calibration: the start position
    /// plus a spare black queen on d6 and a spare white queen on d3. For
    /// each of those 34 squares the tag read in more than half of the
    /// reports is taken (a flickering reading is outvoted); other squares
    /// are not looked at.
    ///
    /// # Errors
    ///
    /// Fewer than [`MIN_REPORTS`] reports, a square of the set-up empty or
    /// not read steadily, two squares reading one tag, or a board turned
    /// round: each says which square to put right.
    pub fn from_reports(reports: &[Tags]) -> Result<Self, CalibrationError> {
        if reports.len() < MIN_REPORTS {
            return Err(CalibrationError::TooFewReports { got: reports.len() });
        }
        let setup = calibration_setup();
        if let Some(turned) = turned_round(reports, &setup) {
            return Err(turned);
        }
        Self::learn(reports, setup)
    }

    /// From reports of the board with its pieces in the start position,
    /// as the operator console's Calibrate asks for: the 32 pieces there,
    /// and spare queens on d6 (black) and d3 (white) when both stand there
    /// too (the set-up of [`Self::from_reports`]). The squares of ranks 3
    /// to 6 must read empty otherwise.
    ///
    /// # Errors
    ///
    /// As [`Self::from_reports`], and a piece standing where the start
    /// position has none ([`CalibrationError::NotStartPosition`]).
    pub fn from_start_reports(reports: &[Tags]) -> Result<Self, CalibrationError> {
        if reports.len() < MIN_REPORTS {
            return Err(CalibrationError::TooFewReports { got: reports.len() });
        }
        let occupied = |index: usize| {
            let (tag, _) = most_frequent(reports.iter().map(|r| r[index]));
            tag != EMPTY || !steady(reports, index)
        };
        let spares = occupied(index_of(Square::D6)) && occupied(index_of(Square::D3));
        let mut setup = calibration_setup();
        if !spares {
            setup.truncate(setup.len() - 2);
        }
        if let Some(index) = (0..64).find(|&i| occupied(i) && !setup.iter().any(|&(s, _)| s == i)) {
            return Err(CalibrationError::NotStartPosition { square: square_of(index) });
        }
        Self::learn(reports, setup)
    }

    /// The calibration of `setup` (group index, piece) from `reports`.
    fn learn(reports: &[Tags], setup: Vec<(usize, Piece)>) -> Result<Self, CalibrationError> {
        let mut calibration = Self::default();
        let mut seen: HashMap<[u8; 5], Square> = HashMap::new();
        for (index, piece) in setup {
            let square = square_of(index);
            let (empty, _) = most_frequent(reports.iter().map(|r| r[index]));
            if empty == EMPTY && steady(reports, index) {
                return Err(CalibrationError::Missing { square, piece });
            }
            let (tag, count) = most_frequent(reports.iter().map(|r| r[index]).filter(|t| *t != EMPTY));
            if count * 2 <= reports.len() {
                return Err(CalibrationError::Unsteady { square, piece, tag, count, of: reports.len() });
            }
            if let Some(&first) = seen.get(&tag) {
                return Err(CalibrationError::SameTag { tag, first, second: square });
            }
            seen.insert(tag, square);
            calibration.insert(tag, piece);
        }
        Ok(calibration)
    }

    /// The calibration a board set up in the standard start position shows
    /// (what an uncalibrated board is read with): the tag on each square of
    /// ranks 1, 2, 7 and 8 is the start position's piece there. `None` when
    /// the tags do not show the start position's occupancy, or two squares
    /// read one tag.
    pub(crate) fn from_start_position(tags: &Tags) -> Option<Self> {
        let occupied = |index: usize| tags[index] != EMPTY;
        if !(0..64).all(|index| occupied(index) == start_piece(index).is_some()) {
            return None;
        }
        let mut calibration = Self::default();
        for (index, tag) in tags.iter().enumerate() {
            if let Some(piece) = start_piece(index) {
                if calibration.pieces.contains_key(tag) {
                    return None;
                }
                calibration.insert(*tag, piece);
            }
        }
        Some(calibration)
    }

    /// The entries, for a capture header (in a stable order).
    pub fn entries(&self) -> Vec<(String, char)> {
        let mut entries: Vec<(String, char)> =
            self.pieces.iter().map(|(tag, piece)| (tag_text(tag), piece.char())).collect();
        entries.sort();
        entries
    }

    /// The piece a tag is in, if known.
    pub fn piece(&self, tag: &[u8; 5]) -> Option<Piece> {
        self.pieces.get(tag).copied()
    }

    /// Records that `tag` is in `piece`.
    pub fn insert(&mut self, tag: [u8; 5], piece: Piece) {
        self.pieces.insert(tag, piece);
    }

    /// Whether no tag is known.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// How many tags are known.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }
}

/// An empty square's tag.
pub const EMPTY: [u8; 5] = [0; 5];

/// The square of a report's group `index` (0 = a8 … 63 = h1).
///
/// # Panics
///
/// When `index` is 64 or more.
pub fn square_of(index: usize) -> Square {
    assert!(index < 64, "a report has 64 squares, not {index}");
    // Both conversions are in range: index < 64.
    Square::from_coords(File::new((index % 8) as u32), Rank::new(7 - (index / 8) as u32))
}

/// The report's group index of `square` (a8 = 0 … h1 = 63).
pub fn index_of(square: Square) -> usize {
    (7 - usize::from(square.rank())) * 8 + usize::from(square.file())
}

/// A tag as written in calibration files: `"45-17-238-10-3"`.
pub(crate) fn tag_text(tag: &[u8; 5]) -> String {
    tag.iter().map(u8::to_string).collect::<Vec<_>>().join("-")
}

/// The piece the standard start position has on group `index`.
fn start_piece(index: usize) -> Option<Piece> {
    const BACK: [Role; 8] =
        [Role::Rook, Role::Knight, Role::Bishop, Role::Queen, Role::King, Role::Bishop, Role::Knight, Role::Rook];
    let role = match index / 8 {
        0 | 7 => BACK[index % 8],
        1 | 6 => Role::Pawn,
        _ => return None,
    };
    Some(Piece { color: if index < 32 { Color::Black } else { Color::White }, role })
}

/// The calibration set-up, as group index and piece: the start position,
/// a black queen on d6 (group 19) and a white queen on d3 (group 43).
fn calibration_setup() -> Vec<(usize, Piece)> {
    let mut setup: Vec<(usize, Piece)> = (0..64).filter_map(|i| start_piece(i).map(|p| (i, p))).collect();
    setup.push((index_of(Square::D6), Color::Black.queen()));
    setup.push((index_of(Square::D3), Color::White.queen()));
    setup
}

/// `TurnedRound` when the spare queens' squares read empty and their mirror
/// images (e3, e6) do not: the usual sign of a board the wrong way round.
fn turned_round(reports: &[Tags], setup: &[(usize, Piece)]) -> Option<CalibrationError> {
    let steady_empty =
        |index: usize| most_frequent(reports.iter().map(|r| r[index])).0 == EMPTY && steady(reports, index);
    let spares = &setup[setup.len() - 2..];
    let mirrored = |index: usize| 63 - index;
    let turned = spares.iter().all(|&(i, _)| steady_empty(i) && !steady_empty(mirrored(i)));
    turned.then_some(CalibrationError::TurnedRound)
}

/// Whether the most frequent tag of group `index` came in more than half
/// of the reports.
fn steady(reports: &[Tags], index: usize) -> bool {
    most_frequent(reports.iter().map(|r| r[index])).1 * 2 > reports.len()
}

/// The most frequent tag and how often it came (the first seen wins a tie).
fn most_frequent(tags: impl Iterator<Item = [u8; 5]>) -> ([u8; 5], usize) {
    let mut counts: Vec<([u8; 5], usize)> = Vec::new();
    for tag in tags {
        match counts.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, n)) => *n += 1,
            None => counts.push((tag, 1)),
        }
    }
    counts.into_iter().fold((EMPTY, 0), |best, (tag, n)| if n > best.1 { (tag, n) } else { best })
}

/// `"white queen"`, `"black knight"`.
fn piece_name(piece: Piece) -> String {
    let color = if piece.color == Color::White { "white" } else { "black" };
    let role = match piece.role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    };
    format!("{color} {role}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A distinct made-up tag for group `index`.
    fn tag(index: usize) -> [u8; 5] {
        [index as u8 + 1, 17, 200, (index * 3) as u8, 9]
    }

    /// The calibration set-up as the board reports it.
    fn setup_report() -> Tags {
        let mut tags = [EMPTY; 64];
        for (index, _) in calibration_setup() {
            tags[index] = tag(index);
        }
        tags
    }

    #[test]
    fn maps_the_set_up_pieces_to_their_tags() {
        let calibration = Calibration::from_reports(&[setup_report(); 7]).unwrap();
        assert_eq!(calibration.len(), 34);
        assert_eq!(calibration.piece(&tag(4)), Some(Color::Black.king()));
        assert_eq!(calibration.piece(&tag(60)), Some(Color::White.king()));
        assert_eq!(calibration.piece(&tag(19)), Some(Color::Black.queen()), "the spare on d6");
        assert_eq!(calibration.piece(&tag(43)), Some(Color::White.queen()), "the spare on d3");
        assert_eq!(calibration.piece(&tag(8)), Some(Color::Black.pawn()));
        assert_eq!(calibration.piece(&tag(57)), Some(Color::White.knight()));
    }

    #[test]
    fn outvotes_a_flickering_square_but_not_an_unsteady_one() {
        let mut reports = vec![setup_report(); 7];
        reports[2][12] = EMPTY;
        reports[5][12] = [1, 2, 3, 4, 5];
        let calibration = Calibration::from_reports(&reports).unwrap();
        assert_eq!(calibration.piece(&tag(12)), Some(Color::Black.pawn()));
        assert_eq!(calibration.piece(&[1, 2, 3, 4, 5]), None);
        reports[1][12] = [1, 2, 3, 4, 5];
        reports[3][12] = [1, 2, 3, 4, 5];
        assert_eq!(
            Calibration::from_reports(&reports).unwrap_err().to_string(),
            "the black pawn on e7 does not read steadily (its most frequent tag 13-17-200-36-9 in 3 of 7 reports): set it in the middle of the square and keep it still"
        );
    }

    #[test]
    fn names_what_to_put_right() {
        assert_eq!(
            Calibration::from_reports(&[setup_report(); 6]).unwrap_err(),
            CalibrationError::TooFewReports { got: 6 }
        );
        let mut report = setup_report();
        report[index_of(Square::D6)] = EMPTY;
        let error = Calibration::from_reports(&[report; 8]).unwrap_err();
        assert_eq!(error.to_string(), "no piece on d6: put the black queen there");
        let mut report = setup_report();
        report[index_of(Square::B1)] = tag(index_of(Square::G1));
        assert_eq!(
            Calibration::from_reports(&[report; 8]).unwrap_err(),
            CalibrationError::SameTag { tag: tag(index_of(Square::G1)), first: Square::B1, second: Square::G1 }
        );
    }

    #[test]
    fn learns_the_start_position_from_reports_with_or_without_spare_queens() {
        let mut start = setup_report();
        start[index_of(Square::D6)] = EMPTY;
        start[index_of(Square::D3)] = EMPTY;
        let mut reports = vec![start; 7];
        reports[3][index_of(Square::E2)] = EMPTY;
        let calibration = Calibration::from_start_reports(&reports).unwrap();
        assert_eq!(calibration.len(), 32, "a flicker outvoted");
        assert_eq!(calibration.piece(&tag(index_of(Square::E2))), Some(Color::White.pawn()));
        assert_eq!(Calibration::from_start_reports(&[setup_report(); 7]).unwrap().len(), 34, "with the spares");
        let mut moved = start;
        moved[index_of(Square::E4)] = moved[index_of(Square::E2)];
        moved[index_of(Square::E2)] = EMPTY;
        assert_eq!(
            Calibration::from_start_reports(&[moved; 7]).unwrap_err().to_string(),
            "e4 is not empty: the pieces must stand in the start position (ranks 3 to 6 empty; spare queens only on d6 and d3, both)"
        );
        assert_eq!(
            Calibration::from_start_reports(&[start; 6]).unwrap_err(),
            CalibrationError::TooFewReports { got: 6 }
        );
    }

    #[test]
    fn sees_a_board_turned_round() {
        let report = setup_report();
        let mut turned = [EMPTY; 64];
        for index in 0..64 {
            turned[63 - index] = report[index];
        }
        assert_eq!(Calibration::from_reports(&[turned; 7]).unwrap_err(), CalibrationError::TurnedRound);
    }

    #[test]
    fn learns_the_start_position_and_nothing_else() {
        let mut tags = setup_report();
        assert_eq!(Calibration::from_start_position(&tags), None, "spare queens are not the start position");
        tags[index_of(Square::D6)] = EMPTY;
        tags[index_of(Square::D3)] = EMPTY;
        let learned = Calibration::from_start_position(&tags).unwrap();
        assert_eq!(learned.len(), 32);
        assert_eq!(learned.piece(&tag(3)), Some(Color::Black.queen()));
        assert_eq!(learned.piece(&tag(59)), Some(Color::White.queen()));
    }

    #[test]
    fn reads_and_writes_header_entries() {
        let entries = vec![("1-2-3-4-5".to_owned(), 'Q'), ("200-0-0-0-7".to_owned(), 'n')];
        let calibration = Calibration::from_entries(&entries).unwrap();
        assert_eq!(calibration.piece(&[1, 2, 3, 4, 5]), Some(Color::White.queen()));
        assert_eq!(calibration.entries(), entries);
        assert!(Calibration::from_entries(&[("1-2-3".to_owned(), 'Q')]).is_err());
        assert!(Calibration::from_entries(&[("1-2-3-4-5".to_owned(), 'x')]).is_err());
    }

    #[test]
    fn squares_run_from_a8_to_h1() {
        assert_eq!(square_of(0), Square::A8);
        assert_eq!(square_of(7), Square::H8);
        assert_eq!(square_of(19), Square::D6);
        assert_eq!(square_of(43), Square::D3);
        assert_eq!(square_of(63), Square::H1);
        assert!((0..64).all(|i| index_of(square_of(i)) == i));
    }
}
