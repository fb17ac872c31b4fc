//! Which position an engine analyses next, and when its result may be
//! published.
//!
//! Every new position of every board is queued as it happens, with the time
//! it reaches the public tree (now plus the public delay). An idle engine
//! takes the **newest** waiting position of any board: when the engines
//! cannot keep up, what spectators are about to see matters more than a
//! backlog. A position is **stale**, and dropped (waiting, running or
//! analysed), once a later position of the same board has reached the
//! public tree: nobody sees it any more.
//!
//! The analysis may run as early as the position exists; its result is
//! **held** until the position's own public time (the gate): an
//! evaluation of a position that players in the hall still see is exactly
//! what the delay exists to keep from them. An engine that failed on a
//! position makes its board's analysis cleared at once (a cleared topic
//! reveals nothing), so that no board shows an evaluation of a position it
//! no longer has.
//!
//! Times are the caller's monotonic [`Timestamp`]s, as everywhere in the
//! core.

use std::{
    collections::{BTreeMap, VecDeque},
    time::Duration,
};

use super::uci::Evaluation;
use crate::{publish::topics::BoardPath, time::Timestamp};

/// A board's position to analyse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Position {
    /// Where the board publishes.
    pub board: BoardPath,
    /// The board's configured name.
    pub name: String,
    /// Which game of the board's session (as in `state`).
    pub game: u32,
    /// Plies on the record (as in `state`).
    pub ply: usize,
    /// The position.
    pub fen: String,
}

/// A position handed to an engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Names the job in [`Schedule::handle_result`] and
    /// [`Schedule::handle_failure`].
    pub id: u64,
    /// What to analyse.
    pub position: Position,
}

/// What the schedule has for the publisher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Release {
    /// An analysis whose position is public now.
    Publish {
        /// The position.
        position: Position,
        /// What the engine found.
        evaluation: Evaluation,
    },
    /// The board's analysis is to be cleared (its engine failed).
    Clear {
        /// The board.
        board: BoardPath,
    },
}

/// The queue of positions and the gate (see the module's docs).
#[derive(Debug)]
pub struct Schedule {
    delay: Duration,
    next_id: u64,
    boards: BTreeMap<BoardPath, Board>,
    out: VecDeque<Release>,
}

/// One board's positions, oldest first, none of them stale.
#[derive(Debug, Default)]
struct Board {
    entries: VecDeque<Entry>,
}

#[derive(Debug)]
struct Entry {
    id: u64,
    position: Position,
    public_at: Timestamp,
    state: State,
}

#[derive(Debug)]
enum State {
    Waiting,
    Running,
    Held(Evaluation),
}

impl Schedule {
    /// A schedule for a public tree `delay` behind the live one.
    pub fn new(delay: Duration) -> Self {
        Self { delay, next_id: 1, boards: BTreeMap::new(), out: VecDeque::new() }
    }

    /// A board's position at `now` (the same position again is ignored: a
    /// board's state is published again with every clock reading).
    pub fn handle_position(&mut self, now: Timestamp, position: Position) {
        let board = self.boards.entry(position.board.clone()).or_default();
        if board.entries.back().is_some_and(|e| {
            e.position.game == position.game && e.position.ply == position.ply && e.position.fen == position.fen
        }) {
            return;
        }
        board.entries.push_back(Entry {
            id: self.next_id,
            position,
            public_at: now + self.delay,
            state: State::Waiting,
        });
        self.next_id += 1;
        self.handle_timeout(now);
    }

    /// The position an idle engine is to analyse now, if any: the newest
    /// one waiting.
    pub fn next_job(&mut self, now: Timestamp) -> Option<Job> {
        self.handle_timeout(now);
        let entry = self
            .boards
            .values_mut()
            .filter_map(|b| b.entries.iter_mut().rev().find(|e| matches!(e.state, State::Waiting)))
            .max_by_key(|e| e.id)?;
        entry.state = State::Running;
        Some(Job { id: entry.id, position: entry.position.clone() })
    }

