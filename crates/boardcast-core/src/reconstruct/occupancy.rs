//! Boards that see only which squares are occupied (Sentio format, and any
//! picture with unidentified pieces). A quiet move changes two squares, but
//! a capture changes only its origin: the target is occupied before and
//! after. So the final picture alone may fit several captures by one piece,
//! or that piece still being in the hand. What tells them apart is what the
//! board saw on the way:
//!
//! - **Evidence.** A square that a move leaves occupied by another piece
//!   (a capture's target; the squares king and rook swap in Chess960
//!   castling) must have been emptied and filled again, the filling after
//!   the arriving piece was lifted. A move whose every such square was seen
//!   so is *shown*, and rules out the moves that look the same on the board
//!   but were not shown. A target seen empty only before the capturing piece
//!   was lifted (a sensor flicker while the player thought) proves nothing.
//! - **Lines.** When nothing tells them apart (the captured piece knocked
//!   off its square by the capturing one, or an empty square the board's
//!   scan missed), each reading is kept as a line of moves from the game
//!   position and followed through the next still pictures until the board
//!   rules out all but one: the piece moves on from the square it went to,
//!   the opponent captures there, and so on. Moves that every line agrees
//!   on go on the record as soon as they are decided; nothing is guessed
//!   (rules.md R10): what stays open is alerted, with the readings. A line
//!   whose board still shows pieces lifted stays open while a hand may hold
//!   them; once the board has been still for `quiet_completion` (or the
//!   mover pressed the clock) it gives way to lines the board shows
//!   exactly.
//! - **Order.** Between two still pictures several moves may have been
//!   made, and several sequences of moves end on the same board. A move in
//!   a line must have been seen being made after the one before it: its
//!   piece seen leaving its square, the squares it fills seen filled, the
//!   previous move's pieces down before it began (see `in_order`). That
//!   rules out the same moves in another order, a piece that went and came
//!   back, a pawn taken en passant that was never seen on its square. Only
//!   a board that has stood unexplained for `out_of_sync_after` is read
//!   once more with a reply begun in the very report that showed the move
//!   before it done (a report lost in between), before it is called out of
//!   sync.
//!
//! A promotion's new piece cannot be seen at all: only the queen is
//! followed, and recording it raises `PromotionUnknown` (the operator can
//! correct it).
//!
//! Only pictures with unidentified pieces come here: boards that identify
//! pieces never need it, and pay nothing for it.

use std::time::Duration;

use shakmaty::{Bitboard, CastlingSide, Move, Position, Role, Square};

use super::{
    Game, Reconstructor, Source,
    known::Known,
    matcher::{Found, effect, find_move, origins},
    touch::Changes,
};
use crate::{
    alert::{AlertKind, side_name},
    sensor::Picture,
    time::Timestamp,
};

/// The most lines followed at once: far more than the board ever leaves
/// open in practice, and a bound on the work per picture.
const MAX_LINES: usize = 64;

/// How many readings an alert names.
const READINGS: usize = 6;

/// How much earlier than the lift it follows a piece may be seen put down:
/// a board reads its squares one after another, so a lift and the
/// placement after it can come in one report, or the placement in the
/// report before, or two before when a damaged report was lost between
/// (a Sentio-format board reports ten times a second).
const SCAN: Duration = Duration::from_millis(300);

/// `t`, less a scan of the board.
fn scan_before(t: Option<Timestamp>) -> Option<Timestamp> {
    t.map(|t| Timestamp::from_micros(t.as_micros().saturating_sub(SCAN.as_micros() as u64)))
}

/// A way of reading the board since the game position: moves and the
/// position they lead to.
#[derive(Clone, Debug)]
pub(super) struct Line {
    /// The moves, in order.
    pub(super) steps: Vec<Step>,
    /// The position after them.
    end: Known,
    /// The board shows `end` with pieces lifted (still in a hand, perhaps).
    in_air: bool,
    /// What the board saw of the last move.
    previous: Previous,
}

