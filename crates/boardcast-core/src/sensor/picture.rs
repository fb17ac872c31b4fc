//! The physical board: what each of the 64 squares holds according to the
//! sensors.

use std::fmt;

use shakmaty::{Bitboard, Board, ByColor, ByRole, Color, File, Piece, Rank, Role, Square};

/// What one square holds according to the sensors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cell {
    /// Nothing on the square.
    #[default]
    Empty,
    /// Something stands on the square but the board cannot tell what
    /// (occupancy-only boards).
    Occupied,
    /// This piece stands on the square.
    Piece(Piece),
}

impl Cell {
    /// Whether the cell agrees with what a position has on the square.
    /// `Occupied` agrees with any piece: an occupancy board cannot tell them
    /// apart.
    #[inline]
    pub(crate) fn agrees_with(self, piece: Option<Piece>) -> bool {
        match (self, piece) {
            (Self::Empty, None) | (Self::Occupied, Some(_)) => true,
            (Self::Piece(a), Some(b)) => a == b,
            _ => false,
        }
    }

    /// Whether something stands on the square.
    pub const fn is_occupied(self) -> bool {
        !matches!(self, Self::Empty)
    }

    /// The piece, if the board identifies it.
    pub const fn piece(self) -> Option<Piece> {
        match self {
            Self::Piece(p) => Some(p),
            _ => None,
        }
    }

    /// The cell's letter in the capture format: a FEN piece letter, `?` for
    /// occupied-unknown, `None` for empty.
    pub(crate) fn letter(self) -> Option<char> {
        match self {
            Self::Empty => None,
            Self::Occupied => Some('?'),
            Self::Piece(p) => Some(p.char()),
        }
    }

    /// The cell for a capture-format letter (`P n K …` or `?`).
    pub fn from_letter(ch: char) -> Option<Self> {
        if ch == '?' {
            return Some(Self::Occupied);
        }
        Piece::from_char(ch).map(Self::Piece)
    }
}

impl From<Option<Piece>> for Cell {
    fn from(piece: Option<Piece>) -> Self {
        piece.map_or(Self::Empty, Self::Piece)
    }
}

/// The whole physical board: one [`Cell`] per square, indexed a1 = 0 …
/// h8 = 63.
///
/// Besides the cells it keeps a bitboard per piece kind, so that comparing
/// the picture with a position (done after every sensor event) is a dozen
/// word operations rather than 64 look-ups.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Picture {
    cells: [Cell; 64],
    /// Squares of each piece, indexed by [`piece_index`].
    pieces: [Bitboard; 12],
    /// Squares occupied by something unidentified.
    unknown: Bitboard,
}

/// 0–5 white pawn … king, 6–11 black.
fn piece_index(piece: Piece) -> usize {
    usize::from(piece.color == Color::Black) * 6 + (piece.role as usize - 1)
}

impl Picture {
    /// A board with nothing on it.
    pub const fn empty() -> Self {
        Self { cells: [Cell::Empty; 64], pieces: [Bitboard::EMPTY; 12], unknown: Bitboard::EMPTY }
    }

    /// The picture of a position's board.
    pub fn from_board(board: &Board) -> Self {
        let mut picture = Self::empty();
        for (sq, piece) in board {
            picture.set(sq, Cell::Piece(piece));
        }
        picture
    }

    /// What stands on `sq`.
    #[inline]
    pub fn get(&self, sq: Square) -> Cell {
        self.cells[sq as usize]
    }

    /// Puts `cell` on `sq`, returning what was there.
    #[inline]
    pub fn set(&mut self, sq: Square, cell: Cell) -> Cell {
        let before = std::mem::replace(&mut self.cells[sq as usize], cell);
        match before {
            Cell::Empty => {}
            Cell::Occupied => self.unknown.discard(sq),
            Cell::Piece(p) => self.pieces[piece_index(p)].discard(sq),
        }
        match cell {
            Cell::Empty => {}
            Cell::Occupied => self.unknown.add(sq),
            Cell::Piece(p) => self.pieces[piece_index(p)].add(sq),
        }
        before
    }

