//! The simulated players: how hands move pieces on a sensor board, with the
//! clock running beside it. Every legal way of making a move is used at
//! random: captures with either piece lifted first or both in the air,
//! castling king first or both together, en passant and promotion in every
//! order the Laws allow, sliding pieces crossing squares, squares scanned in
//! the "wrong" order, sensor flicker, quick replies and the result gesture.

use shakmaty::{Bitboard, CastlingSide, Chess, Color, KnownOutcome, Move, Piece, Position, Role, Square, attacks};

use super::{Expected, Rng, SourceGame, Style, irregular::Injection};
use boardcast_core::{
    sensor::{Cell, ClockReading, Picture, SensorEvent},
    time::Timestamp,
};

/// The stream of sensor events a game produces, in the board's own
/// orientation, and what the daemon must make of it.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Sensor events with their times.
    pub events: Vec<(Timestamp, SensorEvent)>,
    /// The moves and result the daemon must reconstruct.
    pub expected: Expected,
}

/// Plays `game` with `style`.
pub fn play(game: &SourceGame, style: &Style, rng: &mut Rng) -> Stream {
    play_planned(game, style, &[], rng)
}

/// Plays `game` with `style`, making the irregularities of `plan` (from
/// [`super::plan`]) at their plies.
pub fn play_planned(game: &SourceGame, style: &Style, plan: &[(usize, Injection)], rng: &mut Rng) -> Stream {
    let mut hands = Hands::new(style, rng, &game.start);
    let mut pos = game.start.clone();
    hands.wait(300, 900);
    if style.clock.is_some() {
        hands.start_clock();
    }
    let mut fast = false;
    let mut forced = super::decided_on_the_board(None, &pos);
    for (i, &m) in game.moves.iter().enumerate() {
        let injection = plan.iter().find(|(ply, _)| *ply == i).map(|&(_, injection)| injection);
        let (lo, hi) = if fast { (150, 400) } else { style.think_ms };
        if injection == Some(Injection::ClockWithoutMove) {
            // The player to move presses without moving; the opponent
            // presses back.
            hands.wait(600, 2500);
            hands.press(pos.turn());
            hands.wait(800, 2500);
            hands.press(!pos.turn());
        }
        hands.think(lo, hi);
        match injection {
            Some(Injection::TouchOwn { square, hold_ms } | Injection::TouchOpponent { square, hold_ms }) => {
                hands.touch(square, hold_ms);
                hands.wait(300, 1500);
            }
            Some(Injection::Displaced { square, hold_ms }) => {
                if style.clock.is_none() {
                    // Without a clock the opponent's move is completed by
                    // a quiet board (quiet_completion_ms, 10 s); before
                    // that its mover may still adjust it.
                    hands.wait(10_500, 12_000);
                }
                hands.touch(square, hold_ms);
                hands.wait(300, 1500);
            }
            _ => {}
        }
        match injection {
            Some(Injection::RookBeforeKing { rook_down_first, lead_ms }) => {
                hands.castle_rook_first(pos.turn(), m, rook_down_first, lead_ms)
            }
            Some(Injection::IllegalMove { to, restore_first }) => {
                hands.illegal(pos.turn(), m, to, restore_first);
                hands.think(300, 1200);
                hands.make(&pos, m);
            }
            Some(Injection::ReleasedOnLine { stop, stand_ms } | Injection::ReleasedElsewhere { stop, stand_ms }) => {
                hands.released(pos.turn(), m, stop, stand_ms)
            }
            Some(Injection::PawnNotReplaced) => hands.pawn_left(pos.turn(), m),
            _ => hands.make(&pos, m),
        }
        let before = pos.clone();
        pos.play_unchecked(m);
        fast = hands.rng.chance(style.fast_reply);
        forced = super::decided_on_the_board(Some(&before), &pos);
        let ends = forced.is_some();
        if style.clock.is_some() && !ends {
            let (lo, hi) = if fast { (30, 90) } else { (120, 700) };
            hands.wait(lo, hi);
            hands.press(!pos.turn());
        }
        if injection == Some(Injection::PawnNotReplaced) {
            // The arbiter (or the player) puts the queen there.
            hands.wait(1000, 2500);
            let to = m.to();
            hands.lift(to);
            hands.gap();
            hands.place(to, Piece { color: !pos.turn(), role: Role::Queen });
            fast = false;
        }
        if ends && i + 1 < game.moves.len() {
            // The game ended on the board; later moves cannot be played.
            break;
        }
    }
    let result = match (forced, game.result) {
        (Some(outcome), _) => Some(outcome),
        (None, Some(outcome)) if style.gesture => {
            // Without a clock the last move counts as completed once the
            // board has been still for a while (quiet_completion, 10 s by
            // default); players show the result after that.
            if style.clock.is_some() {
                hands.wait(800, 2500);
            } else {
                hands.wait(10_500, 12_000);
            }
            hands.stop_clock();
            hands.gesture(&pos, outcome);
            Some(outcome)
        }
        _ => None,
    };
    hands.wait(3000, 3500);
    let played = game.moves.len().min(pos_plies(&game.start, &pos));
    let mode = pos.castles().mode();
    let uci = game.moves[..played].iter().map(|&m| m.to_uci(mode).to_string()).collect();
    Stream { events: hands.out, expected: Expected { uci, result } }
}

