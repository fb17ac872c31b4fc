//! Pushing rounds to lichess broadcasts: what to send, when, and what the
//! answers mean, as a sans-I/O state machine (the shell only performs the
//! requests, `shell::lichess`).
//!
//! Each lichess broadcast round gets the whole PGN of its games in one
//! `POST /api/broadcast/round/<id>/push` (lichess replaces the round's games
//! with what it is sent). The rules kept here:
//!
//! - after every change, but a round at most once per `interval`; changes in
//!   between are gathered into the next push (only the latest PGN matters);
//! - one request at a time, whatever the number of rounds;
//! - at most [`MAX_GAMES`] games a round (lichess's limit): the first ones
//!   in board order are sent, and the operator is told once;
//! - 429 waits `Retry-After` (or the back-off), 5xx and connection failures
//!   back off from 2 s doubling to 60 s; the latest PGN is sent afterwards;
//! - 401/403 is a token problem: said once, tried again every 60 s (the
//!   shell reads the token file again, so a new token needs no restart);
//! - a game lichess refuses is told once per round, game and reason.
//!
//! The calls follow the reconstructor's contract: inputs
//! [`Pusher::handle_change`], [`Pusher::handle_response`],
//! [`Pusher::handle_failure`]; outputs [`Pusher::poll_request`] and
//! [`Pusher::poll_event`]; [`Pusher::poll_timeout`] says when to ask again.

pub mod report;

use std::{
    collections::{BTreeMap, HashSet, VecDeque},
    time::Duration,
};

use serde_json::Value;

use crate::time::Timestamp;

/// Games a lichess broadcast round takes at most (100 since lichess
/// raised it from 64).
pub const MAX_GAMES: usize = 100;

/// The first wait after a failure; it doubles up to [`BACKOFF_MAX`].
pub(crate) const BACKOFF_FIRST: Duration = Duration::from_secs(2);

/// The longest wait after failures (and between tries with a refused
/// token).
pub const BACKOFF_MAX: Duration = Duration::from_secs(60);

/// A push to make now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushRequest {
    /// The lichess round id.
    pub round: String,
    /// The round's games, as PGN.
    pub body: String,
}

/// What happened, for the log and the operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PushEvent {
    /// lichess took the push.
    Pushed {
        /// The lichess round id.
        round: String,
        /// Games lichess read.
        games: usize,
        /// Their moves, together.
        moves: u64,
        /// Games of the push lichess refused (each told once as
        /// [`PushEvent::GameRefused`]).
        refused: usize,
    },
    /// The round has more games than lichess takes (said once a round).
    TooManyGames {
        /// The lichess round id.
        round: String,
        /// Games in the round.
        games: usize,
    },
    /// lichess refused one game of the push (said once per round, game and
    /// reason).
    GameRefused {
        /// The lichess round id.
        round: String,
        /// The game, as `White - Black (board N)` from its tags.
        game: String,
        /// lichess's reason.
        error: String,
    },
    /// 401 or 403: the token is wrong, expired, or lacks the `study:write`
    /// scope (said once until a push succeeds).
    TokenRefused {
        /// The HTTP status.
        status: u16,
    },
    /// lichess refused the push as a whole (404: no such round, or it is
    /// not the token owner's; other 4xx): said once per round and reason,
    /// sent again at the next change.
    Refused {
        /// The lichess round id.
        round: String,
        /// The HTTP status.
        status: u16,
        /// What lichess said.
        message: String,
    },
    /// The push failed for now (429, 5xx, no connection); it is tried
    /// again.
    Retrying {
        /// The lichess round id.
        round: String,
        /// Why.
        why: String,
        /// When.
        retry_in: Duration,
    },
}

impl PushEvent {
    /// Whether the operator must hear of it (not only the log).
    pub const fn alerts_operator(&self) -> bool {
        !matches!(self, Self::Pushed { .. } | Self::Retrying { .. })
    }
}

