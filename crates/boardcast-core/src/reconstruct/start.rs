//! Recognising the start of a game on the board: the standard start
//! position, a configured one, or any Chess960 start position, seen from
//! either side (a board turned 180° reports every square mirrored); and
//! noticing a set-up that is almost, but not quite, a start position.

use shakmaty::{Bitboard, Board, CastlingMode, Chess, Color, FromSetup, Position, Rank, Role, Setup, Square};

use crate::{sensor::Picture, time::Timestamp};

/// A start position found on the board.
#[derive(Clone, Debug)]
pub(crate) struct Start {
    /// The game's start position.
    pub(crate) position: Chess,
    /// Standard or Chess960 castling.
    pub(crate) castling_mode: CastlingMode,
    /// The board reports it turned 180°.
    pub(crate) rotated: bool,
    /// Not the standard start position (PGN needs `SetUp` and `FEN`).
    pub(crate) set_up: bool,
}

/// Which positions start a game.
#[derive(Clone, Debug)]
pub(crate) enum Expected {
    /// The standard start position.
    Standard,
    /// Any of the 960 Chess960 start positions.
    Chess960,
    /// This position.
    Position(Box<Chess>),
}

/// Watching the board for the next game's start while no game is being
/// played: the expected start position (either way round), a set-up that
/// is almost one (judged once it has stood for `out_of_sync_after`, as
/// pieces are often swapped back within a moment), and a start seen turned
/// round, alerted once per set-up.
#[derive(Clone, Debug)]
pub(super) struct StartWatch {
    expected: Expected,
    chess960: bool,
    /// A wrong initial position on the board, since when.
    wrong_since: Option<(Timestamp, Picture)>,
    /// The set-up a turned board was last alerted for, so that an alert is
    /// not repeated for the same set-up.
    turned_alerted: Option<Picture>,
}

/// What the watch saw on the board.
#[derive(Debug)]
pub(super) enum StartSeen {
    /// A start position.
    Start(Start),
    /// A set-up that is almost a start position: it is being timed.
    Wrong,
    /// Neither.
    Nothing,
}

impl StartWatch {
    /// A watch for the games `setup` describes.
    pub(super) fn new(start: Option<&Chess>, chess960: bool) -> Self {
        let expected = match (start, chess960) {
            (Some(pos), _) => Expected::Position(Box::new(pos.clone())),
            (None, true) => Expected::Chess960,
            (None, false) => Expected::Standard,
        };
        Self { expected, chess960, wrong_since: None, turned_alerted: None }
    }

    /// The board as it reports itself (not turned) at `now`.
    pub(super) fn handle_picture(&mut self, now: Timestamp, reported: &Picture) -> StartSeen {
        if let Some(start) = find_start(reported, &self.expected) {
            self.wrong_since = None;
            return StartSeen::Start(start);
        }
        if find_wrong_start(reported, self.chess960).is_some() {
            if self.wrong_since.as_ref().is_none_or(|(_, p)| p != reported) {
                self.wrong_since = Some((now, reported.clone()));
            }
            return StartSeen::Wrong;
        }
        self.wrong_since = None;
        StartSeen::Nothing
    }

    /// The start position on `reported`, if there is one (a new game set up
    /// while one is played), without watching anything.
    pub(super) fn find(&self, reported: &Picture) -> Option<Start> {
        find_start(reported, &self.expected)
    }

    /// Whether a start seen turned round on `reported` is to be alerted
    /// (once per set-up).
    pub(super) fn alert_turned(&mut self, reported: &Picture) -> bool {
        if self.turned_alerted.as_ref() == Some(reported) {
            return false;
        }
        self.turned_alerted = Some(reported.clone());
        true
    }

    /// When a wrong set-up will have stood long enough.
    pub(super) fn poll_timeout(&self, after: std::time::Duration) -> Option<Timestamp> {
        self.wrong_since.as_ref().map(|(since, _)| *since + after)
    }

