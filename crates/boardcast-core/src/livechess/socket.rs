//! One WebSocket connection to `/api/v1.0`, as a state machine: the
//! client's calls in ([`Connection::handle_text`]), the responses and feed
//! messages out; [`Connection::handle_changed`] after a board changed gives
//! each subscription's next feed message.
//!
//! The envelope is LiveChess's: a call `{id, call, param}`; a response
//! `{response, id, param, time}` where `response` is `call` (the answer to
//! call `id`), `feed` (a message of feed `id`) or `error` (`param.message`).
//! A subscription to `eboardevent` gets a full message first (`serialnr`,
//! `flipped`, `board`, `clock`, and the game's `start`, `san`, `match`),
//! then one per change, with `board` and `clock` only when they changed.
//!
//! `setup` and `flip` change what the daemon reconstructs: they are
//! [`Step::Write`]s for the shell to carry out, refused here unless the
//! connection may write.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::{board::Snapshot, hall::Hall, records::Clock};
use crate::operator::Command;

/// What to do after a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send this text.
    Send(String),
    /// Give `command` to the board named `board`, then send what
    /// [`Connection::answer_write`] says.
    Write {
        /// The call's id.
        call: Value,
        /// The board's name.
        board: String,
        /// What to do.
        command: Command,
    },
}

/// What a subscriber was sent last.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sent {
    flipped: bool,
    board: String,
    clock: Option<Clock>,
    start: Option<String>,
    san: Option<Vec<String>>,
    matches: bool,
}

impl Sent {
    fn of(snapshot: &Snapshot) -> Self {
        Self {
            flipped: snapshot.flipped,
            board: snapshot.board.clone(),
            clock: snapshot.clock,
            start: snapshot.game.as_ref().map(|g| g.start.clone()),
            san: snapshot.game.as_ref().map(|g| g.san.clone()),
            matches: snapshot.matches,
        }
    }
}

/// A subscription to a board's `eboardevent` feed.
#[derive(Clone, Debug)]
struct Subscription {
    serialnr: String,
    sent: Option<Sent>,
}

/// One client's connection.
#[derive(Debug)]
pub struct Connection {
    /// `setup` and `flip` are allowed (the configuration allows writes and
    /// the listener is on loopback).
    writes: bool,
    /// By feed id.
    feeds: BTreeMap<i64, Subscription>,
}

/// Why a write is refused when writes are not allowed.
pub const WRITES_REFUSED: &str = "refused: setup and flip change what boardcast reconstructs; the operator allows them with [livechess] allow_writes = true, on a loopback listen address only (docs/livechess.md)";

impl Connection {
    /// A new connection; `writes`: whether `setup` and `flip` are carried
    /// out.
    pub const fn new(writes: bool) -> Self {
        Self { writes, feeds: BTreeMap::new() }
    }

    /// The client sent `text` at `now_ms` (wall clock, ms since 1970).
    pub fn handle_text(&mut self, now_ms: i64, text: &str, hall: &Hall) -> Vec<Step> {
        let call: Value = match serde_json::from_str(text) {
            Ok(value @ Value::Object(_)) => value,
            _ => {
                return vec![Step::Send(error(&Value::Null, "not a call: {\"id\": 1, \"call\": \"eboards\"}", now_ms))];
            }
        };
        let id = call.get("id").cloned().unwrap_or(Value::Null);
        let param = call.get("param").cloned().unwrap_or(Value::Null);
        let name = call.get("call").and_then(Value::as_str).unwrap_or_default();
        match name {
            "eboards" => vec![Step::Send(response(&id, json!(hall.eboards()), now_ms))],
            "sources" => vec![Step::Send(response(&id, json!(hall.sources()), now_ms))],
            "subscribe" => self.subscribe(now_ms, &id, &param, hall),
            "unsubscribe" => {
                let feed = param.get("id").and_then(Value::as_i64);
                match feed.and_then(|f| self.feeds.remove(&f)) {
                    Some(_) => vec![Step::Send(response(&id, Value::Null, now_ms))],
                    None => vec![Step::Send(error(&id, "no such feed", now_ms))],
                }
            }
            "call" => self.method(now_ms, &id, &param, hall),
            "" => vec![Step::Send(error(&id, "a call needs \"call\"", now_ms))],
            other => vec![Step::Send(error(
                &id,
                &format!("unknown call {other:?}: eboards, sources, subscribe, unsubscribe, call"),
                now_ms,
            ))],
        }
    }

