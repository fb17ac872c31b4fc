//! Changing the game record: games starting and ending, moves made,
//! completed, amended, retracted and filled in. Every change goes out as an
//! event, in order, with the game's sequence number.

use shakmaty::{Bitboard, CastlingMode, Move, Position};

use super::{
    Game, PendingMove, Phase, Reconstructor, Source,
    known::Known,
    occupancy::Readings,
    start::Start,
    touch::{describe_move, touch_findings},
};
use crate::{
    alert::{AlertKind, side_name},
    event::{BoardStatus, ClockState, EventKind, MoveInfo},
    game::{
        GameRecord, GameResult,
        end::{Claimable, claimable, forced_result_with},
    },
    time::Timestamp,
};

impl Reconstructor {
    /// Starts a game from a start position found on the board.
    pub(super) fn start_game(&mut self, now: Timestamp, start: Start) {
        self.begin(now, start, false);
    }

    /// A wrong initial position has stood long enough: alert (7.2.1) and
    /// record the game from it anyway, so that nothing played is lost.
    pub(super) fn start_wrong_game(&mut self, now: Timestamp) {
        let Some(since) = self.start.take_wrong() else {
            return;
        };
        let reported = self.picture_as_reported();
        let Some(wrong) = self.start.wrong_start(&reported) else {
            return;
        };
        let squares: Vec<_> =
            wrong.squares.into_iter().map(|sq| if wrong.rotated { super::rotate(sq) } else { sq }).collect();
        let listed = squares.iter().map(ToString::to_string).collect::<Vec<_>>().join(" ");
        let what = if self.setup.chess960 { "is not a Chess960 start position" } else { "is not the start position" };
        let Some((position, castling_mode)) = wrong.position else {
            self.alert(
                since,
                AlertKind::WrongInitialPosition,
                None,
                format!("the set-up on the board {what} (squares {listed}) and is not a playable position"),
                squares,
                since,
            );
            return;
        };
        let start = Start { position, castling_mode, rotated: wrong.rotated, set_up: true };
        self.begin(now, start, true);
        self.alert(
            since,
            AlertKind::WrongInitialPosition,
            None,
            format!("the initial position {what} (squares {listed}); the game is recorded from it as set up; 7.2.1: the game shall be annulled and a new game played"),
            squares,
            since,
        );
    }

    fn begin(&mut self, now: Timestamp, start: Start, wrong_start: bool) {
        // The previous game, if any, gives way.
        let unfinished = self.phase.playing().filter(|p| !p.record.plies.is_empty()).map(|p| p.record.number);
        if let Some(number) = unfinished {
            // Alerted while it is still the current game: the alert is its.
            self.alert(
                now,
                AlertKind::GameWithoutResult,
                None,
                format!("a new game was set up before game {number} had a result; game {number} is kept without one (the operator can enter it)"),
                Vec::new(),
                now,
            );
        }
        if let Some(previous) = self.phase.take_game() {
            self.finished.push(previous.record);
        }
        if start.rotated != self.rotated {
            self.picture = self.picture.rotated();
            self.rotated = start.rotated;
        }
        let number = self.next_game;
        self.next_game += 1;
        self.seq = 0;
        self.start.reset();
        self.clock.new_game(self.config.white_clock.side());
        let mut record = GameRecord::new(number, start.position.clone(), start.castling_mode, start.set_up, now);
        record.tags = self.setup.tags.clone();
        let diff = self.picture.diff(record.position().board());
        // An occupancy board's start position looks the same turned round.
        let orientation_open =
            !self.picture.unknown().is_empty() && self.picture.rotated().agrees_with(record.position().board());
        self.phase = Phase::Playing(Game {
            known: Known::new(start.position.clone()),
            record,
            wrong_start,
            diff,
            unexplained_since: None,
            status: BoardStatus::InSync,
            gesture: None,
            held: None,
            illegal: Default::default(),
            illegal_unresolved: false,
            restoring_press: None,
            flags: Default::default(),
            standing: None,
            ambiguous: None,
            claims: Vec::new(),
            irregular_at: None,
            pending: PendingMove::default(),
            readings: Readings { orientation_open, ..Readings::default() },
        });
        self.emit(
            now,
            EventKind::GameStarted {
                start: Box::new(start.position),
                chess960: start.castling_mode == CastlingMode::Chess960,
                rotated: self.rotated,
            },
        );
    }

