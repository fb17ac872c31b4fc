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
pub(crate) mod describe;
mod displaced;
mod gesture;
mod irregular;
mod judge;
mod known;
mod lost;
mod matcher;
mod occupancy;
mod operator;
mod phase;
mod play;
mod start;
mod touch;
mod verdict;

use std::collections::VecDeque;

use shakmaty::{Color, Position, Square};

pub use self::config::{GameSetup, ReconstructorConfig, RotatedBoard, UncertainOrder, WhiteClock};
use self::{
    clock::{ClockChanges, ClockTracker},
    lost::LostBytes,
    phase::{Game, PendingMove, Phase, Press, Standing},
    start::StartWatch,
    touch::SensorLog,
};
use crate::{
    alert::{Alert, AlertKind},
    event::{BoardStatus, Event, EventKind},
    game::GameRecord,
    sensor::{Picture, SensorEvent},
    time::Timestamp,
};

/// Turns the sensor events of one board into games.
#[derive(Debug)]
pub struct Reconstructor {
    config: ReconstructorConfig,
    setup: GameSetup,
    /// The next game's start, watched for while no game is played.
    start: StartWatch,
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
    /// The number the next game will get.
    next_game: u32,
    /// Sequence number of the last event of the current game.
    seq: u64,
    events: VecDeque<Event>,
    /// Earlier games on this board, oldest first.
    finished: Vec<GameRecord>,
    /// Whether the picture can be trusted after lost bytes.
    lost: LostBytes,
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

impl Reconstructor {
    /// A reconstructor waiting for the first game.
    pub fn new(config: ReconstructorConfig, setup: GameSetup) -> Self {
        let start = StartWatch::new(setup.start.as_ref(), setup.chess960);
        let clock = ClockTracker::new(config.white_clock.side());
        Self {
            config,
            setup,
            start,
            picture: Picture::empty(),
            rotated: false,
            settle_at: None,
            clock,
            log: SensorLog::default(),
            phase: Phase::Waiting,
            next_game: 1,
            seq: 0,
            events: VecDeque::new(),
            finished: Vec::new(),
            lost: LostBytes::default(),
        }
    }

    /// Takes one sensor event.
    pub fn handle_sensor(&mut self, now: Timestamp, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => {
                self.lost.handle_whole_board(now);
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
        self.lost.handle_timeout(now);
        if self.settle_due().is_some_and(|t| t <= now) {
            self.settle_at = None;
            self.judge_settled(now);
        }
        self.handle_game_timers(now);
        if self.start.poll_timeout(self.config.out_of_sync_after).is_some_and(|t| t <= now) {
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
        self.lost.handle_end();
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
        self.lost.handle_lost(now);
    }

    /// The board answers a request for its whole picture: ask it before
    /// blaming a player (see [`Reconstructor::poll_board_request`]).
    pub(crate) fn set_board_answers(&mut self, answers: bool) {
        self.lost.set_board_answers(answers);
    }

    /// Whether the whole board should be asked for now (once per request).
    /// Before a press is judged as made without a move or on an illegal
    /// position, and before the board is called out of sync, a board that
    /// can answer is asked for its whole picture, and judging waits for it
    /// (at most `lost::BOARD_CHECK_WAIT`): a field update lost on the line must
    /// not be turned into an alert.
    pub(crate) fn poll_board_request(&mut self) -> bool {
        self.lost.poll_board_request()
    }

    /// Asks for the whole board if none came since the incident began
    /// (`since`); `true` when judging must wait for it.
    fn ask_board_first(&mut self, now: Timestamp, since: Timestamp) -> bool {
        self.lost.ask_board_first(now, since)
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
        let not_before = self.lost.settled_not_before(self.config.settle);
        self.settle_at.map(|at| at.max(not_before))
    }

    /// When to call [`Reconstructor::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let mut next = Earliest(None);
        next.consider(self.settle_due());
        next.consider(self.lost.poll_timeout());
        next.consider(self.start.poll_timeout(self.config.out_of_sync_after));
        if let Some(game) = self.phase.game() {
            next.consider(game.gesture.map(|(t, _)| t + self.config.gesture_hold));
        }
        if let Some(game) = self.phase.playing() {
            // While the picture is suspect these wait; they come due (or
            // go away) when it is whole again.
            if !self.lost.is_suspect() {
                let resumed = |t: Timestamp| self.lost.resumed(t);
                next.consider(game.pending.press.map(|p| resumed(p.deadline)));
                if !matches!(game.status, BoardStatus::OutOfSync { .. }) {
                    next.consider(game.out_of_sync_due(&self.config).map(resumed));
                }
            }
            next.consider(game.pending.quiet_at);
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

    /// The tags the board's next games get: the capture's, with the
    /// operator's `next_round` and `set_tags` applied since.
    pub fn next_game_tags(&self) -> &[(String, String)] {
        &self.setup.tags
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
    pub(crate) fn game_by_number(&self, number: u32) -> Option<&GameRecord> {
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
    pub(crate) fn picture(&self) -> &Picture {
        &self.picture
    }

    /// The picture changed. A single square is judged at once; a whole
    /// board (a dump, as after a reconnection) only once settled, since
    /// nothing in it was seen happening: several moves in it are filled in
    /// as such (R10).
    fn picture_changed(&mut self, now: Timestamp, judge_now: bool) {
        self.settle_at = Some(now + self.config.settle);
        let Some(game) = self.phase.playing_mut() else {
            return;
        };
        game.diff = self.picture.diff(game.known.pos.board());
        if game.diff.is_empty() {
            // The game position is back on the board: an illegal move
            // completed before has been put right.
            game.illegal_unresolved = false;
        }
        if game.pending.quiet_at.is_some() {
            game.pending.quiet_at = Some(now + self.config.quiet_completion);
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
