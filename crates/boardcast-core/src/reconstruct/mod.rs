//! The move reconstructor: sensor events in, moves, results and arbiter
//! alerts out. Sans-I/O: every input comes with the time it happened, and
//! the reconstructor never reads a clock.
//!
//! # Contract
//!
//! Inputs, with non-decreasing times:
//! - [`Reconstructor::handle_sensor`] for every sensor event;
//! - [`Reconstructor::handle_timeout`] when the deadline from
//!   [`Reconstructor::poll_timeout`] has come;
//! - [`Reconstructor::handle_end`] when the stream ends (end of a capture).
//!
//! After every input, drain [`Reconstructor::poll_event`]; then ask
//! [`Reconstructor::poll_timeout`] when to call again.
//!
//! # How a move is recognised
//!
//! The board is compared with the game, never read as a list of lifts and
//! placements: a move is *made* (4.7) when the board shows the position after
//! a legal move from the game position. That makes every order of events
//! work alike, including squares scanned in the "wrong" order, captures with
//! either piece lifted first, castling in any order and promotion with the
//! pawn removed before or after the new piece is placed. A position that a
//! piece could still be passing through (a sliding piece that could go on, a
//! pawn pushed one square that could go two) is judged only once the board
//! has been still for `settle`; everything else at once. See `judge.rs`.
//!
//! A made move is *completed* (6.2.1) by the mover's clock press, by the
//! next move, or when it ends the game; without a clock, also when the
//! opponent starts a move or the board stays still for `quiet_completion`.
//! Until then it may be amended or retracted, each published explicitly.

mod clock;
mod config;
mod describe;
mod displaced;
mod gesture;
mod irregular;
mod judge;
mod known;
mod matcher;
mod occupancy;
mod operator;
mod play;
mod start;
mod touch;
mod verdict;

use std::collections::VecDeque;

use shakmaty::{Bitboard, ByColor, Color, KnownOutcome, Position, Square};

pub use self::config::{GameSetup, ReconstructorConfig, RotatedBoard, UncertainOrder, WhiteClock};
use self::{
    clock::{ClockChanges, ClockTracker},
    known::Known,
    start::Expected,
    touch::SensorLog,
};
use crate::{
    alert::{Alert, AlertKind},
    event::{BoardStatus, ClockState, Event, EventKind},
    game::{GameRecord, IllegalMove},
    sensor::{Picture, SensorEvent},
    time::Timestamp,
};

/// Turns the sensor events of one board into games.
#[derive(Debug)]
pub struct Reconstructor {
    config: ReconstructorConfig,
    setup: GameSetup,
    expected: Expected,
    /// The physical board, corrected for a board turned 180°.
    picture: Picture,
    /// The board reports every square turned 180°.
    rotated: bool,
    /// When the picture changed and has not been judged since (held back
    /// by lost bytes: see `settle_due`).
    settle_at: Option<Timestamp>,
    clock: ClockTracker,
    log: SensorLog,
    /// Waiting for a game, playing one, or past the end of one.
    phase: Phase,
    /// A wrong initial position on the board, since when.
    wrong_start: Option<(Timestamp, Picture)>,
    /// Pictures already alerted while waiting for a game, so that an alert
    /// is not repeated for the same set-up.
    waiting_alerted: Option<Picture>,
    /// The number the next game will get.
    next_game: u32,
    /// Sequence number of the last event of the current game.
    seq: u64,
    events: VecDeque<Event>,
    /// Earlier games on this board, oldest first.
    finished: Vec<GameRecord>,
    /// Bytes were lost on the line and the picture may be wrong until the
    /// next whole board comes (or until then): presses are not judged and
    /// the board is not called out of sync meanwhile.
    suspect_until: Option<Timestamp>,
    /// When the picture was last made whole after lost bytes: deadlines
    /// that passed while it was suspect come due then, not in the past.
    resumed_at: Timestamp,
    /// When bytes were last lost.
    lost_at: Timestamp,
    /// The board answers a request for its whole picture (DGT, Millennium).
    board_answers: bool,
    /// When the whole board last came, or was last asked for: asked at most
    /// once for each incident.
    board_seen_at: Option<Timestamp>,
    /// A request for the whole board waits to be passed to the link.
    board_request: bool,
}

