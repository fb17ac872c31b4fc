//! The result gesture: both kings put on the four centre squares when the
//! game is over. Both on light squares (d5, e4) is 1-0, both on dark squares
//! (d4, e5) 0-1, one of each ½-½. Two kings on the centre squares always
//! stand next to each other, which no legal position allows, so the gesture
//! can never be mistaken for a move.

use shakmaty::{Bitboard, Board, Color, KnownOutcome, Square};

use crate::sensor::{Cell, Picture};

const CENTRE: Bitboard = Bitboard(0x0000_0018_1800_0000);
const LIGHT: Bitboard = Bitboard(0x0000_0008_1000_0000);

/// The result the kings show, if they stand on the centre squares.
pub(crate) fn result_gesture(picture: &Picture) -> Option<KnownOutcome> {
    let white = picture.king_of(Color::White)?;
    let black = picture.king_of(Color::Black)?;
    if !CENTRE.contains(white) || !CENTRE.contains(black) {
        return None;
    }
    Some(match (LIGHT.contains(white), LIGHT.contains(black)) {
        (true, true) => KnownOutcome::Decisive { winner: Color::White },
        (false, false) => KnownOutcome::Decisive { winner: Color::Black },
        _ => KnownOutcome::Draw,
    })
}

/// The board as it would be without the gesture: each king back on its
/// square of `board` (the game position), and the centre squares the kings
/// stood on as `board` has them. What else differs from `board` was done
/// before the kings went to the centre.
pub(crate) fn kings_put_back(picture: &Picture, board: &Board) -> Picture {
    let mut back = picture.clone();
    for color in Color::ALL {
        if let (Some(shown), Some(home)) = (picture.king_of(color), board.king_of(color)) {
            back.set(shown, board.piece_at(shown).map_or(Cell::Empty, Cell::Piece));
            back.set(home, Cell::Piece(color.king()));
        }
    }
    back
}

/// The centre squares.
pub(crate) fn centre() -> impl Iterator<Item = Square> {
    CENTRE.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kings(white: &str, black: &str) -> Picture {
        let mut picture = Picture::empty();
        picture.set(white.parse().unwrap(), crate::sensor::Cell::Piece(Color::White.king()));
        picture.set(black.parse().unwrap(), crate::sensor::Cell::Piece(Color::Black.king()));
        picture
    }

    #[test]
    fn reads_the_result_from_the_square_colours() {
        assert_eq!(centre().collect::<Vec<_>>(), vec![Square::D4, Square::E4, Square::D5, Square::E5]);
        let white_wins = KnownOutcome::Decisive { winner: Color::White };
        let black_wins = KnownOutcome::Decisive { winner: Color::Black };
        assert_eq!(result_gesture(&kings("d5", "e4")), Some(white_wins));
        assert_eq!(result_gesture(&kings("e4", "d5")), Some(white_wins));
        assert_eq!(result_gesture(&kings("d4", "e5")), Some(black_wins));
        assert_eq!(result_gesture(&kings("d4", "d5")), Some(KnownOutcome::Draw));
        assert_eq!(result_gesture(&kings("e5", "e4")), Some(KnownOutcome::Draw));
        assert_eq!(result_gesture(&kings("e1", "e4")), None);
    }
}