fn pos_plies(start: &Chess, end: &Chess) -> usize {
    let plies = |p: &Chess| (p.fullmoves().get() as usize - 1) * 2 + usize::from(p.turn() == Color::Black);
    plies(end) - plies(start)
}

struct Hands<'a> {
    style: &'a Style,
    rng: &'a mut Rng,
    /// Microseconds since the start.
    t: u64,
    board: Picture,
    out: Vec<(Timestamp, SensorEvent)>,
    clock: Option<Clock>,
}

struct Clock {
    white_ms: u64,
    black_ms: u64,
    running: Option<Color>,
    increment_ms: u64,
    /// When the next reading is due (one a second, as a DGT board sends).
    next_reading: u64,
}

impl<'a> Hands<'a> {
    fn new(style: &'a Style, rng: &'a mut Rng, start: &Chess) -> Self {
        let board = Picture::from_board(start.board());
        let clock = style.clock.map(|c| Clock {
            white_ms: c.base_ms,
            black_ms: c.base_ms,
            running: None,
            increment_ms: c.increment_ms,
            next_reading: 1_000_000,
        });
        let mut hands = Self { style, rng, t: 0, board: board.clone(), out: Vec::new(), clock };
        let reported = if style.rotated { board.rotated() } else { board };
        hands.out.push((Timestamp::ZERO, SensorEvent::Board(Box::new(reported))));
        hands.reading();
        hands
    }

    /// Lets `lo..=hi` milliseconds pass.
    fn wait(&mut self, lo: u64, hi: u64) {
        let ms = self.rng.range(lo, hi);
        self.advance(ms * 1000);
    }

    fn advance(&mut self, us: u64) {
        let end = self.t + us;
        while let Some(next) = self.clock.as_ref().map(|c| c.next_reading).filter(|&n| n <= end) {
            self.tick(next - self.t);
            self.reading();
            if let Some(clock) = &mut self.clock {
                clock.next_reading += 1_000_000;
            }
        }
        self.tick(end - self.t);
    }

    fn tick(&mut self, us: u64) {
        self.t += us;
        if let Some(clock) = &mut self.clock {
            let ms = us / 1000;
            match clock.running {
                Some(Color::White) => clock.white_ms = clock.white_ms.saturating_sub(ms),
                Some(Color::Black) => clock.black_ms = clock.black_ms.saturating_sub(ms),
                None => {}
            }
        }
    }

    fn reading(&mut self) {
        if let Some(c) = &self.clock {
            let reading = ClockReading::ByColor { white_ms: c.white_ms, black_ms: c.black_ms, running: c.running };
            self.out.push((Timestamp::from_micros(self.t), SensorEvent::Clock(reading)));
        }
    }

    fn start_clock(&mut self) {
        self.wait(200, 800);
        if let Some(clock) = &mut self.clock {
            clock.running = Some(Color::White);
        }
        self.reading();
    }

    fn stop_clock(&mut self) {
        if let Some(clock) = &mut self.clock {
            clock.running = None;
        }
        self.reading();
    }

