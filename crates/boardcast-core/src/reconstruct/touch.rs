//! The sensor log kept as evidence, and what it says about touched pieces
//! (touch-move, 4.3 and 4.4).
//!
//! A board sees a touch only when a piece leaves its square. A lift shorter
//! than `touch_min` is ignored (sensor flicker), and
//! when two pieces leave their squares within `touch_min` of each other the
//! order is not trusted, because a board scans its squares one after another.

use std::{collections::VecDeque, time::Duration};

use shakmaty::{Chess, Color, Move, Piece, Position, Square};

use super::{known::Known, matcher};
use crate::{
    alert::{AlertKind, Evidence, Seen, side_name},
    sensor::Cell,
    time::Timestamp,
};

/// How many observations the log keeps.
const LOG_CAPACITY: usize = 512;
/// How many observations an alert carries as evidence at most.
const EVIDENCE_MAX: usize = 64;

/// The recent sensor observations.
#[derive(Clone, Debug)]
pub(crate) struct SensorLog {
    entries: VecDeque<Entry>,
}

impl Default for SensorLog {
    /// An empty log with room for [`LOG_CAPACITY`] observations: a board
    /// fills it within the first moves, and growing it step by step would
    /// copy it over and over.
    fn default() -> Self {
        Self { entries: VecDeque::with_capacity(LOG_CAPACITY) }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    t: Timestamp,
    seen: Seen,
    /// For square changes: what the square held before.
    before: Cell,
}

impl SensorLog {
    /// Notes that `square` changed from `before` to `after`.
    pub(crate) fn square(&mut self, t: Timestamp, square: Square, before: Cell, after: Cell) {
        self.push(Entry { t, seen: Seen::Square { square, cell: after }, before });
    }

    /// Notes a clock reading.
    pub(super) fn clock(&mut self, t: Timestamp, reading: crate::sensor::ClockReading) {
        self.push(Entry { t, seen: Seen::Clock(reading), before: Cell::Empty });
    }

    fn push(&mut self, entry: Entry) {
        if self.entries.len() == LOG_CAPACITY {
            self.entries.pop_front();
        }
        self.entries.push_back(entry);
    }

    /// The index of the first observation at or after `since` (the log is in
    /// time order). Counted from the end: `since` is when the move being
    /// judged began, so only the last few observations come after it.
    fn first_since(&self, since: Timestamp) -> usize {
        self.entries.len() - self.entries.iter().rev().take_while(|e| e.t >= since).count()
    }

    /// The observations since `since` (the latest [`EVIDENCE_MAX`]).
    pub(crate) fn evidence(&self, since: Timestamp) -> Vec<Evidence> {
        let recent: Vec<&Entry> = self.entries.iter().rev().take_while(|e| e.t >= since).take(EVIDENCE_MAX).collect();
        recent.into_iter().rev().map(|e| Evidence { t: e.t, seen: e.seen.clone() }).collect()
    }

    /// When each square was recently seen emptied and filled: what an
    /// occupancy-only board says about which pieces were handled
    /// (`occupancy.rs`). One pass over the log, rather than a search per
    /// question.
    /// The board was still whenever nothing changed for `settle`.
    pub(crate) fn changes(&self, settle: Duration) -> Changes {
        let mut changes =
            Changes { emptied: [Times::default(); 64], filled: [Times::default(); 64], still: Vec::new() };
        let mut previous: Option<Timestamp> = None;
        for entry in &self.entries {
            let Seen::Square { square, cell } = entry.seen else {
                continue;
            };
            match (entry.before.is_occupied(), cell.is_occupied()) {
                (true, false) => changes.emptied[square as usize].push(entry.t),
                (false, true) => changes.filled[square as usize].push(entry.t),
                _ => {}
            }
            if let Some(before) = previous.filter(|&before| entry.t.saturating_since(before) >= settle) {
                changes.still.push((before, entry.t));
            }
            previous = Some(entry.t);
        }
        changes
    }