/// One move of a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Step {
    /// The move.
    pub(super) m: Move,
    /// The board showed the position after it (as far as occupancy
    /// tells), rather than only a later one.
    pub(super) seen: bool,
    /// What the board saw of it.
    pub(super) seen_as: Previous,
    /// How it looks on the board: the squares it empties and fills.
    looks: (Bitboard, Bitboard),
    /// The board saw the pieces it replaces taken off and its piece put
    /// there (see [`shown`]).
    shown: bool,
}

/// What the board saw of a move, for judging the moves after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Previous {
    /// When its piece left its square: the next move began later.
    began: Option<Timestamp>,
    /// The squares it filled.
    filled: Bitboard,
}

impl Previous {
    /// What the board saw of `m`, made from `pos` after `self`.
    pub(super) fn then(self, changes: &Changes, pos: &shakmaty::Chess, m: Move) -> Self {
        Self { began: began_at(changes, m, self.began).or(self.began), filled: signature(pos, m).1 }
    }
}

/// What an occupancy board needs to read the game, beyond the game itself.
#[derive(Debug, Default)]
pub(super) struct Readings {
    /// The board read more than one way: the readings followed until the
    /// board tells which is right.
    pub(super) lines: Option<Box<Lines>>,
    /// The start position looked the same turned 180°: the first move
    /// tells which way round the board is.
    pub(super) orientation_open: bool,
    /// What the board saw of the last move on the record: the moves after
    /// it are judged against it.
    pub(super) previous: Previous,
}

/// Lines being followed while the board cannot be read one way.
#[derive(Debug)]
pub(super) struct Lines {
    /// The lines still possible, in a stable order. (When the board will
    /// have been still long enough that no piece is still in a hand is the
    /// game's `pending.quiet_at`.)
    lines: Vec<Line>,
    /// The arbiter was told the board cannot be read one way.
    alerted: bool,
    /// When the lines began (the alert's evidence starts there).
    since: Timestamp,
}

impl Line {
    /// The game position, before any move; `previous` is the last move on
    /// the record.
    fn start(known: Known, previous: Previous) -> Self {
        Self { steps: Vec::new(), end: known, in_air: false, previous }
    }

    fn extended(&self, moves: &[Move], seen: bool, in_air: bool, changes: &Changes) -> Self {
        let mut steps = self.steps.clone();
        let mut end = self.end.clone();
        let mut previous = self.previous;
        for &m in moves {
            let (looks, shown) = (signature(&end.pos, m), shown(changes, &end.pos, m, previous.began));
            previous = previous.then(changes, &end.pos, m);
            end = end.after(m);
            steps.push(Step { m, seen, seen_as: previous, looks, shown });
        }
        Self { steps, end, in_air, previous }
    }
}

/// When `m` began, the move before it having begun at `after`: when the
/// board first saw its piece (or the first of king and rook) leave its
/// square since then. (A sensor flickering there while the player thought
/// makes it a little early; a later emptying may be another piece
/// crossing the square after this one left.)
fn began_at(changes: &Changes, m: Move, after: Option<Timestamp>) -> Option<Timestamp> {
    let lifted = origins(m).into_iter().filter_map(|sq| changes.emptied_since(sq, after)).min();
    // The new piece may be put on the promotion square before the pawn
    // is taken off (4.6.2).
    let new_piece = m.is_promotion().then(|| changes.filled_since(m.to(), after)).flatten();
    lifted.map(|lifted| new_piece.map_or(lifted, |placed| placed.min(lifted)))
}

