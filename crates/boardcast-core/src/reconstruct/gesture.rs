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
    Some(shown_by(Bitboard::from(white) | Bitboard::from(black)))
}

/// The result two kings on the centre squares `kings` show: both light
/// 1-0, both dark 0-1, one of each ½-½ (which king stands where does not
/// matter).
fn shown_by(kings: Bitboard) -> KnownOutcome {
    match (kings & LIGHT).count() {
        2 => KnownOutcome::Decisive { winner: Color::White },
        0 => KnownOutcome::Decisive { winner: Color::Black },
        _ => KnownOutcome::Draw,
    }
}

/// The result gesture on a board that sees only occupancy. The kings are
/// not identified, but they need not be: the result is in the colours of
/// the two centre squares they stand on, whichever king stands where. The
/// board shows it when, away from the centre, it shows the game position
/// (`board`) without its kings, and exactly two centre squares are
/// occupied. A king standing on a centre square of the game may stay
/// there. Where the game has another piece on the centre, the board cannot
/// tell a king put there (the piece taken off) from the piece still
/// standing with a king in the hand, so the gesture is not read.
///
/// Never a move: only the kings' squares changed, and a king on a centre
/// square always stands next to any other square of the centre.
pub(crate) fn occupancy_gesture(picture: &Picture, board: &Board) -> Option<KnownOutcome> {
    let kings = board.kings();
    if !(board.occupied() & !kings & CENTRE).is_empty() {
        return None;
    }
    let shown = picture.occupied();
    if shown & !CENTRE != board.occupied() & !kings & !CENTRE {
        return None;
    }
    let on_centre = shown & CENTRE;
    if on_centre.count() != 2 {
        return None;
    }
    Some(shown_by(on_centre))
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

    fn occupancy(placement: &str) -> Picture {
        let board: Board = placement.parse().unwrap();
        let mut picture = Picture::empty();
        for sq in board.occupied() {
            picture.set(sq, Cell::Occupied);
        }
        picture
    }

    #[test]
    fn an_occupancy_board_shows_the_result_without_telling_the_kings_apart() {
        let game: Board = "8/8/8/5k2/8/8/8/R3K3".parse().unwrap();
        let white_wins = Some(KnownOutcome::Decisive { winner: Color::White });
        let black_wins = Some(KnownOutcome::Decisive { winner: Color::Black });
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/3K4/4k3/8/8/R7"), &game), white_wins);
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/4k3/3K4/8/8/R7"), &game), black_wins);
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/3kK3/8/8/8/R7"), &game), Some(KnownOutcome::Draw));
        // One king still in the hand, or the rook moved too: no gesture.
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/3K4/8/8/8/R7"), &game), None);
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/3K4/4k3/8/8/1R6"), &game), None);
        // The game position itself is no gesture.
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/5k2/8/8/8/R3K3"), &game), None);
        // A king already on the centre stays there.
        let centred: Board = "8/8/8/8/4K3/8/8/R6k".parse().unwrap();
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/8/3kK3/8/8/R7"), &centred), Some(KnownOutcome::Draw));
        // A pawn on d5 and a king in the hand look like a king put on d5
        // with the pawn taken off: not read.
        let pawn: Board = "8/8/8/3p4/4K3/8/8/R6k".parse().unwrap();
        assert_eq!(occupancy_gesture(&occupancy("8/8/8/3p4/4K3/8/8/R7"), &pawn), None);
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