    /// The engine's result for job `id` (dropped if its position went stale
    /// meanwhile); it goes out when its position is public.
    pub fn handle_result(&mut self, now: Timestamp, id: u64, evaluation: Evaluation) {
        if let Some(entry) = self.entry(id)
            && matches!(entry.state, State::Running)
        {
            entry.state = State::Held(evaluation);
        }
        self.handle_timeout(now);
    }

    /// The engine failed on job `id` (it crashed or hung): the position is
    /// given up, and its board's analysis is cleared rather than left
    /// showing an older position's.
    pub fn handle_failure(&mut self, now: Timestamp, id: u64) {
        for (path, board) in &mut self.boards {
            if let Some(at) = board.entries.iter().position(|e| e.id == id) {
                board.entries.remove(at);
                self.out.push_back(Release::Clear { board: path.clone() });
                break;
            }
        }
        self.handle_timeout(now);
    }

    /// Drops the stale positions and releases the results whose time has
    /// come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        for board in self.boards.values_mut() {
            // Everything older than the newest public position is stale.
            if let Some(newest_public) = board.entries.iter().rposition(|e| e.public_at <= now) {
                board.entries.drain(..newest_public);
            }
            let due = board.entries.front().is_some_and(|e| e.public_at <= now && matches!(e.state, State::Held(_)));
            if due {
                let entry = board.entries.pop_front().expect("the front was just seen");
                let State::Held(evaluation) = entry.state else { unreachable!("checked as held") };
                self.out.push_back(Release::Publish { position: entry.position, evaluation });
            }
        }
        self.boards.retain(|_, b| !b.entries.is_empty());
    }

    /// When the next held result is due.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.boards
            .values()
            .flat_map(|b| &b.entries)
            .filter(|e| matches!(e.state, State::Held(_)))
            .map(|e| e.public_at)
            .min()
    }

    /// The next result or clearing to publish.
    pub fn poll_release(&mut self) -> Option<Release> {
        self.out.pop_front()
    }

    /// Positions waiting for an engine.
    pub fn waiting(&self) -> usize {
        self.boards.values().flat_map(|b| &b.entries).filter(|e| matches!(e.state, State::Waiting)).count()
    }

    fn entry(&mut self, id: u64) -> Option<&mut Entry> {
        self.boards.values_mut().flat_map(|b| b.entries.iter_mut()).find(|e| e.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::uci::Score;

    const DELAY: Duration = Duration::from_secs(900);

    fn s(n: u64) -> Timestamp {
        Timestamp::from_millis(n * 1000)
    }

    fn pos(board: &str, ply: usize) -> Position {
        Position {
            board: BoardPath::new("e", "1", board),
            name: board.into(),
            game: 1,
            ply,
            fen: format!("fen of {board} at {ply}"),
        }
    }

    fn eval(cp: i32) -> Evaluation {
        Evaluation {
            score: Score::Cp(cp),
            depth: 20,
            nodes: 1_000_000,
            pv: vec!["e4".into()],
            best_uci: Some("e2e4".into()),
        }
    }

    fn releases(schedule: &mut Schedule) -> Vec<Release> {
        std::iter::from_fn(|| schedule.poll_release()).collect()
    }

    fn published(schedule: &mut Schedule) -> Vec<(String, usize, i32)> {
        releases(schedule)
            .into_iter()
            .map(|r| match r {
                Release::Publish { position, evaluation: Evaluation { score: Score::Cp(cp), .. } } => {
                    (position.name, position.ply, cp)
                }
                other => panic!("not a publication: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_result_is_held_until_its_position_is_public() {
        let mut schedule = Schedule::new(DELAY);
        schedule.handle_position(s(10), pos("1", 1));
        let job = schedule.next_job(s(10)).unwrap();
        assert_eq!(job.position, pos("1", 1));
        assert_eq!(schedule.next_job(s(10)), None, "one position, one engine");
        schedule.handle_result(s(11), job.id, eval(30));
        assert!(releases(&mut schedule).is_empty(), "analysed early, not published early");
        assert_eq!(schedule.poll_timeout(), Some(s(910)));
        schedule.handle_timeout(Timestamp::from_micros(s(910).as_micros() - 1));
        assert!(releases(&mut schedule).is_empty(), "not a microsecond early");
        schedule.handle_timeout(s(910));
        assert_eq!(published(&mut schedule), [("1".into(), 1, 30)]);
        assert_eq!(schedule.poll_timeout(), None);
    }

    #[test]
    fn a_result_that_comes_after_its_public_time_goes_out_at_once() {
        let mut schedule = Schedule::new(Duration::from_secs(1));
        schedule.handle_position(s(0), pos("1", 1));
        let job = schedule.next_job(s(0)).unwrap();
        schedule.handle_result(s(3), job.id, eval(5));
        assert_eq!(published(&mut schedule), [("1".into(), 1, 5)]);
    }

    #[test]
    fn the_newest_position_is_analysed_first() {
        let mut schedule = Schedule::new(DELAY);
        schedule.handle_position(s(1), pos("1", 1));
        schedule.handle_position(s(2), pos("2", 1));
        schedule.handle_position(s(3), pos("3", 1));
        schedule.handle_position(s(4), pos("1", 2));
        let order: Vec<(String, usize)> =
            std::iter::from_fn(|| schedule.next_job(s(5))).map(|j| (j.position.name, j.position.ply)).collect();
        assert_eq!(order, [("1".into(), 2), ("3".into(), 1), ("2".into(), 1), ("1".into(), 1)]);
        assert_eq!(schedule.waiting(), 0);
    }

    #[test]
    fn the_same_position_again_is_not_analysed_again() {
        let mut schedule = Schedule::new(DELAY);
        schedule.handle_position(s(1), pos("1", 1));
        schedule.handle_position(s(2), pos("1", 1));
        assert_eq!(schedule.waiting(), 1);
        let mut next_game = pos("1", 1);
        next_game.game = 2;
        schedule.handle_position(s(3), next_game);
        assert_eq!(schedule.waiting(), 2, "the same ply of the next game is a new position");
    }

    #[test]
    fn a_position_the_public_board_has_moved_past_is_dropped() {
        let mut schedule = Schedule::new(Duration::from_secs(10));
        schedule.handle_position(s(0), pos("1", 1));
        schedule.handle_position(s(2), pos("1", 2));
        // Both wait while neither is public; at 12 s ply 2 is public and
        // ply 1 is of no more use.
        assert_eq!(schedule.waiting(), 2);
        schedule.handle_timeout(s(12));
        assert_eq!(schedule.waiting(), 1);
        assert_eq!(schedule.next_job(s(12)).unwrap().position.ply, 2);
    }

    #[test]
    fn without_a_delay_a_board_that_moved_on_drops_its_older_positions() {
        let mut schedule = Schedule::new(Duration::ZERO);
        schedule.handle_position(s(0), pos("1", 1));
        let running = schedule.next_job(s(0)).unwrap();
        schedule.handle_position(s(1), pos("1", 2));
        schedule.handle_position(s(2), pos("1", 3));
        assert_eq!(schedule.waiting(), 1, "ply 2 is stale as soon as ply 3 is on the board");
        schedule.handle_result(s(3), running.id, eval(1));
        assert!(releases(&mut schedule).is_empty(), "a stale result is not published");
        let job = schedule.next_job(s(3)).unwrap();
        assert_eq!(job.position.ply, 3);
        schedule.handle_result(s(4), job.id, eval(3));
        assert_eq!(published(&mut schedule), [("1".into(), 3, 3)]);
    }

    #[test]
    fn a_held_result_is_dropped_when_the_next_position_goes_public_first() {
        // Ply 1's analysis is ready, but ply 2 reaches the public tree at
        // the same moment as ply 1 would: nobody sees ply 1 any more.
        let mut schedule = Schedule::new(Duration::from_secs(10));
        schedule.handle_position(s(0), pos("1", 1));
        let first = schedule.next_job(s(0)).unwrap();
        schedule.handle_result(s(1), first.id, eval(10));
        schedule.handle_position(s(5), pos("1", 2));
        let second = schedule.next_job(s(5)).unwrap();
        schedule.handle_result(s(6), second.id, eval(20));
        schedule.handle_timeout(s(10));
        assert_eq!(published(&mut schedule), [("1".into(), 1, 10)], "ply 1 is public from 10 s to 15 s");
        assert_eq!(schedule.poll_timeout(), Some(s(15)));
        schedule.handle_timeout(s(30));
        assert_eq!(published(&mut schedule), [("1".into(), 2, 20)]);
        // Had the clock jumped past both at once, only ply 2 would show.
        let mut late = Schedule::new(Duration::from_secs(10));
        late.handle_position(s(0), pos("1", 1));
        late.handle_position(s(5), pos("1", 2));
        let (b, a) = (late.next_job(s(5)).unwrap(), late.next_job(s(5)).unwrap());
        late.handle_result(s(6), a.id, eval(10));
        late.handle_result(s(6), b.id, eval(20));
        late.handle_timeout(s(20));
        assert_eq!(published(&mut late), [("1".into(), 2, 20)]);
    }

    #[test]
    fn results_of_boards_are_released_each_at_its_own_time() {
        let mut schedule = Schedule::new(Duration::from_secs(60));
        for (t, board) in [(0, "1"), (10, "2"), (20, "3")] {
            schedule.handle_position(s(t), pos(board, 1));
        }
        while let Some(job) = schedule.next_job(s(20)) {
            schedule.handle_result(s(21), job.id, eval(job.position.name.parse().unwrap()));
        }
        let mut seen = Vec::new();
        while let Some(at) = schedule.poll_timeout() {
            schedule.handle_timeout(at);
            seen.extend(published(&mut schedule).into_iter().map(|(name, _, _)| (at, name)));
        }
        assert_eq!(seen, [(s(60), "1".into()), (s(70), "2".into()), (s(80), "3".into())]);
    }

    #[test]
    fn a_failed_engine_clears_its_boards_analysis_and_gives_the_position_up() {
        let mut schedule = Schedule::new(DELAY);
        schedule.handle_position(s(0), pos("1", 1));
        let job = schedule.next_job(s(0)).unwrap();
        schedule.handle_failure(s(2), job.id);
        assert_eq!(releases(&mut schedule), [Release::Clear { board: BoardPath::new("e", "1", "1") }]);
        assert_eq!(schedule.next_job(s(2)), None, "a position that broke an engine is not tried again");
        schedule.handle_result(s(3), job.id, eval(1));
        schedule.handle_timeout(s(2000));
        assert!(releases(&mut schedule).is_empty(), "a late answer of the failed job is ignored");
        // The board's next position is analysed as usual.
        schedule.handle_position(s(3000), pos("1", 2));
        let next = schedule.next_job(s(3000)).unwrap();
        schedule.handle_result(s(3001), next.id, eval(2));
        schedule.handle_timeout(s(3900));
        assert_eq!(published(&mut schedule), [("1".into(), 2, 2)]);
    }

    #[test]
    fn memory_is_bounded_by_what_is_not_yet_public() {
        let mut schedule = Schedule::new(Duration::from_secs(10));
        for t in 0..1000 {
            schedule.handle_position(s(t), pos("1", t as usize + 1));
        }
        assert!(schedule.waiting() <= 11, "{} positions kept", schedule.waiting());
    }
}
