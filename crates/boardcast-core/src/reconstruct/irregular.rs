//! The clock and what it reveals: presses that complete moves, presses with
//! no move or an illegal one (7.5), illegal moves that stand in rapid and
//! blitz (A.5.2), irregular positions (A.5.4), flags (6.9), and the timers
//! of a game in progress.

use shakmaty::{Bitboard, Board, Chess, Color, KnownOutcome, Move, Position, Rank, Role};

use super::{
    Press, Reconstructor, Standing,
    describe::describe_cell,
    known::Known,
    matcher::{Found, find_move},
    start::lenient_position,
};
use crate::{
    alert::{AlertKind, side_name},
    event::{BoardStatus, ClockState, EventKind},
    game::{GameRecord, GameResult, IllegalMove, Tempo, Termination, TimeControl, end::flag_result},
    sensor::{Cell, Picture},
    time::Timestamp,
};

impl Reconstructor {
    /// `by` pressed the clock.
    pub(super) fn handle_press(&mut self, now: Timestamp, by: Color, clock: ClockState) {
        if self.phase.playing().is_none() {
            return;
        }
        // A press says the move is finished: judge the board now rather
        // than wait for it to settle.
        if self.settle_at.take().is_some() {
            self.judge_settled(now);
        }
        // Readings of an occupancy board in which `by` has not moved yet
        // give way.
        if self.following_lines() {
            self.lines_pressed(now, by);
        }
        if self.phase.game().and_then(|p| p.pending.press).is_some_and(|p| p.by != by) {
            // The opponent pressed before the first press was judged: the
            // first player's move is not coming (the opponent saw the board
            // and pressed back). Judge that press now, on the board as it
            // is, so that it is not lost under this one and this one is
            // taken as the correction it is (7.5.1). On a picture suspect
            // after lost bytes nothing is judged, as at the deadline; a
            // request for the whole board still unanswered is no reason to
            // wait, as the opponent's press shows no move is coming.
            let lost_bytes = self.lost.bytes_lost();
            if !lost_bytes {
                self.judge_press(now);
            } else if let Some(game) = self.phase.game_mut() {
                // Not judged; but this press is still the correction, not
                // a press to judge later against a move made meanwhile.
                game.pending.press = None;
                game.restoring_press = Some(by);
            }
        }
        let Some(game) = self.phase.playing_mut() else {
            return;
        };
        if game.restoring_press.is_some_and(|c| c != by) {
            // The offender pressed: the clock runs as it should again.
            game.restoring_press = None;
        }
        let plies = &game.record.plies;
        // The press belongs to the mover's latest move if it has not been
        // pressed for: the last ply, or the one before when the opponent
        // has already replied.
        let latest = plies.iter().rposition(|p| p.mover == by).filter(|&i| i + 2 >= plies.len());
        if let Some(index) = latest
            && plies[index].pressed_at.is_none()
        {
            if index + 1 == plies.len() {
                self.complete_last(now, Some(clock));
            } else {
                let ply = &mut game.record.plies[index];
                ply.pressed_at = Some(now);
                ply.clock_ms = Some(if by == Color::White { clock.white_ms } else { clock.black_ms });
            }
            self.check_irregular_position(now, by);
            return;
        }
        if game.restoring_press == Some(by) {
            // After an illegal move the clock is pressed back so that the
            // offender's time runs again (7.5.1): the correction, not a
            // press without a move. The offender's replacing move may
            // already be on the board.
            game.restoring_press = None;
            game.pending.press = None;
            return;
        }
        // No move of `by` to complete yet: the board may still be showing
        // it (a board scans its squares one after another).
        game.pending.press = Some(Press { by, at: now, deadline: now + self.config.press_grace, clock });
    }

