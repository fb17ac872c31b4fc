//! Judging the board: does it show the game, a new move, a changed move, a
//! result gesture, a new game, or something nothing explains?
//!
//! Judging is split in two: [`Reconstructor::verdict`] looks at the board
//! and the game without changing anything and says what it sees; `act`
//! carries the verdict out. A verdict is asked for right after every change
//! (`settled = false`), when only what cannot be a piece still on its way
//! is acted on, and once the board has been still for `settle` (or a clock
//! press says the move is finished), when everything is decided.

use shakmaty::{Color, KnownOutcome, Move, Position, Role};

use super::{
    Reconstructor, Source,
    describe::{describe_cell, describe_line},
    gesture::result_gesture,
    known::Known,
    matcher::{Found, could_continue, effect, find_move, find_sequences, move_then_opponent},
    occupancy::{Line, shown_capture, sift},
    start::{Start, find_start, find_wrong_start},
};
use crate::{
    alert::{AlertKind, side_name},
    event::{BoardStatus, EventKind},
    sensor::Cell,
    time::Timestamp,
};

/// What the board shows, relative to the game.
#[derive(Debug)]
enum Verdict {
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

impl Reconstructor {
    /// Judges the board right after a change.
    pub(super) fn judge_now(&mut self, now: Timestamp) {
        // Readings of an occupancy board are followed from one still board
        // to the next.
        if self.play.as_ref().is_some_and(|p| !p.over) && !self.following_lines() {
            let verdict = self.verdict(false);
            self.act(now, verdict, false);
        }
    }

    /// Judges the board once it has been still for `settle`.
    pub(super) fn judge_settled(&mut self, now: Timestamp) {
        match &self.play {
            // Readings of an occupancy board are followed instead.
            Some(play) if !play.over && play.lines.is_some() => self.judge_lines(now),
            Some(play) if !play.over => {
                let verdict = self.verdict(true);
                self.act(now, verdict, true);
            }
            _ => self.judge_waiting(now),
        }
    }