    /// Maps every square in the log to the other side of the board: the
    /// board turned out to report its squares turned 180° (an occupancy
    /// board's start position looks the same either way).
    pub(crate) fn rotate(&mut self) {
        for entry in &mut self.entries {
            if let Seen::Square { square, .. } = &mut entry.seen {
                *square = square.flip_vertical().flip_horizontal();
            }
        }
    }

    /// Whether a piece lifted since `since` was put back on its square: a
    /// touch that did not lead to a move, the only kind 4.3 is about. Found
    /// without listing the lifts, as most moves have no such touch.
    fn any_put_back(&self, since: Timestamp) -> bool {
        // For each square, a bit for each kind of piece lifted from it.
        let mut lifted = [0u16; 64];
        let bit = |p: Piece| 1u16 << (usize::from(p.color == shakmaty::Color::Black) * 6 + (p.role as usize - 1));
        for entry in self.entries.range(self.first_since(since)..) {
            let Seen::Square { square, cell } = entry.seen else {
                continue;
            };
            match (entry.before, cell) {
                (Cell::Piece(piece), Cell::Empty) => lifted[square as usize] |= bit(piece),
                (_, Cell::Piece(piece)) if lifted[square as usize] & bit(piece) != 0 => return true,
                _ => {}
            }
        }
        false
    }

    /// When the piece just put back on `square` had left it, if the change
    /// before on that square was that same piece leaving (a piece taken up
    /// and put back where it stood, with nothing else on the square in
    /// between). Called right after the put-back was logged.
    pub(crate) fn put_back_since(&self, square: Square, piece: Piece) -> Option<Timestamp> {
        let mut on_square =
            self.entries.iter().rev().filter(|e| matches!(e.seen, Seen::Square { square: s, .. } if s == square));
        let back = on_square.next()?;
        let lift = on_square.next()?;
        let back_ok = matches!(back.seen, Seen::Square { cell: Cell::Piece(p), .. } if p == piece);
        let lift_ok = lift.before == Cell::Piece(piece) && matches!(lift.seen, Seen::Square { cell: Cell::Empty, .. });
        (back_ok && lift_ok).then_some(lift.t)
    }

    /// How long a piece last stood on `square` before leaving it again,
    /// counted from when it was put there (at or after `since`): how long a
    /// piece rested on a square of its way.
    pub(crate) fn stood(&self, square: Square, since: Timestamp) -> Option<Duration> {
        let mut put: Option<Timestamp> = None;
        let mut stood = None;
        for entry in self.entries.range(self.first_since(since)..) {
            match entry.seen {
                Seen::Square { square: s, cell } if s == square => {
                    if cell.is_occupied() && !entry.before.is_occupied() {
                        put = Some(entry.t);
                    } else if !cell.is_occupied()
                        && let Some(at) = put.take()
                    {
                        stood = Some(entry.t.saturating_since(at));
                    }
                }
                _ => {}
            }
        }
        stood
    }

    /// The squares whose pieces were lifted since `since` and are still off
    /// them... or back: every lift of a piece, with when it left and when (if)
    /// it came back to the same square.
    fn lifts(&self, since: Timestamp) -> Vec<Lift> {
        let mut lifts: Vec<Lift> = Vec::new();
        for entry in self.entries.range(self.first_since(since)..) {
            let Seen::Square { square, cell } = entry.seen else {
                continue;
            };
            match (entry.before, cell) {
                (Cell::Piece(piece), Cell::Empty) => lifts.push(Lift { square, piece, up: entry.t, back: None }),
                (_, Cell::Piece(piece)) => {
                    if let Some(lift) =
                        lifts.iter_mut().rev().find(|l| l.square == square && l.back.is_none() && l.piece == piece)
                    {
                        lift.back = Some(entry.t);
                    }
                }
                _ => {}
            }
        }
        lifts
    }
}

/// How many times of each kind a square's history keeps: a square is
/// emptied a few times in one move at most (a piece lifted, a flicker).
const HISTORY: usize = 6;

/// The latest times something happened to a square, oldest first.
#[derive(Clone, Copy, Debug, Default)]
struct Times {
    at: [Timestamp; HISTORY],
    len: usize,
}

impl Times {
    fn push(&mut self, t: Timestamp) {
        if self.len == HISTORY {
            self.at.rotate_left(1);
            self.len -= 1;
        }
        self.at[self.len] = t;
        self.len += 1;
    }