    fn subscribe(&mut self, now_ms: i64, id: &Value, param: &Value, hall: &Hall) -> Vec<Step> {
        let feed = param.get("feed").and_then(Value::as_str);
        if feed != Some("eboardevent") {
            return vec![Step::Send(error(id, &format!("unknown feed {feed:?}: eboardevent"), now_ms))];
        }
        let Some(feed_id) = param.get("id").and_then(Value::as_i64) else {
            return vec![Step::Send(error(id, "subscribe needs the feed's \"id\"", now_ms))];
        };
        let serialnr = match param.pointer("/param/serialnr") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return vec![Step::Send(error(id, "subscribe needs param.serialnr", now_ms))],
        };
        if hall.board(&serialnr).is_none() {
            return vec![Step::Send(error(id, &format!("no e-board {serialnr}"), now_ms))];
        }
        self.feeds.insert(feed_id, Subscription { serialnr, sent: None });
        let mut steps = vec![Step::Send(response(id, Value::Null, now_ms))];
        steps.extend(self.feed_message(feed_id, now_ms, hall).map(Step::Send));
        steps
    }

    fn method(&mut self, now_ms: i64, id: &Value, param: &Value, hall: &Hall) -> Vec<Step> {
        let feed = param.get("id").and_then(Value::as_i64);
        let Some(subscription) = feed.and_then(|f| self.feeds.get(&f)) else {
            return vec![Step::Send(error(id, "no such feed: subscribe first", now_ms))];
        };
        let Some(board) = hall.board(&subscription.serialnr) else {
            return vec![Step::Send(error(id, "the e-board is gone", now_ms))];
        };
        let method = param.get("method").and_then(Value::as_str).unwrap_or_default();
        let args = param.get("param").cloned().unwrap_or(Value::Null);
        let command = match (method, args.get("fen").and_then(Value::as_str), args.get("flip").and_then(Value::as_bool))
        {
            ("setup", Some(fen), _) => Command::SetPosition { fen: fen.to_owned() },
            // One client library sends flip as `setup` with a flip
            // parameter.
            ("flip" | "setup", None, Some(flip)) => {
                if flip == board.flipped {
                    return vec![Step::Send(response(id, Value::Null, now_ms))];
                }
                Command::Flip
            }
            ("setup", None, None) => return vec![Step::Send(error(id, "setup needs param.fen", now_ms))],
            ("flip", _, None) => return vec![Step::Send(error(id, "flip needs param.flip (true or false)", now_ms))],
            (other, _, _) => {
                return vec![Step::Send(error(id, &format!("unknown method {other:?}: setup, flip"), now_ms))];
            }
        };
        if !self.writes {
            return vec![Step::Send(error(id, WRITES_REFUSED, now_ms))];
        }
        vec![Step::Write { call: id.clone(), board: board.identity.name.clone(), command }]
    }

    /// The answer to a [`Step::Write`]: done, or why not.
    pub fn answer_write(&self, call: &Value, done: Result<(), String>, now_ms: i64) -> String {
        match done {
            Ok(()) => response(call, Value::Null, now_ms),
            Err(why) => error(call, &why, now_ms),
        }
    }

    /// A board changed: each subscription's next message, if any.
    pub fn handle_changed(&mut self, now_ms: i64, hall: &Hall) -> Vec<String> {
        let feeds: Vec<i64> = self.feeds.keys().copied().collect();
        feeds.into_iter().filter_map(|feed| self.feed_message(feed, now_ms, hall)).collect()
    }

    /// The feed's next message: the full one first, then what changed.
    fn feed_message(&mut self, feed: i64, now_ms: i64, hall: &Hall) -> Option<String> {
        let subscription = self.feeds.get_mut(&feed)?;
        let snapshot = hall.board(&subscription.serialnr)?;
        let now = Sent::of(snapshot);
        let mut param = Map::new();
        param.insert("serialnr".into(), json!(subscription.serialnr));
        param.insert("flipped".into(), json!(now.flipped));
        match &subscription.sent {
            Some(sent) if *sent == now => return None,
            Some(sent) => {
                if sent.board != now.board {
                    param.insert("board".into(), json!(now.board));
                }
                if sent.clock != now.clock {
                    param.insert("clock".into(), json!(now.clock));
                }
            }
            None => {
                param.insert("board".into(), json!(now.board));
                param.insert("clock".into(), json!(now.clock));
            }
        }
        if let (Some(start), Some(san)) = (&now.start, &now.san) {
            param.insert("start".into(), json!(start));
            param.insert("san".into(), json!(san));
            param.insert("match".into(), json!(now.matches));
        }
        subscription.sent = Some(now);
        Some(envelope("feed", &json!(feed), Value::Object(param), now_ms))
    }
}

fn envelope(kind: &str, id: &Value, param: Value, now_ms: i64) -> String {
    json!({"response": kind, "id": id, "param": param, "time": now_ms}).to_string()
}

fn response(id: &Value, param: Value, now_ms: i64) -> String {
    envelope("call", id, param, now_ms)
}

fn error(id: &Value, message: &str, now_ms: i64) -> String {
    envelope("error", id, json!({"message": message}), now_ms)
}