    /// What the board shows; changes nothing.
    fn verdict(&self, settled: bool) -> Verdict {
        let play = self.play.as_ref().expect("a game is in progress");
        let (known, picture, diff) = (&play.known, &self.picture, play.diff);
        if diff.is_empty() {
            return Verdict::InSync;
        }
        // Both kings on the centre squares stand next to each other, which
        // no legal position allows: the result gesture, never a move.
        if let Some(outcome) = result_gesture(picture) {
            return Verdict::Gesture(outcome);
        }

        // A new move from the game position. A move leaves a piece of the
        // mover on a square where the game has none of it: without one,
        // no move can be on the board (most sensor events are lifts).
        let mover = known.pos.turn();
        let placed = !(diff & picture.by_color(mover)).is_empty() || !(diff & picture.unknown()).is_empty();
        if placed {
            match find_move(known, picture, diff, false) {
                Found::One(m) if settled || !could_continue(known, m) => return Verdict::Make(m),
                Found::One(m) => return Verdict::Seen(m),
                Found::Several(moves) => {
                    if let Some(verdict) = self.one_of(known, &moves, settled) {
                        return verdict;
                    }
                }
                Found::None => {}
            }
        }
        // On an occupancy board a capture shows only its origin emptied: it
        // is made once the board saw its target emptied and filled again.
        let occupancy = self.occupancy();
        if occupancy
            && !placed
            && let Some(verdict) = self.shown_capture(known, diff)
        {
            return verdict;
        }

        // The made move was changed or taken back before completion.
        if let (Some(pending), Some(before)) = (play.record.pending(), &play.before) {
            // The board of the position before differs from the current
            // one only on the squares the made move changed.
            let changed = match pending.mv {
                crate::game::PlyMove::Legal(m) => effect(&before.pos, m).squares(),
                crate::game::PlyMove::Illegal(_) => shakmaty::Bitboard::FULL,
            };
            let before_diff = diff.without(changed) | (changed & picture.diff(before.pos.board()));
            if before_diff.is_empty() {
                // An occupancy board may have seen moves made since that
                // lead back to the same squares (Rh8 Ke7 Rh7+ Kd6).
                return if occupancy { self.follow_moves(false).unwrap_or(Verdict::Retract) } else { Verdict::Retract };
            }
            // A changed move leaves the mover's piece where the position
            // before had none of it.
            if (2..=4).contains(&before_diff.count())
                && !(before_diff & (picture.by_color(pending.mover) | picture.unknown())).is_empty()
                && let Found::One(m) = find_move(before, picture, before_diff, false)
                && (settled || !could_continue(before, m))
            {
                return Verdict::Amend(m);
            }
        }

        // The move is on the board and the opponent's hand is already at
        // work: the moved piece is not on its way any more.
        // (Once settled, a board two plies on is filled in below instead,
        // as not seen move by move.)
        if !settled
            && placed
            && diff.count() >= 3
            && let Some(m) = move_then_opponent(known, picture, diff)
        {
            return Verdict::Make(m);
        }
        // The board showed a move that was left to settle, and now shows the
        // opponent's answer on top of it.
        if let Some((seen, after)) = &play.seen {
            let after_diff = picture.diff(after.pos.board());
            let answered = !(after_diff & picture.by_color(!mover)).is_empty()
                && (matches!(find_move(after, picture, after_diff, false), Found::One(_))
                    || move_then_opponent(after, picture, after_diff).is_some());
            if answered {
                return Verdict::SeenThenAnswer(*seen);
            }
        }
        let pos = &known.pos;
        let opponents_lifted = |squares: shakmaty::Bitboard, mover: Color| {
            squares.into_iter().all(|sq| picture.get(sq) == Cell::Empty && pos.board().color_at(sq) == Some(!mover))
        };
        // Without a clock, the opponent starting a move completes the made
        // one (6.2.1 as rules.md reads it for boards without a clock).
        if !self.clock.running()
            && let Some(pending) = play.record.pending()
            && opponents_lifted(diff, pending.mover)
        {
            return Verdict::CompletePending;
        }
        if !settled {
            return Verdict::Wait;
        }
        // The move is on the board and the opponent has pieces in the air.
        // (An occupancy board cannot tell whose piece was put down, nor a
        // capture it did not see from a lifted piece: the lines below
        // follow every reading.)
        if !occupancy
            && let Found::One(m) = find_move(known, picture, diff, true)
            && opponents_lifted(diff.without(effect(pos, m).squares()), pos.turn())
        {
            return Verdict::Make(m);
        }
        // Only pieces in the air: a move in progress, however long it takes.
        // (A capture and recapture on one square can leave this picture too,
        // but pieces in hand are far likelier, and the next move tells.)
        // On an occupancy board it is also what a capture shows when the
        // board did not see the captured piece go: both are followed.
        if diff.into_iter().all(|sq| picture.get(sq) == Cell::Empty) {
            return if occupancy { self.follow_moves(true).unwrap_or(Verdict::Wait) } else { Verdict::Wait };
        }

        // The opponent answered an illegal move: it stands (A.5.2).
        if self.standing_reply().is_some() {
            return Verdict::Standing;
        }

        // An occupancy board's start position looks the same turned 180°:
        // the first moves tell which way round it is.
        if play.orientation_open
            && play.record.plies.is_empty()
            && let Some(verdict) = self.orientation()
        {
            return verdict;
        }

        // Several moves at once: fast play, or moves made while the board
        // was not heard (R10). Two or more plies move pieces of both
        // colours, so a board where only one side's pieces differ (castling
        // half done, a piece put down on a wrong square) needs no search.
        // Not after a completed illegal move until the board is restored:
        // legal moves that happen to lead to the same board would hide it.
        let board = pos.board();
        let both_sides =
            Color::ALL.into_iter().all(|color| !(diff & (board.by_color(color) | picture.by_color(color))).is_empty());
        // On an occupancy board every reading is followed (`occupancy.rs`);
        // a square whose piece was replaced shows no difference there, so
        // both sides' squares need not differ.
        if occupancy
            && !play.illegal_unresolved
            && let Some(verdict) = self.follow_moves(true)
        {
            return verdict;
        }
        let mut sequences = if both_sides && !play.illegal_unresolved && !occupancy {
            find_sequences(known, picture, self.config.fill_in_plies, None)
        } else {
            Vec::new()
        };
        // Lines that differ only before what the board showed (f3 gxf3 or
        // f4 gxf3 e.p.): the one through the position seen on the board.
        if let (true, Some((seen, _))) = (sequences.len() > 1, &play.seen) {
            let through = find_sequences(known, picture, self.config.fill_in_plies, Some(*seen));
            if through.len() == 1 {
                sequences = through;
            }
        }
        match sequences.len() {
            0 => {}
            1 => return Verdict::FillIn(sequences.pop().expect("one sequence")),
            _ => return Verdict::Ambiguous(sequences),
        }

        // A new game set up on the board.
        if (play.record.plies.len() >= 2 || play.wrong_start)
            && let Some(start) = find_start(&self.picture_as_reported(), &self.expected)
        {
            return Verdict::NewGame(start);
        }
        Verdict::Unexplained
    }