    fn press(&mut self, mover: Color) {
        if let Some(clock) = &mut self.clock {
            match mover {
                Color::White => clock.white_ms += clock.increment_ms,
                Color::Black => clock.black_ms += clock.increment_ms,
            }
            clock.running = Some(!mover);
        }
        self.reading();
    }

    /// The player to move thinks; meanwhile a sensor may flicker.
    fn think(&mut self, lo: u64, hi: u64) {
        let ms = self.rng.range(lo, hi);
        if ms > 400 && self.rng.chance(self.style.flicker) {
            self.advance(ms * 500);
            self.flicker();
            self.advance(ms * 500);
        } else {
            self.advance(ms * 1000);
        }
    }

    /// An occupied square reads empty for a moment.
    fn flicker(&mut self) {
        let occupied: Vec<Square> = self.board.occupied().into_iter().collect();
        let sq = *self.rng.pick(&occupied);
        let cell = self.board.get(sq);
        self.set(sq, Cell::Empty);
        self.wait(10, 120);
        self.set(sq, cell);
    }

    fn set(&mut self, sq: Square, cell: Cell) {
        self.board.set(sq, cell);
        let reported = if self.style.rotated { sq.flip_vertical().flip_horizontal() } else { sq };
        self.out.push((Timestamp::from_micros(self.t), SensorEvent::Square { square: reported, cell }));
    }

    fn lift(&mut self, sq: Square) {
        self.set(sq, Cell::Empty);
    }

    fn place(&mut self, sq: Square, piece: Piece) {
        self.set(sq, Cell::Piece(piece));
    }

    /// A hand's pause between two actions of one move.
    fn gap(&mut self) {
        self.wait(40, 260);
    }

    /// Two actions the board sees in the same scan.
    fn instant(&mut self) {
        self.wait(0, 30);
    }

    /// Carries `piece` from `from` (already lifted) to `to`, sliding over
    /// the squares between when the style says so, and puts it down.
    fn carry(&mut self, from: Square, to: Square, piece: Piece) {
        let path = attacks::between(from, to);
        let slides = matches!(piece.role, Role::Bishop | Role::Rook | Role::Queen | Role::Pawn | Role::King);
        if slides && !path.is_empty() && (path & self.board.occupied()).is_empty() && self.rng.chance(self.style.slide)
        {
            let mut squares: Vec<Square> = path.into_iter().collect();
            if from > to {
                squares.reverse();
            }
            let mut previous: Option<Square> = None;
            for sq in squares {
                // The piece is seen on the next square before the previous
                // one is seen empty when the scan reaches them in that order.
                if self.rng.chance(self.style.scan_swap) {
                    self.place(sq, piece);
                    if let Some(p) = previous {
                        self.instant();
                        self.lift(p);
                    }
                } else {
                    if let Some(p) = previous {
                        self.lift(p);
                        self.instant();
                    }
                    self.place(sq, piece);
                }
                self.wait(15, 90);
                previous = Some(sq);
            }
            if let Some(p) = previous {
                self.lift(p);
            }
            self.instant();
        } else {
            self.gap();
        }
        self.place(to, piece);
    }

    /// Makes `m` on the board.
    fn make(&mut self, pos: &Chess, m: Move) {
        let turn = pos.turn();
        match m {
            Move::Normal { role, from, capture, to, promotion } => {
                let piece = Piece { color: turn, role };
                let placed = Piece { color: turn, role: promotion.unwrap_or(role) };
                if capture.is_some() {
                    self.capture(from, to, placed);
                } else if promotion.is_some() {
                    self.promote(from, to, placed);
                } else if self.rng.chance(self.style.scan_swap) {
                    // Placed and lifted seen in one scan, placement first.
                    self.place(to, piece);
                    self.instant();
                    self.lift(from);
                } else {
                    self.lift(from);
                    self.carry(from, to, piece);
                }
            }
            Move::EnPassant { from, to } => {
                let victim = Square::from_coords(to.file(), from.rank());
                let pawn = turn.pawn();
                match self.rng.range(0, 2) {
                    0 => {
                        self.lift(victim);
                        self.gap();
                        self.lift(from);
                        self.gap();
                        self.place(to, pawn);
                    }
                    1 => {
                        self.lift(from);
                        self.gap();
                        self.place(to, pawn);
                        self.gap();
                        self.lift(victim);
                    }
                    _ => {
                        self.lift(from);
                        self.instant();
                        self.lift(victim);
                        self.gap();
                        self.place(to, pawn);
                    }
                }
            }
            Move::Castle { king, rook } => self.castle(turn, king, rook),
            Move::Put { .. } => unreachable!("no drops in chess"),
        }
    }

