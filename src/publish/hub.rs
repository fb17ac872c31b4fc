//! Where every board's items meet: the live tree goes out at once; the
//! public tree is a copy without alerts, held back by the configured delay
//! (tournaments commonly delay the audience by 15 minutes so that nobody
//! can relay an engine's opinion to a player); and each round's summary
//! (one retained message with every board of the round, for overview pages
//! that must not subscribe to hundreds of retained topics) is kept for
//! both trees.
//!
//! A display computes a running clock from a reading and the time it was
//! read. Public payloads are published `delay` later, so every time in them
//! (`ts_ms`, and fields ending in `_at_ms`) is moved forward by the delay:
//! the public clock then runs exactly as the live one did, `delay` ago.
//!
//! Times here are milliseconds of a monotonic clock the caller keeps (not
//! the wall clock, which may jump); only payload times are wall-clock.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{Map, Value, json};

use super::{
    Item, Publication, Qos,
    topics::{RoundPath, Topics, Tree},
};

/// The hub.
#[derive(Debug)]
pub struct Hub {
    topics: Topics,
    boot: String,
    delay_ms: u64,
    /// Copies for the public tree, with when they are released, in order.
    delayed: VecDeque<(u64, Item)>,
    /// Each tree's rounds: board level → summary line.
    summaries: BTreeMap<(Tree, RoundPath), BTreeMap<String, Value>>,
    out: VecDeque<Publication>,
}

impl Hub {
    /// A hub publishing the public tree `delay_ms` behind the live one.
    pub fn new(topics: Topics, boot: &str, delay_ms: u64) -> Self {
        Self {
            topics,
            boot: boot.to_owned(),
            delay_ms,
            delayed: VecDeque::new(),
            summaries: BTreeMap::new(),
            out: VecDeque::new(),
        }
    }

    /// An item from a board's feed, at `now`.
    pub fn handle_item(&mut self, now: u64, item: Item) {
        match &item {
            Item::Publish(publication) => {
                self.out.push_back(publication.clone());
                if publication.public {
                    self.delayed.push_back((now + self.delay_ms, item));
                }
            }
            Item::SummaryEntry { round, board, entry } => {
                self.summary(Tree::Live, round, board, entry.clone());
                self.delayed.push_back((now + self.delay_ms, item));
            }
        }
        // Without a delay the public copy goes out with the live one.
        self.handle_timeout(now);
    }

    /// Releases the public copies whose time has come.
    pub fn handle_timeout(&mut self, now: u64) {
        while let Some((_, item)) = self.delayed.pop_front_if(|(at, _)| *at <= now) {
            match item {
                Item::Publish(mut publication) => {
                    let Some(topic) = self.topics.to_public(&publication.topic) else { continue };
                    publication.topic = topic;
                    if let Some(payload) = &mut publication.payload {
                        shift_times(payload, self.delay_ms);
                        if let Value::Object(map) = payload {
                            map.insert("delay_ms".into(), json!(self.delay_ms));
                        }
                    }
                    self.out.push_back(publication);
                }
                Item::SummaryEntry { round, board, mut entry } => {
                    shift_times(&mut entry, self.delay_ms);
                    self.summary(Tree::Public, &round, &board, entry);
                }
            }
        }
    }

    /// When the next public copy is due.
    pub fn poll_timeout(&self) -> Option<u64> {
        self.delayed.front().map(|(at, _)| *at)
    }

    /// The next publication.
    pub fn poll_publication(&mut self) -> Option<Publication> {
        self.out.pop_front()
    }

    /// Public copies not yet released (they are lost if the daemon stops:
    /// the live tree, the PGN files and the captures have everything).
    pub fn held_back(&self) -> usize {
        self.delayed.len()
    }