    /// The board shows a new legal move.
    pub(super) fn make_move(&mut self, now: Timestamp, m: Move, how: Source) {
        let since = self.window_start(0);
        // What an occupancy board saw of the move orders the next ones.
        let changes = self.occupancy().then(|| self.changes());
        let Some(game) = self.phase.game_mut() else { return };
        let mover = game.known.pos.turn();
        if let Some(changes) = changes {
            game.readings.previous = game.readings.previous.then(&changes, &game.known.pos, m);
        }
        // The sensor history says nothing about a move the operator entered.
        let findings = if how == Source::Entered {
            Vec::new()
        } else {
            touch_findings(&self.log, since, &game.known, m, self.config.touch_min)
        };
        // A move made on top of a made move completes it (6.2.1.2).
        let completed = game.complete_last(now, None);
        let retracted = game.pending.retracted.take().filter(|(ply, _, _)| *ply == game.record.plies.len() + 1);
        let (san, next) = match game.pending.seen.take() {
            Some((seen, after)) if seen == m => (game.known.san_to(m, &after), after),
            _ => game.known.play(m),
        };
        game.record.push_played(m, san, next.pos.clone(), now, how != Source::OnBoard);
        let ply = game.record.plies.last_mut().expect("just pushed");
        ply.order_uncertain = how == Source::InferredOrderUncertain;
        ply.entered = how == Source::Entered;
        let before = std::mem::replace(&mut game.known, next);
        // The box of the position before the previous move is reused.
        match &mut game.pending.before {
            Some(boxed) => **boxed = before,
            None => game.pending.before = Some(Box::new(before)),
        }
        let info = move_info(&game.record, game.record.plies.len() - 1);
        // A move taken back before completion and replaced by another: the
        // first was released on its square (4.7), as far as the board can
        // tell.
        let replaced = retracted.filter(|(_, old, _)| old.uci != info.uci).map(|(_, old, made_at)| {
            let message = format!(
                "{} made {}, took it back and then made {} instead before completing the move (4.7)",
                side_name(mover),
                old.san,
                info.san
            );
            (made_at, message)
        });
        let to = m.to();
        if let Some(completed) = completed {
            self.emit(now, completed);
        }
        self.emit(now, EventKind::MoveMade(info));
        if let Some((made_at, message)) = replaced {
            self.alert(made_at, AlertKind::ReleasedPieceMoved, Some(mover), message, vec![to], since);
        }
        for finding in findings {
            self.alert(finding.t, finding.kind, Some(mover), finding.message, finding.squares, since);
        }
        self.after_move(now);
    }

    /// An occupancy board shows a promotion: record a queen and ask the
    /// operator to confirm.
    pub(super) fn make_unknown_promotion(&mut self, now: Timestamp, m: Move, how: Source) {
        self.make_move(now, m, how);
        let Some(game) = self.phase.game() else { return };
        let ply = game.record.plies.len();
        let mover = !game.known.pos.turn();
        self.alert(
            now,
            AlertKind::PromotionUnknown,
            Some(mover),
            format!("{} promoted on {} but the board cannot tell the new piece; recorded as a queen (ply {ply}); the operator can correct it", side_name(mover), m.to()),
            vec![m.to()],
            now,
        );
    }

    /// The made move was replaced by another before completion.
    pub(super) fn amend(&mut self, now: Timestamp, m: Move) {
        let since = self.window_start(1);
        let Some(game) = self.phase.game_mut() else { return };
        let index = game.record.plies.len() - 1;
        let previous = move_info(&game.record, index);
        let old = game.record.pop().expect("a made move to amend");
        let before = match game.pending.before.take() {
            Some(before) => *before,
            None => Known::new(game.record.position().clone()),
        };
        let findings = touch_findings(&self.log, since, &before, m, self.config.touch_min);
        let (san, next) = before.play(m);
        game.record.push_played(m, san, next.pos.clone(), now, false);
        game.known = next;
        game.pending.before = Some(Box::new(before.clone()));
        let now_info = move_info(&game.record, index);
        self.emit(now, EventKind::MoveAmended { previous: Box::new(previous), now: Box::new(now_info) });
        let castled_through = matches!(m, Move::Castle { .. }) && {
            // King first or rook first, then the other piece: one castling
            // move, not a changed move (the rook-first case is 4.4.2).
            let origins = super::matcher::origins(m);
            old.mv_origin().is_some_and(|sq| origins.contains(sq))
        };
        // A piece that stops on a square of its way and then goes on along
        // the same line looks, to the sensors, like a slowly sliding piece
        // unless it stood there longer than any slide takes (`release_min`,
        // measured on real recordings: docs/alerts.md): then it was
        // released there, and moving it on breaks 4.7. A piece taken up
        // again and put elsewhere is alerted whatever the time.
        let along_line = old.mv_origin() == m.from()
            && m.from().is_some_and(|from| shakmaty::attacks::between(from, m.to()).contains(old.mv_target()));
        let stood = self.log.stood(old.mv_target(), since);
        let slid_on = along_line && stood.is_none_or(|d| d < self.config.release_min);
        if !castled_through && !slid_on {
            let same_piece = old.mv_origin() == m.from();
            let message = if same_piece {
                let still = match stood {
                    Some(d) if along_line => {
                        format!(" after it stood there for {}", super::touch::describe_duration(d))
                    }
                    _ => String::new(),
                };
                format!(
                    "{} released {} and then moved the piece on to {}{still} before completing the move (4.7)",
                    side_name(old.mover),
                    old.san,
                    m.to()
                )
            } else {
                format!(
                    "{} made {} and then replaced it by {} before completing the move (4.7)",
                    side_name(old.mover),
                    old.san,
                    describe_move(&before.pos, m)
                )
            };
            self.alert(
                old.made_at,
                crate::alert::AlertKind::ReleasedPieceMoved,
                Some(old.mover),
                message,
                Vec::from_iter(Bitboard::from(m.to())),
                since,
            );
        }
        for finding in findings {
            self.alert(finding.t, finding.kind, Some(before.pos.turn()), finding.message, finding.squares, since);
        }
        self.after_move(now);
    }

