//! What the board shows, relative to the game: the rules a board is judged
//! by, each named, tried in a fixed order; the first that explains the
//! board gives the [`Verdict`]. Judging changes nothing (`judge.rs` carries
//! the verdict out).
//!
//! The order is the reconstructor's policy and matters: a result gesture is
//! never read as a move, a new move is looked for before a changed one, and
//! nothing that could still be a piece on its way is decided before the
//! board has settled (`settled = false` stops at [`Reconstructor::unsettled_waits`]).

use shakmaty::{Bitboard, Color, KnownOutcome, Move, Position, Role};

use super::{
    Game, Reconstructor,
    gesture::{occupancy_gesture, result_gesture},
    known::Known,
    matcher::{Found, could_continue, effect, find_move, find_sequences, move_then_opponent},
    occupancy::{Line, shown_capture, sift},
    start::Start,
};
use crate::{
    game::PlyMove,
    sensor::{Cell, Picture},
};

/// What the board shows, relative to the game.
#[derive(Debug)]
pub(super) enum Verdict {
    /// Nothing to do (yet): the board is on its way somewhere.
    Wait,
    /// The board shows the game position.
    InSync,
    /// Both kings on the centre squares.
    Gesture(KnownOutcome),
    /// A new move.
    Make(Move),
    /// A promotion an occupancy board cannot identify.
    MakeUnknownPromotion(Move),
    /// A move that could still be a piece on its way: remembered, not made.
    Seen(Move),
    /// The made move was taken back.
    Retract,
    /// The made move was replaced by this one.
    Amend(Move),
    /// The remembered move, with the opponent's answer on top of it.
    SeenThenAnswer(Move),
    /// Without a clock: the opponent has started, the made move is done.
    CompletePending,
    /// Several moves at once, exactly one way (R10).
    FillIn(Vec<Move>),
    /// Several moves at once, more than one way.
    Ambiguous(Vec<Vec<Move>>),
    /// An occupancy board that can be read more than one way: follow each
    /// reading until the board tells (`occupancy.rs`).
    Follow(Vec<Line>),
    /// The first move shows an occupancy board turned 180° (its start
    /// position looked the same either way).
    TurnBoard,
    /// The opponent answered an illegal move (A.5.2).
    Standing,
    /// A new game set up.
    NewGame(Start),
    /// Nothing explains the board.
    Unexplained,
}

/// The board and the game as every rule sees them.
struct Look<'a> {
    game: &'a Game,
    known: &'a Known,
    picture: &'a Picture,
    /// The squares where the board and the game position differ.
    diff: Bitboard,
    /// Whether the board has been still for `settle` (or a press finished
    /// the move): everything is decided then.
    settled: bool,
    /// A piece of the side to move (or an unidentified one) stands where
    /// the game has none of it: without one, no move can be on the board.
    placed: bool,
    /// The board sees only occupancy.
    occupancy: bool,
}

impl Look<'_> {
    /// Whether every square of `squares` held a piece of the opponent of
    /// `mover` in the game and is empty on the board: the opponent's pieces
    /// in the air.
    fn opponents_lifted(&self, squares: Bitboard, mover: Color) -> bool {
        let board = self.known.pos.board();
        squares.into_iter().all(|sq| self.picture.get(sq) == Cell::Empty && board.color_at(sq) == Some(!mover))
    }
}

impl Reconstructor {
    /// What the board shows; changes nothing.
    pub(super) fn verdict(&self, game: &Game, settled: bool) -> Verdict {
        let (known, picture, diff) = (&game.known, &self.picture, game.diff);
        if diff.is_empty() {
            return Verdict::InSync;
        }
        let mover = known.pos.turn();
        let placed = !(diff & picture.by_color(mover)).is_empty() || !(diff & picture.unknown()).is_empty();
        let look = Look { game, known, picture, diff, settled, placed, occupancy: self.occupancy() };
        // The rules, in order; the first that explains the board decides.
        self.kings_in_the_centre(&look)
            .or_else(|| self.new_move(&look))
            .or_else(|| self.capture_shown_by_occupancy(&look))
            .or_else(|| self.made_move_changed(&look))
            .or_else(|| self.move_under_the_opponents_hand(&look))
            .or_else(|| self.seen_move_answered(&look))
            .or_else(|| self.opponent_started_without_a_clock(&look))
            .or_else(|| self.unsettled_waits(&look))
            .or_else(|| self.move_with_opponents_pieces_in_the_air(&look))
            .or_else(|| self.only_pieces_in_the_air(&look))
            .or_else(|| self.illegal_move_answered(&look))
            .or_else(|| self.start_turned_round(&look))
            .or_else(|| self.several_moves_at_once(&look))
            .or_else(|| self.new_game_set_up(&look))
            .unwrap_or(Verdict::Unexplained)
    }