    /// Deadlines of the game in progress.
    pub(super) fn handle_game_timers(&mut self, now: Timestamp) {
        let suspect = self.lost.is_suspect();
        if let Some(game) = self.phase.playing() {
            if let Some(press) = game.pending.press.filter(|p| p.deadline <= now)
                && !suspect
                && !self.ask_board_first(now, press.at)
            {
                self.judge_press(now);
            }
            let Some(game) = self.phase.game() else {
                return;
            };
            let since = game.unexplained_since.unwrap_or(now);
            if game.out_of_sync_due(&self.config).is_some_and(|t| t <= now)
                && !matches!(game.status, BoardStatus::OutOfSync { .. })
                && !suspect
                && !self.quick_reply_lines(now)
                && !self.ask_board_first(now, since)
            {
                self.out_of_sync(now);
            }
            let Some(game) = self.phase.game_mut() else {
                return;
            };
            if game.pending.quiet_at.is_some_and(|t| t <= now) {
                let following = game.readings.lines.is_some();
                let pending_on_board = game.record.pending().is_some() && game.diff.is_empty() && !following;
                game.pending.quiet_at = None;
                if pending_on_board {
                    self.complete_last(now, None);
                }
                if following {
                    self.lines_quiet(now);
                }
            }
        }
        let Some(game) = self.phase.game() else {
            return;
        };
        if let Some((since, outcome)) = game.gesture
            && since + self.config.gesture_hold <= now
        {
            self.result_gesture(now, outcome);
        }
    }

    /// The grace after a press with no move has passed: what did the
    /// player press on?
    fn judge_press(&mut self, now: Timestamp) {
        if self.settle_at.take().is_some() {
            self.judge_settled(now);
        }
        let since = self.window_start(0);
        let Some(game) = self.phase.playing_mut() else {
            return;
        };
        let Some(press) = game.pending.press.take() else {
            return;
        };
        if game.readings.lines.is_some() {
            // The board is read several ways and the record is behind it:
            // the press says nothing about the game position.
            return;
        }
        let known = game.known.clone();
        let ply = game.record.completed_plies();
        if known.pos.turn() != press.by {
            // Not this player's move (a clock started the wrong way round).
            return;
        }
        if game.diff.is_empty() {
            let what = "pressed the clock without making a move (7.5.3)".into();
            return self.illegal_completed(ply, press, AlertKind::ClockWithoutMove, what, since);
        }
        if let Some(m) = pawn_left_on_last_rank(&known, &self.picture) {
            // 7.5.2: the move is illegal and the pawn is replaced by a queen.
            self.make_move(press.at, m, super::Source::OnBoard);
            self.complete_last(press.at, Some(press.clock));
            let what = format!(
                "pressed the clock with a pawn on {} not replaced by a new piece (7.5.2); recorded as a queen",
                m.to()
            );
            self.illegal_completed(ply, press, AlertKind::PawnNotReplaced, what, since);
            self.check_irregular_position(now, press.by);
            return;
        }
        if game.illegal_unresolved || game.ambiguous.is_some() {
            // The board has not shown the game position since an illegal
            // move was alerted (or since it jumped ahead by an unknown
            // path): this press is on the same wrong board, not a new
            // illegal move, and must not count towards 7.5.5.
            return;
        }
        let squares = game
            .diff
            .into_iter()
            .map(|sq| format!("{sq} ({})", describe_cell(self.picture.get(sq))))
            .collect::<Vec<_>>()
            .join(", ");
        if self.setup.illegal_moves_stand() {
            game.standing = standing_position(&known.pos, &self.picture).map(|(mv, position)| Standing {
                at: press.at,
                mv,
                position: Known::new(position),
                clock: press.clock,
            });
        }
        let what = format!("pressed the clock on a position no legal move reaches ({squares}) (7.5.1)");
        self.illegal_completed(ply, press, AlertKind::IllegalMove, what, since);
    }

    /// An illegal move was completed: alert with what 7.5.5 (and A.3)
    /// provide for the first and the second one.
    fn illegal_completed(&mut self, ply: usize, press: Press, kind: AlertKind, what: String, since: Timestamp) {
        let Some(game) = self.phase.game_mut() else { return };
        game.illegal_unresolved = true;
        if kind != AlertKind::PawnNotReplaced {
            // The position (and the clock) are put back: the opponent's
            // next press is the clock's correction.
            game.restoring_press = Some(!press.by);
        }
        game.illegal[press.by] += 1;
        let count = game.illegal[press.by];
        let minutes = if self.setup.tempo() == Tempo::Standard { "two minutes" } else { "one minute (A.3)" };
        let consequence = match count {
            1 => format!(
                "first completed illegal move by {}: {minutes} extra for {} (7.5.5)",
                side_name(press.by),
                side_name(!press.by)
            ),
            _ => format!(
                "completed illegal move number {count} by {}: the game is lost for {} unless {} cannot checkmate (7.5.5)",
                side_name(press.by),
                side_name(press.by),
                side_name(!press.by)
            ),
        };
        let squares = game.diff.into_iter().collect();
        let message = format!("{} {what}; {consequence}", side_name(press.by));
        self.alert_at_ply(ply, press.at, kind, Some(press.by), message, squares, since);
    }