/// Where the board is in its games. The phase says what the board is
/// watched for, so a game that has ended is not judged for moves, and code
/// that needs a game in progress gets one from [`Phase::playing_mut`]
/// rather than checking a flag beside it.
#[derive(Debug)]
enum Phase {
    /// No game yet, or the last one closed by the operator: the board is
    /// watched for a start position.
    Waiting,
    /// A game in progress: the board is judged against it.
    Playing(Game),
    /// The game has a result. It stays the board's current game (it may
    /// still be corrected, or reopened by a take-back) until the next one
    /// starts; the board is only watched for the result gesture and the
    /// next game's set-up.
    Over(Game),
}

impl Phase {
    /// The current game, in progress or over.
    fn game(&self) -> Option<&Game> {
        match self {
            Self::Waiting => None,
            Self::Playing(game) | Self::Over(game) => Some(game),
        }
    }

    fn game_mut(&mut self) -> Option<&mut Game> {
        match self {
            Self::Waiting => None,
            Self::Playing(game) | Self::Over(game) => Some(game),
        }
    }

    /// The game in progress.
    fn playing(&self) -> Option<&Game> {
        match self {
            Self::Playing(game) => Some(game),
            _ => None,
        }
    }

    fn playing_mut(&mut self) -> Option<&mut Game> {
        match self {
            Self::Playing(game) => Some(game),
            _ => None,
        }
    }

    /// Whether the current game has ended.
    fn is_over(&self) -> bool {
        matches!(self, Self::Over(_))
    }

    /// Takes the current game away, leaving the board waiting.
    fn take_game(&mut self) -> Option<Game> {
        match std::mem::replace(self, Self::Waiting) {
            Self::Waiting => None,
            Self::Playing(game) | Self::Over(game) => Some(game),
        }
    }

    /// The game in progress has ended.
    fn end(&mut self) {
        if let Self::Playing(game) = std::mem::replace(self, Self::Waiting) {
            *self = Self::Over(game);
        }
    }

    /// The game that had ended is in progress again.
    fn reopen(&mut self) {
        if let Self::Over(game) = std::mem::replace(self, Self::Waiting) {
            *self = Self::Playing(game);
        }
    }
}

/// A game on the board: its record, and what judging the board against it
/// needs to remember.
#[derive(Debug)]
struct Game {
    record: GameRecord,
    /// The game position with its legal moves, kept in step with `record`.
    known: Known,
    /// The game started from a wrong initial position (7.2.1).
    wrong_start: bool,
    /// Squares where the picture differs from the game position.
    diff: Bitboard,
    /// The settled board has shown nothing the game explains since then.
    unexplained_since: Option<Timestamp>,
    /// What the daemon last published about the board.
    status: BoardStatus,
    /// The result gesture, since when.
    gesture: Option<(Timestamp, KnownOutcome)>,
    /// The unexplained board (since when) whose out-of-sync verdict is
    /// held until then: a result gesture may be under way.
    held: Option<(Timestamp, Timestamp)>,
    /// Completed illegal moves per player (7.5.5).
    illegal: ByColor<u32>,
    /// A completed illegal move has not been put right on the board yet.
    illegal_unresolved: bool,
    /// After a completed illegal move (or a press without a move) by one
    /// player, the opponent whose clock then runs: the next press by that
    /// opponent, before the offender presses again, sets the clock running
    /// for the offender again (the correction, 7.5.1) and is not judged.
    restoring_press: Option<Color>,
    /// Flags fallen per player: the n-th ends the n-th period.
    flags: ByColor<u32>,
    /// An illegal move completed in rapid or blitz, kept in case the
    /// opponent answers it and it stands (A.5.2).
    standing: Option<Standing>,
    /// The board picture last alerted as ambiguous (R10), not to repeat it.
    ambiguous: Option<Picture>,
    /// Claimable draws already announced for the current position.
    claims: Vec<crate::game::end::Claimable>,
    /// The ply count at which an irregular position (A.5.4) was first seen.
    irregular_at: Option<usize>,
    /// The move under way.
    pending: PendingMove,
    /// What only an occupancy board needs to read the game.
    readings: occupancy::Readings,
}