    fn capture(&mut self, from: Square, to: Square, placed: Piece) {
        match self.rng.range(0, 3) {
            // The captured piece first.
            0 => {
                self.lift(to);
                self.gap();
                self.lift(from);
                self.gap();
                self.place(to, placed);
            }
            // The own piece first, perhaps slid across to the target.
            1 => {
                self.lift(from);
                self.gap();
                self.lift(to);
                self.carry(from, to, placed);
            }
            // Both in the air.
            2 => {
                self.lift(from);
                self.instant();
                self.lift(to);
                self.gap();
                self.place(to, placed);
            }
            // The captured piece knocked off by the capturing one: the board
            // only sees the square change.
            _ => {
                self.lift(from);
                self.gap();
                self.set(to, Cell::Piece(placed));
            }
        }
    }

    fn promote(&mut self, from: Square, to: Square, placed: Piece) {
        let pawn = Piece { color: placed.color, role: Role::Pawn };
        match self.rng.range(0, 2) {
            // The pawn never touches the last rank (4.6.1).
            0 => {
                self.lift(from);
                self.gap();
                self.place(to, placed);
            }
            // The pawn goes to the last rank and is exchanged there.
            1 => {
                self.lift(from);
                self.gap();
                self.place(to, pawn);
                self.gap();
                self.lift(to);
                self.gap();
                self.place(to, placed);
            }
            // The new piece first, then the pawn removed (4.6.2).
            _ => {
                self.place(to, placed);
                self.gap();
                self.lift(from);
            }
        }
    }

    fn castle(&mut self, turn: Color, king: Square, rook: Square) {
        let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
        let (king_to, rook_to) = (side.king_to(turn), side.rook_to(turn));
        let (k, r) = (turn.king(), turn.rook());
        if king == king_to {
            // Chess960: only the rook moves.
            self.lift(rook);
            self.gap();
            self.place(rook_to, r);
        } else if rook == rook_to {
            // Chess960: only the king moves.
            self.lift(king);
            self.carry(king, king_to, k);
        } else if king_to != rook && self.rng.chance(0.6) {
            // King first, then the rook (4.4.1).
            self.lift(king);
            self.carry(king, king_to, k);
            self.gap();
            self.lift(rook);
            self.gap();
            self.place(rook_to, r);
        } else {
            // Both in the air at once.
            self.lift(king);
            self.instant();
            self.lift(rook);
            self.gap();
            self.place(king_to, k);
            self.instant();
            self.place(rook_to, r);
        }
    }

    /// A piece lifted for `hold_ms` and put back on its square.
    fn touch(&mut self, sq: Square, hold_ms: u64) {
        let cell = self.board.get(sq);
        self.lift(sq);
        self.advance(hold_ms * 1000);
        self.set(sq, cell);
    }

    /// Castling with the rook lifted `lead_ms` before the king (4.4.2).
    fn castle_rook_first(&mut self, turn: Color, m: Move, rook_down_first: bool, lead_ms: u64) {
        let Move::Castle { king, rook } = m else { unreachable!("planned on castling moves only") };
        let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
        let (king_to, rook_to) = (side.king_to(turn), side.rook_to(turn));
        self.lift(rook);
        if rook_down_first {
            self.gap();
            self.place(rook_to, turn.rook());
            self.advance(lead_ms * 1000);
            self.lift(king);
            self.gap();
            self.place(king_to, turn.king());
        } else {
            self.advance(lead_ms * 1000);
            self.lift(king);
            self.gap();
            self.place(king_to, turn.king());
            self.gap();
            self.place(rook_to, turn.rook());
        }
    }

