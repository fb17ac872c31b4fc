//! Matching what the board shows against what legal moves would produce.
//!
//! Moves come from shakmaty; this module never generates moves itself. It
//! compares the squares a legal move changes with the picture, which is
//! cheap: a move changes two to four squares, so only moves starting on a
//! square where the board differs from the game need a look.

use shakmaty::{Bitboard, CastlingSide, Chess, Move, Piece, Position, Square, attacks};

use super::known::Known;

use crate::sensor::{Cell, Picture};

/// The squares a move changes and what each holds afterwards.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Effect {
    cells: [(Square, Option<Piece>); 4],
    len: usize,
    squares: Bitboard,
}

impl Effect {
    /// The squares the move changes.
    pub(crate) fn squares(&self) -> Bitboard {
        self.squares
    }

    /// Each changed square with what stands there after the move.
    pub(crate) fn cells(&self) -> &[(Square, Option<Piece>)] {
        &self.cells[..self.len]
    }

    /// Whether `picture` shows these squares as the move leaves them.
    fn agrees_with(&self, picture: &Picture) -> bool {
        self.cells().iter().all(|&(sq, piece)| picture.get(sq).agrees_with(piece))
    }
}

/// What `m` does to the board of `pos`.
pub(crate) fn effect(pos: &Chess, m: Move) -> Effect {
    let turn = pos.turn();
    let mut cells = [(Square::A1, None); 4];
    let len = match m {
        Move::Normal { role, from, to, promotion, .. } => {
            cells[0] = (from, None);
            cells[1] = (to, Some(Piece { color: turn, role: promotion.unwrap_or(role) }));
            2
        }
        Move::EnPassant { from, to } => {
            cells[0] = (from, None);
            cells[1] = (to, Some(turn.pawn()));
            cells[2] = (Square::from_coords(to.file(), from.rank()), None);
            3
        }
        Move::Castle { king, rook } => {
            let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
            let (king_to, rook_to) = (side.king_to(turn), side.rook_to(turn));
            let mut n = 0;
            // Squares vacated, unless a piece lands there again (Chess960).
            for sq in [king, rook] {
                if sq != king_to && sq != rook_to {
                    cells[n] = (sq, None);
                    n += 1;
                }
            }
            cells[n] = (king_to, Some(turn.king()));
            cells[n + 1] = (rook_to, Some(turn.rook()));
            n + 2
        }
        Move::Put { .. } => 0,
    };
    let squares = cells[..len].iter().fold(Bitboard::EMPTY, |bb, &(sq, _)| bb.with(sq));
    Effect { cells, len, squares }
}

/// Whether `m` can be the move the board shows, by a test cheaper than
/// working out its effect: a move changes its origin, and its target too
/// unless the target is in `reach` for another reason (an occupancy board
/// shows a capture's target occupied before and after).
/// ([`Known::candidates`] has already tested this for every move but
/// castling.)
#[inline]
fn touches(m: Move, diff: Bitboard, reach: Bitboard) -> bool {
    match m {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => diff.contains(from) && reach.contains(to),
        Move::Castle { king, rook } => diff.contains(king) || diff.contains(rook),
        Move::Put { .. } => false,
    }
}

/// The squares a move takes pieces from: where the moving piece (or, for
/// castling, the king and the rook) stood.
pub(crate) fn origins(m: Move) -> Bitboard {
    match m {
        Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
        _ => m.from().map_or(Bitboard::EMPTY, Bitboard::from),
    }
}

/// The result of comparing a picture with the legal moves of a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Found {
    /// No legal move explains the picture.
    None,
    /// Exactly this move.
    One(Move),
    /// Several moves (only possible where the board cannot tell pieces
    /// apart: promotions, and captures from the same square, on occupancy
    /// boards).
    Several(Vec<Move>),
}