/// The move under way, from the first sight of it on the board to its
/// completion (6.2.1): until then it may still change, and what it was
/// made from, what it replaced and what pressed for it is kept here. Most
/// of it goes once the move is completed or the game position changes.
#[derive(Debug, Default)]
struct PendingMove {
    /// A move the board showed but that was left to settle (a piece that
    /// could have been on its way): evidence for telling apart sequences
    /// that reach the same board (R10).
    /// Not boxed, unlike `before`: it is set for many moves (a piece
    /// sliding, a pawn pushed one square), and a box would be allocated for
    /// each.
    seen: Option<(shakmaty::Move, Known)>,
    /// The position before the last ply with its legal moves, while that
    /// ply is only made (to tell a changed move from a new one).
    before: Option<Box<Known>>,
    /// The move last taken back before completion, with its ply number: a
    /// different move then made for the same ply breaks 4.7.
    retracted: Option<(usize, crate::event::MoveInfo, Timestamp)>,
    /// A clock press waiting for its move to appear on the board.
    press: Option<Press>,
    /// Without a clock: when the made move counts as completed. While lines
    /// are followed (`occupancy.rs`), with or without a clock: when no
    /// piece can still be in a hand.
    quiet_at: Option<Timestamp>,
}

/// How the board told of a move being put on the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The board showed it.
    OnBoard,
    /// Filled in from a later board (R10).
    Inferred,
    /// Filled in, and another order of the same moves leads to the same
    /// position.
    InferredOrderUncertain,
    /// Entered by the operator (`moves` command).
    Entered,
}

/// How long the picture stays suspect after lost bytes when no whole
/// board comes (the DGT link asks three times, half a second apart).
pub const LOST_BYTES_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long judging waits for the whole board asked for before blaming a
/// player: a DGT board answers a dump request within tens of milliseconds.
pub(crate) const BOARD_CHECK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// A clock press not yet matched to a move.
#[derive(Clone, Copy, Debug)]
struct Press {
    by: Color,
    at: Timestamp,
    deadline: Timestamp,
    clock: ClockState,
}

/// An illegal move that stands if the opponent answers it (A.5.2).
#[derive(Clone, Debug)]
struct Standing {
    at: Timestamp,
    mv: IllegalMove,
    position: Known,
    clock: ClockState,
}

impl Game {
    /// When the unexplained board is published as out of sync (and its
    /// displaced pieces alerted). Not while the result gesture is being
    /// held; and a king put on a centre square may be the first half of
    /// the gesture, whose second king comes once the players have cleared
    /// the square: such a board gets `gesture_hold` more before anyone is
    /// blamed. A king really displaced is still alerted then.
    /// The hold only ever grows, so the deadline never moves into the past.
    fn out_of_sync_due(&self, config: &ReconstructorConfig) -> Option<Timestamp> {
        let since = self.unexplained_since?;
        if self.gesture.is_some() {
            return None;
        }
        let due = since + config.out_of_sync_after;
        let held = self.held.filter(|&(s, _)| s == since).map(|(_, until)| until);
        Some(held.map_or(due, |until| until.max(due)))
    }

    /// Holds the out-of-sync verdict on the current unexplained board until
    /// at least `until`.
    fn hold_out_of_sync(&mut self, until: Timestamp) {
        let Some(since) = self.unexplained_since else { return };
        let held = self.held.filter(|&(s, _)| s == since).map_or(until, |(_, t)| t.max(until));
        self.held = Some((since, held));
    }

    /// A king stands on a centre square where the game has none: possibly
    /// the first half of the result gesture.
    fn king_on_centre(&self, picture: &Picture) -> bool {
        gesture::centre().any(|sq| {
            self.diff.contains(sq)
                && matches!(picture.get(sq), crate::sensor::Cell::Piece(p) if p.role == shakmaty::Role::King)
        })
    }

    /// Brings `known` and `diff` in step with the record after it changed.
    fn resync(&mut self, picture: &Picture) {
        if self.known.pos != *self.record.position() {
            self.known = Known::new(self.record.position().clone());
        }
        self.diff = picture.diff(self.known.pos.board());
    }

    /// Completes the last ply if it is only made, with the mover's clock if
    /// a press completed it: the event to publish when it was only made.
    fn complete_last(&mut self, now: Timestamp, press: Option<ClockState>) -> Option<EventKind> {
        let index = self.record.plies.len();
        let ply = self.record.plies.last_mut()?;
        if let Some(clock) = press {
            ply.pressed_at = Some(now);
            ply.clock_ms = Some(if ply.mover == Color::White { clock.white_ms } else { clock.black_ms });
        }
        if ply.status != crate::game::MoveStatus::Made {
            return None;
        }
        ply.status = crate::game::MoveStatus::Completed;
        ply.completed_at = Some(now);
        self.pending.quiet_at = None;
        Some(EventKind::MoveCompleted { ply: index, clock_ms: ply.clock_ms })
    }

