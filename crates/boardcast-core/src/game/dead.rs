//! Dead positions (FIDE Laws 5.2.2): "a position has arisen in which
//! neither player can checkmate the opponent's king with any series of
//! legal moves". Insufficient material is the common case; locked pawn
//! chains with kings (and pieces) walled in on their own side are the
//! other one boards see.
//!
//! The rule here is soundness: [`Verdict::Dead`] only with a proof, since a
//! dead position ends the game. A position that cannot be decided within
//! the [`Budget`] is [`Verdict::Unknown`] and the game goes on. The method
//! follows the published unwinnability analysers (a helpmate search proves
//! a position alive, a static argument or an exhausted search proves it
//! dead), in three steps of rising cost:
//!
//! 1. A filter of a few bitboard operations: unless insufficient material,
//!    a position can only be proved dead here if every pawn stands head-on
//!    against another pawn (no pawn can ever push while the chain stands).
//!    Nearly every position of a real game fails this and costs nothing
//!    more.
//! 2. A static proof, over the squares each unit could ever reach with the
//!    pawns standing still: if no pawn can ever capture or be captured,
//!    the pawns never change; if moreover, wherever a king could be in
//!    check, it always keeps a flight square no enemy unit can ever
//!    attack, nobody can mate.
//! 3. The exhaustive search of every position reachable by legal moves,
//!    capped by the budget: a checkmate met on the way proves the position
//!    alive (a helpmate), every reachable position seen without a mate
//!    proves it dead.
//!
//! During a game the search runs only when a ply changed what it depends
//! on most, the pawns, the material or the castling rights
//! ([`verdict_after`]). Between such plies the pieces only walk, and a
//! blockade the search could not decide after the last capture is no
//! easier to decide one quiet move later: searching it again after every
//! move cost generated games 4.6 times their replay time (BENCHMARKS.md,
//! sections 1 and 9). Skipping a search can only leave a game running,
//! never end one, so soundness holds.

use std::{
    collections::{HashSet, VecDeque},
    hash::{BuildHasherDefault, Hash, Hasher},
};

use shakmaty::{Bitboard, Board, Chess, Color, Piece, Position, Role, Square, attacks};

/// What the analysis proved about a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Neither side can mate by any series of legal moves: the game is
    /// drawn (5.2.2).
    Dead,
    /// A series of legal moves leads to a checkmate (a helpmate was found).
    Alive,
    /// Not decided within the budget; treated as alive.
    Unknown,
}

/// How much work one call may do: the number of moves the search of step 3
/// may play. Counting moves rather than positions bounds the time whatever
/// the pieces: a rook's position has many moves that lead back to
/// positions already seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Moves played before the search gives up with
    /// [`Verdict::Unknown`].
    pub(crate) moves: usize,
}

impl Budget {
    /// The budget of the check made after a move that reshapes the
    /// position ([`verdict_after`]): a locked position the analysis cannot
    /// decide costs about 1 to 8 ms; any other position far less (see
    /// BENCHMARKS.md, "Dead positions").
    pub const PER_MOVE: Self = Self { moves: 20_000 };
}

impl Default for Budget {
    fn default() -> Self {
        Self::PER_MOVE
    }
}

/// Whether `pos` is dead (neither side can ever mate), alive (a mate is
/// reachable), or undecided within `budget`.
pub fn verdict(pos: &Chess, budget: Budget) -> Verdict {
    if pos.is_insufficient_material() {
        return Verdict::Dead;
    }
    if !pawns_locked(pos.board()) {
        return Verdict::Unknown;
    }
    if static_proof(pos) {
        return Verdict::Dead;
    }
    search(pos, budget)
}

/// [`verdict`] of the position `pos` reached by a ply from `before` (`None`
/// for a game's first position): steps 1 and 2 after every ply, the search
/// of step 3 only when the ply [`reshaped`] the position. A pure function
/// of the two positions, so a replay, a resumed game and the game
/// generator all decide the same plies the same way.
pub fn verdict_after(before: Option<&Chess>, pos: &Chess, budget: Budget) -> Verdict {
    match before {
        Some(before) if !reshaped(before, pos) => {
            if proved_dead(pos) {
                Verdict::Dead
            } else {
                Verdict::Unknown
            }
        }
        _ => verdict(pos, budget),
    }
}

/// Whether a ply from `before` to `after` moved or took a pawn, took a
/// piece, promoted, or changed the castling rights: anything but a quiet
/// piece move, which the search from `before`'s shape already covered.
pub(crate) fn reshaped(before: &Chess, after: &Chess) -> bool {
    let (b, a) = (before.board(), after.board());
    (b.pawns() & b.white()) != (a.pawns() & a.white())
        || (b.pawns() & b.black()) != (a.pawns() & a.black())
        || b.material() != a.material()
        || before.castles().castling_rights() != after.castles().castling_rights()
}