    /// The squares where something stands.
    pub fn occupied(&self) -> Bitboard {
        self.pieces.iter().fold(self.unknown, |all, &bb| all | bb)
    }

    /// The squares where `piece` stands.
    pub(crate) fn by_piece(&self, piece: Piece) -> Bitboard {
        self.pieces[piece_index(piece)]
    }

    /// The squares occupied by something unidentified.
    pub(crate) fn unknown(&self) -> Bitboard {
        self.unknown
    }

    /// The squares where a piece of `color` stands (identified pieces only).
    pub(crate) fn by_color(&self, color: Color) -> Bitboard {
        let offset = usize::from(color == Color::Black) * 6;
        self.pieces[offset..offset + 6].iter().fold(Bitboard::EMPTY, |all, &bb| all | bb)
    }

    /// The squares where the picture disagrees with `board`.
    pub(crate) fn diff(&self, board: &Board) -> Bitboard {
        let mut diff = Bitboard::EMPTY;
        for color in Color::ALL {
            for role in Role::ALL {
                let piece = Piece { color, role };
                diff |= self.pieces[piece_index(piece)] ^ board.by_piece(piece);
            }
        }
        // An unidentified piece agrees with any piece, and not with nothing.
        diff.without(self.unknown) | self.unknown.without(board.occupied())
    }

    /// Whether the picture agrees with `board` on every square.
    pub(crate) fn agrees_with(&self, board: &Board) -> bool {
        self.diff(board).is_empty()
    }

    /// The picture of the same board turned 180°: what a board whose
    /// connector is on the wrong side reports, and how to undo it.
    pub fn rotated(&self) -> Self {
        let mut cells = self.cells;
        cells.reverse();
        let rotate = |bb: Bitboard| Bitboard(bb.0.reverse_bits());
        Self { cells, pieces: self.pieces.map(rotate), unknown: rotate(self.unknown) }
    }

    /// The board, if every occupied square identifies its piece.
    pub fn to_board(&self) -> Option<Board> {
        if !self.unknown.is_empty() {
            return None;
        }
        let by_role = ByRole::new_with(|role| {
            self.by_piece(Piece { color: Color::White, role }) | self.by_piece(Piece { color: Color::Black, role })
        });
        let by_color = ByColor::new_with(|color| self.by_color(color));
        // The bitboards never overlap: a square holds one cell.
        Board::try_from_bitboards(by_role, by_color).ok()
    }

    /// The square where a king of `color` stands, if exactly one does.
    pub(crate) fn king_of(&self, color: Color) -> Option<Square> {
        self.by_piece(color.king()).single_square()
    }

    /// Parses the first field of a FEN (piece placement), where `?` may
    /// stand for an occupied square of unknown content.
    ///
    /// # Errors
    ///
    /// When the text is not eight ranks of eight squares of known letters.
    pub fn from_fen_placement(text: &str) -> Result<Self, ParsePictureError> {
        let err = |reason: &'static str| ParsePictureError { text: text.to_owned(), reason };
        let mut picture = Self::empty();
        let ranks: Vec<&str> = text.split('/').collect();
        if ranks.len() != 8 {
            return Err(err("expected 8 ranks separated by '/'"));
        }
        for (i, rank_text) in ranks.iter().enumerate() {
            let rank = Rank::new(7 - i as u32);
            let mut file = 0u32;
            for ch in rank_text.chars() {
                if let Some(n) = ch.to_digit(10) {
                    if n == 0 || n > 8 {
                        return Err(err("empty-square counts must be 1 to 8"));
                    }
                    file += n;
                } else {
                    let cell = Cell::from_letter(ch).ok_or_else(|| err("unknown piece letter"))?;
                    if file >= 8 {
                        return Err(err("a rank has more than 8 squares"));
                    }
                    picture.set(Square::from_coords(File::new(file), rank), cell);
                    file += 1;
                }
                if file > 8 {
                    return Err(err("a rank has more than 8 squares"));
                }
            }
            if file != 8 {
                return Err(err("a rank has fewer than 8 squares"));
            }
        }
        Ok(picture)
    }

