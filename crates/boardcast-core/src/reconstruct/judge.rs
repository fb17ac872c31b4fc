//! Judging the board: does it show the game, a new move, a changed move, a
//! result gesture, a new game, or something nothing explains?
//!
//! Judging is split in two: `verdict.rs` looks at the board and the game
//! without changing anything and says what it sees, by named rules in a
//! fixed order; `act`, here, carries the verdict out. A verdict is asked for right after every change
//! (`settled = false`), when only what cannot be a piece still on its way
//! is acted on, and once the board has been still for `settle` (or a clock
//! press says the move is finished), when everything is decided.

use shakmaty::{Move, Position};

use super::{
    Phase, Reconstructor, Source,
    describe::{describe_cell, describe_line},
    gesture::result_gesture,
    start::StartSeen,
    verdict::Verdict,
};
use crate::{
    alert::{AlertKind, side_name},
    event::{BoardStatus, EventKind},
    sensor::Cell,
    time::Timestamp,
};

impl Reconstructor {
    /// Judges the board right after a change.
    pub(super) fn judge_now(&mut self, now: Timestamp) {
        // Readings of an occupancy board are followed from one still board
        // to the next.
        if let Some(game) = self.phase.playing()
            && !self.following_lines()
        {
            let verdict = self.verdict(game, false);
            self.act(now, verdict, false);
        }
    }

    /// Judges the board once it has been still for `settle`.
    pub(super) fn judge_settled(&mut self, now: Timestamp) {
        match self.phase.playing() {
            // Readings of an occupancy board are followed instead.
            Some(game) if game.readings.lines.is_some() => self.judge_lines(now),
            Some(game) => {
                let verdict = self.verdict(game, true);
                self.act(now, verdict, true);
            }
            None => self.judge_waiting(now),
        }
    }