/// Step 1: every pawn has a pawn directly in front of it, so no pawn can
/// push until a pawn is captured. Pawnless positions fail: without
/// insufficient material they are (nearly always) alive.
fn pawns_locked(board: &Board) -> bool {
    let pawns = board.pawns();
    let white = pawns & board.white();
    let black = pawns & board.black();
    pawns.any() && (white.shift(8) & !pawns).is_empty() && (black.shift(-8) & !pawns).is_empty()
}

/// The squares `color`'s pawns attack.
fn pawn_attacks_of(board: &Board, color: Color) -> Bitboard {
    let mut all = Bitboard::EMPTY;
    for sq in board.pawns() & board.by_color(color) {
        all |= attacks::pawn_attacks(color, sq);
    }
    all
}

/// What one side's units can ever do while the pawns stand still: an
/// over-approximation (every non-pawn piece is ignored as an obstacle).
#[derive(Default)]
struct Reach {
    /// Squares the king can ever stand on.
    king: Bitboard,
    /// Squares the king can ever attack.
    king_zone: Bitboard,
    /// Squares the other pieces can ever stand on.
    pieces: Bitboard,
    /// Squares a non-king unit (pawns included) can ever attack: where it
    /// could give check.
    checks: Bitboard,
    /// A capture of an enemy pawn is possible.
    takes_pawn: bool,
}

/// The squares a piece of `role` can reach from `from`, moving any number
/// of times with only the pawns as obstacles and never onto `forbidden`;
/// and every square it attacks from them.
fn flood(role: Role, color: Color, from: Square, pawns: Bitboard, forbidden: Bitboard) -> (Bitboard, Bitboard) {
    let piece = Piece { color, role };
    let mut region = Bitboard::from_square(from);
    let mut attacked = Bitboard::EMPTY;
    let mut frontier = region;
    while let Some(sq) = frontier.pop_front() {
        let reach = attacks::attacks(sq, piece, pawns);
        attacked |= reach;
        let new = reach & !pawns & !forbidden & !region;
        region |= new;
        frontier |= new;
    }
    (region, attacked)
}

/// One side's [`Reach`] with the pawns standing still.
fn reach(board: &Board, color: Color) -> Reach {
    let pawns = board.pawns();
    let their_pawns = pawns & board.by_color(!color);
    let their_pawn_attacks = pawn_attacks_of(board, !color);
    let mut reach = Reach { checks: pawn_attacks_of(board, color), ..Reach::default() };
    for sq in board.by_color(color) & !pawns {
        let role = board.role_at(sq).expect("an occupied square");
        if role == Role::King {
            // A king never steps into a pawn's attack, and can take only
            // a pawn no other pawn defends.
            let (region, attacked) = flood(role, color, sq, pawns, their_pawn_attacks);
            reach.king |= region;
            reach.king_zone |= attacked;
            reach.takes_pawn |= (attacked & their_pawns & !their_pawn_attacks).any();
        } else {
            let (region, attacked) = flood(role, color, sq, pawns, Bitboard::EMPTY);
            reach.pieces |= region;
            reach.checks |= attacked;
            reach.takes_pawn |= (attacked & their_pawns).any();
        }
    }
    reach
}

/// Step 2: proves the position dead when, with the pawns locked, no pawn
/// can ever be captured or capture, and no king can ever be mated: the
/// enemy can never attack a square of its region, or on each such square
/// it always keeps a flight square.
///
/// Why this is sound: take as invariant "every pawn where it is now, every
/// remaining piece and king within its flood region". A pawn cannot push
/// (it is locked) and cannot capture (no enemy pawn on its attacks, no
/// enemy piece region meets them, and a king never stands on them). No
/// piece or king can take a pawn (`takes_pawn`). En passant needs a pawn
/// that just pushed (none now, none ever), castling needs rights (none).
/// Any other move is a piece or king going along squares free of pawns to
/// a square of its region, perhaps taking a piece, which only removes a
/// unit. So the invariant holds after every legal move, forever; from
/// within their regions the units attack only squares of their `checks`
/// (and a king those of its `king_zone`): see [`never_mated`].
fn static_proof(pos: &Chess) -> bool {
    let board = pos.board();
    if pos.castles().any() || pos.legal_ep_square().is_some() {
        return false;
    }
    let white_pawns = pawn_attacks_of(board, Color::White);
    let black_pawns = pawn_attacks_of(board, Color::Black);
    if (white_pawns & board.pawns() & board.black()).any() || (black_pawns & board.pawns() & board.white()).any() {
        return false;
    }
    let white = reach(board, Color::White);
    let black = reach(board, Color::Black);
    !white.takes_pawn
        && !black.takes_pawn
        && (white_pawns & black.pieces).is_empty()
        && (black_pawns & white.pieces).is_empty()
        && never_mated(&white, &black)
        && never_mated(&black, &white)
}