    /// Takes the made move back before completion: the move taken back,
    /// to publish.
    fn retract(&mut self, picture: &Picture) -> crate::event::MoveInfo {
        let index = self.record.plies.len() - 1;
        let previous = play::move_info(&self.record, index);
        self.pending.retracted = Some((index + 1, previous.clone(), self.record.plies[index].made_at));
        self.record.pop();
        self.pending.quiet_at = None;
        self.pending.seen = None;
        if let Some(before) = self.pending.before.take() {
            self.known = *before;
        }
        self.resync(picture);
        previous
    }

    /// A move went on the record: what was about the position before it
    /// goes. `quiet_at` is when the move counts as completed without a
    /// clock. Whether the board was out of sync and is back in sync now.
    fn after_move(&mut self, picture: &Picture, quiet_at: Option<Timestamp>) -> bool {
        self.resync(picture);
        self.unexplained_since = None;
        self.gesture = None;
        self.ambiguous = None;
        self.pending.seen = None;
        self.standing = None;
        self.illegal_unresolved = false;
        self.pending.quiet_at = quiet_at;
        self.back_in_sync()
    }

    /// The status goes back to in sync; whether it was out of sync (and
    /// the change is to be published).
    fn back_in_sync(&mut self) -> bool {
        let was_out = matches!(self.status, BoardStatus::OutOfSync { .. });
        if was_out {
            self.status = BoardStatus::InSync;
        }
        was_out
    }

    /// The operator takes the last ply back: the game goes on from the
    /// position before it, without a result, and with nothing pending,
    /// held or followed. The ply taken back, to publish; `None`, and
    /// nothing changed, if there is none.
    fn take_back(&mut self, picture: &Picture) -> Option<crate::event::MoveInfo> {
        let index = self.record.plies.len().checked_sub(1)?;
        let previous = play::move_info(&self.record, index);
        self.record.pop();
        self.record.result = None;
        self.known = Known::new(self.record.position().clone());
        self.pending = PendingMove::default();
        self.standing = None;
        self.ambiguous = None;
        self.gesture = None;
        self.illegal_unresolved = false;
        self.claims.clear();
        self.readings.lines = None;
        self.resync(picture);
        Some(previous)
    }

    /// The game has a result: nothing is pending or held any more.
    fn end(&mut self, result: crate::game::GameResult) {
        self.record.result = Some(result);
        self.pending.press = None;
        self.pending.quiet_at = None;
        self.unexplained_since = None;
        self.gesture = None;
        self.status = BoardStatus::AwaitingStart;
    }
}

impl Reconstructor {
    /// A reconstructor waiting for the first game.
    pub fn new(config: ReconstructorConfig, setup: GameSetup) -> Self {
        let expected = match (&setup.start, setup.chess960) {
            (Some(pos), _) => Expected::Position(Box::new(pos.clone())),
            (None, true) => Expected::Chess960,
            (None, false) => Expected::Standard,
        };
        let clock = ClockTracker::new(config.white_clock.side());
        Self {
            config,
            setup,
            expected,
            picture: Picture::empty(),
            rotated: false,
            settle_at: None,
            clock,
            log: SensorLog::default(),
            phase: Phase::Waiting,
            wrong_start: None,
            waiting_alerted: None,
            next_game: 1,
            seq: 0,
            events: VecDeque::new(),
            finished: Vec::new(),
            suspect_until: None,
            resumed_at: Timestamp::ZERO,
            lost_at: Timestamp::ZERO,
            board_answers: false,
            board_seen_at: None,
            board_request: false,
        }
    }

