//! Notices for the operator about the bridge rather than one board (a game
//! lichess refused, a refused token): `<root>/v1/bridges/<bridge-id>/notices`,
//! at QoS 1, not retained, never in the public tree.
//!
//! ```json
//! {"schema": 1, "ts_ms": 1795259698145, "kind": "lichess", "severity": "error", "message": "…"}
//! ```

use super::{
    Publication, Qos,
    payload::{self, NoticePayload},
    topics::Topics,
};

/// `<root>/v1/bridges/<bridge-id>/notices`.
pub(crate) fn notices_topic(topics: &Topics) -> String {
    format!("{}/v1/bridges/{}/notices", topics.root(), topics.bridge())
}

/// How much a notice matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Something is not delivered and needs the operator.
    Error,
    /// Something is delivered partly.
    Warning,
}

/// A notice of `kind` (what it is about: `lichess`) saying `message`.
pub fn notice(topics: &Topics, kind: &str, severity: Severity, message: &str, now_ms: i64) -> Publication {
    let severity = match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    Publication {
        topic: notices_topic(topics),
        payload: Some(payload::to_value(&NoticePayload {
            schema: payload::SCHEMA,
            ts_ms: now_ms,
            kind,
            severity,
            message,
        })),
        retain: false,
        qos: Qos::AtLeastOnce,
        public: false,
    }
}