    /// Carries out a verdict.
    fn act(&mut self, now: Timestamp, verdict: Verdict, settled: bool) {
        let Some(game) = self.phase.game_mut() else { return };
        if !matches!(verdict, Verdict::Gesture(_)) {
            game.gesture = None;
        }
        match verdict {
            Verdict::Wait => {}
            Verdict::InSync => self.back_in_sync(now),
            Verdict::Gesture(outcome) => {
                if game.gesture.is_none_or(|(_, seen)| seen != outcome) {
                    game.gesture = Some((now, outcome));
                    // Should the gesture be undone, the board is not
                    // called out of sync before it would have counted.
                    game.hold_out_of_sync(now + self.config.gesture_hold);
                }
            }
            Verdict::Make(m) => {
                self.make_move(now, m, Source::OnBoard);
                // Once settled, whatever else the board shows is judged now:
                // nothing may change again to prompt it.
                if settled && let Some(game) = self.phase.playing().filter(|p| !p.diff.is_empty()) {
                    let verdict = self.verdict(game, settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::MakeUnknownPromotion(m) => self.make_unknown_promotion(now, m, Source::OnBoard),
            Verdict::Seen(m) => {
                if game.pending.seen.as_ref().is_none_or(|(seen, _)| *seen != m) {
                    // Only the position: its moves are generated if the
                    // board goes on from it (the piece may slide further).
                    game.pending.seen = Some((m, game.known.after(m)));
                }
            }
            Verdict::Retract => self.retract(now),
            Verdict::Amend(m) => self.amend(now, m),
            Verdict::SeenThenAnswer(m) => {
                self.make_move(now, m, Source::OnBoard);
                // The answer is now a move from the game position.
                if let Some(game) = self.phase.playing() {
                    let verdict = self.verdict(game, settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::CompletePending => {
                self.complete_last(now, None);
                // On an occupancy board the lifted piece may also have made
                // a capture the board could not see: settled, that is
                // judged now, as nothing may change again to prompt it.
                if settled
                    && self.occupancy()
                    && let Some(game) = self.phase.game()
                {
                    let verdict = self.verdict(game, settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::FillIn(line) => self.fill_in(now, &line, Source::Inferred),
            Verdict::Ambiguous(lines) => self.ambiguous(now, lines),
            Verdict::Follow(lines) => self.follow_lines(now, lines),
            Verdict::TurnBoard => {
                self.turn_board(now);
                if let Some(game) = self.phase.playing().filter(|p| !p.diff.is_empty()) {
                    let verdict = self.verdict(game, settled);
                    self.act(now, verdict, settled);
                }
            }
            Verdict::Standing => self.stand(now),
            Verdict::NewGame(start) => self.start_game(now, start),
            Verdict::Unexplained => {
                let since = *game.unexplained_since.get_or_insert(now);
                if game.king_on_centre(&self.picture) {
                    game.hold_out_of_sync(since + self.config.out_of_sync_after + self.config.gesture_hold);
                }
            }
        }
    }

    /// While lines are followed, no line explains the board: a new game set
    /// up or the result gesture end them; anything else (a move half made,
    /// a piece knocked over) leaves them waiting for the board, and is
    /// published as out of sync if it lasts.
    pub(super) fn lines_unexplained(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game() else { return };
        let verdict = self.verdict(game, true);
        if matches!(verdict, Verdict::NewGame(_) | Verdict::Gesture(_)) {
            self.drop_lines();
            return self.act(now, verdict, true);
        }
        if let Some(game) = self.phase.game_mut() {
            game.unexplained_since.get_or_insert(now);
        }
    }

    /// No game in progress (before the first, or after one ended): watch for
    /// a start position, a wrong one, or the result gesture after a game.
    fn judge_waiting(&mut self, now: Timestamp) {
        let reported = self.picture_as_reported();
        match self.start.handle_picture(now, &reported) {
            StartSeen::Start(start) if start.rotated && self.config.rotated_board == super::RotatedBoard::Alert => {
                if self.start.alert_turned(&reported) {
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
            StartSeen::Start(start) => return self.start_game(now, start),
            // Judged once it has stood for `out_of_sync_after`: pieces are
            // often swapped back within a moment while setting up.
            StartSeen::Wrong => return,
            StartSeen::Nothing => {}
        }
        if let Phase::Over(game) = &mut self.phase {
            match result_gesture(&self.picture) {
                Some(outcome) if game.gesture.is_none_or(|(_, seen)| seen != outcome) => {
                    game.gesture = Some((now, outcome));
                }
                Some(_) => {}
                None => game.gesture = None,
            }
        }
    }

    /// The board shows the game position again.
    pub(super) fn back_in_sync(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        game.unexplained_since = None;
        game.gesture = None;
        if game.back_in_sync() {
            self.emit(now, EventKind::Status(BoardStatus::InSync));
        }
    }

    /// The board has shown something unexplained for `out_of_sync_after`:
    /// publish it with the squares that differ (R9), and say which pieces of
    /// the side not to move left their squares (7.4.1).
    pub(super) fn out_of_sync(&mut self, now: Timestamp) {
        let Some(game) = self.phase.playing_mut() else { return };
        let since = game.unexplained_since.unwrap_or(now);
        let illegal_unresolved = game.illegal_unresolved;
        let to_move = game.known.pos.turn();
        let squares: Vec<_> = game.diff.into_iter().collect();
        let displaced: Vec<_> = squares
            .iter()
            .copied()
            .filter(|&sq| matches!(self.picture.get(sq), Cell::Piece(p) if p.color != to_move))
            .collect();
        game.status = BoardStatus::OutOfSync { squares: squares.clone() };
        let listed = squares
            .iter()
            .map(|sq| format!("{sq} ({})", describe_cell(self.picture.get(*sq))))
            .collect::<Vec<_>>()
            .join(", ");
        self.emit(now, EventKind::Status(BoardStatus::OutOfSync { squares: squares.clone() }));
        if illegal_unresolved {
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
        let Some(game) = self.phase.game_mut() else { return };
        if game.ambiguous.as_ref() == Some(&self.picture) {
            return;
        }
        let since = game.record.plies.last().map_or(game.record.started_at, |p| p.made_at);
        let pos = game.known.pos.clone();
        let to_move = pos.turn();
        // A stable order, so that live and replay record the same one.
        sequences.sort_by_cached_key(|line| describe_line(&pos, line));
        let lines: Vec<String> = sequences.iter().map(|line| describe_line(&pos, line)).collect();
        let same_position = transpositions(&pos, &sequences);
        let record_order = same_position && self.config.uncertain_order == super::UncertainOrder::Record;
        if !record_order {
            // Waiting for the board: not alerted again for this picture.
            game.ambiguous = Some(self.picture.clone());
        }
        if record_order {
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

/// Acting on what only an occupancy board shows, out of line.
impl Reconstructor {
    /// The board turned out to report its squares turned 180°: read it the
    /// other way round from now on (or alert, per configuration).
    fn turn_board(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        game.readings.orientation_open = false;
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
        game.resync(&self.picture);
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
