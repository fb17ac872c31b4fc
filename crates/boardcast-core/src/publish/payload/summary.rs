//! A round's `summary`: every board of the round in one message, for
//! overview pages (docs/mqtt.md, "`summary`"). Each board's feed builds
//! its [`SummaryEntry`]; the hub gathers them into a [`SummaryPayload`].

use serde::Serialize;
use serde_json::Value;

use super::{Clock, Players};

/// `…/<round>/summary`.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryPayload<'a> {
    /// `1`.
    pub schema: u32,
    /// This run of the daemon.
    pub boot: &'a str,
    /// The latest `ts_ms` of the boards' lines (`null` without one).
    pub ts_ms: Option<i64>,
    /// The event's topic level.
    pub event: &'a str,
    /// The round's topic level.
    pub round: &'a str,
    /// `public/` only: how far it is behind the live tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// One [`SummaryEntry`] per board, sorted by label (as values: the
    /// public tree's are shifted by the delay).
    pub boards: Vec<&'a Value>,
}

/// One board's line in the summary: compact.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryEntry<'a> {
    /// The board's configured name.
    pub board: &'a str,
    /// The board's topic level: a display opens the board by it.
    pub label: &'a str,
    /// When the board last changed (wall clock).
    pub ts_ms: i64,
    /// `connected`, `disconnected` or `unknown`.
    pub connection: &'static str,
    /// `awaiting_start`, `in_sync` or `out_of_sync`.
    pub status: &'static str,
    /// The latest clock reading, or `null`.
    pub clock: Option<Clock>,
    /// What only a game has; absent before the first game.
    #[serde(flatten)]
    pub record: Option<SummaryGame<'a>>,
}

/// The fields of a summary line a game has.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryGame<'a> {
    /// Which game of the session.
    pub game: u32,
    /// White's name when known, else `null`.
    pub white: Option<&'a str>,
    /// Black's name when known, else `null`.
    pub black: Option<&'a str>,
    /// The position.
    pub fen: String,
    /// Plies on the record.
    pub ply: usize,
    /// Plies completed: the last move is made but not yet completed while
    /// `ply` is greater (article 6.12).
    pub completed_plies: usize,
    /// The last move in SAN, or `null`.
    pub last_san: Option<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: &'static str,
    /// How the game ended, or `null`.
    pub termination: Option<&'static str>,
    /// Both players: name, title, rating, federation, FIDE id.
    pub players: Players<'a>,
}