    /// Updates a round's summary and publishes it.
    fn summary(&mut self, tree: Tree, round: &RoundPath, board: &str, entry: Value) {
        let boards = self.summaries.entry((tree, round.clone())).or_default();
        boards.insert(board.to_owned(), entry);
        let ts = boards.values().filter_map(|e| e.get("ts_ms").and_then(Value::as_i64)).max();
        let mut payload = Map::new();
        payload.insert("schema".into(), json!(1));
        payload.insert("boot".into(), json!(self.boot));
        payload.insert("ts_ms".into(), json!(ts));
        payload.insert("event".into(), json!(round.event));
        payload.insert("round".into(), json!(round.round));
        if tree == Tree::Public {
            payload.insert("delay_ms".into(), json!(self.delay_ms));
        }
        payload.insert("boards".into(), Value::Array(boards.values().cloned().collect()));
        self.out.push_back(Publication {
            topic: self.topics.summary(tree, round),
            payload: Some(Value::Object(payload)),
            retain: true,
            qos: Qos::AtMostOnce,
            public: false,
        });
    }
}

/// Moves every time in a payload (`ts_ms`, `…_at_ms`) forward by `delay`.
fn shift_times(value: &mut Value, delay_ms: u64) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "ts_ms" || key.ends_with("_at_ms") {
                    if let Some(t) = field.as_i64() {
                        *field = json!(t + delay_ms as i64);
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
    use super::*;
    use crate::publish::topics::BoardPath;

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
        let mut hub = Hub::new(topics(), "boot", 900_000);
        hub.handle_item(1_000, publish("bc/v1/live/e/1/b/state", true, 5_000));
        hub.handle_item(2_000, publish("bc/v1/live/e/1/b/alerts", false, 6_000));
        let live = drain(&mut hub);
        assert_eq!(
            live.iter().map(|p| p.topic.as_str()).collect::<Vec<_>>(),
            ["bc/v1/live/e/1/b/state", "bc/v1/live/e/1/b/alerts"]
        );
        assert_eq!(hub.poll_timeout(), Some(901_000));
        hub.handle_timeout(900_999);
        assert!(drain(&mut hub).is_empty(), "not before its time");
        hub.handle_timeout(901_000);
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
        let mut hub = Hub::new(topics(), "boot", 0);
        hub.handle_item(7, publish("bc/v1/live/e/1/b/moves", true, 1));
        let topics: Vec<String> = drain(&mut hub).into_iter().map(|p| p.topic).collect();
        assert_eq!(topics, ["bc/v1/live/e/1/b/moves", "bc/v1/public/e/1/b/moves"]);
    }

    #[test]
    fn a_round_summary_has_every_board_of_the_round() {
        let mut hub = Hub::new(topics(), "boot", 0);
        let path = |b: &str| BoardPath::new("e", "1", b);
        for (board, ply) in [("2", 7), ("1", 4), ("2", 8)] {
            let entry = json!({"board": board, "ply": ply, "ts_ms": 100});
            hub.handle_item(0, Item::SummaryEntry { round: path(board).round_path(), board: board.into(), entry });
        }
        let other = json!({"board": "1", "ts_ms": 100});
        hub.handle_item(
            0,
            Item::SummaryEntry { round: BoardPath::new("e", "2", "1").round_path(), board: "1".into(), entry: other },
        );
        let out = drain(&mut hub);
        let last_live = out.iter().rev().find(|p| p.topic == "bc/v1/live/e/1/summary").unwrap();
        let boards = last_live.payload.as_ref().unwrap()["boards"].as_array().unwrap().clone();
        assert_eq!(
            boards,
            [json!({"board": "1", "ply": 4, "ts_ms": 100}), json!({"board": "2", "ply": 8, "ts_ms": 100})]
        );
        assert!(out.iter().any(|p| p.topic == "bc/v1/public/e/1/summary"));
        assert!(out.iter().any(|p| p.topic == "bc/v1/live/e/2/summary"), "rounds are kept apart");
        assert!(out.iter().all(|p| p.retain));
    }
}