    /// Both kings on the centre squares stand next to each other, which
    /// no legal position allows: the result gesture, never a move. (An
    /// occupancy board shows it by the squares alone.)
    fn kings_in_the_centre(&self, look: &Look<'_>) -> Option<Verdict> {
        let outcome = if look.occupancy {
            occupancy_gesture(look.picture, look.known.pos.board())
        } else {
            result_gesture(look.picture)
        };
        outcome.map(Verdict::Gesture)
    }

    /// A new move from the game position (one only; or, where the board
    /// cannot tell pieces apart, the one the sensor history leaves).
    fn new_move(&self, look: &Look<'_>) -> Option<Verdict> {
        if !look.placed {
            return None;
        }
        match find_move(look.known, look.picture, look.diff, false) {
            Found::One(m) if look.settled || !could_continue(look.known, m) => Some(Verdict::Make(m)),
            Found::One(m) => Some(Verdict::Seen(m)),
            Found::Several(moves) => self.one_of(look.game, &moves, look.settled),
            Found::None => None,
        }
    }

    /// On an occupancy board a capture shows only its origin emptied: it
    /// is made once the board saw its target emptied and filled again.
    fn capture_shown_by_occupancy(&self, look: &Look<'_>) -> Option<Verdict> {
        if !look.occupancy || look.placed {
            return None;
        }
        self.shown_capture(look.known, look.diff)
    }

    /// The made move was changed or taken back before completion.
    fn made_move_changed(&self, look: &Look<'_>) -> Option<Verdict> {
        let (Some(pending), Some(before)) = (look.game.record.pending(), &look.game.pending.before) else {
            return None;
        };
        let picture = look.picture;
        // The board of the position before differs from the current one
        // only on the squares the made move changed.
        let changed = match pending.mv {
            PlyMove::Legal(m) => effect(&before.pos, m).squares(),
            PlyMove::Illegal(_) => Bitboard::FULL,
        };
        let before_diff = look.diff.without(changed) | (changed & picture.diff(before.pos.board()));
        if before_diff.is_empty() {
            // An occupancy board may have seen moves made since that lead
            // back to the same squares (Rh8 Ke7 Rh7+ Kd6).
            return Some(if look.occupancy {
                self.follow_moves(look.game, false).unwrap_or(Verdict::Retract)
            } else {
                Verdict::Retract
            });
        }
        // A changed move leaves the mover's piece where the position
        // before had none of it.
        if (2..=4).contains(&before_diff.count())
            && !(before_diff & (picture.by_color(pending.mover) | picture.unknown())).is_empty()
            && let Found::One(m) = find_move(before, picture, before_diff, false)
            && (look.settled || !could_continue(before, m))
        {
            return Some(Verdict::Amend(m));
        }
        None
    }

    /// The move is on the board and the opponent's hand is already at
    /// work: the moved piece is not on its way any more. (Once settled, a
    /// board two plies on is filled in by [`Self::several_moves_at_once`]
    /// instead, as not seen move by move.)
    fn move_under_the_opponents_hand(&self, look: &Look<'_>) -> Option<Verdict> {
        if look.settled || !look.placed || look.diff.count() < 3 {
            return None;
        }
        move_then_opponent(look.known, look.picture, look.diff).map(Verdict::Make)
    }