/// Whether the board saw `m` being made after a move that began at
/// `after`: every square it empties seen emptied since then, every square
/// it fills seen filled. Between two still boards several moves may have
/// been made, and several sequences of moves may end on the same board;
/// only the squares seen changing on the way tell them apart: the same
/// moves in another order (the pieces left their squares in a different
/// order), a pawn pushed two squares and taken en passant rather than
/// pushed one and taken (its square was never seen occupied), a piece that
/// went somewhere and came back (it was not seen leaving).
///
/// `same_report` accepts the previous move's pieces first seen down in the
/// report that shows this move begun: what a board shows when the report
/// between was lost (a damaged line) and the reply was quick. Only tried
/// once the board has stood unexplained for `out_of_sync_after`, and then
/// only where nothing else explains it, not even pieces in the air: while
/// the hands move, a picture half made must not start a reading.
fn in_order(changes: &Changes, pos: &shakmaty::Chess, m: Move, previous: Previous, same_report: bool) -> bool {
    let after = previous.began;
    let Some(began) = began_at(changes, m, after) else { return false };
    let (emptied, filled) = signature(pos, m);
    // Pieces put down by the previous move may have been seen a scan
    // before its lift; this move's, after it.
    let placed_after = scan_before(after);
    // A piece the previous move put down and this one captures was seen
    // arriving before the capturing piece left its square (not in the same
    // report of the board: no hand is that quick).
    let victim_arrived = |(square, _): (Square, Square)| {
        !previous.filled.contains(square) || changes.filled_since(square, placed_after).is_some_and(|t| t < began)
    };
    // The previous move's pieces were put down before this one began, in
    // an earlier report of the board: a player waits for the opponent's
    // move (a sliding piece seen on a square and then further on is one
    // move, not two with another between them).
    let down_before = |t: Timestamp| t < began || (same_report && t == began);
    let previous_done =
        || previous.filled.into_iter().all(|sq| changes.filled_since(sq, placed_after).is_some_and(down_before));
    // This move's pieces were put down once it began (seen a scan early
    // at most).
    let placed = |sq: Square| changes.filled_since(sq, scan_before(Some(began))).is_some();
    emptied.into_iter().all(|sq| changes.emptied_since(sq, after).is_some())
        && filled.into_iter().all(placed)
        && replaced(pos, m).into_iter().flatten().all(victim_arrived)
        && previous_done()
}

/// The squares `m` leaves occupied by another piece than before, each with
/// the square the arriving piece comes from.
fn replaced(pos: &shakmaty::Chess, m: Move) -> [Option<(Square, Square)>; 2] {
    match m {
        Move::Normal { from, to, capture: Some(_), .. } => [Some((to, from)), None],
        Move::Castle { king, rook } => {
            let turn = pos.turn();
            let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
            let king_lands_on_rook = (side.king_to(turn) == rook).then_some((rook, king));
            let rook_lands_on_king = (side.rook_to(turn) == king).then_some((king, rook));
            [king_lands_on_rook, rook_lands_on_king]
        }
        _ => [None, None],
    }
}

/// Whether the board saw every square `m` replaces emptied during the move
/// (since the previous move began, at `after`) and filled again after the
/// arriving piece left its square, without standing still in between: one
/// motion of the hands. (Once the board has stood still with the piece
/// lifted, it may have captured unseen already, and a square then emptied
/// and filled may be a sensor flickering while the opponent thinks, or the
/// piece still in the hand capturing there: both stay possible.)
fn shown(changes: &Changes, pos: &shakmaty::Chess, m: Move, after: Option<Timestamp>) -> bool {
    let mut any = false;
    for (square, origin) in replaced(pos, m).into_iter().flatten() {
        let emptied = changes.emptied_since(square, after);
        let lifted = changes.emptied_since(origin, after);
        match (emptied, changes.filled(square), lifted) {
            (Some(emptied), Some(filled), Some(lifted))
                if filled >= lifted && filled >= emptied && !changes.still_between(lifted, filled) =>
            {
                any = true;
            }
            _ => return false,
        }
    }
    any
}

/// How `m` changes the occupancy of the board: the squares it empties and
/// the squares it fills. Moves alike in this look the same on the board.
fn signature(pos: &shakmaty::Chess, m: Move) -> (Bitboard, Bitboard) {
    let occupied = pos.board().occupied();
    let (mut emptied, mut filled) = (Bitboard::EMPTY, Bitboard::EMPTY);
    for &(square, piece) in effect(pos, m).cells() {
        match (occupied.contains(square), piece.is_some()) {
            (true, false) => emptied.add(square),
            (false, true) => filled.add(square),
            _ => {}
        }
    }
    (emptied, filled)
}