/// The legal moves of `pos` after which the board would look like
/// `picture`. `diff` must be the squares where `picture` differs from
/// `pos`'s board.
///
/// With `lifted_ok`, squares outside the move that are empty on the board
/// but not in the position are accepted too: pieces lifted by the opponent,
/// who has started the next move.
pub(crate) fn find_move(known: &Known, picture: &Picture, diff: Bitboard, lifted_ok: bool) -> Found {
    let pos = &known.pos;
    // A move changes two to four squares; anything else is not one move.
    if diff.is_empty() || (!lifted_ok && diff.count() > 4) {
        return Found::None;
    }
    // An occupancy board shows a capture's target occupied before and
    // after, so only the origin differs: the target need only hold
    // something unidentified. (Boards that identify pieces have no such
    // squares, and look only at the squares that differ.)
    let reach = diff | picture.unknown();
    let mut found = Found::None;
    for m in known.candidates(reach) {
        if !touches(m, diff, reach) {
            continue;
        }
        let effect = effect(pos, m);
        let outside = diff.without(effect.squares());
        let lifted = || outside.into_iter().all(|sq| !picture.get(sq).is_occupied());
        if !(outside.is_empty() || lifted_ok && lifted()) {
            continue;
        }
        if !effect.agrees_with(picture) {
            continue;
        }
        found = match found {
            Found::None => Found::One(m),
            Found::One(first) => Found::Several(vec![first, m]),
            Found::Several(mut all) => {
                all.push(m);
                Found::Several(all)
            }
        };
    }
    found
}

/// The legal move the board shows while the opponent is already busy: every
/// square outside the move where the board differs held, or now holds, an
/// opponent's piece. Once the opponent's hand is on the board, the mover's
/// piece is no longer on its way (unless it is heading for the opponent's
/// piece just lifted: a capture still in progress, which is left alone).
pub(crate) fn move_then_opponent(known: &Known, picture: &Picture, diff: Bitboard) -> Option<Move> {
    let pos = &known.pos;
    let (mover, board) = (pos.turn(), pos.board());
    let mut found = None;
    for m in known.candidates(diff) {
        if !touches(m, diff, diff) {
            continue;
        }
        let effect = effect(pos, m);
        let outside = diff.without(effect.squares());
        if outside.is_empty() || !effect.agrees_with(picture) {
            continue;
        }
        // An opponent's piece lifted or put down is the opponent at work; so
        // is one of the mover's pieces replaced by an opponent's (captured).
        // One of the mover's pieces merely lifted could be the mover's own
        // hand still at work, and does not count.
        let opponent_only = outside.into_iter().all(|sq| match picture.get(sq) {
            Cell::Empty => board.color_at(sq) == Some(!mover),
            Cell::Piece(p) => p.color != mover,
            Cell::Occupied => false,
        });
        // With only lifts, the lifted piece may be the moving piece's victim
        // (a capture slid across the square shown); once the opponent puts a
        // piece down elsewhere, the opponent is plainly moving.
        let placed = outside.into_iter().any(|sq| picture.get(sq).is_occupied());
        if !opponent_only || (!placed && heads_for(known, m, outside)) {
            continue;
        }
        if found.is_some() {
            return None;
        }
        found = Some(m);
    }
    found
}

/// Whether the piece of `m` could go on to capture on one of `squares`.
fn heads_for(known: &Known, m: Move, squares: Bitboard) -> bool {
    let (Some(from), to) = (m.from(), m.to()) else { return false };
    known.moves_from(from).any(|other| squares.contains(other.to()) && attacks::between(from, other.to()).contains(to))
}

/// Whether the piece that makes `m` could be on its way further: another
/// legal move of the same piece passes over `m`'s target (a bishop sliding
/// on, a pawn pushed one square on its way to two, a king on its way to
/// castle). Such a position is only judged once the board has settled.
pub(crate) fn could_continue(known: &Known, m: Move) -> bool {
    let (Some(from), to) = (m.from(), m.to()) else {
        return false;
    };
    // Knights jump: nothing of theirs passes over a square.
    if matches!(m, Move::Castle { .. }) || m.role() == shakmaty::Role::Knight {
        return false;
    }
    // Another move of the piece passes over `to` (and so goes further).
    known.destinations_from(from).any(|other_to| attacks::between(from, other_to).contains(to))
}

