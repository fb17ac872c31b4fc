//! Where every board's items meet: the live tree goes out at once; the
//! public tree is a copy without alerts, held back by the configured delay
//! (tournaments commonly delay the audience by 15 minutes so that nobody
//! can relay an engine's opinion to a player); and each round's summary
//! (one retained message with every board of the round that this bridge
//! reads, for overview pages that must not subscribe to hundreds of
//! retained topics; other bridges publish their own part) is kept for both
//! trees.
//!
//! A summary goes out at once when it changes, then at most once every
//! [`SUMMARY_EVERY`] while it keeps changing. Every board's state
//! changes with every clock reading, once a second; rebuilding and sending
//! the whole round for each would cost the square of the number of boards
//! (500 boards: 500 summaries of 500 entries a second, some 75 MB/s of
//! JSON), which a hall's publisher cannot keep up with. An overview page
//! loses nothing: the board's own topics carry every change as it happens.
//!
//! A display computes a running clock from a reading and the time it was
//! read. Public payloads are published `delay` later, so every time in them
//! (`ts_ms`, and fields ending in `_at_ms`) is moved forward by the delay:
//! the public clock then runs exactly as the live one did, `delay` ago.
//!
//! An engine's analysis ([`Item::Analysis`]) waits here for the public copy
//! of the `state` that shows its position: whatever clock the analysis
//! pool keeps, the hub's own release of the position is what the analysis
//! may not overtake.
//!
//! A board's status topic (`bridges/<id>/boards/<serial>/status`) is read
//! by everyone, anonymous clients included, and has one value for all: its
//! `sync` (awaiting the start, in sync, out of sync) changes when a game
//! ends and when an illegal move or a knocked piece leaves the board
//! unexplained, so it is the game's and goes out only `delay` after it
//! changed, like the public `state`; the board's connection, firmware and
//! battery are the board's own and go out at once (a display must say
//! "board disconnected" now, and a cable says nothing about the game). The
//! live `state`'s `status` has the undelayed sync for arbiters.
//!
//! Times here are [`Timestamp`]s of a monotonic clock the caller keeps (the
//! session clock live, the capture's time in a replay; never the wall
//! clock, which may jump); only payload times are wall-clock.

use std::{
    collections::{BTreeMap, HashMap, VecDeque},
    time::Duration,
};

use serde_json::Value;

use super::{
    Item, Publication, Qos,
    payload::{self, SummaryPayload},
    topics::{RoundPath, Topics, Tree},
};
use crate::time::Timestamp;

/// A round's summary goes out at most this often (per tree).
pub(crate) const SUMMARY_EVERY: Duration = Duration::from_secs(1);

/// One round's summary in one tree.
#[derive(Debug, Default)]
struct Summary {
    /// Board label → its entry.
    boards: BTreeMap<String, Value>,
    /// When the changed summary is to go out, if it changed.
    due: Option<Timestamp>,
    /// When it last went out.
    sent: Option<Timestamp>,
}

/// The hub.
#[derive(Debug)]
pub struct Hub {
    topics: Topics,
    boot: String,
    delay: Duration,
    /// Copies for the public tree, with when they are released, in order.
    delayed: VecDeque<(Timestamp, Item)>,
    /// Each tree's rounds' summaries.
    summaries: BTreeMap<(Tree, RoundPath), Summary>,
    /// Each board's position in the public tree (by its live `state`
    /// topic): game and ply of the last public `state`.
    shown: HashMap<String, (u32, usize)>,
    /// Each board's newest analysis whose position is not public yet.
    analyses: HashMap<String, ((u32, usize), Publication)>,
    /// Each board's status topic, by the board's name.
    statuses: BTreeMap<String, StatusLine>,
    out: VecDeque<Publication>,
}

/// One board's status topic: the board as its feed last told it, and the
/// `sync` its readers may see.
#[derive(Debug)]
struct StatusLine {
    /// The status as the feed last gave it (`sync` as the board is now).
    latest: Publication,
    /// The board's `sync` now.
    live_sync: Value,
    /// The `sync` shown, and when it changed as its readers see it
    /// (`delay` after the board; `None` before any change).
    shown: (Value, Option<i64>),
    /// Changes of `sync` waiting for their time: when each is let out,
    /// the value, and its `ts_ms` (moved forward by the delay).
    pending: VecDeque<(Timestamp, Value, i64)>,
    /// What went out last.
    sent: Option<Publication>,
}