    /// The picture as the first field of a FEN, with `?` for occupied
    /// squares of unknown content.
    pub fn to_fen_placement(&self) -> String {
        let mut out = String::with_capacity(71);
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                let cell = self.get(Square::from_coords(File::new(file), Rank::new(rank)));
                match cell.letter() {
                    None => empty += 1,
                    Some(ch) => {
                        if empty > 0 {
                            out.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        out.push(ch);
                    }
                }
            }
            if empty > 0 {
                out.push(char::from(b'0' + empty));
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }
}

impl Default for Picture {
    fn default() -> Self {
        Self::empty()
    }
}

impl fmt::Debug for Picture {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Picture({})", self.to_fen_placement())
    }
}

/// A piece placement that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid board {text:?}: {reason}")]
pub struct ParsePictureError {
    /// The text that was given.
    pub(crate) text: String,
    /// What is wrong with it.
    pub(crate) reason: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";

    #[test]
    fn round_trips_fen_placement_with_unknown_pieces() {
        for text in [START, "8/8/8/8/8/8/8/8", "????????/8/8/3?4/8/8/8/4K2k", "r3k2r/8/8/8/8/8/8/R3K2R"] {
            assert_eq!(Picture::from_fen_placement(text).unwrap().to_fen_placement(), text);
        }
    }

    #[test]
    fn rejects_malformed_placements_with_the_reason() {
        for (text, reason) in [
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP", "expected 8 ranks separated by '/'"),
            ("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "a rank has fewer than 8 squares"),
            ("rnbqkbnrr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR", "a rank has more than 8 squares"),
            ("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR", "empty-square counts must be 1 to 8"),
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX", "unknown piece letter"),
        ] {
            let error = Picture::from_fen_placement(text).unwrap_err();
            assert_eq!(error.reason, reason, "{text}");
        }
    }

    #[test]
    fn agrees_with_the_start_board_and_rotates() {
        let picture = Picture::from_fen_placement(START).unwrap();
        assert!(picture.agrees_with(&Board::new()));
        assert_eq!(picture, Picture::from_board(&Board::new()));
        let rotated = picture.rotated();
        assert_eq!(rotated.get(Square::A1), Cell::Piece(Color::Black.rook()));
        assert_eq!(rotated.get(Square::E8), Cell::Piece(Color::White.queen()));
        assert_eq!(rotated.rotated(), picture);
    }

    #[test]
    fn bitboards_follow_the_cells() {
        let mut picture = Picture::from_fen_placement("r3k2r/8/8/3?4/8/8/8/R3K2R").unwrap();
        picture.set(Square::A1, Cell::Empty);
        picture.set(Square::D5, Cell::Piece(Color::White.queen()));
        picture.set(Square::C3, Cell::Occupied);
        let rotated = picture.rotated();
        for p in [&picture, &rotated] {
            for sq in Square::ALL {
                assert_eq!(p.occupied().contains(sq), p.get(sq).is_occupied(), "{sq}");
                if let Cell::Piece(piece) = p.get(sq) {
                    assert!(p.by_piece(piece).contains(sq));
                }
            }
        }
        let board = Board::from_ascii_board_fen(b"r3k2r/8/8/3Q4/8/2P5/8/4K2R").unwrap();
        assert_eq!(picture.diff(&board), Bitboard::EMPTY);
        assert_eq!(rotated.rotated(), picture);
    }

    #[test]
    fn occupied_agrees_with_any_piece() {
        let picture = Picture::from_fen_placement(&START.replace(['r', 'R'], "?")).unwrap();
        assert!(picture.agrees_with(&Board::new()));
        assert_eq!(picture.diff(&Board::empty()).count(), 32);
    }
}