/// The sequences of two to `max_plies` legal moves after which the board
/// would look like `picture`, stopping once two are found (one means the
/// board is explained; two mean it is ambiguous).
///
/// With `first`, only sequences starting with that move.
pub(crate) fn find_sequences(
    known: &Known,
    picture: &Picture,
    max_plies: usize,
    first: Option<Move>,
) -> Vec<Vec<Move>> {
    let mut found = Vec::new();
    for plies in 2..=max_plies {
        match first {
            None => search(&known.pos, picture, plies, &mut Vec::new(), &mut found),
            Some(m) if known.is_legal(m) => {
                let mut next = known.pos.clone();
                next.play_unchecked(m);
                search(&next, picture, plies - 1, &mut vec![m], &mut found);
            }
            Some(_) => {}
        }
        if !found.is_empty() {
            break;
        }
    }
    found
}

fn search(pos: &Chess, picture: &Picture, remaining: usize, line: &mut Vec<Move>, found: &mut Vec<Vec<Move>>) {
    if remaining == 1 {
        let diff = picture.diff(pos.board());
        if diff.count() > 4 {
            return;
        }
        match find_move(&Known::new(pos.clone()), picture, diff, false) {
            Found::None => {}
            Found::One(m) => push_found(found, line, m),
            Found::Several(ms) => ms.into_iter().for_each(|m| push_found(found, line, m)),
        }
        return;
    }
    // Each ply changes at most four squares: a board further away than that
    // cannot be reached in the plies left.
    if picture.diff(pos.board()).count() > 4 * remaining {
        return;
    }
    for m in pos.legal_moves() {
        if found.len() >= 2 {
            return;
        }
        let mut next = pos.clone();
        next.play_unchecked(m);
        line.push(m);
        search(&next, picture, remaining - 1, line, found);
        line.pop();
    }
}