/// Whether `own`'s king, with the pawns standing still, can never be
/// mated: on every square of its region where it could be in check, it has
/// a neighbour in its region that no enemy unit can ever attack and no own
/// piece can ever stand on, so it always has a legal move there. (Attacks
/// are taken with the pawns as the only obstacles, so a square behind the
/// king on a line of check counts as attacked.)
fn never_mated(own: &Reach, enemy: &Reach) -> bool {
    let covered = enemy.checks | enemy.king_zone | own.pieces;
    (own.king & enemy.checks).into_iter().all(|sq| (attacks::king_attacks(sq) & own.king & !covered).any())
}

/// Steps 1 and 2 only: the cheap proofs the search uses to cut its
/// branches.
fn proved_dead(pos: &Chess) -> bool {
    pos.is_insufficient_material() || (pawns_locked(pos.board()) && static_proof(pos))
}

/// A position as the search tells positions apart: the placement, the side
/// to move and what castling and en passant allow. The move counters are
/// left out: the 50- and 75-move rules only cut sequences short, so
/// ignoring them can only make more mates reachable, never fewer.
#[derive(PartialEq, Eq)]
struct Key {
    board: Board,
    turn: Color,
    castling: Bitboard,
    ep: Option<Square>,
}

impl Key {
    fn of(pos: &Chess) -> Self {
        Self {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling: pos.castles().castling_rights(),
            ep: pos.legal_ep_square(),
        }
    }
}

/// The search's keys hashed as one word folded from their bitboards:
/// hashing is most of a search's work, and the default hasher's
/// protection against crafted collisions buys nothing against positions
/// the search makes itself. Equality still compares whole keys, so a
/// collision costs a probe, never a position skipped.
impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let board = &self.board;
        let words = [
            board.pawns(),
            board.knights(),
            board.bishops(),
            board.rooks(),
            board.queens(),
            board.kings(),
            board.white(),
            self.castling,
        ];
        let mut folded = u64::from(self.turn.is_white()) | self.ep.map_or(0, |sq| u64::from(sq) << 1);
        for word in words {
            folded = (folded.rotate_left(23) ^ u64::from(word)).wrapping_mul(MIX);
        }
        state.write_u64(folded);
    }
}

/// An odd constant (the golden ratio's fraction) whose multiplication
/// spreads every bit of a word into the high ones.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;

/// A hasher that passes on the one word [`Key`] writes, its high bits
/// folded into the low ones that pick a bucket.
#[derive(Default)]
struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used by `Key`; anything else still hashes.
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(MIX);
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }
}