    /// The wrong set-up that has stood since then, taken to be played from.
    pub(super) fn take_wrong(&mut self) -> Option<Timestamp> {
        self.wrong_since.take().map(|(since, _)| since)
    }

    /// What the wrong set-up on `reported` is.
    pub(super) fn wrong_start(&self, reported: &Picture) -> Option<WrongStart> {
        find_wrong_start(reported, self.chess960)
    }

    /// A game began: nothing is being watched any more.
    pub(super) fn reset(&mut self) {
        self.wrong_since = None;
        self.turned_alerted = None;
    }
}

/// The start position on the board, if there is one. The normal
/// orientation is tried first.
fn find_start(picture: &Picture, expected: &Expected) -> Option<Start> {
    [false, true].into_iter().find_map(|rotated| {
        let oriented = if rotated { picture.rotated() } else { picture.clone() };
        start_in(&oriented, expected).map(|(position, castling_mode, set_up)| Start {
            position,
            castling_mode,
            rotated,
            set_up,
        })
    })
}

fn start_in(picture: &Picture, expected: &Expected) -> Option<(Chess, CastlingMode, bool)> {
    match expected {
        Expected::Standard => {
            picture.agrees_with(&Board::new()).then(|| (Chess::default(), CastlingMode::Standard, false))
        }
        // A configured position keeps its own castling rules (a Chess960
        // start given as a FEN).
        Expected::Position(pos) => {
            picture.agrees_with(pos.board()).then(|| (pos.as_ref().clone(), pos.castles().mode(), true))
        }
        Expected::Chess960 => {
            let board = picture.to_board()?;
            (0..960).map(Board::chess960).find(|b| *b == board)?;
            Some((chess960_position(board)?, CastlingMode::Chess960, true))
        }
    }
}

/// A set-up that looks like a start position (pawns on their ranks, eight
/// pieces on each back rank, nothing in between) but is not one that starts
/// a game here: the squares that differ from the nearest start position,
/// and the position to play from anyway when it is a valid position.
#[derive(Clone, Debug)]
pub(crate) struct WrongStart {
    /// Squares that differ from the standard start position (for Chess960,
    /// the back-rank squares where the black pieces do not mirror the white
    /// ones).
    pub(crate) squares: Bitboard,
    /// The board turned 180°.
    pub(crate) rotated: bool,
    /// The position as set up, with White to move, if it is one.
    pub(crate) position: Option<(Chess, CastlingMode)>,
}

/// A wrong initial position on the board (7.2.1), if there is one.
pub(crate) fn find_wrong_start(picture: &Picture, chess960: bool) -> Option<WrongStart> {
    [false, true].into_iter().find_map(|rotated| {
        let oriented = if rotated { picture.rotated() } else { picture.clone() };
        let board = oriented.to_board()?;
        if !looks_like_start(&board) {
            return None;
        }
        let squares = if chess960 {
            let mut mirrored = board.clone();
            mirrored.flip_vertical();
            mirrored.swap_colors();
            Square::ALL.into_iter().filter(|&sq| board.piece_at(sq) != mirrored.piece_at(sq)).collect()
        } else {
            Square::ALL.into_iter().filter(|&sq| board.piece_at(sq) != Board::new().piece_at(sq)).collect()
        };
        let position = if chess960 {
            chess960_position(board.clone()).map(|p| (p, CastlingMode::Chess960))
        } else {
            standard_position(board.clone()).map(|p| (p, CastlingMode::Standard))
        };
        Some(WrongStart { squares, rotated, position })
    })
}

/// Pawns on the second and seventh ranks, eight pieces of the right colour
/// on each back rank, nothing in between.
fn looks_like_start(board: &Board) -> bool {
    let rank = |r: Rank| Bitboard::from_rank(r);
    board.pawns() & board.white() == rank(Rank::Second)
        && board.pawns() & board.black() == rank(Rank::Seventh)
        && board.white().without(board.pawns()) == rank(Rank::First)
        && board.black().without(board.pawns()) == rank(Rank::Eighth)
}

