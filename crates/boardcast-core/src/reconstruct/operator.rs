//! Operator commands applied to the game (`operator.rs` says what each is
//! for). Each change goes out as an explicit event: a move taken back is
//! `retracted`, a corrected promotion is `amended` (with every later move
//! it changes), a corrected result is a new `ended`, new tags are
//! `tags_changed`; nothing already published is rewritten in silence.

use shakmaty::{CastlingMode, Chess, Color, KnownOutcome, Move, Position, Role, fen::Fen, san::San};

use super::{Game, Phase, Reconstructor, Source, known::Known, play::move_info, start::Start};
use crate::{
    event::{BoardStatus, EventKind, MoveInfo},
    game::{GameResult, PlyMove, Termination, end::forced_result_with},
    operator::{Command, CommandError, Reason},
    time::Timestamp,
};

/// Tags the daemon keeps itself: setting them would contradict the record.
const KEPT_TAGS: [&str; 4] = ["Result", "FEN", "SetUp", "Variant"];

impl Reconstructor {
    /// Applies an operator command; says what it did, or why it could not.
    ///
    /// # Errors
    ///
    /// When the command does not apply; nothing changes then.
    pub fn handle_command(&mut self, now: Timestamp, command: &Command) -> Result<String, CommandError> {
        match command {
            Command::NewGame => Ok(self.close_game(now)),
            Command::NextRound { round, tags, .. } => {
                let round = round.trim();
                if round.is_empty() {
                    return Err(CommandError::EmptyRound);
                }
                check_tag_names(tags)?;
                let closed = self.close_game(now);
                self.set_setup_tag("Round", round);
                for (name, value) in tags {
                    self.set_setup_tag(name, value);
                }
                let now_tags = self.setup.tags.clone();
                self.emit(now, EventKind::TagsChanged(now_tags));
                let players = match (tags.get("White"), tags.get("Black")) {
                    (Some(white), Some(black)) => format!(": {white} - {black}"),
                    _ => String::new(),
                };
                Ok(format!("{closed}; the board's next games are round {round}{players}"))
            }
            Command::SetResult { result, reason } => self.set_result(now, result, *reason),
            Command::TakeBack => self.take_back(now),
            Command::Moves { san } => self.enter_moves(now, san),
            Command::Promote { piece } => self.amend_promotion(now, piece),
            Command::SetPosition { fen } => self.set_position(now, fen),
            Command::Flip => {
                self.drop_lines();
                self.rotated = !self.rotated;
                self.picture = self.picture.rotated();
                self.picture_changed(now, false);
                Ok(if self.rotated {
                    "the board is now read turned 180°".into()
                } else {
                    "the board is now read the right way round".into()
                })
            }
            Command::SetTags { tags } => self.set_tags(now, tags),
            Command::AcknowledgeAlert { game, seq } => {
                self.emit(now, EventKind::AlertAcknowledged { game: *game, seq: *seq });
                Ok(format!("alert game {game} #{seq} acknowledged"))
            }
            // The clock is the link's, not the game's: a live session
            // shows the text before the command gets here.
            Command::ClockText { .. } => Err(CommandError::ClockTextRefused),
            // The board's lights and clock are the link's: a live session
            // shows itself before the command gets here.
            Command::Identify { .. } => Err(CommandError::CannotIdentify),
            // The calibration is the decoder's: a session whose decoder
            // has one starts learning before the command gets here.
            Command::Calibrate => Err(CommandError::CannotCalibrate),
            // The bridge's router answers it before any board would.
            Command::AssignBoard(_) | Command::UnassignBoard { .. } => Err(CommandError::ForTheBridge),
        }
    }

    /// Closes the game on the board as it is; the board waits for the next.
    fn close_game(&mut self, now: Timestamp) -> String {
        let Some(game) = self.phase.game() else {
            return "no game on the board; it waits for the next one".into();
        };
        let number = game.record.number;
        let result = game.record.result.map_or("*", |r| r.pgn());
        if self.phase.playing().is_some_and(|p| p.record.pending().is_some()) {
            self.complete_last(now, None);
        }
        self.emit(now, EventKind::GameClosed);
        self.emit(now, EventKind::Status(BoardStatus::AwaitingStart));
        if let Some(game) = self.phase.take_game() {
            self.finished.push(game.record);
        }
        // If the next game is already set up, it starts once the board is
        // judged.
        self.settle_at = Some(now + self.config.settle);
        format!("game {number} closed ({result}); the board waits for the next game")
    }