/// A promotion to anything but a queen: the board cannot tell the new
/// piece, and the queen stands for all of them.
fn minor_promotion(m: Move) -> bool {
    m.promotion().is_some_and(|role| role != Role::Queen)
}

/// The moves that remain of `moves` (legal in `known`, the move before
/// them begun at `after`) once the board's history has been heard: a move
/// that was not shown goes when another that looks the same on the board
/// was; of promotions, only the queen.
pub(super) fn sift(known: &Known, changes: &Changes, moves: &[Move], after: Option<Timestamp>) -> Vec<Move> {
    let pos = &known.pos;
    let shown: Vec<(Move, (Bitboard, Bitboard))> =
        moves.iter().copied().filter(|&m| shown(changes, pos, m, after)).map(|m| (m, signature(pos, m))).collect();
    moves
        .iter()
        .copied()
        .filter(|&m| !minor_promotion(m))
        .filter(|&m| {
            shown.is_empty()
                || shown.iter().any(|&(s, _)| s == m)
                || !shown.iter().any(|&(_, sig)| sig == signature(pos, m))
        })
        .collect()
}

/// The move the board shows with evidence while only pieces are lifted: a
/// capture whose target was seen emptied and filled after the capturing
/// piece was lifted, and nothing else that looks the same.
pub(super) fn shown_capture(
    known: &Known,
    picture: &Picture,
    diff: Bitboard,
    changes: &Changes,
    after: Option<Timestamp>,
) -> Option<Move> {
    let moves = match find_move(known, picture, diff, false) {
        Found::None => return None,
        Found::One(m) => vec![m],
        Found::Several(moves) => moves,
    };
    match sift(known, changes, &moves, after)[..] {
        [m] if shown(changes, &known.pos, m, after) => Some(m),
        _ => None,
    }
}

/// The lines that go on from `lines` to explain `picture`: each line whose
/// end the board shows (exactly, or with pieces lifted), and each line
/// extended by the fewest moves (up to `max_plies`) after which the board
/// looks as it does, exactly or with pieces lifted (in a hand) besides.
///
/// With `quick_replies`, a line nothing else explains is also extended by
/// moves whose previous move's pieces were first seen down in the report
/// that shows them begun (see `in_order`).
fn advance(lines: &[Line], picture: &Picture, changes: &Changes, max_plies: usize, quick_replies: bool) -> Vec<Line> {
    let mut next = Vec::new();
    for line in lines {
        let diff = picture.diff(line.end.pos.board());
        if diff.is_empty() {
            add(&mut next, Line { in_air: false, ..line.clone() });
            continue;
        }
        let mut sequences = sequences(&line.end, picture, changes, max_plies, (line.previous, false));
        // Pieces lifted since the line's last move began, unless one of
        // them was seen to capture.
        let captured = |(moves, _): &(Vec<Move>, bool)| shown(changes, &line.end.pos, moves[0], line.previous.began);
        let lifted = diff.into_iter().all(|sq| !picture.get(sq).is_occupied());
        let in_air = lifted && lifted_since(changes, diff, line.previous.began) && !sequences.iter().any(captured);
        if in_air {
            add(&mut next, Line { in_air: true, ..line.clone() });
        } else if sequences.is_empty() && quick_replies {
            // Nothing else explains the board: perhaps a quick reply seen
            // in the report that showed the move before it done (the
            // report between was lost).
            sequences = self::sequences(&line.end, picture, changes, max_plies, (line.previous, true));
        }
        for (moves, in_air) in sequences {
            add(&mut next, line.extended(&moves, moves.len() == 1, in_air, changes));
        }
    }
    prefer_shown(&mut next);
    next
}