fn chess960_position(board: Board) -> Option<Chess> {
    let mut setup = Setup::empty();
    setup.castling_rights = board.rooks() & (Bitboard::from_rank(Rank::First) | Bitboard::from_rank(Rank::Eighth));
    setup.board = board;
    lenient_position(setup, CastlingMode::Chess960)
}

/// The position of a wrongly set-up standard board: castling only where the
/// king and the rook stand on their own squares.
fn standard_position(board: Board) -> Option<Chess> {
    let mut setup = Setup::empty();
    for (color, king, rooks) in
        [(Color::White, Square::E1, [Square::A1, Square::H1]), (Color::Black, Square::E8, [Square::A8, Square::H8])]
    {
        if board.piece_at(king) == Some(color.king()) {
            for rook in rooks {
                if board.piece_at(rook) == Some(shakmaty::Piece { color, role: Role::Rook }) {
                    setup.castling_rights.add(rook);
                }
            }
        }
    }
    setup.board = board;
    lenient_position(setup, CastlingMode::Standard)
}

/// The position of a set-up, dropping castling rights that do not fit and
/// accepting checks no legal game reaches: a board shows what it shows, and
/// a record that can go on is better than none.
pub(crate) fn lenient_position(setup: Setup, mode: CastlingMode) -> Option<Chess> {
    let error = match Chess::from_setup(setup, mode) {
        Ok(pos) => return Some(pos),
        Err(error) => error,
    };
    let error = match error.ignore_invalid_castling_rights() {
        Ok(pos) => return Some(pos),
        Err(error) => error,
    };
    error.ignore_impossible_check().ok()
}

#[cfg(test)]
mod tests {
    use shakmaty::{EnPassantMode, fen::Fen};

    use super::*;

    #[test]
    fn finds_the_start_position_either_way_round() {
        let picture = Picture::from_board(&Board::new());
        let start = find_start(&picture, &Expected::Standard).unwrap();
        assert!(!start.rotated && !start.set_up);
        let start = find_start(&picture.rotated(), &Expected::Standard).unwrap();
        assert!(start.rotated);
        assert!(find_start(&Picture::empty(), &Expected::Standard).is_none());
    }

    #[test]
    fn finds_any_chess960_start_position() {
        for n in [0, 518, 959] {
            let picture = Picture::from_board(&Board::chess960(n));
            let start = find_start(&picture, &Expected::Chess960).unwrap();
            assert_eq!(start.castling_mode, CastlingMode::Chess960);
            assert_eq!(start.position.board(), &Board::chess960(n));
            assert_eq!(start.position.castles().castling_rights().count(), 4, "all four castlings, n = {n}");
            assert!(find_start(&picture.rotated(), &Expected::Chess960).unwrap().rotated);
        }
        // Bishops on squares of the same colour: not a Chess960 position.
        let fen = "rbqbknnr/pppppppp/8/8/8/8/PPPPPPPP/RBQBKNNR";
        let picture = Picture::from_fen_placement(fen).unwrap();
        assert!(find_start(&picture, &Expected::Chess960).is_none());
        assert!(find_wrong_start(&picture, true).is_some());
    }

    #[test]
    fn notices_a_wrong_initial_position() {
        // King and queen swapped.
        let picture = Picture::from_fen_placement("rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR").unwrap();
        assert!(find_start(&picture, &Expected::Standard).is_none());
        let wrong = find_wrong_start(&picture, false).unwrap();
        let squares: Vec<Square> = wrong.squares.into_iter().collect();
        assert_eq!(squares, vec![Square::D1, Square::E1, Square::D8, Square::E8]);
        let (position, _) = wrong.position.unwrap();
        assert_eq!(
            Fen::from_position(&position, EnPassantMode::Legal).to_string(),
            "rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR w - - 0 1"
        );
        // Half set up: not yet a set-up to judge.
        let half = Picture::from_fen_placement("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1").unwrap();
        assert!(find_wrong_start(&half, false).is_none());
        assert!(find_wrong_start(&Picture::from_board(&Board::new()), false).is_some_and(|w| w.squares.is_empty()));
    }
}