    fn last(&self) -> Option<Timestamp> {
        self.len.checked_sub(1).map(|i| self.at[i])
    }

    /// The first time at or after `after` (without `after`, the last).
    fn first_since(&self, after: Option<Timestamp>) -> Option<Timestamp> {
        match after {
            Some(after) => self.at[..self.len].iter().copied().find(|&t| t >= after),
            None => self.last(),
        }
    }
}

/// When each square was recently seen emptied and filled.
#[derive(Clone, Debug)]
pub(crate) struct Changes {
    emptied: [Times; 64],
    filled: [Times; 64],
    /// When the board stood still (from one change to the next).
    still: Vec<(Timestamp, Timestamp)>,
}

impl Changes {
    /// When a piece first left `square` at or after `after` (without
    /// `after`, when one last left it).
    pub(crate) fn emptied_since(&self, square: Square, after: Option<Timestamp>) -> Option<Timestamp> {
        self.emptied[square as usize].first_since(after)
    }

    /// When a piece was first put on `square` at or after `after`.
    pub(crate) fn filled_since(&self, square: Square, after: Option<Timestamp>) -> Option<Timestamp> {
        self.filled[square as usize].first_since(after)
    }

    /// When a piece was last put on `square`.
    pub(crate) fn filled(&self, square: Square) -> Option<Timestamp> {
        self.filled[square as usize].last()
    }

    /// Whether the board stood still at some time from `from` to `to`.
    pub(crate) fn still_between(&self, from: Timestamp, to: Timestamp) -> bool {
        self.still.iter().rev().take_while(|&&(_, end)| end > from).any(|&(start, end)| start >= from && end <= to)
    }

    /// The same, for the board read turned 180°.
    pub(super) fn rotated(&self) -> Self {
        let (mut emptied, mut filled) = (self.emptied, self.filled);
        emptied.reverse();
        filled.reverse();
        Self { emptied, filled, still: self.still.clone() }
    }
}

/// A piece that left its square.
#[derive(Clone, Copy, Debug)]
struct Lift {
    square: Square,
    piece: Piece,
    up: Timestamp,
    back: Option<Timestamp>,
}

/// A touch-move finding, ready to become an alert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TouchFinding {
    /// Which rule.
    pub(crate) kind: AlertKind,
    /// The message for the arbiter.
    pub message: String,
    /// The squares concerned.
    pub(crate) squares: Vec<Square>,
    /// When the touch began.
    pub(crate) t: Timestamp,
}

/// What the lifts since `since` say about move `m` made from `known`: one
/// finding per breach, one function per article.
pub(crate) fn touch_findings(
    log: &SensorLog,
    since: Timestamp,
    known: &Known,
    m: Move,
    touch_min: Duration,
) -> Vec<TouchFinding> {
    // Every finding is about a piece lifted and put back (4.3) or about
    // castling (4.4.2).
    if !m.is_castle() && !log.any_put_back(since) {
        return Vec::new();
    }
    let touch = Touches { known, m, lifts: log.lifts(since), touch_min };
    [touch.own_piece_touched_first(), touch.opponents_piece_touched_first(), touch.rook_touched_before_king()]
        .into_iter()
        .flatten()
        .collect()
}

/// The lifts made while a move was being made, and the move.
struct Touches<'a> {
    known: &'a Known,
    m: Move,
    lifts: Vec<Lift>,
    touch_min: Duration,
}