impl StatusLine {
    /// A board's first status: a board starts awaiting a game, and any
    /// other `sync` it has is news, delayed like every change.
    fn new(latest: Publication) -> Self {
        let start = Value::from(crate::event::BoardStatus::AwaitingStart.name());
        Self { latest, live_sync: start.clone(), shown: (start, None), pending: VecDeque::new(), sent: None }
    }

    /// The status as its readers may see it now, if it is not what went
    /// out last.
    fn publication(&mut self) -> Option<Publication> {
        let mut publication = self.latest.clone();
        if let Some(Value::Object(map)) = &mut publication.payload {
            map.insert("sync".into(), self.shown.0.clone());
            let ts = map.get("ts_ms").and_then(Value::as_i64);
            if let (Some(ts), Some(shown)) = (ts, self.shown.1) {
                map.insert("ts_ms".into(), Value::from(ts.max(shown)));
            }
        }
        if self.sent.as_ref() == Some(&publication) {
            return None;
        }
        self.sent = Some(publication.clone());
        Some(publication)
    }
}

impl Hub {
    /// A hub publishing the public tree `delay` behind the live one.
    pub fn new(topics: Topics, boot: &str, delay: Duration) -> Self {
        Self {
            topics,
            boot: boot.to_owned(),
            delay,
            delayed: VecDeque::new(),
            summaries: BTreeMap::new(),
            shown: HashMap::new(),
            analyses: HashMap::new(),
            statuses: BTreeMap::new(),
            out: VecDeque::new(),
        }
    }

    /// An item from a board's feed, at `now`.
    pub fn handle_item(&mut self, now: Timestamp, item: Item) {
        match &item {
            Item::Publish(publication) => {
                self.out.push_back(publication.clone());
                if publication.public {
                    self.delayed.push_back((now + self.delay, item));
                }
            }
            Item::SummaryEntry { round, board, entry } => {
                self.summary(now, Tree::Live, round, board, entry.clone());
                self.delayed.push_back((now + self.delay, item));
            }
            Item::BoardStatus { .. } => {
                let Item::BoardStatus { board, publication, sync_ts_ms } = item else { unreachable!("matched") };
                self.board_status(now, board, publication, sync_ts_ms);
                return;
            }
            Item::Analysis { .. } => {
                // Whatever the delay: it waits for the public state.
                let Item::Analysis { state, game, ply, publication } = item else { unreachable!("matched") };
                if publication.payload.is_none() || self.shown.get(&state) == Some(&(game, ply)) {
                    self.out.push_back(publication);
                } else {
                    self.analyses.insert(state, ((game, ply), publication));
                }
                self.handle_timeout(now);
                return;
            }
        }
        // Without a delay the public copy goes out with the live one.
        self.handle_timeout(now);
    }