/// Drops the lines that another outdoes where they part: the same look on
/// the board, but the other's move was shown and this one's not (the board
/// saw a piece taken off and replaced where this line has nothing happen).
fn prefer_shown(lines: &mut Vec<Line>) {
    let outdone = |line: &Line| {
        lines.iter().any(|other| {
            let parted = line.steps.iter().zip(&other.steps).find(|(a, b)| a.m != b.m);
            parted.is_some_and(|(mine, theirs)| mine.looks == theirs.looks && theirs.shown && !mine.shown)
        })
    };
    let keep: Vec<bool> = lines.iter().map(|line| !outdone(line)).collect();
    let mut keep = keep.into_iter();
    lines.retain(|_| keep.next().unwrap_or(true));
}

/// Adds a line unless one with the same moves is there already.
fn add(lines: &mut Vec<Line>, line: Line) {
    let same = |other: &Line| other.steps.iter().map(|s| s.m).eq(line.steps.iter().map(|s| s.m));
    if lines.len() < MAX_LINES && !lines.iter().any(same) {
        lines.push(line);
    }
}

/// The shortest sequences of one to `max_plies` moves from `known`, every
/// move seen being made, after which the board looks like `picture`, and
/// those one move longer; each with whether pieces are lifted besides (in
/// which case longer ones are looked for too, up to the first that the
/// board shows exactly).
fn sequences(
    known: &Known,
    picture: &Picture,
    changes: &Changes,
    max_plies: usize,
    (previous, same_report): (Previous, bool),
) -> Vec<(Vec<Move>, bool)> {
    let mut found = Vec::new();
    let mut longest = max_plies;
    for plies in 1..=max_plies {
        if plies > longest {
            break;
        }
        search(known, picture, changes, (plies, previous, same_report), &mut Vec::new(), &mut found);
        if longest == max_plies && found.iter().any(|(_, in_air)| !in_air) {
            // One ply more may end on the same board too, with the other
            // side to move (O-O Be3 Kh8 looks like Kf8 Be3 when the king
            // went on to h8): the shortest is not always right, so both
            // are followed until the next move tells.
            longest = plies + 1;
        }
    }
    found
}

/// `remaining` moves, the first after `previous`.
fn search(
    known: &Known,
    picture: &Picture,
    changes: &Changes,
    (remaining, previous, same_report): (usize, Previous, bool),
    line: &mut Vec<Move>,
    found: &mut Vec<(Vec<Move>, bool)>,
) {
    // A move changes at most four squares (castling); a few more may be
    // lifted.
    if found.len() >= MAX_LINES || picture.diff(known.pos.board()).count() > 4 * remaining + 4 {
        return;
    }
    // Only moves the board saw being made: few, so the search stays small
    // however many moves it spans.
    let moves: Vec<Move> = known.moves().filter(|&m| in_order(changes, &known.pos, m, previous, same_report)).collect();
    for m in sift(known, changes, &moves, previous.began) {
        let next = known.after(m);
        line.push(m);
        if remaining > 1 {
            let previous = previous.then(changes, &known.pos, m);
            search(&next, picture, changes, (remaining - 1, previous, same_report), line, found);
        } else if picture.diff(next.pos.board()).is_empty() {
            found.push((line.clone(), false));
        } else if answer_begun(&known.pos, m, &next, picture)
            && lifted_since(changes, picture.diff(next.pos.board()), began_at(changes, m, previous.began))
        {
            found.push((line.clone(), true));
        }
        line.pop();
    }
}

/// Whether every piece missing from `squares` left it since `after`: a
/// piece is in a hand only while its side is moving (or, the opponent's,
/// being captured), not through earlier moves.
fn lifted_since(changes: &Changes, squares: Bitboard, after: Option<Timestamp>) -> bool {
    squares.into_iter().all(|sq| changes.emptied_since(sq, after).is_some())
}