fn push_found(found: &mut Vec<Vec<Move>>, line: &[Move], m: Move) {
    if found.len() < 2 {
        let mut sequence = line.to_vec();
        sequence.push(m);
        found.push(sequence);
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, Role, fen::Fen, san::SanPlus};

    use super::*;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    fn after(pos: &Chess, sans: &str) -> Chess {
        let mut pos = pos.clone();
        for san in sans.split_whitespace() {
            let m = san.parse::<SanPlus>().unwrap().san.to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
        pos
    }

    fn find(pos: &Chess, picture: &Picture) -> Found {
        find_move(&Known::new(pos.clone()), picture, picture.diff(pos.board()), false)
    }

    fn san(pos: &Chess, text: &str) -> Move {
        text.parse::<SanPlus>().unwrap().san.to_move(pos).unwrap()
    }

    #[test]
    fn finds_every_kind_of_move_from_the_final_picture() {
        let cases = [
            ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e4"),
            ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O"),
            ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O"),
            ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6"),
            ("3rk3/4P3/8/8/8/8/8/4K3 w - - 0 1", "exd8=N+"),
            ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b8=Q+"),
            ("4k3/8/8/8/2p5/1B6/8/4K3 w - - 0 1", "Bxc4"),
        ];
        for (fen, text) in cases {
            let pos = pos(fen);
            let m = san(&pos, text);
            let picture = Picture::from_board(after(&pos, text).board());
            assert_eq!(find(&pos, &picture), Found::One(m), "{fen} {text}");
        }
    }

    #[test]
    fn the_unchanged_board_and_half_moves_match_nothing() {
        let start = Chess::default();
        assert_eq!(find(&start, &Picture::from_board(start.board())), Found::None);
        let mut lifted = Picture::from_board(start.board());
        lifted.set(Square::E2, crate::sensor::Cell::Empty);
        assert_eq!(find(&start, &lifted), Found::None);
        // King on g1 but the rook still on h1: castling half done.
        let p = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let mut half = Picture::from_board(p.board());
        half.set(Square::E1, crate::sensor::Cell::Empty);
        half.set(Square::G1, crate::sensor::Cell::Piece(shakmaty::Color::White.king()));
        assert_eq!(find(&p, &half), Found::None);
    }

    #[test]
    fn occupancy_boards_cannot_tell_promotions_apart() {
        let p = pos("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
        let mut picture = Picture::from_board(after(&p, "b8=Q").board());
        picture.set(Square::B8, crate::sensor::Cell::Occupied);
        let Found::Several(moves) = find(&p, &picture) else { panic!("expected several") };
        let roles: Vec<Role> = moves.iter().filter_map(|m| m.promotion()).collect();
        assert_eq!(roles.len(), 4);
    }

    #[test]
    fn occupancy_boards_show_a_capture_by_its_origin_alone() {
        // Bxa6 and Bxh7 both leave only d3 changed.
        let p = pos("4k3/7n/n7/8/8/3B4/8/4K3 w - - 0 1");
        let mut picture = Picture::empty();
        for sq in p.board().occupied() {
            picture.set(sq, crate::sensor::Cell::Occupied);
        }
        picture.set(Square::D3, crate::sensor::Cell::Empty);
        let Found::Several(moves) = find(&p, &picture) else { panic!("expected several") };
        let targets: Vec<Square> = moves.iter().map(|m| m.to()).collect();
        assert_eq!(targets, [Square::A6, Square::H7]);
        // A board that identifies pieces shows the target too.
        let identified = Picture::from_board(after(&p, "Bxa6").board());
        assert_eq!(find(&p, &identified), Found::One(san(&p, "Bxa6")));
    }

    #[test]
    fn accepts_pieces_lifted_by_the_opponent_only_when_asked() {
        let start = Chess::default();
        let mut picture = Picture::from_board(after(&start, "e4").board());
        picture.set(Square::D7, crate::sensor::Cell::Empty);
        let diff = picture.diff(start.board());
        let known = Known::new(start.clone());
        assert_eq!(find_move(&known, &picture, diff, false), Found::None);
        assert_eq!(find_move(&known, &picture, diff, true), Found::One(san(&start, "e4")));
    }

    #[test]
    fn knows_when_a_piece_could_still_be_on_its_way() {
        let start = Chess::default();
        assert!(could_continue(&Known::new(start.clone()), san(&start, "e3")), "e3 may be on its way to e4");
        assert!(!could_continue(&Known::new(start.clone()), san(&start, "e4")));
        assert!(!could_continue(&Known::new(start.clone()), san(&start, "Nf3")));
        let open = after(&start, "e4 e5");
        assert!(could_continue(&Known::new(open.clone()), san(&open, "Bd3")), "the bishop could slide on to c4");
        assert!(!could_continue(&Known::new(open.clone()), san(&open, "Ba6")));
        let castle = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        assert!(
            could_continue(&Known::new(castle.clone()), san(&castle, "Kf1")),
            "the king could be on its way to castle"
        );
        assert!(!could_continue(&Known::new(castle.clone()), san(&castle, "Kd2")));
    }

    #[test]
    fn fills_in_sequences_and_sees_ambiguity() {
        let start = Chess::default();
        let two = Picture::from_board(after(&start, "e4 e5").board());
        let found = find_sequences(&Known::new(start.clone()), &two, 3, None);
        assert_eq!(found, vec![vec![san(&start, "e4"), san(&after(&start, "e4"), "e5")]]);
        // Nf3 e5 Nc3 and Nc3 e5 Nf3 reach the same board.
        let transposed = Picture::from_board(after(&start, "Nf3 e5 Nc3").board());
        assert_eq!(find_sequences(&Known::new(start.clone()), &transposed, 3, None).len(), 2);
        let through = find_sequences(&Known::new(start.clone()), &transposed, 3, Some(san(&start, "Nc3")));
        assert_eq!(through.len(), 1);
        assert_eq!(through[0][0], san(&start, "Nc3"));
        let far = Picture::from_board(after(&start, "e4 e5 Nf3 Nc6").board());
        assert!(find_sequences(&Known::new(start.clone()), &far, 3, None).is_empty());
    }
}
