//! The bridge's own topics, about the daemon rather than a board:
//! `bridges/<id>/status`, `…/notices` and `…/replies` (docs/mqtt.md,
//! docs/operator.md).

use serde::Serialize;

/// `bridges/<id>/status`: whether the daemon is online (also its Last
/// Will). Docs/mqtt.md, "Bridge and board status".
#[derive(Clone, Debug, Serialize)]
pub struct BridgeStatusPayload<'a> {
    /// `1`.
    pub schema: u32,
    /// This run of the daemon.
    pub boot: &'a str,
    /// When the daemon started (wall clock).
    pub ts_ms: i64,
    /// The bridge id.
    pub bridge: &'a str,
    /// `online` or `offline`.
    pub status: &'a str,
    /// `null`, or `connection lost` for the Last Will.
    pub reason: Option<&'a str>,
    /// The daemon's version.
    pub version: &'a str,
    /// The boards' names.
    pub boards: &'a [String],
}

/// `bridges/<id>/notices`: something about the bridge for the operator.
/// Docs/mqtt.md, "`notices`".
#[derive(Clone, Debug, Serialize)]
pub struct NoticePayload<'a> {
    /// `1`.
    pub schema: u32,
    /// When (wall clock).
    pub ts_ms: i64,
    /// What it is about: `lichess`.
    pub kind: &'a str,
    /// `error` or `warning`.
    pub severity: &'static str,
    /// What went wrong and what to do, in words.
    pub message: &'a str,
}

/// `bridges/<id>/replies`: the answer to an operator command
/// (docs/operator.md).
#[derive(Clone, Debug, Serialize)]
pub struct CommandReply<'a> {
    /// `1`.
    pub schema: u32,
    /// When (wall clock).
    pub ts_ms: i64,
    /// The request's `id`.
    pub id: &'a str,
    /// The request's board.
    pub board: &'a str,
    /// Whether the command was carried out.
    pub ok: bool,
    /// What was done, or why not.
    pub message: &'a str,
}