/// Whether the board shows `after` (reached by `m` from `before`) with
/// pieces lifted by the side now to move: its own, or pieces it can
/// capture (the piece `m` put down among them). A piece of the side that
/// made `m` lifted besides, that nothing can capture, would be a second
/// move of that side.
fn answer_begun(before: &shakmaty::Chess, m: Move, after: &Known, picture: &Picture) -> bool {
    let board = after.pos.board();
    let occupied = board.occupied();
    if !picture.occupied().is_subset(occupied) {
        return false;
    }
    let lifted = occupied.without(picture.occupied()).without(board.by_color(after.pos.turn()));
    let (_, filled) = signature(before, m);
    let lifted = lifted.without(filled);
    lifted.is_empty()
        || lifted.is_subset(after.moves().filter(|m| m.is_capture()).map(|m| m.to()).collect::<Bitboard>())
}

/// How many moves the lines share from their start.
fn agreed(lines: &[Line]) -> usize {
    let Some((first, others)) = lines.split_first() else { return 0 };
    let mut n = first.steps.len();
    for line in others {
        n = n.min(first.steps.iter().zip(&line.steps).take_while(|(a, b)| a.m == b.m).count());
    }
    n
}

impl Reconstructor {
    /// What the sensor log says about the squares.
    pub(super) fn changes(&self) -> Changes {
        self.log.changes(self.config.settle)
    }

    /// Whether the board is read from occupancy: some piece on it is
    /// unidentified.
    pub(super) fn occupancy(&self) -> bool {
        !self.picture.unknown().is_empty()
    }

    /// The most moves between two still boards that lines are extended
    /// by: a capture the board does not see leaves no still board of its
    /// own, so one more than `fill_in_plies`.
    fn line_plies(&self) -> usize {
        self.config.fill_in_plies + 1
    }

    /// When the last move on the record began, as the board saw it.
    pub(super) fn last_began(&self) -> Option<Timestamp> {
        self.phase.game()?.readings.previous.began
    }

    /// The lines from the game position that explain `picture`.
    pub(super) fn lines_from_game(&self, game: &Game, picture: &Picture, changes: &Changes) -> Vec<Line> {
        let start = Line::start(game.known.clone(), game.readings.previous);
        advance(&[start], picture, changes, self.line_plies(), false)
    }

    /// The board can be read more than one way: follow every reading.
    pub(super) fn follow_lines(&mut self, now: Timestamp, lines: Vec<Line>) {
        let quiet = self.config.quiet_completion;
        let Some(game) = self.phase.game_mut() else { return };
        game.pending.seen = None;
        game.unexplained_since = None;
        game.pending.quiet_at = Some(now + quiet);
        game.readings.lines = Some(Box::new(Lines { lines, alerted: false, since: now }));
        self.decide_lines(now);
    }

    /// Whether lines are being followed.
    pub(super) fn following_lines(&self) -> bool {
        self.phase.playing().is_some_and(|p| p.readings.lines.is_some())
    }

    /// The board has settled while lines are followed: take it into each.
    pub(super) fn judge_lines(&mut self, now: Timestamp) {
        let changes = self.changes();
        let (max_plies, quiet) = (self.line_plies(), self.config.quiet_completion);
        let Some(game) = self.phase.game_mut() else { return };
        let Some(lines) = game.readings.lines.as_mut() else { return };
        let next = advance(&lines.lines, &self.picture, &changes, max_plies, false);
        if next.is_empty() {
            // A move half made (the king put down before the rook is
            // lifted), or something else: the lines wait for the board.
            return self.lines_unexplained(now);
        }
        lines.lines = next;
        game.pending.quiet_at = Some(now + quiet);
        self.back_in_sync(now);
        self.decide_lines(now);
    }