impl Touches<'_> {
    /// Whether a lift was a touch: long enough to be deliberate (a piece
    /// still in the hand counts).
    fn touched(&self, lift: &Lift) -> bool {
        lift.back.is_none_or(|back| back.saturating_since(lift.up) >= self.touch_min)
    }

    /// The first lift, in time, of a piece of `color` still on its square
    /// in the game, touched deliberately, that `counts`.
    fn first_touched(&self, color: Color, counts: impl Fn(&Lift) -> bool) -> Option<&Lift> {
        let board = self.known.pos.board();
        self.lifts
            .iter()
            .filter(|l| l.piece.color == color && board.piece_at(l.square) == Some(l.piece))
            .filter(|l| self.touched(l))
            .find(|l| counts(l))
    }

    /// 4.3.1: the first own piece touched that can move must be moved.
    fn own_piece_touched_first(&self) -> Option<TouchFinding> {
        let pos = &self.known.pos;
        let mover = pos.turn();
        let moved = matcher::origins(self.m);
        let l = self.first_touched(mover, |l| moved.contains(l.square) || can_move(self.known, l.square))?;
        if moved.contains(l.square) || l.back.is_none() {
            return None;
        }
        Some(TouchFinding {
            kind: AlertKind::TouchedOwnPiece,
            message: format!(
                "{} lifted the {} on {} first and put it back, then moved {}: possible touch-move breach",
                side_name(mover),
                role_name(l.piece),
                l.square,
                describe_move(pos, self.m)
            ),
            squares: vec![l.square],
            t: l.up,
        })
    }

    /// 4.3.2: the first opponent's piece touched that can be captured must
    /// be captured.
    fn opponents_piece_touched_first(&self) -> Option<TouchFinding> {
        let pos = &self.known.pos;
        let mover = pos.turn();
        let captured = captured_square(self.m);
        let l = self.first_touched(!mover, |l| Some(l.square) == captured || can_be_captured(self.known, l.square))?;
        if Some(l.square) == captured || l.back.is_none() {
            return None;
        }
        Some(TouchFinding {
            kind: AlertKind::TouchedOpponentPiece,
            message: format!(
                "the {} {} on {} was lifted first and put back, then {} moved {} without capturing it: possible touch-move breach",
                side_name(!mover),
                role_name(l.piece),
                l.square,
                side_name(mover),
                describe_move(pos, self.m)
            ),
            squares: vec![l.square],
            t: l.up,
        })
    }

    /// 4.4.2: castling is not allowed after touching the rook first.
    fn rook_touched_before_king(&self) -> Option<TouchFinding> {
        let Move::Castle { king, rook } = self.m else { return None };
        let up = |sq: Square| self.lifts.iter().filter(|l| self.touched(l)).find(|l| l.square == sq).map(|l| l.up);
        let (rook_up, king_up) = (up(rook)?, up(king)?);
        if king_up.saturating_since(rook_up) < self.touch_min {
            return None;
        }
        Some(TouchFinding {
            kind: AlertKind::RookBeforeKing,
            message: format!(
                "{} lifted the rook on {rook} before the king on {king} and then castled: castling is not allowed after touching the rook first",
                side_name(self.known.pos.turn())
            ),
            squares: vec![rook, king],
            t: rook_up,
        })
    }
}