    /// The opponent's answer to a completed illegal move, if the board shows
    /// one.
    pub(super) fn standing_reply(&self) -> Option<Move> {
        let standing = self.phase.game()?.standing.as_ref()?;
        let diff = self.picture.diff(standing.position.pos.board());
        match find_move(&standing.position, &self.picture, diff, false) {
            Found::One(reply) => Some(reply),
            _ => None,
        }
    }

    /// In rapid or blitz without adequate supervision, the opponent's answer
    /// makes a completed illegal move stand (A.5.2): record it and go on
    /// from the board.
    pub(super) fn stand(&mut self, now: Timestamp) {
        let Some(reply) = self.standing_reply() else { return };
        let since = self.window_start(0);
        let Some(game) = self.phase.game_mut() else { return };
        let Some(standing) = game.standing.take() else { return };
        let by = !standing.position.pos.turn();
        game.record.push_illegal(standing.mv, standing.position.pos.clone(), standing.at);
        game.known = standing.position;
        let index = game.record.plies.len() - 1;
        let info = super::play::move_info(&game.record, index);
        let completed = game.complete_last(standing.at, Some(standing.clock));
        let written = game.record.plies[index].san;
        self.emit(standing.at, EventKind::MoveMade(info));
        if let Some(completed) = completed {
            self.emit(standing.at, completed);
        }
        self.alert(
            now,
            AlertKind::IllegalMoveStands,
            Some(by),
            format!(
                "{} answered the illegal move {written} by {}, so it stands and the game goes on from the position on the board (A.5.2)",
                side_name(!by),
                side_name(by)
            ),
            Vec::new(),
            since,
        );
        self.after_move(now);
        self.make_move(now, reply, super::Source::OnBoard);
    }

    /// After a completed move in rapid or blitz: both kings in check or a
    /// pawn on its last rank (A.5.4). The first time, the arbiter waits for
    /// the next move; if it is still there then, the game is drawn.
    fn check_irregular_position(&mut self, now: Timestamp, by: Color) {
        let Some(board) = self.picture.to_board() else {
            return;
        };
        let irregular = irregularity(&board);
        // A regular board with nothing irregular noted before changes
        // nothing, whatever the tempo: asked first, as the tempo comes from
        // parsing the `TimeControl` tag and this runs at every press.
        if irregular.is_none() && self.phase.game().is_some_and(|p| p.irregular_at.is_none()) {
            return;
        }
        if !self.setup.illegal_moves_stand() {
            return;
        }
        let Some(game) = self.phase.game_mut() else { return };
        let plies = game.record.plies.len();
        let Some(what) = irregular else {
            game.irregular_at = None;
            return;
        };
        let message = match game.irregular_at {
            Some(first) if plies > first => {
                format!("{what} is still on the board after the next move: the game is drawn (A.5.4)")
            }
            Some(_) => return,
            None => {
                game.irregular_at = Some(plies);
                format!(
                    "{what} after {}'s completed move: if it is still there after the next move, the game is drawn (A.5.4)",
                    side_name(by)
                )
            }
        };
        self.alert(now, AlertKind::IrregularPosition, Some(by), message, Vec::new(), now);
    }

    /// `color`'s flag fell (6.9, 6.4, III.3.1): counted, judged by
    /// [`flag_ruling`], and carried out.
    pub(super) fn handle_flag(&mut self, now: Timestamp, color: Color, clock: ClockState) {
        let stand = self.setup.illegal_moves_stand();
        let Some(game) = self.phase.playing_mut() else {
            return;
        };
        game.flags[color] += 1;
        let ruling = flag_ruling(&game.record, color, game.flags[color], clock, stand);
        self.alert(now, ruling.kind, ruling.side, ruling.message, Vec::new(), now);
        if let Some(result) = ruling.ends {
            self.end_game(now, result);
        }
    }