/// One lichess round's state.
#[derive(Debug, Default)]
struct Round {
    /// The latest PGN to send.
    body: String,
    /// `body` has not been sent (or its push failed).
    dirty: bool,
    /// When its last push started.
    last_sent: Option<Timestamp>,
    /// Too many games was said.
    too_many_told: bool,
}

/// Every round pushed to lichess by this daemon.
#[derive(Debug)]
pub struct Pusher {
    interval: Duration,
    rounds: BTreeMap<String, Round>,
    /// The round whose push is under way.
    in_flight: Option<String>,
    /// No request before this (back-off).
    blocked_until: Option<Timestamp>,
    /// Failures in a row, for the back-off.
    failures: u32,
    /// The token was refused, and it was said.
    token_refused: bool,
    /// Causes already told (refused games, refused pushes).
    told: HashSet<String>,
    events: VecDeque<PushEvent>,
}

impl Pusher {
    /// A pusher sending each round at most once per `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            rounds: BTreeMap::new(),
            in_flight: None,
            blocked_until: None,
            failures: 0,
            token_refused: false,
            told: HashSet::new(),
            events: VecDeque::new(),
        }
    }

    /// The games of lichess round `round` are now `games` (each one game's
    /// PGN, in board order). Nothing is sent if they are what was sent.
    pub fn handle_change(&mut self, _now: Timestamp, round: &str, games: &[String]) {
        let state = self.rounds.entry(round.to_owned()).or_default();
        if games.len() > MAX_GAMES && !state.too_many_told {
            state.too_many_told = true;
            self.events.push_back(PushEvent::TooManyGames { round: round.to_owned(), games: games.len() });
        }
        let body: String = games.iter().take(MAX_GAMES).map(String::as_str).collect();
        if body != state.body {
            state.body = body;
            state.dirty = true;
        }
    }

    /// The push to make now, if one is due; the caller makes it and then
    /// calls [`Self::handle_response`] or [`Self::handle_failure`].
    pub fn poll_request(&mut self, now: Timestamp) -> Option<PushRequest> {
        if self.in_flight.is_some() || self.blocked_until.is_some_and(|until| now < until) {
            return None;
        }
        let interval = self.interval;
        // The round waiting longest goes first.
        let (id, state) = self
            .rounds
            .iter_mut()
            .filter(|(_, r)| r.dirty && r.last_sent.is_none_or(|at| at + interval <= now))
            .min_by_key(|(_, r)| r.last_sent)?;
        state.dirty = false;
        state.last_sent = Some(now);
        self.in_flight = Some(id.clone());
        Some(PushRequest { round: id.clone(), body: state.body.clone() })
    }

    /// At shutdown, the last chance to send: the push of the round waiting
    /// longest with changes not yet sent, whatever the interval and a
    /// back-off say. `None` when every round is sent, a push is under way,
    /// or lichess refused the token (it would refuse it again).
    pub fn poll_final_request(&mut self) -> Option<PushRequest> {
        if self.in_flight.is_some() || self.token_refused {
            return None;
        }
        let (id, state) = self.rounds.iter_mut().filter(|(_, r)| r.dirty).min_by_key(|(_, r)| r.last_sent)?;
        state.dirty = false;
        self.in_flight = Some(id.clone());
        Some(PushRequest { round: id.clone(), body: state.body.clone() })
    }

    /// lichess answered the push under way with `status`, `retry_after`
    /// (its `Retry-After` header, in seconds, if any) and `body`.
    pub fn handle_response(&mut self, now: Timestamp, status: u16, retry_after: Option<Duration>, body: &str) {
        let Some(round) = self.in_flight.take() else { return };
        match status {
            200..=299 => {
                self.failures = 0;
                self.blocked_until = None;
                self.token_refused = false;
                self.read_games(&round, body);
            }
            401 | 403 => {
                self.again(&round);
                self.blocked_until = Some(now + BACKOFF_MAX);
                if !self.token_refused {
                    self.token_refused = true;
                    self.events.push_back(PushEvent::TokenRefused { status });
                }
            }
            429 => {
                let wait = retry_after.map_or_else(|| self.backoff(), |wait| wait.min(Duration::from_secs(3600)));
                self.failures = self.failures.saturating_add(1);
                self.retry(now, &round, "lichess asks to slow down (429)".to_owned(), wait);
            }
            500..=599 => {
                let wait = self.backoff();
                self.failures = self.failures.saturating_add(1);
                self.retry(now, &round, format!("lichess answered {status}"), wait);
            }
            _ => {
                let message = error_message(body);
                if self.told.insert(format!("{round}\0{status}\0{message}")) {
                    self.events.push_back(PushEvent::Refused { round, status, message });
                }
            }
        }
    }

    /// The push under way failed without an answer (no connection, a
    /// timeout): `why`.
    pub fn handle_failure(&mut self, now: Timestamp, why: &str) {
        let Some(round) = self.in_flight.take() else { return };
        let wait = self.backoff();
        self.failures = self.failures.saturating_add(1);
        self.retry(now, &round, why.to_owned(), wait);
    }

    /// When to call [`Self::poll_request`] next (`None`: after the next
    /// input).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        if self.in_flight.is_some() {
            return None;
        }
        let due = self
            .rounds
            .values()
            .filter(|r| r.dirty)
            .map(|r| r.last_sent.map_or(Timestamp::ZERO, |at| at + self.interval))
            .min()?;
        Some(self.blocked_until.map_or(due, |until| due.max(until)))
    }

    /// The next thing to tell.
    pub fn poll_event(&mut self) -> Option<PushEvent> {
        self.events.pop_front()
    }

    #[cfg(test)]
    /// Whether a push is under way.
    pub(crate) const fn in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// The wait after the failures so far.
    fn backoff(&self) -> Duration {
        BACKOFF_FIRST.saturating_mul(1 << self.failures.min(6)).min(BACKOFF_MAX)
    }

    /// The round's latest PGN is to be sent again.
    fn again(&mut self, round: &str) {
        if let Some(state) = self.rounds.get_mut(round) {
            state.dirty = true;
            // The wait is the back-off's, not the interval's.
            state.last_sent = None;
        }
    }

    fn retry(&mut self, now: Timestamp, round: &str, why: String, wait: Duration) {
        self.again(round);
        self.blocked_until = Some(now + wait);
        self.events.push_back(PushEvent::Retrying { round: round.to_owned(), why, retry_in: wait });
    }

    /// Reads lichess's per-game answer.
    fn read_games(&mut self, round: &str, body: &str) {
        let Ok(answer) = serde_json::from_str::<Value>(body) else {
            return;
        };
        let (mut games, mut moves, mut refused) = (0, 0, 0);
        for game in answer["games"].as_array().into_iter().flatten() {
            if let Some(error) = game["error"].as_str() {
                refused += 1;
                let name = game_name(&game["tags"]);
                if self.told.insert(format!("{round}\0{name}\0{error}")) {
                    self.events.push_back(PushEvent::GameRefused {
                        round: round.to_owned(),
                        game: name,
                        error: error.to_owned(),
                    });
                }
            } else {
                games += 1;
                moves += game["moves"].as_u64().unwrap_or(0);
            }
        }
        self.events.push_back(PushEvent::Pushed { round: round.to_owned(), games, moves, refused });
    }
}