    /// Takes one sensor event.
    pub fn handle_sensor(&mut self, now: Timestamp, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => {
                self.board_seen_at = Some(now);
                if self.suspect_until.take().is_some() {
                    self.resumed_at = now;
                }
                let board = if self.rotated { board.rotated() } else { board.as_ref().clone() };
                let mut changed = false;
                for sq in Square::ALL {
                    if self.picture.get(sq) != board.get(sq) {
                        let before = self.picture.set(sq, board.get(sq));
                        self.log.square(now, sq, before, board.get(sq));
                        self.check_put_back(now, sq, board.get(sq));
                        changed = true;
                    }
                }
                if changed {
                    self.picture_changed(now, false);
                }
            }
            &SensorEvent::Square { square, cell } => {
                let square = if self.rotated { rotate(square) } else { square };
                let before = self.picture.set(square, cell);
                if before != cell {
                    self.log.square(now, square, before, cell);
                    self.check_put_back(now, square, cell);
                    self.picture_changed(now, true);
                }
            }
            SensorEvent::Clock(reading) => self.handle_clock(now, reading),
        }
    }

    /// Acts on deadlines that have come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        if self.suspect_until.is_some_and(|t| t <= now) {
            self.suspect_until = None;
        }
        if self.settle_due().is_some_and(|t| t <= now) {
            self.settle_at = None;
            self.judge_settled(now);
        }
        self.handle_game_timers(now);
        if let Some((since, _)) = &self.wrong_start
            && *since + self.config.out_of_sync_after <= now
        {
            self.start_wrong_game(now);
        }
    }

    /// The stream has ended (the end of a capture): the board stays as it
    /// was last seen, so every deadline still pending comes to pass, in
    /// order, as it would have for a daemon left running: a held result
    /// gesture counts, a made move without a clock is completed, a press
    /// still waiting for its move is judged.
    pub fn handle_end(&mut self, now: Timestamp) {
        // No whole board will come any more: judge the board as last seen.
        self.suspect_until = None;
        // Each deadline either goes away or moves on when handled; the bound
        // only guards against a bug turning this into an endless loop.
        for _ in 0..256 {
            match self.poll_timeout() {
                Some(deadline) => self.handle_timeout(deadline.max(now)),
                None => break,
            }
        }
    }

    /// Bytes were lost on the line (the decoder resynchronised): a field
    /// update may be missing, so the picture may be wrong until the next
    /// whole board (which the link asks for), or for [`LOST_BYTES_WAIT`]
    /// if none comes. Meanwhile nobody is accused on the strength of it: a
    /// press is not judged as made without a move or on an illegal
    /// position, and the board is not called out of sync. Nor is it taken
    /// as settled (see `settle_due`).
    pub(crate) fn handle_lost_bytes(&mut self, now: Timestamp) {
        self.suspect_until = Some(now + LOST_BYTES_WAIT);
        self.lost_at = now;
    }

    /// The board answers a request for its whole picture: ask it before
    /// blaming a player (see [`Reconstructor::poll_board_request`]).
    pub(crate) fn set_board_answers(&mut self, answers: bool) {
        self.board_answers = answers;
    }

    /// Whether the whole board should be asked for now (once per request).
    /// Before a press is judged as made without a move or on an illegal
    /// position, and before the board is called out of sync, a board that
    /// can answer is asked for its whole picture, and judging waits for it
    /// (at most [`BOARD_CHECK_WAIT`]): a field update lost on the line must
    /// not be turned into an alert.
    pub(crate) fn poll_board_request(&mut self) -> bool {
        std::mem::take(&mut self.board_request)
    }

    /// Asks for the whole board if none came since the incident began
    /// (`since`); `true` when judging must wait for it.
    fn ask_board_first(&mut self, now: Timestamp, since: Timestamp) -> bool {
        if !self.board_answers || self.board_seen_at.is_some_and(|t| t >= since) {
            return false;
        }
        self.board_seen_at = Some(now);
        self.board_request = true;
        self.suspect_until = Some(now + BOARD_CHECK_WAIT);
        true
    }

    /// When the board counts as settled. A board is still when it was
    /// heard unchanged for `settle`; after lost bytes it was not heard for
    /// a while (a streaming board's reports were lost), and that silence
    /// would pass for stillness: a sliding piece last seen crossing a
    /// square would be judged as put down there. So while the picture is
    /// suspect the settle time waits for the whole board, and for at most
    /// `settle` after the loss (a board whose link asks for no whole board
    /// is judged as seen, not left waiting for `LOST_BYTES_WAIT`).
    fn settle_due(&self) -> Option<Timestamp> {
        let not_before = match self.suspect_until {
            Some(_) => self.lost_at + self.config.settle,
            None => self.resumed_at,
        };
        self.settle_at.map(|at| at.max(not_before))
    }

    /// When to call [`Reconstructor::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut next = Earliest(None);
        next.consider(self.settle_due());
        next.consider(self.suspect_until);
        next.consider(self.wrong_start.as_ref().map(|(since, _)| *since + self.config.out_of_sync_after));
        if let Some(play) = self.phase.game() {
            next.consider(play.gesture.map(|(t, _)| t + self.config.gesture_hold));
        }
        if let Some(play) = self.phase.playing() {
            // While the picture is suspect these wait; they come due (or
            // go away) when it is whole again.
            if self.suspect_until.is_none() {
                let resumed = |t: Timestamp| t.max(self.resumed_at);
                next.consider(play.pending.press.map(|p| resumed(p.deadline)));
                if !matches!(play.status, BoardStatus::OutOfSync { .. }) {
                    next.consider(play.out_of_sync_due(&self.config).map(resumed));
                }
            }
            next.consider(play.pending.quiet_at);
        }
        next.0
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Whether the board is read turned 180° (its squares mapped).
    pub fn rotated(&self) -> bool {
        self.rotated
    }

    /// How the board relates to the game in progress, if there is one.
    pub(crate) fn board_status(&self) -> Option<&BoardStatus> {
        self.phase.playing().map(|p| &p.status)
    }

    /// The game being played (or the last one, until the next starts).
    pub fn game(&self) -> Option<&GameRecord> {
        self.phase.game().map(|p| &p.record)
    }

    /// Every game on this board so far, oldest first, the current one last.
    pub fn games(&self) -> impl Iterator<Item = &GameRecord> {
        self.finished.iter().chain(self.phase.game().map(|p| &p.record))
    }

    /// Game `number` of this board: the current one, or a finished one
    /// found without walking every game (games are numbered in order, so
    /// a board with thousands of games answers as fast as one with two).
    pub fn game_by_number(&self, number: u32) -> Option<&GameRecord> {
        if let Some(current) = self.game().filter(|g| g.number == number) {
            return Some(current);
        }
        match self.finished.binary_search_by_key(&number, |g| g.number) {
            Ok(at) => Some(&self.finished[at]),
            // Not in order (never expected): look through them all.
            Err(_) => self.finished.iter().find(|g| g.number == number),
        }
    }

    /// Ends the session: every game, the current one last.
    pub fn into_games(mut self) -> Vec<GameRecord> {
        let mut games = std::mem::take(&mut self.finished);
        games.extend(self.phase.take_game().map(|p| p.record));
        games
    }

    /// The physical board as the reconstructor sees it (corrected for a
    /// turned board).
    pub fn picture(&self) -> &Picture {
        &self.picture
    }

    /// The picture changed. A single square is judged at once; a whole
    /// board (a dump, as after a reconnection) only once settled, since
    /// nothing in it was seen happening: several moves in it are filled in
    /// as such (R10).
    fn picture_changed(&mut self, now: Timestamp, judge_now: bool) {
        self.settle_at = Some(now + self.config.settle);
        let Some(play) = self.phase.playing_mut() else {
            return;
        };
        play.diff = self.picture.diff(play.known.pos.board());
        if play.diff.is_empty() {
            // The game position is back on the board: an illegal move
            // completed before has been put right.
            play.illegal_unresolved = false;
        }
        if play.pending.quiet_at.is_some() {
            play.pending.quiet_at = Some(now + self.config.quiet_completion);
        }
        if judge_now {
            self.judge_now(now);
        }
    }

    fn handle_clock(&mut self, now: Timestamp, reading: &crate::sensor::ClockReading) {
        let game = self.phase.playing().map(|p| (p.known.pos.turn(), p.record.plies.len()));
        let previous = self.clock.state();
        let (state, changes) = self.clock.handle(reading, game);
        let Some(state) = state else {
            return;
        };
        if changes != ClockChanges::default() || previous.map(|p| p.running) != Some(state.running) {
            self.log.clock(now, *reading);
        }
        if game.is_some() && previous != Some(state) {
            self.emit(now, EventKind::Clock(state));
        }
        if let Some(by) = changes.pressed {
            self.handle_press(now, by, state);
        }
        for color in Color::ALL {
            if changes.flag_fell[color] {
                self.handle_flag(now, color, state);
            }
        }
    }

    /// Queues an event for the current game.
    fn emit(&mut self, t: Timestamp, kind: EventKind) {
        self.seq += 1;
        let game = self.phase.game().map_or(self.next_game, |p| p.record.number);
        self.events.push_back(Event { game, seq: self.seq, t, kind });
    }

    /// Queues an alert raised outside the reconstructor (the comparison of
    /// paired boards), as an event of the current game with its own seq.
    pub(crate) fn push_alert(&mut self, t: Timestamp, alert: Alert) {
        self.emit(t, EventKind::Alert(Box::new(alert)));
    }

    /// Queues an alert.
    #[allow(clippy::too_many_arguments)]
    fn alert(
        &mut self,
        t: Timestamp,
        kind: AlertKind,
        side: Option<Color>,
        message: String,
        squares: Vec<Square>,
        since: Timestamp,
    ) {
        let ply = self.phase.game().map_or(0, |p| p.record.completed_plies());
        self.alert_at_ply(ply, t, kind, side, message, squares, since);
    }

    /// Queues an alert about an action that began when `ply` half-moves
    /// were completed.
    #[allow(clippy::too_many_arguments)]
    fn alert_at_ply(
        &mut self,
        ply: usize,
        t: Timestamp,
        kind: AlertKind,
        side: Option<Color>,
        message: String,
        squares: Vec<Square>,
        since: Timestamp,
    ) {
        let evidence = self.log.evidence(since);
        self.emit(t, EventKind::Alert(Box::new(Alert { kind, ply, side, t, message, squares, evidence })));
    }
}