    /// The kings have stood on the centre squares for `gesture_hold`.
    fn result_gesture(&mut self, now: Timestamp, outcome: KnownOutcome) {
        self.move_under_the_gesture(now);
        let Some(game) = self.phase.game_mut() else { return };
        game.gesture = None;
        if let Some(result) = game.record.result {
            if result.outcome != outcome {
                self.alert(
                    now,
                    AlertKind::ResultConflict,
                    None,
                    format!(
                        "the kings show {} but the game already ended {} ({})",
                        outcome.as_str(),
                        result.pgn(),
                        result.termination.describe()
                    ),
                    Vec::new(),
                    now,
                );
            }
            return;
        }
        // The first king put on the centre may have been taken for a king
        // move. With a clock in use a real move is pressed for, so an
        // unpressed king move onto the centre was the gesture's first half
        // and is taken back. Without a clock the board cannot tell the two
        // apart and the move stays (the operator can take it back).
        let clock_in_use = self.clock.state().is_some();
        let gesture_half = game.record.plies.last().is_some_and(|last| {
            clock_in_use
                && last.pressed_at.is_none()
                && matches!(last.mv, crate::game::PlyMove::Legal(m)
                    if m.role() == Role::King && super::gesture::centre().any(|sq| sq == m.to()))
        });
        let taken_back = gesture_half.then(|| {
            let previous = super::play::move_info(&game.record, game.record.plies.len() - 1);
            game.record.pop();
            previous
        });
        game.resync(&self.picture);
        let completed = game.complete_last(now, None);
        if let Some(previous) = taken_back {
            self.emit(now, EventKind::MoveRetracted { previous });
        }
        if let Some(completed) = completed {
            self.emit(now, completed);
        }
        self.end_game(now, GameResult { outcome, termination: Termination::ResultGesture });
    }

    /// A move the board shows under the gesture. A daemon that reads the
    /// board late (a machine under load, a hub that holds bytes back) gets
    /// the last move and the kings at once, and never sees the board still
    /// with the move on it. With the kings put back where the game has
    /// them, a legal move that explains the rest of the board was made
    /// before the gesture. A king move is not guessed: the king went on
    /// to the centre, and where it stood in between the board never said.
    fn move_under_the_gesture(&mut self, now: Timestamp) {
        // An occupancy board does not say where the kings stand.
        if self.occupancy() {
            return;
        }
        let Some(game) = self.phase.playing() else { return };
        let board = game.known.pos.board();
        let back = super::gesture::kings_put_back(&self.picture, board);
        let diff = back.diff(board);
        if diff.is_empty() {
            return;
        }
        if let Found::One(m) = find_move(&game.known, &back, diff, false)
            && m.role() != Role::King
        {
            self.make_move(now, m, super::Source::OnBoard);
        }
    }
}

/// What a fallen flag means: the alert to raise and, if the flag decides
/// the game, its result. `flags` counts `color`'s flags with this one: a
/// player's n-th flag marks the end of the n-th period of the time control,
/// and only the last one loses by itself (6.4, 6.9). `illegal_moves_stand`
/// (rapid and blitz under appendix A) leaves the loss to a claim (A.5.3).
pub(crate) fn flag_ruling(
    record: &GameRecord,
    color: Color,
    flags: u32,
    clock: ClockState,
    illegal_moves_stand: bool,
) -> FlagRuling {
    let period = flags.saturating_sub(1) as usize;
    let both = clock.white_ms == 0 && clock.black_ms == 0;
    let time_control: Option<TimeControl> = record.tag("TimeControl").and_then(|t| t.parse().ok());
    let quota = time_control.as_ref().and_then(|tc| tc.quota_by_end_of(period));
    let moves = record.moves_by(color);
    if let Some(quota) = quota
        && moves >= quota
    {
        let message = format!(
            "{}'s flag shows the end of period {} although the {quota} moves it requires were completed ({moves} made): no loss (6.4); check the clock's settings",
            side_name(color),
            period + 1
        );
        return FlagRuling { kind: AlertKind::FlagAfterQuota, side: Some(color), message, ends: None };
    }
    if both {
        return if quota.is_none() {
            FlagRuling {
                kind: AlertKind::BothFlagsFallen,
                side: None,
                message: "both flags have fallen and which fell first cannot be told: the game is drawn in the last period (III.3.1)".into(),
                ends: Some(GameResult { outcome: KnownOutcome::Draw, termination: Termination::BothFlagsFallen }),
            }
        } else {
            FlagRuling {
                kind: AlertKind::BothFlagsFallen,
                side: None,
                message: "both flags have fallen and which fell first cannot be told: play on, as this is not the last period (III.3.1)".into(),
                ends: None,
            }
        };
    }
    let result = flag_result(record, color);
    let outcome = match result.outcome {
        KnownOutcome::Draw => format!("a draw, as {} cannot checkmate by any legal sequence", side_name(!color)),
        KnownOutcome::Decisive { winner } => format!("a win for {}", side_name(winner)),
    };
    if illegal_moves_stand {
        FlagRuling {
            kind: AlertKind::FlagFallen,
            side: Some(color),
            message: format!(
                "{}'s flag has fallen: {outcome} once claimed or announced (6.9, A.5.3)",
                side_name(color)
            ),
            ends: None,
        }
    } else {
        FlagRuling {
            kind: AlertKind::FlagFallen,
            side: Some(color),
            message: format!("{}'s flag has fallen: {outcome} (6.9)", side_name(color)),
            ends: Some(result),
        }
    }
}