/// Step 3: visits every position reachable from `pos` by legal moves,
/// breadth first (so a short helpmate is met early). A checkmate on the
/// way makes the position alive; the whole reachable set without one makes
/// it dead; more moves than the budget leave it unknown. A position
/// already proved dead (insufficient material, or step 2) is not looked
/// beyond: no mate lies behind it.
fn search(pos: &Chess, budget: Budget) -> Verdict {
    // Sized for a search that spends its budget: growing the table on the
    // way was a sixth of such a search's time.
    let mut seen: HashSet<Key, BuildHasherDefault<WordHasher>> =
        HashSet::with_capacity_and_hasher(budget.moves / 2, BuildHasherDefault::default());
    let mut queue = VecDeque::new();
    let mut played = 0;
    seen.insert(Key::of(pos));
    queue.push_back(pos.clone());
    while let Some(pos) = queue.pop_front() {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            if pos.is_check() {
                return Verdict::Alive;
            }
            continue;
        }
        played += moves.len();
        if played > budget.moves {
            return Verdict::Unknown;
        }
        for m in moves {
            // Only a capture or a pawn move can change what steps 1 and 2
            // see: a quiet piece move stays within the piece's region.
            let reshapes = m.is_capture() || m.role() == Role::Pawn;
            let mut next = pos.clone();
            next.play_unchecked(m);
            if seen.insert(Key::of(&next)) && !(reshapes && proved_dead(&next)) {
                queue.push_back(next);
            }
        }
    }
    Verdict::Dead
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    fn verdict_of(fen: &str) -> Verdict {
        verdict(&pos(fen), Budget::PER_MOVE)
    }

    #[test]
    fn kings_behind_a_locked_chain_are_dead() {
        let fen = "4k3/8/8/p1p1p1p1/P1P1P1P1/8/8/4K3 w - - 0 1";
        assert!(static_proof(&pos(fen)));
        assert_eq!(verdict_of(fen), Verdict::Dead);
    }

    #[test]
    fn bishops_on_the_colour_of_their_own_locked_pawns_are_dead() {
        // Each bishop is walled in behind its own pawns and can never
        // attack an enemy pawn: the classic same-colour blockade.
        let fen = "2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1";
        assert!(static_proof(&pos(fen)));
        assert_eq!(verdict_of(fen), Verdict::Dead);
    }

    #[test]
    fn a_locked_chain_with_a_pawn_capture_is_not_dead() {
        // Every pawn is blocked head-on, but dxe5 (or exd4) opens the board.
        let fen = "4k3/8/8/3pp3/3PP3/8/8/4K3 w - - 0 1";
        assert!(pawns_locked(pos(fen).board()));
        assert!(!static_proof(&pos(fen)));
        assert_ne!(verdict_of(fen), Verdict::Dead);
    }

    #[test]
    fn a_king_that_can_walk_round_the_chain_to_a_pawn_is_not_dead() {
        // The g- and h-files are open: the white king can reach e5 and
        // take it.
        let fen = "4k3/8/8/p1p1p3/P1P1P3/8/8/4K3 w - - 0 1";
        assert!(!static_proof(&pos(fen)));
        assert_ne!(verdict_of(fen), Verdict::Dead);
    }

    #[test]
    fn a_bishop_that_can_reach_an_enemy_pawn_is_not_dead() {
        // The white bishop is on the light squares, the colour of the
        // black pawns: it can take one and free the chain.
        let fen = "4k3/8/8/1p1p1p1p/1P1P1P1P/8/8/3BK3 w - - 0 1";
        assert!(!static_proof(&pos(fen)));
        assert_ne!(verdict_of(fen), Verdict::Dead);
    }

    #[test]
    fn a_reachable_helpmate_is_alive() {
        // Locked pawns, but the black king is shut in its corner by its
        // own pawn: Bb2 is mate.
        let fen = "7k/5K1p/7P/8/8/8/8/2B5 w - - 0 1";
        assert_eq!(verdict_of(fen), Verdict::Alive);
    }

    #[test]
    fn normal_positions_cost_only_the_filter() {
        let start = Chess::default();
        assert!(!pawns_locked(start.board()));
        assert_eq!(verdict(&start, Budget::PER_MOVE), Verdict::Unknown);
    }

    #[test]
    fn insufficient_material_is_dead() {
        assert_eq!(verdict_of("7k/8/8/8/8/8/8/6KB w - - 0 1"), Verdict::Dead);
    }

    #[test]
    fn the_search_runs_again_only_after_a_ply_that_reshapes_the_position() {
        // Locked pawns (that can take each other): only the search decides
        // it, and finds the helpmate Ra8.
        let before = pos("6k1/5ppp/5PPP/8/8/8/R7/4K3 w - - 0 1");
        let walked = pos("6k1/5ppp/5PPP/8/8/8/8/R3K3 b - - 1 1");
        assert_eq!(verdict(&walked, Budget::PER_MOVE), Verdict::Alive);
        // After the rook's quiet move the search is not run again.
        assert!(!reshaped(&before, &walked));
        assert_eq!(verdict_after(Some(&before), &walked, Budget::PER_MOVE), Verdict::Unknown);
        // A game's first position, or a ply that takes, is searched.
        assert_eq!(verdict_after(None, &walked, Budget::PER_MOVE), Verdict::Alive);
        let takes = pos("6k1/5ppp/5PPP/8/8/8/r7/R3K3 w - - 0 1");
        let taken = pos("6k1/5ppp/5PPP/8/8/8/R7/4K3 b - - 0 1");
        assert!(reshaped(&takes, &taken));
        assert_eq!(verdict_after(Some(&takes), &taken, Budget::PER_MOVE), Verdict::Alive);
        // What steps 1 and 2 prove still ends the game after a quiet move.
        let walled = pos("4k3/8/8/p1p1p1p1/P1P1P1P1/8/8/3K4 w - - 0 1");
        let king_walks = pos("4k3/8/8/p1p1p1p1/P1P1P1P1/8/8/4K3 b - - 1 1");
        assert_eq!(verdict_after(Some(&walled), &king_walks, Budget { moves: 0 }), Verdict::Dead);
    }

    #[test]
    fn a_budget_too_small_gives_unknown_never_dead() {
        let fen = "7k/5K1p/7P/8/8/8/8/2B5 w - - 0 1";
        assert_eq!(verdict(&pos(fen), Budget { moves: 3 }), Verdict::Unknown);
    }
}