/// The earliest of several optional deadlines.
struct Earliest(Option<Timestamp>);

impl Earliest {
    fn consider(&mut self, deadline: Option<Timestamp>) {
        if let Some(t) = deadline {
            self.0 = Some(self.0.map_or(t, |n| n.min(t)));
        }
    }
}

/// The square seen from the other side of the board.
fn rotate(square: Square) -> Square {
    square.flip_vertical().flip_horizontal()
}

#[cfg(test)]
mod tests;

/// Settling around lost bytes, in virtual time: the board as a streaming
/// board's decoder passes it on (the squares that changed, then the whole
/// board), reports lost on the line in between.
#[cfg(test)]
mod lost_report_tests {
    use shakmaty::{CastlingMode, Chess, fen::Fen};

    use super::*;
    use crate::sensor::Cell;

    struct Board {
        reconstructor: Reconstructor,
        picture: Picture,
        events: Vec<Event>,
    }

    impl Board {
        fn from(fen: &str) -> Self {
            let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
            let setup = GameSetup { start: Some(pos.clone()), ..GameSetup::default() };
            let mut board = Self {
                reconstructor: Reconstructor::new(ReconstructorConfig::default(), setup),
                picture: Picture::from_board(pos.board()),
                events: Vec::new(),
            };
            board.report(0, &[]);
            board.catch_up(1000);
            assert!(board.reconstructor.game().is_some(), "the game starts");
            board
        }