/// `"1.2 s"`: a duration for messages.
pub(crate) fn describe_duration(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// The square whose piece `m` captures, if any.
pub(crate) fn captured_square(m: Move) -> Option<Square> {
    match m {
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        Move::Normal { capture: Some(_), to, .. } => Some(to),
        _ => None,
    }
}

fn can_move(known: &Known, square: Square) -> bool {
    known.moves().any(|m| matcher::origins(m).contains(square))
}

fn can_be_captured(known: &Known, square: Square) -> bool {
    known.moves().any(|m| captured_square(m) == Some(square))
}

/// `"the knight g1-f3"`, `"O-O"`: a move for messages.
pub(crate) fn describe_move(pos: &Chess, m: Move) -> String {
    let san = shakmaty::san::San::from_move(pos, m);
    match m {
        Move::Castle { .. } => format!("{san}"),
        _ => format!("{san} ({}{})", m.from().map_or(String::new(), |f| f.to_string()), m.to()),
    }
}

/// `"knight"`, `"pawn"` …
pub(crate) fn role_name(piece: Piece) -> &'static str {
    match piece.role {
        shakmaty::Role::Pawn => "pawn",
        shakmaty::Role::Knight => "knight",
        shakmaty::Role::Bishop => "bishop",
        shakmaty::Role::Rook => "rook",
        shakmaty::Role::Queen => "queen",
        shakmaty::Role::King => "king",
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen, san::San};

    use super::*;

    const MIN: Duration = Duration::from_millis(500);

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn log(events: &[(u64, &str, &str, &str)]) -> SensorLog {
        let mut log = SensorLog::default();
        for &(t, sq, before, after) in events {
            let cell = |s: &str| {
                if s == "-" { Cell::Empty } else { Cell::from_letter(s.chars().next().unwrap()).unwrap() }
            };
            log.square(ms(t), sq.parse().unwrap(), cell(before), cell(after));
        }
        log
    }

    fn findings(fen: &str, san: &str, events: &[(u64, &str, &str, &str)]) -> Vec<AlertKind> {
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let m = san.parse::<San>().unwrap().to_move(&pos).unwrap();
        touch_findings(&log(events), ms(0), &Known::new(pos), m, MIN).into_iter().map(|f| f.kind).collect()
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    const CASTLE: &str = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";

    #[test]
    fn an_own_piece_lifted_and_put_back_then_another_moved_is_a_possible_breach() {
        let events = [(100, "g1", "N", "-"), (900, "g1", "-", "N"), (1500, "e2", "P", "-"), (1700, "e4", "-", "P")];
        assert_eq!(findings(START, "e4", &events), vec![AlertKind::TouchedOwnPiece]);
    }

    #[test]
    fn short_lifts_and_pieces_that_cannot_move_are_not_touches() {
        let flicker = [(100, "g1", "N", "-"), (150, "g1", "-", "N"), (1500, "e2", "P", "-"), (1700, "e4", "-", "P")];
        assert!(findings(START, "e4", &flicker).is_empty());
        let stuck = [(100, "a1", "R", "-"), (900, "a1", "-", "R"), (1500, "e2", "P", "-"), (1700, "e4", "-", "P")];
        assert!(findings(START, "e4", &stuck).is_empty(), "the rook on a1 has no legal move");
        let same = [(100, "e2", "P", "-"), (900, "e2", "-", "P"), (1500, "e2", "P", "-"), (1700, "e4", "-", "P")];
        assert!(findings(START, "e4", &same).is_empty(), "the touched piece was the one moved");
    }

    #[test]
    fn an_opponents_piece_lifted_and_not_captured_is_a_possible_breach() {
        let fen = "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1";
        let events = [(100, "d5", "p", "-"), (900, "d5", "-", "p"), (1500, "e4", "P", "-"), (1700, "e5", "-", "P")];
        assert_eq!(findings(fen, "e5", &events), vec![AlertKind::TouchedOpponentPiece]);
        let capture = [(100, "d5", "p", "-"), (900, "e4", "P", "-"), (1000, "d5", "-", "P")];
        assert!(findings(fen, "exd5", &capture).is_empty());
    }

    #[test]
    fn castling_after_the_rook_was_touched_first_is_alerted_unless_both_rose_together() {
        let rook_first = [(100, "h1", "R", "-"), (400, "f1", "-", "R"), (1200, "e1", "K", "-"), (1400, "g1", "-", "K")];
        assert_eq!(findings(CASTLE, "O-O", &rook_first), vec![AlertKind::RookBeforeKing]);
        let king_first = [(100, "e1", "K", "-"), (400, "g1", "-", "K"), (1200, "h1", "R", "-"), (1400, "f1", "-", "R")];
        assert!(findings(CASTLE, "O-O", &king_first).is_empty());
        let together = [(100, "h1", "R", "-"), (130, "e1", "K", "-"), (400, "g1", "-", "K"), (420, "f1", "-", "R")];
        assert!(findings(CASTLE, "O-O", &together).is_empty());
        let flicker = [
            (100, "h1", "R", "-"),
            (130, "h1", "-", "R"),
            (1200, "e1", "K", "-"),
            (1400, "g1", "-", "K"),
            (1600, "h1", "R", "-"),
            (1800, "f1", "-", "R"),
        ];
        assert!(findings(CASTLE, "O-O", &flicker).is_empty(), "a flicker on the rook's square is not a touch");
    }
}
