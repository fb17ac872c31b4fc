//! Operator commands over MQTT (docs/operator.md): requests on
//! `<root>/v1/bridges/<bridge-id>/commands`, answers on
//! `<root>/v1/bridges/<bridge-id>/replies`.
//!
//! ```json
//! {"id": "c-17", "board": "board-3", "command": "set_result", "result": "1-0", "reason": "resignation"}
//! {"id": "c-17", "board": "board-3", "ok": true, "message": "game 1: 1-0 (resignation)", …}
//! ```
//!
//! What reaches this module has passed the gate of `guard.rs` (signed
//! with the operator key, fresh, not a replay, within the bounds): here the
//! request inside the envelope is read and the answer written.

use serde_json::Value;

use super::{
    Publication, Qos,
    payload::{self, CommandReply},
    topics::Topics,
};
use crate::operator::Command;

/// The board name of a request for every board of the bridge (only
/// `next_round` goes to every board).
pub const EVERY_BOARD: &str = "*";

/// A request for a board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The sender's id for it, repeated in the answer.
    pub id: String,
    /// The board's name.
    pub board: String,
    /// What to do.
    pub command: Command,
}

/// Reads a request; the error carries the request's id (if it had one)
/// and what is wrong, for the answer.
///
/// # Errors
///
/// Not JSON, no board, an unknown command or a command out of bounds.
pub(crate) fn parse_request(payload: &[u8]) -> Result<Request, (String, String)> {
    let Ok(Value::Object(mut fields)) = serde_json::from_slice::<Value>(payload) else {
        return Err((String::new(), "the request is not a JSON object".into()));
    };
    let id = match fields.remove("id") {
        Some(Value::String(id)) => id,
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    };
    let Some(Value::String(board)) = fields.remove("board") else {
        return Err((id, "the request names no \"board\"".into()));
    };
    // Checked by the guard before.
    fields.remove("ts_ms");
    match Command::from_json(Value::Object(fields)) {
        Ok(command) => Ok(Request { id, board, command }),
        Err(error) => Err((id, error.to_string())),
    }
}

/// The answer to request `id` for `board`.
pub fn reply(topics: &Topics, id: &str, board: &str, answer: &Result<String, String>, now_ms: i64) -> Publication {
    let (ok, message) = match answer {
        Ok(message) => (true, message),
        Err(message) => (false, message),
    };
    let payload = CommandReply { schema: payload::SCHEMA, ts_ms: now_ms, id, board, ok, message };
    Publication {
        topic: replies_topic(topics),
        payload: Some(payload::to_value(&payload)),
        retain: false,
        qos: Qos::AtLeastOnce,
        public: false,
    }
}

/// `<root>/v1/bridges/<bridge-id>/commands`.
pub fn commands_topic(topics: &Topics) -> String {
    format!("{}/v1/bridges/{}/commands", topics.root(), topics.bridge())
}

/// `<root>/v1/bridges/<bridge-id>/replies`.
pub fn replies_topic(topics: &Topics) -> String {
    format!("{}/v1/bridges/{}/replies", topics.root(), topics.bridge())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn requests_are_read_and_answered() {
        let request = parse_request(br#"{"id": "c1", "board": "b3", "command": "take_back", "ts_ms": 1000}"#).unwrap();
        assert_eq!(request, Request { id: "c1".into(), board: "b3".into(), command: Command::TakeBack });
        let topics = Topics::new("bc", "hall-1");
        let answer = reply(&topics, "c1", "b3", &Ok("took back 12. Nf3".into()), 2500);
        assert_eq!(answer.topic, "bc/v1/bridges/hall-1/replies");
        let payload = answer.payload.unwrap();
        assert_eq!((payload["id"].clone(), payload["ok"].clone()), (json!("c1"), json!(true)));
        assert_eq!(commands_topic(&topics), "bc/v1/bridges/hall-1/commands");
    }

    #[test]
    fn bad_requests_say_why_with_their_id() {
        assert_eq!(parse_request(b"take back").unwrap_err().1, "the request is not a JSON object");
        assert_eq!(
            parse_request(br#"{"id": 7, "command": "flip"}"#).unwrap_err(),
            ("7".into(), "the request names no \"board\"".into())
        );
        let (id, why) = parse_request(br#"{"id": "x", "board": "b", "command": "resign"}"#).unwrap_err();
        assert_eq!(id, "x");
        assert!(why.contains("unknown variant"), "{why}");
    }
}