        /// Fires every deadline up to `ms`, as a session does before an
        /// input.
        fn catch_up(&mut self, ms: u64) {
            let now = Timestamp::from_millis(ms);
            while let Some(deadline) = self.reconstructor.poll_timeout().filter(|&d| d <= now) {
                self.reconstructor.handle_timeout(deadline);
            }
            self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
        }

        /// A report passed on at `ms` with these squares changed.
        fn report(&mut self, ms: u64, changes: &[(&str, char)]) {
            self.catch_up(ms);
            let now = Timestamp::from_millis(ms);
            for &(square, letter) in changes {
                let square: Square = square.parse().unwrap();
                let cell = if letter == '-' { Cell::Empty } else { Cell::from_letter(letter).unwrap() };
                self.picture.set(square, cell);
                self.reconstructor.handle_sensor(now, &SensorEvent::Square { square, cell });
            }
            self.reconstructor.handle_sensor(now, &SensorEvent::Board(Box::new(self.picture.clone())));
            self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
        }

        /// A report lost on the line, found out at `ms`.
        fn lost(&mut self, ms: u64) {
            self.catch_up(ms);
            self.reconstructor.handle_lost_bytes(Timestamp::from_millis(ms));
        }

        /// The kinds of the alerts raised, in order.
        fn alert_kinds(&self) -> Vec<AlertKind> {
            self.events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::Alert(a) => Some(a.kind),
                    _ => None,
                })
                .collect()
        }

        fn made(&self) -> Vec<String> {
            self.events
                .iter()
                .filter_map(|e| match &e.kind {
                    EventKind::MoveMade(m) => Some(m.uci.clone()),
                    EventKind::MoveAmended { now, .. } => Some(format!("amended to {}", now.uci)),
                    _ => None,
                })
                .collect()
        }
    }

    #[test]
    fn a_piece_crossing_a_square_while_reports_are_lost_is_not_put_down_there() {
        // The bishop slides from c4 over d3 to e2 (it could go on to f1).
        // The report showing it on d3 is the last one heard for 300 ms:
        // the next two lose their ends on the line, and the report after
        // them shows it on e2. Unheard is not still: d3 is not taken for
        // the move's end.
        let mut board = Board::from("4k3/p7/8/8/2B5/8/P7/4K3 w - - 0 1");
        board.report(1000, &[("c4", '-'), ("d3", 'B')]);
        board.lost(1200);
        board.lost(1310);
        board.report(1310, &[("d3", '-'), ("e2", 'B')]);
        // Black answers at once.
        board.report(1410, &[("e8", '-')]);
        board.report(1510, &[("d8", 'k')]);
        board.catch_up(5000);
        assert_eq!(board.made(), ["c4e2", "e8d8"]);
    }

    #[test]
    fn a_press_is_judged_only_after_the_board_was_asked_for_its_whole_picture() {
        // White plays a2-a4 and presses, but both field updates were lost
        // on the line without a trace. A board that answers a dump request
        // is asked first, and the dump shows the move: no alert. A board
        // that cannot be asked is judged on what was seen (7.5.3).
        for answers in [true, false] {
            let mut board = Board::from("4k3/p7/8/8/8/8/P7/4K3 w - - 0 1");
            board.reconstructor.set_board_answers(answers);
            let clock = |white_ms: u64, running: Color| {
                SensorEvent::Clock(crate::sensor::ClockReading::ByColor {
                    white_ms,
                    black_ms: 600_000,
                    running: Some(running),
                })
            };
            board.catch_up(1000);
            board.reconstructor.handle_sensor(Timestamp::from_millis(1000), &clock(600_000, Color::White));
            board.catch_up(3000);
            board.reconstructor.handle_sensor(Timestamp::from_millis(3000), &clock(598_000, Color::Black));
            board.catch_up(4100);
            assert_eq!(board.reconstructor.poll_board_request(), answers);
            board.picture.set(Square::A2, Cell::Empty);
            board.picture.set(Square::A4, Cell::Piece(Color::White.pawn()));
            if answers {
                let dump = SensorEvent::Board(Box::new(board.picture.clone()));
                board.reconstructor.handle_sensor(Timestamp::from_millis(4150), &dump);
            }
            board.catch_up(8000);
            let alerts = board.alert_kinds();
            if answers {
                assert_eq!(board.made(), ["a2a4"]);
                assert!(alerts.is_empty(), "{alerts:?}");
            } else {
                assert_eq!(alerts, [AlertKind::ClockWithoutMove]);
            }
        }
    }

    #[test]
    fn a_press_pressed_back_on_a_suspect_picture_is_never_judged_against_the_next_move() {
        // White presses without a move, bytes are lost on the line, Black
        // presses back, and White then plays a2-a4. White's press is not
        // judged (the picture was suspect), and Black's press back must not
        // be judged either: after a2-a4 it would read as Black pressing
        // without a move.
        let mut board = Board::from("4k3/p7/8/8/8/8/P7/4K3 w - - 0 1");
        let clock = |running: Color| {
            SensorEvent::Clock(crate::sensor::ClockReading::ByColor {
                white_ms: 600_000,
                black_ms: 600_000,
                running: Some(running),
            })
        };
        board.catch_up(1000);
        board.reconstructor.handle_sensor(Timestamp::from_millis(1000), &clock(Color::White));
        board.catch_up(3000);
        board.reconstructor.handle_sensor(Timestamp::from_millis(3000), &clock(Color::Black));
        board.lost(3500);
        board.catch_up(4600);
        board.reconstructor.handle_sensor(Timestamp::from_millis(4600), &clock(Color::White));
        board.report(5200, &[("a2", '-'), ("a4", 'P')]);
        board.catch_up(9000);
        let alerts = board.alert_kinds();
        assert!(alerts.is_empty(), "{alerts:?}");
        assert_eq!(board.made(), ["a2a4"]);
    }

    #[test]
    fn a_suspect_picture_settles_once_whole_again_or_the_settle_time_after_the_loss() {
        // Bytes lost 200 ms after the bishop was seen on d3, and no whole
        // board comes: judged as seen 300 ms after the loss (not when the
        // wait for a whole board is over).
        let fen = "4k3/p7/8/8/2B5/8/P7/4K3 w - - 0 1";
        let mut board = Board::from(fen);
        board.report(1000, &[("c4", '-'), ("d3", 'B')]);
        board.lost(1200);
        board.catch_up(1490);
        assert_eq!(board.made(), Vec::<String>::new(), "not settled before 1200 + 300 ms");
        board.catch_up(1510);
        assert_eq!(board.made(), ["c4d3"]);
        // The whole board comes soon after the loss, unchanged: the board
        // was heard still from the bishop's arrival, and settles as it
        // would have without the loss.
        let mut board = Board::from(fen);
        board.report(1000, &[("c4", '-'), ("d3", 'B')]);
        board.lost(1200);
        board.report(1220, &[]);
        board.catch_up(1290);
        assert_eq!(board.made(), Vec::<String>::new());
        board.catch_up(1300);
        assert_eq!(board.made(), ["c4d3"]);
    }
}