    fn set_result(&mut self, now: Timestamp, result: &str, reason: Reason) -> Result<String, CommandError> {
        let outcome = match result.trim() {
            "1-0" => KnownOutcome::Decisive { winner: Color::White },
            "0-1" => KnownOutcome::Decisive { winner: Color::Black },
            "1/2-1/2" | "½-½" => KnownOutcome::Draw,
            other => return Err(CommandError::NotAResult(other.to_owned())),
        };
        let termination = match (reason, outcome) {
            (Reason::Resignation, KnownOutcome::Draw) => return Err(CommandError::DrawnResignation),
            (Reason::Resignation, _) => Termination::Resignation,
            (Reason::Agreement, _) => Termination::Agreement,
            (Reason::Forfeit, _) => Termination::Forfeit,
            (Reason::Arbiter, _) => Termination::Operator,
        };
        let result = GameResult { outcome, termination };
        let over = self.phase.is_over();
        let game = self.phase.game_mut().ok_or(CommandError::NoGame)?;
        let number = game.record.number;
        if over {
            // A correction of a result already published: said again, in
            // full.
            game.record.result = Some(result);
            self.emit(now, EventKind::GameEnded(result));
        } else {
            if game.record.pending().is_some() {
                self.complete_last(now, None);
            }
            self.end_game(now, result);
        }
        Ok(format!("game {number}: {} ({})", result.pgn(), termination.describe()))
    }

    fn take_back(&mut self, now: Timestamp) -> Result<String, CommandError> {
        let reopened = self.phase.is_over();
        let game = self.phase.game_mut().ok_or(CommandError::NoGame)?;
        let previous = game.take_back(&self.picture).ok_or(CommandError::NothingToTakeBack)?;
        if reopened {
            game.status = BoardStatus::InSync;
            self.phase.reopen();
        }
        self.emit(now, EventKind::MoveRetracted { previous: previous.clone() });
        if reopened {
            self.emit(now, EventKind::Status(BoardStatus::InSync));
        }
        // The board is compared with the game again: if it still shows the
        // move, the move is seen again (put the position back first).
        self.settle_at = Some(now + self.config.settle);
        Ok(format!("took back {previous}{}", if reopened { "; the game is open again" } else { "" }))
    }

    fn enter_moves(&mut self, now: Timestamp, moves: &[String]) -> Result<String, CommandError> {
        let game = match &self.phase {
            Phase::Waiting => return Err(CommandError::NoGame),
            Phase::Over(_) => return Err(CommandError::GameOver),
            Phase::Playing(game) => game,
        };
        if moves.is_empty() {
            return Err(CommandError::NoMoves);
        }
        // Every move must be legal in turn before any is recorded.
        let mut pos = game.known.pos.clone();
        let mut line = Vec::with_capacity(moves.len());
        for text in moves {
            let fen = Fen::from_position(&pos, shakmaty::EnPassantMode::Legal);
            let san: San =
                text.trim().trim_end_matches(['+', '#']).parse().map_err(|_| CommandError::NotSan(text.clone()))?;
            let m =
                san.to_move(&pos).map_err(|_| CommandError::IllegalMove { san: text.clone(), fen: fen.to_string() })?;
            pos.play_unchecked(m);
            line.push(m);
        }
        // While the board can be read more than one way, the moves may
        // name the right reading: what the board showed after them follows.
        if let Some(reply) = self.enter_on_lines(now, &line) {
            return Ok(reply);
        }
        // Otherwise the moves entered say how the board is to be read.
        self.drop_lines();
        for m in &line {
            self.make_move(now, *m, Source::Entered);
            self.complete_last(now, None);
            if self.phase.is_over() {
                break;
            }
        }
        Ok(format!("entered {}", moves.join(" ")))
    }