    /// The board showed a move that was left to settle, and now shows the
    /// opponent's answer on top of it.
    fn seen_move_answered(&self, look: &Look<'_>) -> Option<Verdict> {
        let (seen, after) = look.game.pending.seen.as_ref()?;
        let picture = look.picture;
        let after_diff = picture.diff(after.pos.board());
        let mover = look.known.pos.turn();
        let answered = !(after_diff & picture.by_color(!mover)).is_empty()
            && (matches!(find_move(after, picture, after_diff, false), Found::One(_))
                || move_then_opponent(after, picture, after_diff).is_some());
        answered.then_some(Verdict::SeenThenAnswer(*seen))
    }

    /// Without a clock, the opponent starting a move completes the made
    /// one (6.2.1 as rules.md reads it for boards without a clock).
    fn opponent_started_without_a_clock(&self, look: &Look<'_>) -> Option<Verdict> {
        if self.clock.running() {
            return None;
        }
        let pending = look.game.record.pending()?;
        look.opponents_lifted(look.diff, pending.mover).then_some(Verdict::CompletePending)
    }

    /// Before the board has settled, nothing else is decided: what remains
    /// could be a piece still on its way.
    fn unsettled_waits(&self, look: &Look<'_>) -> Option<Verdict> {
        (!look.settled).then_some(Verdict::Wait)
    }

    /// The move is on the board and the opponent has pieces in the air.
    /// (An occupancy board cannot tell whose piece was put down, nor a
    /// capture it did not see from a lifted piece: its readings are
    /// followed by the rules below.)
    fn move_with_opponents_pieces_in_the_air(&self, look: &Look<'_>) -> Option<Verdict> {
        if look.occupancy {
            return None;
        }
        let pos = &look.known.pos;
        let Found::One(m) = find_move(look.known, look.picture, look.diff, true) else { return None };
        look.opponents_lifted(look.diff.without(effect(pos, m).squares()), pos.turn()).then_some(Verdict::Make(m))
    }

    /// Only pieces in the air: a move in progress, however long it takes.
    /// (A capture and recapture on one square can leave this picture too,
    /// but pieces in hand are far likelier, and the next move tells.) On an
    /// occupancy board it is also what a capture shows when the board did
    /// not see the captured piece go: both are followed.
    fn only_pieces_in_the_air(&self, look: &Look<'_>) -> Option<Verdict> {
        if !look.diff.into_iter().all(|sq| look.picture.get(sq) == Cell::Empty) {
            return None;
        }
        Some(if look.occupancy { self.follow_moves(look.game, true).unwrap_or(Verdict::Wait) } else { Verdict::Wait })
    }

    /// The opponent answered an illegal move: it stands (A.5.2).
    fn illegal_move_answered(&self, _look: &Look<'_>) -> Option<Verdict> {
        self.standing_reply().map(|_| Verdict::Standing)
    }

    /// An occupancy board's start position looks the same turned 180°:
    /// the first moves tell which way round it is.
    fn start_turned_round(&self, look: &Look<'_>) -> Option<Verdict> {
        if !look.game.readings.orientation_open || !look.game.record.plies.is_empty() {
            return None;
        }
        self.orientation(look.game)
    }

    /// Several moves at once: fast play, or moves made while the board was
    /// not heard (R10). Not after a completed illegal move until the board
    /// is restored: legal moves that happen to lead to the same board would
    /// hide it.
    fn several_moves_at_once(&self, look: &Look<'_>) -> Option<Verdict> {
        let game = look.game;
        // On an occupancy board every reading is followed (`occupancy.rs`);
        // a square whose piece was replaced shows no difference there, so
        // both sides' squares need not differ.
        if look.occupancy
            && !game.illegal_unresolved
            && let Some(verdict) = self.follow_moves(game, true)
        {
            return Some(verdict);
        }
        // Two or more plies move pieces of both colours, so a board where
        // only one side's pieces differ (castling half done, a piece put
        // down on a wrong square) needs no search.
        let board = look.known.pos.board();
        let both_sides = Color::ALL
            .into_iter()
            .all(|color| !(look.diff & (board.by_color(color) | look.picture.by_color(color))).is_empty());
        if !both_sides || game.illegal_unresolved || look.occupancy {
            return None;
        }
        let mut sequences = find_sequences(look.known, look.picture, self.config.fill_in_plies, None);
        // Lines that differ only before what the board showed (f3 gxf3 or
        // f4 gxf3 e.p.): the one through the position seen on the board.
        if let (true, Some((seen, _))) = (sequences.len() > 1, &game.pending.seen) {
            let through = find_sequences(look.known, look.picture, self.config.fill_in_plies, Some(*seen));
            if through.len() == 1 {
                sequences = through;
            }
        }
        match sequences.len() {
            0 => None,
            1 => Some(Verdict::FillIn(sequences.pop().expect("one sequence"))),
            _ => Some(Verdict::Ambiguous(sequences)),
        }
    }