    /// The board has stood unexplained for `out_of_sync_after`: before it
    /// is published out of sync, one more reading, allowing a reply so
    /// quick that the board showed it begun in the same report as the move
    /// before it done (the report between them lost, a damaged line).
    /// Whether that explained the board.
    pub(super) fn quick_reply_lines(&mut self, now: Timestamp) -> bool {
        if !self.occupancy() {
            return false;
        }
        let (changes, max_plies, quiet) = (self.changes(), self.line_plies(), self.config.quiet_completion);
        let Some(game) = self.phase.game_mut() else { return false };
        let following = game.readings.lines.is_some();
        let from = match &game.readings.lines {
            Some(lines) => lines.lines.clone(),
            None => vec![Line::start(game.known.clone(), game.readings.previous)],
        };
        let next = advance(&from, &self.picture, &changes, max_plies, true);
        if next.is_empty() || (!following && next.iter().all(|line| line.steps.is_empty())) {
            return false;
        }
        match game.readings.lines.as_mut() {
            Some(lines) => {
                lines.lines = next;
                game.pending.quiet_at = Some(now + quiet);
                self.back_in_sync(now);
                self.decide_lines(now);
            }
            None => self.follow_lines(now, next),
        }
        true
    }

    /// The board has been still for `quiet_completion`: no piece is in a
    /// hand any more, so the lines that need one give way.
    pub(super) fn lines_quiet(&mut self, now: Timestamp) {
        let Some(lines) = self.phase.game_mut().and_then(|p| p.readings.lines.as_mut()) else { return };
        prefer(&mut lines.lines, |line| !line.in_air);
        self.decide_lines(now);
        self.alert_lines(now);
    }

    /// `by` pressed the clock: their move is finished, so the lines in
    /// which they have not moved give way.
    pub(super) fn lines_pressed(&mut self, now: Timestamp, by: shakmaty::Color) {
        let Some(lines) = self.phase.game_mut().and_then(|p| p.readings.lines.as_mut()) else { return };
        prefer(&mut lines.lines, |line| line.end.pos.turn() != by);
        self.decide_lines(now);
    }

    /// Records the moves every line agrees on; stops following when one
    /// line is left.
    fn decide_lines(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        let Some(lines) = game.readings.lines.as_mut() else { return };
        let agreed = agreed(&lines.lines);
        let steps: Vec<Step> = lines.lines[0].steps[..agreed].to_vec();
        for line in &mut lines.lines {
            line.steps.drain(..agreed);
        }
        if lines.lines.len() == 1 {
            game.readings.lines = None;
        } else if agreed > 0 {
            // What is left open is a new question for the arbiter.
            lines.alerted = false;
            lines.since = now;
        }
        self.record_steps(now, &steps);
        // A move recorded resets the quiet time (with a clock, to nothing):
        // lines still open want it.
        let quiet = now + self.config.quiet_completion;
        if let Some(game) = self.phase.game_mut().filter(|p| agreed > 0 && p.readings.lines.is_some()) {
            game.pending.quiet_at = Some(quiet);
        }
        // Far behind the board: tell the arbiter.
        let lagging = self
            .phase
            .game()
            .and_then(|p| p.readings.lines.as_ref())
            .is_some_and(|l| l.lines.iter().all(|line| line.steps.len() >= self.config.fill_in_plies));
        if lagging {
            self.alert_lines(now);
        }
    }

    /// Puts decided moves on the record.
    fn record_steps(&mut self, now: Timestamp, steps: &[Step]) {
        for (i, step) in steps.iter().enumerate() {
            let how = if step.seen { Source::OnBoard } else { Source::Inferred };
            if step.m.is_promotion() {
                self.make_unknown_promotion(now, step.m, how);
            } else {
                self.make_move(now, step.m, how);
            }
            if self.step_recorded(step.seen_as) {
                return;
            }
            if i + 1 < steps.len() {
                self.complete_last(now, None);
            }
        }
    }

    /// A step of the lines went on the record: what the board saw of it
    /// orders the moves after it. Whether it ended the game (and with it
    /// the lines).
    fn step_recorded(&mut self, seen_as: Previous) -> bool {
        let over = self.phase.is_over();
        let Some(game) = self.phase.game_mut() else { return true };
        game.readings.previous = seen_as;
        if over {
            game.readings.lines = None;
        }
        over
    }