    /// Releases the public copies and the summaries whose time has come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        while let Some((_, item)) = self.delayed.pop_front_if(|(at, _)| *at <= now) {
            match item {
                Item::Publish(mut publication) => {
                    let Some(topic) = self.topics.to_public(&publication.topic) else { continue };
                    let shows = shown_position(&publication);
                    let live = std::mem::take(&mut publication.topic);
                    publication.topic = topic;
                    if let Some(payload) = &mut publication.payload {
                        shift_times(payload, self.delay_ms());
                        if let Value::Object(map) = payload {
                            // The envelope's `delay_ms` (docs/mqtt.md), last.
                            map.insert("delay_ms".into(), Value::from(self.delay_ms()));
                        }
                    }
                    self.out.push_back(publication);
                    if let Some(position) = shows {
                        self.show(live, position);
                    }
                }
                // Never delayed as a whole (handled as they come).
                Item::Analysis { .. } | Item::BoardStatus { .. } => {}
                Item::SummaryEntry { round, board, mut entry } => {
                    shift_times(&mut entry, self.delay_ms());
                    self.summary(now, Tree::Public, &round, &board, entry);
                }
            }
        }
        let due: Vec<(Tree, RoundPath)> =
            self.summaries.iter().filter(|(_, s)| s.due.is_some_and(|at| at <= now)).map(|(k, _)| k.clone()).collect();
        for (tree, round) in due {
            self.publish_summary(now, tree, &round);
        }
        self.release_statuses(now);
    }

    /// When the next public copy, summary or board status is due.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let summary = self.summaries.values().filter_map(|s| s.due).min();
        let status = self.statuses.values().filter_map(|s| s.pending.front().map(|(at, _, _)| *at)).min();
        self.delayed.front().map(|(at, _)| *at).into_iter().chain(summary).chain(status).min()
    }

    /// A board's status from its feed, at `now`: what is not the game's
    /// goes out at once, a change of `sync` after the delay.
    fn board_status(&mut self, now: Timestamp, board: String, publication: Publication, sync_ts_ms: i64) {
        if publication.payload.is_none() {
            // The board is no longer read here (un-assigned): its retained
            // status goes, and no change of `sync` still held back may
            // bring it back.
            self.statuses.remove(&board);
            self.out.push_back(publication);
            return;
        }
        let sync = publication.payload.as_ref().and_then(|p| p.get("sync")).cloned();
        let delay = self.delay;
        let delay_ms = self.delay_ms() as i64;
        let line = self.statuses.entry(board).or_insert_with(|| StatusLine::new(publication.clone()));
        if let Some(sync) = sync
            && sync != line.live_sync
        {
            line.pending.push_back((now + delay, sync.clone(), sync_ts_ms + delay_ms));
            line.live_sync = sync;
        }
        line.latest = publication;
        // Without a delay the change goes out now, in this one message.
        while let Some((_, sync, ts)) = line.pending.pop_front_if(|(at, _, _)| *at <= now) {
            line.shown = (sync, Some(ts));
        }
        if let Some(publication) = line.publication() {
            self.out.push_back(publication);
        }
    }

    /// Lets out the changes of `sync` whose time has come.
    fn release_statuses(&mut self, now: Timestamp) {
        for line in self.statuses.values_mut() {
            let mut changed = false;
            while let Some((_, sync, ts)) = line.pending.pop_front_if(|(at, _, _)| *at <= now) {
                line.shown = (sync, Some(ts));
                changed = true;
            }
            if changed && let Some(publication) = line.publication() {
                self.out.push_back(publication);
            }
        }
    }

    /// The daemon stops: the summaries that changed since they last went
    /// out go now (public copies still held back are not released early).
    pub fn handle_stop(&mut self, now: Timestamp) {
        let due: Vec<(Tree, RoundPath)> =
            self.summaries.iter().filter(|(_, s)| s.due.is_some()).map(|(k, _)| k.clone()).collect();
        for (tree, round) in due {
            self.publish_summary(now, tree, &round);
        }
    }

    /// The public tree shows `position` of the board whose live state
    /// topic is `state`: its analysis, if it waits, goes out after it.
    fn show(&mut self, state: String, position: (u32, usize)) {
        if self.analyses.get(&state).is_some_and(|(of, _)| *of == position) {
            let (_, publication) = self.analyses.remove(&state).expect("just seen");
            self.out.push_back(publication);
        }
        self.shown.insert(state, position);
    }

    /// The delay in whole milliseconds, as payloads carry it.
    fn delay_ms(&self) -> u64 {
        self.delay.as_millis() as u64
    }

    /// The next publication.
    pub fn poll_publication(&mut self) -> Option<Publication> {
        self.out.pop_front()
    }

    /// Updates a round's summary; it goes out at once, or
    /// [`SUMMARY_EVERY`] after it last went out.
    fn summary(&mut self, now: Timestamp, tree: Tree, round: &RoundPath, board: &str, entry: Value) {
        let summary = self.summaries.entry((tree, round.clone())).or_default();
        summary.boards.insert(board.to_owned(), entry);
        if summary.due.is_none() {
            summary.due = Some(summary.sent.map_or(now, |sent| now.max(sent + SUMMARY_EVERY)));
        }
    }

    /// Publishes a round's summary as it is now.
    fn publish_summary(&mut self, now: Timestamp, tree: Tree, round: &RoundPath) {
        let delay_ms = self.delay_ms();
        let Some(summary) = self.summaries.get_mut(&(tree, round.clone())) else { return };
        summary.due = None;
        summary.sent = Some(now);
        let boards = &summary.boards;
        let ts = boards.values().filter_map(|e| e.get("ts_ms").and_then(Value::as_i64)).max();
        let payload = payload::to_value(&SummaryPayload {
            schema: payload::SCHEMA,
            boot: &self.boot,
            ts_ms: ts,
            event: &round.event,
            round: &round.round,
            delay_ms: (tree == Tree::Public).then_some(delay_ms),
            boards: boards.values().collect(),
        });
        self.out.push_back(Publication {
            topic: self.topics.summary(tree, round),
            payload: Some(payload),
            retain: true,
            qos: Qos::AtMostOnce,
            public: false,
        });
    }
}