    /// A new game set up on the board.
    fn new_game_set_up(&self, look: &Look<'_>) -> Option<Verdict> {
        if look.game.record.plies.len() < 2 && !look.game.wrong_start {
            return None;
        }
        self.start.find(&self.picture_as_reported()).map(Verdict::NewGame)
    }
}

/// What an occupancy board shows, judged out of line: boards that identify
/// pieces never come here, and their judging stays as small as it was.
impl Reconstructor {
    /// Several moves look alike on the board (it cannot tell some pieces
    /// apart): the one the sensor history leaves, or every reading to
    /// follow once the board has settled.
    #[cold]
    #[inline(never)]
    fn one_of(&self, game: &Game, moves: &[Move], settled: bool) -> Option<Verdict> {
        let known = &game.known;
        if !self.occupancy() {
            return unknown_promotion(moves).filter(|_| settled).map(Verdict::MakeUnknownPromotion);
        }
        match sift(known, &self.changes(), moves, self.last_began())[..] {
            // The new piece is not seen until the board has settled.
            [m] if m.is_promotion() => settled.then_some(Verdict::MakeUnknownPromotion(m)),
            [m] if settled || !could_continue(known, m) => Some(Verdict::Make(m)),
            [m] => Some(Verdict::Seen(m)),
            _ if settled => self.follow_moves(game, false),
            _ => None,
        }
    }

    /// A capture the board saw made while only pieces are lifted.
    #[cold]
    #[inline(never)]
    fn shown_capture(&self, known: &Known, diff: Bitboard) -> Option<Verdict> {
        let m = shown_capture(known, &self.picture, diff, &self.changes(), self.last_began())?;
        Some(if m.is_promotion() { Verdict::MakeUnknownPromotion(m) } else { Verdict::Make(m) })
    }

    /// The readings of the board from the game position, to follow: if
    /// any has a move (or, with `in_air_too`, if there are several, one of
    /// them a piece still in the hand).
    #[cold]
    #[inline(never)]
    fn follow_moves(&self, game: &Game, in_air_too: bool) -> Option<Verdict> {
        let lines = self.lines_from_game(game, &self.picture, &self.changes());
        let moved = lines.iter().any(|line| !line.steps.is_empty());
        (moved || (in_air_too && lines.len() > 1)).then_some(Verdict::Follow(lines))
    }

    /// Before the first move of a board whose start position looks the
    /// same turned 180°: whether the board shows moves only when turned.
    #[cold]
    #[inline(never)]
    fn orientation(&self, game: &Game) -> Option<Verdict> {
        let turned = self.picture.rotated();
        if self.lines_from_game(game, &turned, &self.changes().rotated()).is_empty() {
            return None;
        }
        // Both ways (1.e4 e5 is 1.d4 d5 turned): the next move tells.
        let here = self.lines_from_game(game, &self.picture, &self.changes());
        Some(if here.is_empty() { Verdict::TurnBoard } else { Verdict::Wait })
    }
}

/// When several moves match because the board cannot tell pieces apart and
/// they are the same promotion to different pieces: the queen promotion.
fn unknown_promotion(moves: &[Move]) -> Option<Move> {
    let first = moves.first()?;
    let same = moves.iter().all(|m| m.from() == first.from() && m.to() == first.to() && m.is_promotion());
    if !same {
        return None;
    }
    moves.iter().copied().find(|m| m.promotion() == Some(Role::Queen))
}