    /// Tells the arbiter (once) that the board can be read more than one
    /// way.
    fn alert_lines(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        let Some(lines) = game.readings.lines.as_mut().filter(|l| !l.alerted && l.lines.len() > 1) else { return };
        lines.alerted = true;
        let since = lines.since;
        let pos = game.known.pos.clone();
        let mut readings: Vec<String> = lines
            .lines
            .iter()
            .take(READINGS)
            .map(|line| {
                let moves: Vec<Move> = line.steps.iter().map(|s| s.m).collect();
                let text = super::describe::describe_line(&pos, &moves);
                let text = if text.is_empty() { "no move yet".to_owned() } else { text };
                if line.in_air { format!("{text} (pieces in the air)") } else { text }
            })
            .collect();
        if lines.lines.len() > READINGS {
            readings.push(format!("{} more", lines.lines.len() - READINGS));
        }
        let to_move = pos.turn();
        self.alert(
            now,
            AlertKind::AmbiguousMoves,
            Some(to_move),
            format!(
                "the board shows only which squares are occupied, and its moves since {} was to move can be read more than one way ({}); waiting for the board, or for the operator to enter the first move of the right reading (`moves`)",
                side_name(to_move),
                readings.join(" or ")
            ),
            Vec::new(),
            since,
        );
    }

    /// The operator entered `moves` while lines are followed: the lines
    /// that begin with them are how the board is to be read. The moves are
    /// recorded as entered, then every move the remaining lines agree on
    /// (the board showed those after them), so one move names the right
    /// reading of a whole stretch of play. `None`, and nothing changed,
    /// when no line begins with `moves`.
    pub(super) fn enter_on_lines(&mut self, now: Timestamp, moves: &[Move]) -> Option<String> {
        let quiet = self.config.quiet_completion;
        let game = self.phase.game_mut()?;
        let lines = game.readings.lines.as_mut()?;
        let n = moves.len();
        let begins = |line: &Line| line.steps.len() >= n && line.steps.iter().zip(moves).all(|(s, m)| s.m == *m);
        if !lines.lines.iter().any(begins) {
            return None;
        }
        lines.lines.retain(begins);
        let entered: Vec<Step> = lines.lines[0].steps[..n].to_vec();
        for line in &mut lines.lines {
            line.steps.drain(..n);
        }
        // What is left open, if anything, is a new question.
        lines.alerted = false;
        lines.since = now;
        game.pending.quiet_at = Some(now + quiet);
        let before = game.record.plies.len();
        for step in &entered {
            self.make_move(now, step.m, Source::Entered);
            self.complete_last(now, None);
            if self.step_recorded(step.seen_as) {
                break;
            }
        }
        let entered_at = self.phase.game().map_or(before, |p| p.record.plies.len());
        self.decide_lines(now);
        // Still open further on: the operator is asked about that now,
        // while looking at the board, with the readings.
        self.alert_lines(now);
        // The game the moves went into (no game, no reply: never so).
        let game = self.phase.game()?;
        let then: Vec<String> = game.record.plies[entered_at..].iter().map(|p| p.san.to_string()).collect();
        let sans: Vec<String> = game.record.plies[before..entered_at].iter().map(|p| p.san.to_string()).collect();
        let mut reply = format!("entered {}", sans.join(" "));
        if !then.is_empty() {
            reply.push_str(&format!("; then, as the board showed: {}", then.join(" ")));
        }
        if game.readings.lines.is_some() {
            reply.push_str("; the board can still be read more than one way after that");
        }
        Some(reply)
    }

    /// Stops following lines (the operator changed the game).
    pub(super) fn drop_lines(&mut self) {
        if let Some(game) = self.phase.game_mut() {
            game.readings.lines = None;
        }
    }
}

/// Keeps the lines that satisfy `wanted`, if any does.
fn prefer(lines: &mut Vec<Line>, wanted: impl Fn(&Line) -> bool) {
    if lines.iter().any(&wanted) {
        lines.retain(wanted);
    }
}

#[cfg(test)]
mod tests;