/// A fallen flag's finding, ready to become an alert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FlagRuling {
    /// Which rule.
    pub(crate) kind: AlertKind,
    /// The side it is about (`None`: both flags).
    pub(crate) side: Option<Color>,
    /// The message for the arbiter.
    pub(crate) message: String,
    /// The game's result when the flag decides it now.
    pub(crate) ends: Option<GameResult>,
}

/// The promotion the board shows with the pawn still standing on the last
/// rank.
fn pawn_left_on_last_rank(known: &Known, picture: &Picture) -> Option<Move> {
    let pos = &known.pos;
    known.moves().find(|&m| {
        if m.promotion() != Some(Role::Queen) {
            return false;
        }
        let mut with_queen = picture.clone();
        with_queen.set(m.to(), Cell::Piece(pos.turn().queen()));
        let mut after = pos.clone();
        after.play_unchecked(m);
        picture.get(m.to()) == Cell::Piece(pos.turn().pawn()) && with_queen.agrees_with(after.board())
    })
}

/// The position on the board after an illegal move by the side to move,
/// with the opponent to move, and the move as the board shows it.
fn standing_position(pos: &Chess, picture: &Picture) -> Option<(IllegalMove, Chess)> {
    let board = picture.to_board()?;
    let mover = pos.turn();
    let before = pos.board();
    let gone: Bitboard = before.by_color(mover).without(board.by_color(mover));
    let came =
        board.by_color(mover).into_iter().filter(|&sq| board.piece_at(sq) != before.piece_at(sq)).collect::<Bitboard>();
    let (from, to) = (gone.single_square(), came.single_square());
    let piece = to.and_then(|sq| board.piece_at(sq)).or_else(|| from.and_then(|sq| before.piece_at(sq)))?;
    let capture = to.is_some_and(|sq| before.color_at(sq) == Some(!mover));
    let mut setup = pos.to_setup(shakmaty::EnPassantMode::Legal);
    setup.board = board;
    setup.turn = !mover;
    setup.ep_square = None;
    setup.halfmoves = 0;
    if mover == Color::Black {
        setup.fullmoves = setup.fullmoves.saturating_add(1);
    }
    let position = lenient_position(setup, pos.castles().mode())?;
    Some((IllegalMove { piece, from, to, capture }, position))
}