/// The game and ply a `state` publication shows (`None` for any other
/// topic, or a state before the first game).
fn shown_position(publication: &Publication) -> Option<(u32, usize)> {
    if !publication.topic.ends_with("/state") {
        return None;
    }
    let payload = publication.payload.as_ref()?;
    let game = u32::try_from(payload.get("game")?.as_u64()?).ok()?;
    let ply = usize::try_from(payload.get("ply")?.as_u64()?).ok()?;
    Some((game, ply))
}

/// Moves every time in a payload (`ts_ms`, `…_at_ms`) forward by `delay`.
fn shift_times(value: &mut Value, delay_ms: u64) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "ts_ms" || key.ends_with("_at_ms") {
                    if let Some(t) = field.as_i64() {
                        *field = Value::from(t + delay_ms as i64);
                    }
                } else {
                    shift_times(field, delay_ms);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| shift_times(v, delay_ms)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::publish::topics::BoardPath;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn topics() -> Topics {
        Topics::new("bc", "pc1")
    }

    fn publish(topic: &str, public: bool, ts: i64) -> Item {
        Item::Publish(Publication {
            topic: topic.into(),
            payload: Some(json!({"ts_ms": ts, "clock": {"white_ms": 60000, "read_at_ms": ts}})),
            retain: true,
            qos: Qos::AtMostOnce,
            public,
        })
    }

    fn drain(hub: &mut Hub) -> Vec<Publication> {
        std::iter::from_fn(|| hub.poll_publication()).collect()
    }

    #[test]
    fn the_public_tree_follows_by_the_delay_without_alerts_and_with_its_clock_shifted() {
        let mut hub = Hub::new(topics(), "boot", Duration::from_millis(900_000));
        hub.handle_item(ms(1_000), publish("bc/v1/live/e/1/b/state", true, 5_000));
        hub.handle_item(ms(2_000), publish("bc/v1/live/e/1/b/alerts", false, 6_000));
        let live = drain(&mut hub);
        assert_eq!(
            live.iter().map(|p| p.topic.as_str()).collect::<Vec<_>>(),
            ["bc/v1/live/e/1/b/state", "bc/v1/live/e/1/b/alerts"]
        );
        assert_eq!(hub.poll_timeout(), Some(ms(901_000)));
        hub.handle_timeout(ms(900_999));
        assert!(drain(&mut hub).is_empty(), "not before its time");
        hub.handle_timeout(ms(901_000));
        let public = drain(&mut hub);
        assert_eq!(public.len(), 1, "alerts stay live");
        assert_eq!(public[0].topic, "bc/v1/public/e/1/b/state");
        let payload = public[0].payload.as_ref().unwrap();
        assert_eq!(payload["ts_ms"], 905_000);
        assert_eq!(payload["clock"]["read_at_ms"], 905_000);
        assert_eq!(payload["clock"]["white_ms"], 60000, "clock readings themselves are unchanged");
        assert_eq!(payload["delay_ms"], 900_000);
        assert_eq!(hub.poll_timeout(), None);
    }

    #[test]
    fn without_a_delay_the_public_copy_goes_out_at_once() {
        let mut hub = Hub::new(topics(), "boot", Duration::ZERO);
        hub.handle_item(ms(7), publish("bc/v1/live/e/1/b/moves", true, 1));
        let topics: Vec<String> = drain(&mut hub).into_iter().map(|p| p.topic).collect();
        assert_eq!(topics, ["bc/v1/live/e/1/b/moves", "bc/v1/public/e/1/b/moves"]);
    }

    #[test]
    fn a_round_summary_has_every_board_of_the_round() {
        let mut hub = Hub::new(topics(), "boot", Duration::ZERO);
        let path = |b: &str| BoardPath::new("e", "1", b);
        for (board, ply) in [("2", 7), ("1", 4), ("2", 8)] {
            let entry = json!({"board": board, "ply": ply, "ts_ms": 100});
            hub.handle_item(ms(0), Item::SummaryEntry { round: path(board).round_path(), board: board.into(), entry });
        }
        let other = json!({"board": "1", "ts_ms": 100});
        hub.handle_item(
            ms(0),
            Item::SummaryEntry { round: BoardPath::new("e", "2", "1").round_path(), board: "1".into(), entry: other },
        );
        let mut out = drain(&mut hub);
        let live_summaries =
            |out: &[Publication]| out.iter().filter(|p| p.topic == "bc/v1/live/e/1/summary/pc1").count();
        assert_eq!(live_summaries(&out), 1, "the first change goes out at once, the next ones wait");
        assert_eq!(hub.poll_timeout(), Some(Timestamp::ZERO + SUMMARY_EVERY));
        hub.handle_timeout(Timestamp::ZERO + SUMMARY_EVERY);
        out.extend(drain(&mut hub));
        assert_eq!(live_summaries(&out), 2, "and then go out as one");
        assert_eq!(hub.poll_timeout(), None);
        let last_live = out.iter().rev().find(|p| p.topic == "bc/v1/live/e/1/summary/pc1").unwrap();
        let boards = last_live.payload.as_ref().unwrap()["boards"].as_array().unwrap().clone();
        assert_eq!(
            boards,
            [json!({"board": "1", "ply": 4, "ts_ms": 100}), json!({"board": "2", "ply": 8, "ts_ms": 100})]
        );
        assert!(out.iter().any(|p| p.topic == "bc/v1/public/e/1/summary/pc1"));
        assert!(out.iter().any(|p| p.topic == "bc/v1/live/e/2/summary/pc1"), "rounds are kept apart");
        assert!(out.iter().all(|p| p.retain));
    }

    fn state(game: u32, ply: usize) -> Item {
        Item::Publish(Publication {
            topic: "bc/v1/live/e/1/b/state".into(),
            payload: Some(json!({"ts_ms": 1, "game": game, "ply": ply})),
            retain: true,
            qos: Qos::AtMostOnce,
            public: true,
        })
    }

    fn analysis(game: u32, ply: usize, cp: i64) -> Item {
        Item::Analysis {
            state: "bc/v1/live/e/1/b/state".into(),
            game,
            ply,
            publication: Publication {
                topic: "bc/v1/public/e/1/b/analysis".into(),
                payload: Some(json!({"game": game, "ply": ply, "score": {"cp": cp}})),
                retain: true,
                qos: Qos::AtMostOnce,
                public: false,
            },
        }
    }

    #[test]
    fn an_analysis_never_goes_out_before_the_public_state_of_its_position() {
        let mut hub = Hub::new(topics(), "boot", Duration::from_secs(10));
        hub.handle_item(ms(0), state(1, 1));
        // The analysis is ready early (the pool's clock may run ahead of
        // the hub's): it waits for the public state, not for a time.
        hub.handle_item(ms(5_000), analysis(1, 1, 30));
        hub.handle_item(ms(6_000), state(1, 2));
        let live: Vec<String> = drain(&mut hub).into_iter().map(|p| p.topic).collect();
        assert!(live.iter().all(|t| t.contains("/live/")), "{live:?}");
        hub.handle_timeout(ms(10_000));
        let out: Vec<String> = drain(&mut hub).into_iter().map(|p| p.topic).collect();
        assert_eq!(out, ["bc/v1/public/e/1/b/state", "bc/v1/public/e/1/b/analysis"], "right after its position");
        // Once the position is public, its analysis goes out as it comes.
        hub.handle_timeout(ms(16_000));
        drain(&mut hub);
        hub.handle_item(ms(16_500), analysis(1, 2, 40));
        let out = drain(&mut hub);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].payload.as_ref().unwrap()["score"]["cp"], 40);
        assert!(!out.iter().any(|p| p.topic.contains("/live/")), "never in the live tree");
    }

    #[test]
    fn an_analysis_of_a_position_the_public_tree_never_shows_is_replaced_and_a_clearing_is_not_held() {
        let mut hub = Hub::new(topics(), "boot", Duration::from_secs(10));
        hub.handle_item(ms(0), state(1, 1));
        hub.handle_item(ms(1), analysis(1, 7, 1));
        hub.handle_item(ms(2), analysis(1, 1, 2));
        drain(&mut hub);
        hub.handle_timeout(ms(10_000));
        let out = drain(&mut hub);
        let analyses: Vec<_> = out.iter().filter(|p| p.topic.ends_with("/analysis")).collect();
        assert_eq!(analyses.len(), 1);
        assert_eq!(analyses[0].payload.as_ref().unwrap()["ply"], 1);
        let clear = Item::Analysis {
            state: "bc/v1/live/e/1/b/state".into(),
            game: 1,
            ply: 9,
            publication: Publication::clear("bc/v1/public/e/1/b/analysis".into()),
        };
        hub.handle_item(ms(10_001), clear);
        let out = drain(&mut hub);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].payload, None);
    }

    /// A board's status from its feed: `ts_ms` of its connection's last
    /// change, `sync` as the board is now and when that changed.
    fn board_status(connection: &str, ts_ms: i64, sync: &str, sync_ts_ms: i64) -> Item {
        Item::BoardStatus {
            board: "b".into(),
            publication: Publication {
                topic: "bc/v1/bridges/pc1/boards/00001/status".into(),
                payload: Some(json!({"ts_ms": ts_ms, "connection": connection, "sync": sync})),
                retain: true,
                qos: Qos::AtMostOnce,
                public: false,
            },
            sync_ts_ms,
        }
    }

    fn shown(out: &[Publication]) -> Vec<(String, String, i64)> {
        out.iter()
            .map(|p| {
                let payload = p.payload.as_ref().unwrap();
                let text = |key: &str| payload[key].as_str().unwrap().to_owned();
                (text("connection"), text("sync"), payload["ts_ms"].as_i64().unwrap())
            })
            .collect()
    }

    #[test]
    fn a_board_status_shows_its_sync_only_after_the_delay_and_its_connection_at_once() {
        // Issue 29: the status topic is anonymous readers', and its sync
        // changed at a game's end and at an illegal move, 30 s before the
        // public tree said why.
        let mut hub = Hub::new(topics(), "boot", Duration::from_secs(10));
        hub.handle_item(ms(0), board_status("connected", 0, "awaiting_start", 0));
        assert_eq!(shown(&drain(&mut hub)), [("connected".into(), "awaiting_start".into(), 0)]);
        // The game starts, then goes out of sync (an illegal move): the
        // status says nothing, not even by a message of the same content.
        hub.handle_item(ms(1_000), board_status("connected", 0, "in_sync", 1_000));
        hub.handle_item(ms(4_000), board_status("connected", 0, "out_of_sync", 4_000));
        assert!(drain(&mut hub).is_empty(), "no message while only the sync changed");
        // The cable is pulled: that goes out at once, with the old sync.
        hub.handle_item(ms(5_000), board_status("disconnected", 5_000, "out_of_sync", 4_000));
        assert_eq!(shown(&drain(&mut hub)), [("disconnected".into(), "awaiting_start".into(), 5_000)]);
        assert_eq!(hub.poll_timeout(), Some(ms(11_000)));
        hub.handle_timeout(ms(10_999));
        assert!(drain(&mut hub).is_empty(), "not before its time");
        hub.handle_timeout(ms(11_000));
        assert_eq!(shown(&drain(&mut hub)), [("disconnected".into(), "in_sync".into(), 11_000)]);
        hub.handle_timeout(ms(14_000));
        assert_eq!(shown(&drain(&mut hub)), [("disconnected".into(), "out_of_sync".into(), 14_000)]);
        assert_eq!(hub.poll_timeout(), None);
        // A late subscriber gets the same retained value; a republication of
        // the same board sends nothing new.
        hub.handle_item(ms(15_000), board_status("disconnected", 5_000, "out_of_sync", 4_000));
        assert!(drain(&mut hub).is_empty());
    }

    #[test]
    fn without_a_delay_a_board_status_goes_out_as_it_is() {
        let mut hub = Hub::new(topics(), "boot", Duration::ZERO);
        hub.handle_item(ms(0), board_status("connected", 0, "awaiting_start", 0));
        hub.handle_item(ms(1_000), board_status("connected", 0, "in_sync", 1_000));
        assert_eq!(
            shown(&drain(&mut hub)),
            [("connected".into(), "awaiting_start".into(), 0), ("connected".into(), "in_sync".into(), 1_000)]
        );
    }

    #[test]
    fn a_board_status_moves_to_its_serial_topic_with_its_delayed_sync() {
        let mut hub = Hub::new(topics(), "boot", Duration::from_secs(10));
        hub.handle_item(ms(0), board_status("connected", 0, "in_sync", 0));
        let Item::BoardStatus { board, mut publication, sync_ts_ms } = board_status("connected", 0, "in_sync", 0)
        else {
            unreachable!()
        };
        publication.topic = "bc/v1/bridges/pc1/boards/12345/status".into();
        hub.handle_item(ms(1), Item::BoardStatus { board, publication, sync_ts_ms });
        let out = drain(&mut hub);
        assert_eq!(out.last().unwrap().topic, "bc/v1/bridges/pc1/boards/12345/status");
        assert_eq!(shown(&out).last().unwrap().1, "awaiting_start");
        hub.handle_timeout(ms(10_000));
        let out = drain(&mut hub);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].topic, "bc/v1/bridges/pc1/boards/12345/status", "the released sync goes to its topic now");
        assert_eq!(shown(&out)[0].1, "in_sync");
    }

    #[test]
    fn a_cleared_board_status_goes_at_once_and_no_held_back_sync_brings_it_back() {
        // An un-assigned board: its row must leave every console.
        let mut hub = Hub::new(topics(), "boot", Duration::from_secs(10));
        hub.handle_item(ms(0), board_status("connected", 0, "awaiting_start", 0));
        hub.handle_item(ms(1_000), board_status("connected", 0, "in_sync", 1_000));
        drain(&mut hub);
        let Item::BoardStatus { board, mut publication, .. } = board_status("disconnected", 0, "in_sync", 0) else {
            unreachable!()
        };
        publication.payload = None;
        hub.handle_item(ms(2_000), Item::BoardStatus { board, publication, sync_ts_ms: 0 });
        let out = drain(&mut hub);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].payload.as_ref(), out[0].retain), (None, true));
        hub.handle_timeout(ms(20_000));
        assert!(drain(&mut hub).is_empty(), "the sync held back is forgotten with the board");
        assert_eq!(hub.poll_timeout(), None);
    }

    #[test]
    fn a_summary_changed_just_before_a_stop_still_goes_out() {
        let mut hub = Hub::new(topics(), "boot", Duration::ZERO);
        let round = BoardPath::new("e", "1", "1").round_path();
        for ply in [1, 2] {
            let entry = json!({"board": "1", "ply": ply, "ts_ms": 100});
            hub.handle_item(ms(10), Item::SummaryEntry { round: round.clone(), board: "1".into(), entry });
        }
        drain(&mut hub);
        hub.handle_stop(ms(20));
        let out = drain(&mut hub);
        let live = out.iter().find(|p| p.topic == "bc/v1/live/e/1/summary/pc1").unwrap();
        assert_eq!(live.payload.as_ref().unwrap()["boards"][0]["ply"], 2);
    }
}