    /// Carries out a verdict.
    fn act(&mut self, now: Timestamp, verdict: Verdict, settled: bool) {
        let play = self.play.as_mut().expect("a game is in progress");
        if !matches!(verdict, Verdict::Gesture(_)) {
            play.gesture = None;
        }
        match verdict {
            Verdict::Wait => {}
            Verdict::InSync => self.back_in_sync(now),
            Verdict::Gesture(outcome) => {
                if play.gesture.is_none_or(|(_, seen)| seen != outcome) {
                    play.gesture = Some((now, outcome));
                    // Should the gesture be undone, the board is not
                    // called out of sync before it would have counted.
                    play.hold_out_of_sync(now + self.config.gesture_hold);
                }
            }
            Verdict::Make(m) => {
                self.make_move(now, m, Source::OnBoard);
                // Once settled, whatever else the board shows is judged now:
                // nothing may change again to prompt it.
                if settled && self.play.as_ref().is_some_and(|p| !p.over && !p.diff.is_empty()) {
                    let verdict = self.verdict(settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::MakeUnknownPromotion(m) => self.make_unknown_promotion(now, m, Source::OnBoard),
            Verdict::Seen(m) => {
                if play.seen.as_ref().is_none_or(|(seen, _)| *seen != m) {
                    // Only the position: its moves are generated if the
                    // board goes on from it (the piece may slide further).
                    play.seen = Some((m, play.known.after(m)));
                }
            }
            Verdict::Retract => self.retract(now),
            Verdict::Amend(m) => self.amend(now, m),
            Verdict::SeenThenAnswer(m) => {
                self.make_move(now, m, Source::OnBoard);
                // The answer is now a move from the game position.
                if self.play.as_ref().is_some_and(|p| !p.over) {
                    let verdict = self.verdict(settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::CompletePending => {
                self.complete_last(now, None);
                // On an occupancy board the lifted piece may also have made
                // a capture the board could not see: settled, that is
                // judged now, as nothing may change again to prompt it.
                if settled && self.occupancy() {
                    let verdict = self.verdict(settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::FillIn(line) => self.fill_in(now, &line, Source::Inferred),
            Verdict::Ambiguous(lines) => self.ambiguous(now, lines),
            Verdict::Follow(lines) => self.follow_lines(now, lines),
            Verdict::TurnBoard => {
                self.turn_board(now);
                if self.play.as_ref().is_some_and(|p| !p.over && !p.diff.is_empty()) {
                    let verdict = self.verdict(settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::Standing => self.stand(now),
            Verdict::NewGame(start) => self.start_game(now, start),
            Verdict::Unexplained => {
                let since = *play.unexplained_since.get_or_insert(now);
                if play.king_on_centre(&self.picture) {
                    play.hold_out_of_sync(since + self.config.out_of_sync_after + self.config.gesture_hold);
                }
            }
        }
    }

    /// While lines are followed, no line explains the board: a new game set
    /// up or the result gesture end them; anything else (a move half made,
    /// a piece knocked over) leaves them waiting for the board, and is
    /// published as out of sync if it lasts.
    pub(super) fn lines_unexplained(&mut self, now: Timestamp) {
        let verdict = self.verdict(true);
        if matches!(verdict, Verdict::NewGame(_) | Verdict::Gesture(_)) {
            self.drop_lines();
            return self.act(now, verdict, true);
        }
        let play = self.play.as_mut().expect("a game is in progress");
        if play.unexplained_since.is_none() {
            play.unexplained_since = Some(now);
        }
    }

    /// No game in progress (before the first, or after one ended): watch for
    /// a start position, a wrong one, or the result gesture after a game.
    fn judge_waiting(&mut self, now: Timestamp) {
        let reported = self.picture_as_reported();
        if let Some(start) = find_start(&reported, &self.expected) {
            self.wrong_start = None;
            if start.rotated && self.config.rotated_board == super::RotatedBoard::Alert {
                if self.waiting_alerted.as_ref() != Some(&reported) {
                    self.waiting_alerted = Some(reported);
                    self.alert(
                        now,
                        AlertKind::RotatedBoard,
                        None,
                        "the board is turned 180° (the start position is seen from the wrong side): turn the board or set rotated_board = \"flip\"".into(),
                        Vec::new(),
                        now,
                    );
                }
                return;
            }
            return self.start_game(now, start);
        }
        if find_wrong_start(&reported, self.setup.chess960).is_some() {
            // Judged once it has stood for `out_of_sync_after`: pieces are
            // often swapped back within a moment while setting up.
            if self.wrong_start.as_ref().is_none_or(|(_, p)| *p != reported) {
                self.wrong_start = Some((now, reported));
            }
            return;
        }
        self.wrong_start = None;
        if let Some(play) = self.play.as_mut()
            && play.over
        {
            match result_gesture(&self.picture) {
                Some(outcome) if play.gesture.is_none_or(|(_, seen)| seen != outcome) => {
                    play.gesture = Some((now, outcome));
                }
                Some(_) => {}
                None => play.gesture = None,
            }
        }
    }

    /// The board shows the game position again.
    pub(super) fn back_in_sync(&mut self, now: Timestamp) {
        let Some(play) = self.play.as_mut() else { return };
        play.unexplained_since = None;
        play.gesture = None;
        if matches!(play.status, BoardStatus::OutOfSync { .. }) {
            play.status = BoardStatus::InSync;
            self.emit(now, EventKind::Status(BoardStatus::InSync));
        }
    }

    /// The board has shown something unexplained for `out_of_sync_after`:
    /// publish it with the squares that differ (R9), and say which pieces of
    /// the side not to move left their squares (7.4.1).
    pub(super) fn out_of_sync(&mut self, now: Timestamp) {
        let Some(play) = self.play.as_mut().filter(|p| !p.over) else { return };
        let since = play.unexplained_since.unwrap_or(now);
        let play_illegal_unresolved = play.illegal_unresolved;
        let to_move = play.known.pos.turn();
        let squares: Vec<_> = play.diff.into_iter().collect();
        let displaced: Vec<_> = squares
            .iter()
            .copied()
            .filter(|&sq| matches!(self.picture.get(sq), Cell::Piece(p) if p.color != to_move))
            .collect();
        play.status = BoardStatus::OutOfSync { squares: squares.clone() };
        let listed = squares
            .iter()
            .map(|sq| format!("{sq} ({})", describe_cell(self.picture.get(*sq))))
            .collect::<Vec<_>>()
            .join(", ");
        self.emit(now, EventKind::Status(BoardStatus::OutOfSync { squares: squares.clone() }));
        if play_illegal_unresolved {
            // The completed illegal move was alerted already; the board not
            // showing the game position is that same incident.
            return;
        }
        self.alert(
            since,
            AlertKind::OutOfSync,
            Some(to_move),
            format!(
                "the board does not show the game position and no legal move explains it; {} to move; differing squares: {listed}",
                side_name(to_move)
            ),
            squares,
            since,
        );
        if !displaced.is_empty() {
            let listed = displaced
                .iter()
                .map(|sq| format!("{} on {sq}", describe_cell(self.picture.get(*sq))))
                .collect::<Vec<_>>()
                .join(", ");
            self.alert(
                since,
                AlertKind::DisplacedPiece,
                Some(!to_move),
                format!(
                    "{} is to move but {}'s pieces stand where the game has none: {listed}; the position must be restored (7.4.1, 7.6)",
                    side_name(to_move),
                    side_name(!to_move)
                ),
                displaced,
                since,
            );
        }
    }

    /// Several move sequences explain the board: alert once and wait
    /// (R10). When they are the same moves in different orders (1.Nf3 e5
    /// 2.Nc3 and 1.Nc3 e5 2.Nf3) the position is certain, and with
    /// `uncertain_order = "record"` the game goes on instead: the first
    /// order is recorded, marked as uncertain, and the arbiter is told the
    /// others.
    fn ambiguous(&mut self, now: Timestamp, mut sequences: Vec<Vec<Move>>) {
        let play = self.play.as_mut().expect("a game is in progress");
        if play.ambiguous.as_ref() == Some(&self.picture) {
            return;
        }
        let since = play.record.plies.last().map_or(play.record.started_at, |p| p.made_at);
        let pos = play.known.pos.clone();
        let to_move = pos.turn();
        // A stable order, so that live and replay record the same one.
        sequences.sort_by_cached_key(|line| describe_line(&pos, line));
        let lines: Vec<String> = sequences.iter().map(|line| describe_line(&pos, line)).collect();
        let same_position = transpositions(&pos, &sequences);
        if same_position && self.config.uncertain_order == super::UncertainOrder::Record {
            let plies = sequences[0].len();
            self.alert(
                now,
                AlertKind::AmbiguousMoves,
                Some(to_move),
                format!(
                    "the board showed only the position after {plies} plies, which more than one order of moves reaches ({}); recorded as {}, with the order marked uncertain",
                    lines.join(" or "),
                    lines[0]
                ),
                Vec::new(),
                since,
            );
            return self.fill_in(now, &sequences[0], Source::InferredOrderUncertain);
        }
        let play = self.play.as_mut().expect("a game is in progress");
        play.ambiguous = Some(self.picture.clone());
        let same = if same_position { "; the position is the same either way" } else { "" };
        self.alert(
            now,
            AlertKind::AmbiguousMoves,
            Some(to_move),
            format!(
                "the board is several moves ahead and more than one sequence leads there ({}){same}; waiting for the board or the operator",
                lines.join(" or ")
            ),
            Vec::new(),
            since,
        );
    }

    /// The picture as the board reports it (undoing the rotation), for
    /// start-position detection, which tries both orientations itself.
    pub(super) fn picture_as_reported(&self) -> crate::sensor::Picture {
        if self.rotated { self.picture.rotated() } else { self.picture.clone() }
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

/// What an occupancy board shows, judged out of line: boards that identify
/// pieces never come here, and their judging stays as small as it was.
impl Reconstructor {
    /// Several moves look alike on the board (it cannot tell some pieces
    /// apart): the one the sensor history leaves, or every reading to
    /// follow once the board has settled.
    #[cold]
    #[inline(never)]
    fn one_of(&self, known: &Known, moves: &[Move], settled: bool) -> Option<Verdict> {
        if !self.occupancy() {
            return unknown_promotion(moves).filter(|_| settled).map(Verdict::MakeUnknownPromotion);
        }
        match sift(known, &self.changes(), moves, self.last_began())[..] {
            // The new piece is not seen until the board has settled.
            [m] if m.is_promotion() => settled.then_some(Verdict::MakeUnknownPromotion(m)),
            [m] if settled || !could_continue(known, m) => Some(Verdict::Make(m)),
            [m] => Some(Verdict::Seen(m)),
            _ if settled => self.follow_moves(false),
            _ => None,
        }
    }

    /// A capture the board saw made while only pieces are lifted.
    #[cold]
    #[inline(never)]
    fn shown_capture(&self, known: &Known, diff: shakmaty::Bitboard) -> Option<Verdict> {
        let m = shown_capture(known, &self.picture, diff, &self.changes(), self.last_began())?;
        Some(if m.is_promotion() { Verdict::MakeUnknownPromotion(m) } else { Verdict::Make(m) })
    }

    /// The readings of the board from the game position, to follow: if
    /// any has a move (or, with `in_air_too`, if there are several, one of
    /// them a piece still in the hand).
    #[cold]
    #[inline(never)]
    fn follow_moves(&self, in_air_too: bool) -> Option<Verdict> {
        let lines = self.lines_from_game(&self.picture, &self.changes());
        let moved = lines.iter().any(|line| !line.steps.is_empty());
        (moved || (in_air_too && lines.len() > 1)).then_some(Verdict::Follow(lines))
    }

    /// Before the first move of a board whose start position looks the
    /// same turned 180°: whether the board shows moves only when turned.
    #[cold]
    #[inline(never)]
    fn orientation(&self) -> Option<Verdict> {
        let turned = self.picture.rotated();
        if self.lines_from_game(&turned, &self.changes().rotated()).is_empty() {
            return None;
        }
        // Both ways (1.e4 e5 is 1.d4 d5 turned): the next move tells.
        let here = self.lines_from_game(&self.picture, &self.changes());
        Some(if here.is_empty() { Verdict::TurnBoard } else { Verdict::Wait })
    }

    /// The board turned out to report its squares turned 180°: read it the
    /// other way round from now on (or alert, per configuration).
    fn turn_board(&mut self, now: Timestamp) {
        let play = self.play.as_mut().expect("a game is in progress");
        play.orientation_open = false;
        if self.config.rotated_board == super::RotatedBoard::Alert {
            return self.alert(
                now,
                AlertKind::RotatedBoard,
                None,
                "the first move shows the board turned 180° (the start position looks the same either way on a board that sees only occupancy): turn the board or set rotated_board = \"flip\"".into(),
                Vec::new(),
                now,
            );
        }
        self.rotated = !self.rotated;
        self.picture = self.picture.rotated();
        self.log.rotate();
        let play = self.play.as_mut().expect("a game is in progress");
        play.resync(&self.picture);
        self.alert(
            now,
            AlertKind::RotatedBoard,
            None,
            "the first move shows the board turned 180° (the start position looks the same either way on a board that sees only occupancy); its squares are read turned from now on".into(),
            Vec::new(),
            now,
        );
    }
}

/// Whether every line ends in the same position (pieces, side to move,
/// castling rights, en passant square): the same moves, or moves with the
/// same effect, in different orders.
fn transpositions(pos: &shakmaty::Chess, lines: &[Vec<Move>]) -> bool {
    let end = |line: &Vec<Move>| {
        let mut pos = pos.clone();
        for &m in line {
            pos.play_unchecked(m);
        }
        let ep = pos.ep_square(shakmaty::EnPassantMode::Legal);
        (pos.board().clone(), pos.turn(), pos.castles().castling_rights(), ep)
    };
    let first = end(&lines[0]);
    lines[1..].iter().all(|line| end(line) == first)
}