/// What makes a board irregular under A.5.4, if anything.
fn irregularity(board: &Board) -> Option<&'static str> {
    let back_ranks = Bitboard::from_rank(Rank::First) | Bitboard::from_rank(Rank::Eighth);
    if !(board.pawns() & back_ranks).is_empty() {
        return Some("a pawn on its last rank");
    }
    let in_check = |color: Color| {
        board.king_of(color).is_some_and(|king| !board.attacks_to(king, !color, board.occupied()).is_empty())
    };
    (in_check(Color::White) && in_check(Color::Black)).then_some("both kings in check")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sees_irregular_boards() {
        let board = |fen: &str| Board::from_ascii_board_fen(fen.as_bytes()).unwrap();
        assert_eq!(irregularity(&board("4k2P/8/8/8/8/8/8/4K3")), Some("a pawn on its last rank"));
        assert_eq!(irregularity(&board("4k3/8/8/8/8/8/8/r3K2R")), None, "only White is in check");
        assert_eq!(irregularity(&board("4k2R/8/8/8/8/8/8/r3K3")), Some("both kings in check"));
    }

    /// A game from `fen` with `TimeControl` `tc` and `plies` moves played
    /// completed by the clock (knights out and back, so the material stays).
    fn game(fen: &str, tc: &str, plies: usize) -> GameRecord {
        let pos: Chess =
            fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
        let mut record = GameRecord::new(1, pos, shakmaty::CastlingMode::Standard, true, Timestamp::from_millis(0));
        record.tags.push(("TimeControl".into(), tc.into()));
        let dance = ["Nf3", "Nf6", "Ng1", "Ng8"];
        for (i, san) in dance.iter().cycle().take(plies).enumerate() {
            let pos = record.position().clone();
            let m = san.parse::<shakmaty::san::San>().unwrap().to_move(&pos).unwrap();
            record.push(m, Timestamp::from_millis(i as u64 * 1000), false);
            record.complete_last(Timestamp::from_millis(i as u64 * 1000 + 500));
        }
        record
    }

    fn clock(white_ms: u64, black_ms: u64) -> ClockState {
        ClockState { white_ms, black_ms, running: None }
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn a_flag_in_the_last_period_loses_unless_appendix_a_leaves_it_to_a_claim() {
        let record = game(START, "5400+30", 3);
        let ruling = flag_ruling(&record, Color::Black, 1, clock(60_000, 0), false);
        assert_eq!(ruling.kind, AlertKind::FlagFallen);
        assert_eq!(ruling.side, Some(Color::Black));
        assert_eq!(ruling.ends.map(|r| r.outcome), Some(KnownOutcome::Decisive { winner: Color::White }));
        assert!(ruling.message.contains("a win for White"), "{}", ruling.message);
        let rapid = flag_ruling(&record, Color::Black, 1, clock(60_000, 0), true);
        assert_eq!((rapid.kind, rapid.ends), (AlertKind::FlagFallen, None), "A.5.3: only once claimed");
        assert!(rapid.message.contains("once claimed"), "{}", rapid.message);
    }

    #[test]
    fn a_flag_against_a_lone_king_draws() {
        let record = game("4k3/8/8/8/8/8/8/4K1NR w - - 0 1", "300", 0);
        let ruling = flag_ruling(&record, Color::White, 1, clock(0, 1000), false);
        assert_eq!(ruling.ends.map(|r| r.outcome), Some(KnownOutcome::Draw));
        assert!(ruling.message.contains("cannot checkmate"), "{}", ruling.message);
    }

    #[test]
    fn the_end_of_a_period_with_its_moves_made_is_no_loss() {
        // 40 moves in 90 minutes, then 30 minutes: White has made 40 moves.
        let record = game(START, "40/5400:1800", 80);
        let ruling = flag_ruling(&record, Color::White, 1, clock(0, 100_000), false);
        assert_eq!((ruling.kind, ruling.ends), (AlertKind::FlagAfterQuota, None));
        assert!(ruling.message.contains("period 1"), "{}", ruling.message);
        // Short of the quota the same flag loses.
        let short = game(START, "40/5400:1800", 60);
        assert_eq!(flag_ruling(&short, Color::White, 1, clock(0, 100_000), false).kind, AlertKind::FlagFallen);
    }

    #[test]
    fn both_flags_draw_in_the_last_period_only() {
        let record = game(START, "40/5400:1800", 10);
        let first = flag_ruling(&record, Color::White, 1, clock(0, 0), false);
        assert_eq!((first.kind, first.ends), (AlertKind::BothFlagsFallen, None), "not the last period: play on");
        let last = flag_ruling(&record, Color::White, 2, clock(0, 0), false);
        assert_eq!(last.kind, AlertKind::BothFlagsFallen);
        assert_eq!(
            last.ends.map(|r| (r.outcome, r.termination)),
            Some((KnownOutcome::Draw, Termination::BothFlagsFallen))
        );
    }
}