    /// The last promotion made `piece`: that ply and every later one are
    /// recorded again from it (what a later move captures, its SAN and the
    /// positions change), each change published as `amended`. Refused if a
    /// later move would not be legal with the new piece.
    fn amend_promotion(&mut self, now: Timestamp, piece: &str) -> Result<String, CommandError> {
        let role = promotion_role(piece)?;
        let game = self.phase.game_mut().ok_or(CommandError::NoGame)?;
        let plies = &game.record.plies;
        let index = plies
            .iter()
            .rposition(|p| matches!(p.mv, PlyMove::Legal(m) if m.is_promotion()))
            .ok_or(CommandError::NoPromotion)?;
        let PlyMove::Legal(old) = plies[index].mv else { unreachable!("found as a legal promotion") };
        if old.promotion() == Some(role) {
            return Ok(format!("ply {} already promotes to a {}", index + 1, role_word(role)));
        }
        let moves = replayed_with(game.record.position_before(index), &plies[index..], role)?;
        let was = plies[index].san;
        let changed = game.rewrite_from(index, &moves);
        let amended = changed.len();
        for (previous, now_info) in changed {
            self.emit(now, EventKind::MoveAmended { previous: Box::new(previous), now: Box::new(now_info) });
        }
        self.after_amended_promotion(now);
        let now_san = self.phase.game().map(|p| p.record.plies[index].san);
        let later = if amended > 1 { format!(" (and {} later moves amended)", amended - 1) } else { String::new() };
        Ok(format!("ply {}: {was} is now {}{later}", index + 1, now_san.map_or_else(String::new, |s| s.to_string())))
    }

    /// After the record was rewritten: the game position, and the result
    /// where the position decided it.
    fn after_amended_promotion(&mut self, now: Timestamp) {
        let over = self.phase.is_over();
        let Some(game) = self.phase.game_mut() else { return };
        game.known = Known::new(game.record.position().clone());
        let last = game.record.plies.len() - 1;
        game.pending.before = Some(Box::new(Known::new(game.record.position_before(last).clone())));
        game.pending.seen = None;
        game.readings.lines = None;
        game.resync(&self.picture);
        let forced = forced_result_with(&game.record, game.known.has_moves());
        let decided_by_board = game.record.result.is_some_and(|r| {
            matches!(
                r.termination,
                Termination::Checkmate
                    | Termination::Stalemate
                    | Termination::DeadPosition
                    | Termination::FivefoldRepetition
                    | Termination::SeventyFiveMoves
            )
        });
        match forced {
            Some(result) if game.record.result != Some(result) && (decided_by_board || !over) => {
                let completed = game.complete_last(now, None);
                if over {
                    game.record.result = Some(result);
                }
                if let Some(completed) = completed {
                    self.emit(now, completed);
                }
                if over {
                    self.emit(now, EventKind::GameEnded(result));
                } else {
                    self.end_game(now, result);
                }
            }
            None if decided_by_board => {
                // The position no longer ends the game: it goes on.
                game.record.result = None;
                game.status = BoardStatus::InSync;
                self.phase.reopen();
                self.emit(now, EventKind::Status(BoardStatus::InSync));
                self.settle_at = Some(now + self.config.settle);
            }
            _ => {}
        }
    }

    fn set_position(&mut self, now: Timestamp, fen: &str) -> Result<String, CommandError> {
        let parsed: Fen = fen.trim().parse().map_err(|e: shakmaty::fen::ParseFenError| CommandError::NotAFen {
            fen: fen.to_owned(),
            reason: e.to_string(),
        })?;
        let mode = if self.setup.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let position: shakmaty::Chess = parsed
            .into_position(mode)
            .map_err(|e| CommandError::IllegalPosition { fen: fen.to_owned(), reason: e.to_string() })?;
        let closed = self.close_game(now);
        self.settle_at = None;
        let number = self.next_game;
        self.start_game(now, Start { position, castling_mode: mode, rotated: self.rotated, set_up: true });
        Ok(format!("{closed}; game {number} goes on from {}", fen.trim()))
    }

    fn set_tags(
        &mut self,
        now: Timestamp,
        tags: &std::collections::BTreeMap<String, String>,
    ) -> Result<String, CommandError> {
        check_tag_names(tags)?;
        for (name, value) in tags {
            self.set_setup_tag(name, value);
            if let Some(game) = self.phase.game_mut() {
                set_tag(&mut game.record.tags, name, value);
            }
        }
        let now_tags = self.phase.game().map_or_else(|| self.setup.tags.clone(), |p| p.record.tags.clone());
        self.emit(now, EventKind::TagsChanged(now_tags));
        let listed: Vec<String> = tags.iter().map(|(k, v)| format!("{k} {v:?}")).collect();
        Ok(format!("set {}", listed.join(", ")))
    }