    /// The moving piece put on `to`, which it cannot reach, and the clock
    /// pressed (7.5.1); then the position put back and the clock pressed
    /// back for the offender, in either order.
    fn illegal(&mut self, turn: Color, m: Move, to: Square, restore_first: bool) {
        let Some(from) = m.from() else { unreachable!("planned on normal moves") };
        let piece = Piece { color: turn, role: m.role() };
        self.lift(from);
        self.gap();
        self.place(to, piece);
        self.wait(150, 600);
        self.press(turn);
        if restore_first {
            // Seeing the position is wrong and putting it back takes a
            // while; the daemon judges a press on the board it sees a
            // second (and, on a board asked for its picture, half a second
            // more) after it.
            self.wait(2000, 3500);
            self.lift(to);
            self.gap();
            self.place(from, piece);
            self.wait(300, 1000);
            self.press(!turn);
        } else {
            self.wait(400, 3000);
            self.press(!turn);
            self.wait(300, 1000);
            self.lift(to);
            self.gap();
            self.place(from, piece);
        }
    }

    /// The piece released on `stop` for `stand_ms`, then moved on to the
    /// game's square (4.7).
    fn released(&mut self, turn: Color, m: Move, stop: Square, stand_ms: u64) {
        let Move::Normal { role, from, to, .. } = m else { unreachable!("planned on normal moves") };
        let piece = Piece { color: turn, role };
        self.lift(from);
        self.gap();
        self.place(stop, piece);
        self.advance(stand_ms * 1000);
        self.lift(stop);
        self.gap();
        self.place(to, piece);
    }

    /// A promoting pawn put on the last rank as a pawn (7.5.2).
    fn pawn_left(&mut self, turn: Color, m: Move) {
        let Move::Normal { from, to, capture, .. } = m else { unreachable!("planned on promotions") };
        if capture.is_some() {
            self.lift(to);
            self.gap();
        }
        self.lift(from);
        self.gap();
        self.place(to, turn.pawn());
    }

    /// Both kings to the centre squares: light squares 1-0, dark 0-1, one of
    /// each ½-½. Pieces standing there are taken off first.
    fn gesture(&mut self, pos: &Chess, outcome: KnownOutcome) {
        let board = pos.board();
        let (Some(white_king), Some(black_king)) = (board.king_of(Color::White), board.king_of(Color::Black)) else {
            return;
        };
        let light = |sq: Square| (u32::from(sq.file()) + u32::from(sq.rank())) % 2 == 1;
        let centre = [Square::D4, Square::E4, Square::D5, Square::E5];
        let fits = |w: Square, b: Square| match outcome {
            KnownOutcome::Decisive { winner: Color::White } => light(w) && light(b),
            KnownOutcome::Decisive { winner: Color::Black } => !light(w) && !light(b),
            KnownOutcome::Draw => light(w) != light(b),
        };
        // Targets that do not ask a king to land where the other one stands,
        // preferring a king that already stands on a fitting square.
        let mut pairs: Vec<(Square, Square)> = Vec::new();
        for w in centre {
            for b in centre {
                if w != b && fits(w, b) && w != black_king && b != white_king {
                    pairs.push((w, b));
                }
            }
        }
        pairs.sort_by_key(|&(w, b)| (w != white_king) as u8 + (b != black_king) as u8);
        let Some(&(white_to, black_to)) = pairs.first() else { return };
        for sq in (Bitboard::from(white_to) | Bitboard::from(black_to)) & board.occupied() {
            if sq != white_king && sq != black_king {
                self.lift(sq);
                self.gap();
            }
        }
        let mut kings = [(white_king, white_to, Color::White), (black_king, black_to, Color::Black)];
        // Without a clock the first king put on the centre could be taken
        // for a move of the side to move (docs/reconstruction.md), so the
        // players start with the other king; with a clock either order is
        // fine, as a real move would have been pressed for.
        if (self.clock.is_none() && kings[0].2 == pos.turn()) || (self.clock.is_some() && self.rng.chance(0.5)) {
            kings.swap(0, 1);
        }
        for (king, to, color) in kings {
            if king != to {
                self.lift(king);
                self.gap();
                self.place(to, color.king());
                self.gap();
            }
        }
    }
}