    /// The made move was taken back before completion.
    pub(super) fn retract(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        let previous = game.retract(&self.picture);
        self.emit(now, EventKind::MoveRetracted { previous });
        self.back_in_sync(now);
    }

    /// Completes the last ply if it is only made, with the mover's clock if
    /// a press completed it.
    pub(super) fn complete_last(&mut self, now: Timestamp, press: Option<ClockState>) {
        if let Some(completed) = self.phase.game_mut().and_then(|game| game.complete_last(now, press)) {
            self.emit(now, completed);
        }
    }

    /// Moves the board shows all at once, filled in (R10).
    pub(super) fn fill_in(&mut self, now: Timestamp, line: &[Move], how: Source) {
        for (i, &m) in line.iter().enumerate() {
            self.make_move(now, m, how);
            if self.phase.is_over() {
                return;
            }
            if i + 1 < line.len() {
                self.complete_last(now, None);
            }
        }
    }

    /// After a move is on the record: the game position changed.
    pub(super) fn after_move(&mut self, now: Timestamp) {
        let quiet_at = (!self.clock.running()).then_some(now + self.config.quiet_completion);
        let Some(game) = self.phase.game_mut() else { return };
        let back_in_sync = game.after_move(&self.picture, quiet_at);
        // A press that came before the board showed the move completes it.
        let mover = game.record.plies.last().map(|p| p.mover);
        let press = game.pending.press.filter(|press| Some(press.by) == mover);
        if press.is_some() {
            game.pending.press = None;
        }
        if back_in_sync {
            self.emit(now, EventKind::Status(BoardStatus::InSync));
        }
        if let Some(press) = press {
            self.complete_last(press.at.max(now), Some(press.clock));
        }
        self.check_end(now);
    }

    /// Ends the game if the position forces a result; announces claimable
    /// draws.
    fn check_end(&mut self, now: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        if let Some(result) = forced_result_with(&game.record, game.known.has_moves()) {
            // A move that ends the game is completed by it (6.2.1.1).
            self.complete_last(now, None);
            self.end_game(now, result);
            return;
        }
        let claims: Vec<Claimable> = claimable(&game.record).collect();
        let new: Vec<Claimable> = claims.iter().copied().filter(|c| !game.claims.contains(c)).collect();
        game.claims = claims;
        let mover = game.record.plies.last().map(|p| p.mover);
        let ply = game.record.plies.len();
        for claim in new {
            let (kind, message) = match claim {
                Claimable::ThreefoldRepetition => (
                    AlertKind::ThreefoldRepetition,
                    format!("the position after ply {ply} has stood on the board for the third time: a draw can be claimed (9.2)"),
                ),
                Claimable::FiftyMoves => (
                    AlertKind::FiftyMoves,
                    "the last 50 moves by each player were made without a capture or a pawn move: a draw can be claimed (9.3)".into(),
                ),
            };
            self.alert(now, kind, mover.map(|m| !m), message, Vec::new(), now);
        }
    }

    /// The game has a result.
    pub(super) fn end_game(&mut self, now: Timestamp, result: GameResult) {
        let Some(game) = self.phase.game_mut() else { return };
        game.end(result);
        self.phase.end();
        self.emit(now, EventKind::GameEnded(result));
        self.emit(now, EventKind::Status(BoardStatus::AwaitingStart));
    }

    /// Where the sensor evidence for the move `back` plies before the next
    /// one starts: when the position it is made from came on the board (the
    /// press that completed the previous move, or the move itself).
    pub(super) fn window_start(&self, back: usize) -> Timestamp {
        let Some(game) = self.phase.game() else {
            return Timestamp::ZERO;
        };
        let plies = &game.record.plies;
        match plies.len().checked_sub(back + 1) {
            Some(index) => plies[index].pressed_at.unwrap_or(plies[index].made_at),
            None => game.record.started_at,
        }
    }
}

/// The published form of ply `index`.
pub(super) fn move_info(record: &GameRecord, index: usize) -> MoveInfo {
    let ply = &record.plies[index];
    MoveInfo {
        ply: index + 1,
        mover: ply.mover,
        san: ply.san,
        uci: ply.uci(record.castling_mode),
        after: Box::new(ply.after.clone()),
        inferred: ply.inferred,
        order_uncertain: ply.order_uncertain,
    }
}

impl crate::game::Ply {
    /// The square the moved piece came from (the king for castling).
    fn mv_origin(&self) -> Option<shakmaty::Square> {
        match self.mv {
            crate::game::PlyMove::Legal(m) => m.from(),
            crate::game::PlyMove::Illegal(i) => i.from,
        }
    }

    /// The square the moved piece went to.
    fn mv_target(&self) -> shakmaty::Square {
        match self.mv {
            crate::game::PlyMove::Legal(m) => m.to(),
            crate::game::PlyMove::Illegal(i) => i.to.unwrap_or(shakmaty::Square::A1),
        }
    }
}