    /// A tag of the board's next games.
    fn set_setup_tag(&mut self, name: &str, value: &str) {
        set_tag(&mut self.setup.tags, name, value);
    }
}

impl Game {
    /// Records plies `index..` again as `moves`, keeping when each was made,
    /// completed and pressed for: each ply that changed, as it was and as
    /// it is now, to publish.
    fn rewrite_from(&mut self, index: usize, moves: &[Move]) -> Vec<(MoveInfo, MoveInfo)> {
        let mut old = Vec::with_capacity(moves.len());
        for i in (index..self.record.plies.len()).rev() {
            let info = move_info(&self.record, i);
            old.push((self.record.pop().expect("a ply to rewrite"), info));
        }
        old.reverse();
        let mut changed = Vec::new();
        for ((ply, before), &m) in old.into_iter().zip(moves) {
            let i = self.record.plies.len();
            self.record.push(m, ply.made_at, ply.inferred);
            let new = self.record.plies.last_mut().expect("just pushed");
            new.status = ply.status;
            new.completed_at = ply.completed_at;
            new.pressed_at = ply.pressed_at;
            new.clock_ms = ply.clock_ms;
            new.order_uncertain = ply.order_uncertain;
            new.entered = ply.entered;
            if new.san != ply.san || new.after != ply.after {
                changed.push((before, move_info(&self.record, i)));
            }
        }
        changed
    }
}

/// Whether every tag may be set: a PGN tag name, not one the daemon keeps.
fn check_tag_names(tags: &std::collections::BTreeMap<String, String>) -> Result<(), CommandError> {
    for name in tags.keys() {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(CommandError::TagName(name.clone()));
        }
        if KEPT_TAGS.contains(&name.as_str()) {
            return Err(CommandError::KeptTag(name.clone()));
        }
    }
    Ok(())
}

/// The piece named in a `promotion` command.
fn promotion_role(piece: &str) -> Result<Role, CommandError> {
    match piece.trim().to_ascii_lowercase().as_str() {
        "q" | "queen" => Ok(Role::Queen),
        "r" | "rook" => Ok(Role::Rook),
        "b" | "bishop" => Ok(Role::Bishop),
        "n" | "knight" => Ok(Role::Knight),
        other => Err(CommandError::NotAPromotionPiece(other.to_owned())),
    }
}

fn role_word(role: Role) -> &'static str {
    match role {
        Role::Queen => "queen",
        Role::Rook => "rook",
        Role::Bishop => "bishop",
        Role::Knight => "knight",
        Role::Pawn => "pawn",
        Role::King => "king",
    }
}

/// The moves of `plies` (the first a promotion) played from `start` with
/// the promotion to `role`: each later move the same squares (what it
/// captures may differ), and still legal.
fn replayed_with(start: &Chess, plies: &[crate::game::Ply], role: Role) -> Result<Vec<Move>, CommandError> {
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(plies.len());
    for (i, ply) in plies.iter().enumerate() {
        let PlyMove::Legal(m) = ply.mv else {
            return Err(CommandError::PromotionBreaksGame(format!(
                "ply {} after it is an illegal move that stood",
                i + 1
            )));
        };
        let promotion = if i == 0 { Some(role) } else { m.promotion() };
        let same = |l: &Move| {
            l.from() == m.from() && l.to() == m.to() && l.promotion() == promotion && l.is_castle() == m.is_castle()
        };
        let Some(again) = pos.legal_moves().into_iter().find(same) else {
            let text = ply.san.to_string();
            return Err(CommandError::PromotionBreaksGame(if i == 0 {
                format!("{text} cannot promote to a {}", role_word(role))
            } else {
                format!("{text} would not be legal after promoting to a {}", role_word(role))
            }));
        };
        pos.play_unchecked(again);
        moves.push(again);
    }
    Ok(moves)
}

/// Sets (or, with an empty value, removes) a tag, keeping the order.
fn set_tag(tags: &mut Vec<(String, String)>, name: &str, value: &str) {
    let value = value.trim();
    match tags.iter().position(|(k, _)| k == name) {
        Some(i) if value.is_empty() => {
            tags.remove(i);
        }
        Some(i) => tags[i].1 = value.to_owned(),
        None if value.is_empty() => {}
        None => tags.push((name.to_owned(), value.to_owned())),
    }
}