/// `White - Black (board N)` from a game's tags as lichess returns them.
fn game_name(tags: &Value) -> String {
    let tag = |name: &str| tags[name].as_str().unwrap_or("?").to_owned();
    let mut name = format!("{} - {}", tag("White"), tag("Black"));
    if let Some(board) = tags["Board"].as_str() {
        name.push_str(&format!(" (board {board})"));
    }
    name
}

/// What lichess said in a refusal (`{"error": "…"}`, or the text), kept
/// short.
fn error_message(body: &str) -> String {
    let text = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.trim().to_owned());
    text.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    fn games(n: usize, moves: &str) -> Vec<String> {
        (1..=n).map(|b| format!("[Board \"{b}\"]\n\n{moves} *\n\n")).collect()
    }

    fn ok_body(n: usize) -> String {
        let games: Vec<String> = (1..=n).map(|b| format!("{{\"tags\":{{\"Board\":\"{b}\"}},\"moves\":2}}")).collect();
        format!("{{\"games\":[{}]}}", games.join(","))
    }

    fn events(pusher: &mut Pusher) -> Vec<PushEvent> {
        std::iter::from_fn(|| pusher.poll_event()).collect()
    }

    #[test]
    fn at_the_stop_every_round_with_unsent_changes_goes_once_whatever_the_interval() {
        let mut pusher = Pusher::new(60 * SECOND);
        pusher.handle_change(at(0), "aaaaaaaa", &games(1, "1. e4"));
        let first = pusher.poll_request(at(0)).unwrap();
        pusher.handle_response(at(100), 200, None, &ok_body(1));
        assert_eq!(first.round, "aaaaaaaa");
        pusher.handle_change(at(1000), "aaaaaaaa", &games(1, "1. e4 e5"));
        pusher.handle_change(at(1000), "bbbbbbbb", &games(1, "1. d4"));
        pusher.poll_request(at(1000)).unwrap();
        pusher.handle_failure(at(1100), "no connection");
        // The interval holds round a back, the back-off round b.
        assert_eq!(pusher.poll_request(at(1200)), None);
        let mut sent = Vec::new();
        while let Some(request) = pusher.poll_final_request() {
            assert_eq!(pusher.poll_final_request(), None, "one at a time");
            pusher.handle_response(at(1300), 200, None, &ok_body(1));
            sent.push((request.round, request.body));
        }
        sent.sort();
        assert_eq!(
            sent,
            [
                ("aaaaaaaa".to_owned(), games(1, "1. e4 e5").concat()),
                ("bbbbbbbb".to_owned(), games(1, "1. d4").concat())
            ]
        );
    }

    #[test]
    fn a_change_is_pushed_at_once_then_at_most_once_per_interval() {
        let mut p = Pusher::new(2 * SECOND);
        assert_eq!(p.poll_request(at(0)), None);
        assert_eq!(p.poll_timeout(), None);
        p.handle_change(at(0), "abcdefgh", &games(1, "1. e4"));
        assert_eq!(p.poll_timeout(), Some(Timestamp::ZERO));
        let first = p.poll_request(at(0)).unwrap();
        assert_eq!(first, PushRequest { round: "abcdefgh".into(), body: games(1, "1. e4").concat() });
        // Never two at once.
        p.handle_change(at(100), "abcdefgh", &games(1, "1. e4 e5"));
        assert_eq!(p.poll_request(at(100)), None);
        assert_eq!(p.poll_timeout(), None);
        p.handle_response(at(300), 200, None, &ok_body(1));
        assert_eq!(events(&mut p), [PushEvent::Pushed { round: "abcdefgh".into(), games: 1, moves: 2, refused: 0 }]);
        // The change waits for the interval, and later changes join it.
        assert_eq!(p.poll_timeout(), Some(at(2000)));
        assert_eq!(p.poll_request(at(1999)), None);
        p.handle_change(at(1500), "abcdefgh", &games(1, "1. e4 e5 2. Nf3"));
        let second = p.poll_request(at(2000)).unwrap();
        assert_eq!(second.body, games(1, "1. e4 e5 2. Nf3").concat());
        p.handle_response(at(2100), 200, None, &ok_body(1));
        // Nothing new: nothing sent, however often the same games come.
        p.handle_change(at(5000), "abcdefgh", &games(1, "1. e4 e5 2. Nf3"));
        assert_eq!(p.poll_timeout(), None);
        assert_eq!(p.poll_request(at(9000)), None);
    }

    #[test]
    fn fast_play_sends_a_bounded_number_of_pushes() {
        let mut p = Pusher::new(2 * SECOND);
        let mut pushes = 0;
        let mut last = String::new();
        // Ten changes a second for a minute, each answered in 50 ms.
        for tenth in 0..600u64 {
            let now = at(tenth * 100);
            p.handle_change(now, "abcdefgh", &games(3, &format!("{{{tenth}}}")));
            if let Some(request) = p.poll_request(now) {
                pushes += 1;
                last = request.body;
                p.handle_response(now + Duration::from_millis(50), 200, None, &ok_body(3));
            }
        }
        // The last change goes out once the interval has passed.
        while let Some(t) = p.poll_timeout() {
            let request = p.poll_request(t).unwrap();
            pushes += 1;
            last = request.body;
            p.handle_response(t, 200, None, &ok_body(3));
        }
        assert!(pushes <= 31, "{pushes} pushes in a minute at one per 2 s");
        assert_eq!(last, games(3, "{599}").concat());
    }

    #[test]
    fn rounds_are_pushed_one_request_at_a_time_each_at_its_own_interval() {
        let mut p = Pusher::new(2 * SECOND);
        p.handle_change(at(0), "round001", &games(1, "1. d4"));
        p.handle_change(at(0), "round002", &games(1, "1. c4"));
        let a = p.poll_request(at(0)).unwrap();
        assert_eq!(p.poll_request(at(0)), None);
        p.handle_response(at(10), 200, None, &ok_body(1));
        let b = p.poll_request(at(10)).unwrap();
        assert_ne!(a.round, b.round);
        p.handle_response(at(20), 200, None, &ok_body(1));
        assert_eq!(p.poll_request(at(20)), None);
    }

    #[test]
    fn more_than_100_games_are_cut_and_said_once() {
        let mut p = Pusher::new(SECOND);
        // 100 games go out whole: lichess's limit (it was 64).
        p.handle_change(at(0), "abcdefgh", &games(100, "1. e4"));
        assert_eq!(events(&mut p), []);
        assert_eq!(p.poll_request(at(0)).unwrap().body, games(100, "1. e4").concat());
        p.handle_response(at(0), 200, None, &ok_body(100));
        events(&mut p);
        let all = games(107, "1. d4");
        p.handle_change(at(5000), "abcdefgh", &all);
        assert_eq!(events(&mut p), [PushEvent::TooManyGames { round: "abcdefgh".into(), games: 107 }]);
        let request = p.poll_request(at(5000)).unwrap();
        assert_eq!(request.body, all[..100].concat());
        p.handle_response(at(5000), 200, None, &ok_body(100));
        p.handle_change(at(9000), "abcdefgh", &games(108, "1. e4"));
        assert!(!events(&mut p).iter().any(|e| matches!(e, PushEvent::TooManyGames { .. })));
    }

    #[test]
    fn a_refused_game_is_told_once_per_cause() {
        let mut p = Pusher::new(SECOND);
        let answer = r#"{"games":[{"tags":{"White":"A","Black":"B","Board":"1"},"moves":3},
            {"tags":{"White":"C","Black":"D","Board":"2"},"error":"Illegal move Ke3"}]}"#;
        for (i, moves) in ["1. e4", "1. e4 e5", "1. e4 e5 2. Nf3"].iter().enumerate() {
            let now = at(i as u64 * 1000);
            p.handle_change(now, "abcdefgh", &games(2, moves));
            p.poll_request(now).unwrap();
            p.handle_response(now, 200, None, answer);
        }
        let told = events(&mut p);
        let refused: Vec<_> = told.iter().filter(|e| e.alerts_operator()).collect();
        assert_eq!(
            refused,
            [&PushEvent::GameRefused {
                round: "abcdefgh".into(),
                game: "C - D (board 2)".into(),
                error: "Illegal move Ke3".into()
            }]
        );
        assert!(told.contains(&PushEvent::Pushed { round: "abcdefgh".into(), games: 1, moves: 3, refused: 1 }));
        // Another reason for the same game is told.
        p.handle_change(at(5000), "abcdefgh", &games(2, "1. d4"));
        p.poll_request(at(5000)).unwrap();
        p.handle_response(
            at(5000),
            200,
            None,
            r#"{"games":[{"tags":{"White":"C","Black":"D","Board":"2"},"error":"Bad FEN"}]}"#,
        );
        assert_eq!(events(&mut p).iter().filter(|e| e.alerts_operator()).count(), 1);
    }

    #[test]
    fn too_many_requests_waits_retry_after_then_sends_the_latest() {
        let mut p = Pusher::new(SECOND);
        p.handle_change(at(0), "abcdefgh", &games(1, "1. e4"));
        p.poll_request(at(0)).unwrap();
        p.handle_response(at(100), 429, Some(Duration::from_secs(30)), "");
        assert!(matches!(&events(&mut p)[..], [PushEvent::Retrying { retry_in, .. }] if *retry_in == 30 * SECOND));
        assert_eq!(p.poll_timeout(), Some(at(30_100)));
        p.handle_change(at(5000), "abcdefgh", &games(1, "1. e4 e5"));
        assert_eq!(p.poll_request(at(30_099)), None);
        let again = p.poll_request(at(30_100)).unwrap();
        assert_eq!(again.body, games(1, "1. e4 e5").concat());
        // Without Retry-After, the back-off.
        p.handle_response(at(30_200), 429, None, "");
        assert_eq!(p.poll_timeout(), Some(at(30_200) + BACKOFF_FIRST * 2));
    }

    #[test]
    fn server_errors_and_lost_connections_back_off_doubling_to_a_minute() {
        let mut p = Pusher::new(SECOND);
        p.handle_change(at(0), "abcdefgh", &games(1, "1. e4"));
        let mut now = at(0);
        let mut waits = Vec::new();
        for i in 0..8 {
            let request = p.poll_request(now).unwrap();
            assert_eq!(request.body, games(1, "1. e4").concat());
            if i % 2 == 0 {
                p.handle_response(now, 502, None, "Bad Gateway");
            } else {
                p.handle_failure(now, "connection refused");
            }
            let next = p.poll_timeout().unwrap();
            waits.push(next.saturating_since(now).as_secs());
            assert_eq!(p.poll_request(Timestamp::from_micros(next.as_micros() - 1000)), None);
            now = next;
        }
        assert_eq!(waits, [2, 4, 8, 16, 32, 60, 60, 60]);
        assert!(events(&mut p).iter().all(|e| matches!(e, PushEvent::Retrying { .. })));
        // A success ends the back-off.
        p.poll_request(now).unwrap();
        p.handle_response(now, 200, None, &ok_body(1));
        p.handle_change(now, "abcdefgh", &games(1, "1. e4 e5"));
        assert_eq!(p.poll_timeout(), Some(now + SECOND));
    }

    #[test]
    fn a_refused_token_is_said_once_and_tried_again_every_minute() {
        let mut p = Pusher::new(SECOND);
        p.handle_change(at(0), "abcdefgh", &games(1, "1. e4"));
        for i in 0..3u64 {
            let now = at(i * 60_000);
            assert!(p.poll_request(now).is_some(), "try {i}");
            p.handle_response(now, 401, None, r#"{"error":"No such token"}"#);
            assert_eq!(p.poll_timeout(), Some(now + BACKOFF_MAX));
        }
        assert_eq!(events(&mut p), [PushEvent::TokenRefused { status: 401 }]);
        p.poll_request(at(180_000)).unwrap();
        p.handle_response(at(180_000), 200, None, &ok_body(1));
        p.handle_change(at(190_000), "abcdefgh", &games(1, "1. e4 e5"));
        p.poll_request(at(190_000)).unwrap();
        p.handle_response(at(190_000), 403, None, "");
        assert!(events(&mut p).contains(&PushEvent::TokenRefused { status: 403 }));
    }

    #[test]
    fn an_unknown_round_is_told_once_and_not_hammered() {
        let mut p = Pusher::new(SECOND);
        for i in 0..3u64 {
            let now = at(i * 5000);
            p.handle_change(now, "abcdefgh", &games(1, &format!("{{{i}}}")));
            p.poll_request(now).unwrap();
            p.handle_response(now, 404, None, r#"{"error":"Not found"}"#);
            // Sent again only at the next change.
            assert_eq!(p.poll_timeout(), None);
        }
        assert_eq!(
            events(&mut p),
            [PushEvent::Refused { round: "abcdefgh".into(), status: 404, message: "Not found".into() }]
        );
    }

    /// What a push's answer is, in the property below.
    #[derive(Clone, Copy, Debug)]
    enum Outcome {
        Ok,
        Refused(u16),
        Failed,
    }

    proptest::proptest! {
        /// Any interleaving of changes to three rounds, answers and passing
        /// time: never two pushes at once, a round never pushed again within
        /// the interval after a success, every push carries the round's
        /// latest games, and once lichess answers again the latest games
        /// of every round arrive.
        #[test]
        fn any_interleaving_keeps_the_rules(
            steps in proptest::collection::vec((0u8..3, 0u64..1500, 0u8..6, proptest::bool::ANY), 1..120)
        ) {
            let interval = 2 * SECOND;
            let mut p = Pusher::new(interval);
            let mut now = Timestamp::ZERO;
            let mut latest: BTreeMap<String, String> = BTreeMap::new();
            let mut arrived: BTreeMap<String, String> = BTreeMap::new();
            let mut sent: BTreeMap<String, Timestamp> = BTreeMap::new();
            let mut under_way: Option<PushRequest> = None;
            let outcomes = [Outcome::Ok, Outcome::Ok, Outcome::Refused(429), Outcome::Refused(502), Outcome::Failed, Outcome::Refused(401)];
            for (i, (round, wait_ms, outcome, change)) in steps.into_iter().enumerate() {
                let id = format!("round00{round}");
                now = now + Duration::from_millis(wait_ms);
                if change {
                    let games = games(1, &format!("{{{i}}}"));
                    latest.insert(id.clone(), games.concat());
                    p.handle_change(now, &id, &games);
                }
                if let Some(request) = under_way.take() {
                    match outcomes[outcome as usize] {
                        Outcome::Ok => {
                            p.handle_response(now, 200, None, &ok_body(1));
                            arrived.insert(request.round, request.body);
                        }
                        Outcome::Refused(status) => p.handle_response(now, status, None, ""),
                        Outcome::Failed => p.handle_failure(now, "connection refused"),
                    }
                }
                if let Some(request) = p.poll_request(now) {
                    proptest::prop_assert!(p.poll_request(now).is_none(), "two at once");
                    proptest::prop_assert_eq!(Some(&request.body), latest.get(&request.round));
                    // With back-offs of at least the interval, any two
                    // pushes of a round are an interval apart.
                    if let Some(before) = sent.insert(request.round.clone(), now) {
                        proptest::prop_assert!(before + interval <= now, "pushed again after {:?}", now.saturating_since(before));
                    }
                    under_way = Some(request);
                }
            }
            // lichess answers again: everything arrives, in bounded time.
            if let Some(request) = under_way.take() {
                p.handle_response(now, 200, None, &ok_body(1));
                arrived.insert(request.round, request.body);
            }
            let mut pushes = 0;
            while let Some(t) = p.poll_timeout() {
                let request = p.poll_request(t.max(now)).unwrap();
                now = t.max(now);
                p.handle_response(now, 200, None, &ok_body(1));
                arrived.insert(request.round, request.body);
                pushes += 1;
                proptest::prop_assert!(pushes <= 3, "each round at most once more");
            }
            proptest::prop_assert_eq!(arrived, latest);
        }
    }

    #[test]
    fn answers_without_a_push_under_way_are_ignored() {
        let mut p = Pusher::new(SECOND);
        p.handle_response(at(0), 200, None, &ok_body(1));
        p.handle_failure(at(0), "x");
        assert_eq!(p.poll_event(), None);
        assert!(!p.in_flight());
    }
}
