//! The payloads of the MQTT topics: these types are the contract of
//! docs/mqtt.md in a form the compiler checks. One type per topic's
//! payload, named after the topic; a field here is a field there, in the
//! order it is published (serde_json keeps insertion order in this
//! workspace, so a payload's keys come out in the order of its fields,
//! flattened parts where they stand).
//!
//! A field is left out of a payload (`skip_serializing_if`) only where
//! docs/mqtt.md says the field is only in some messages; everywhere else
//! an unknown value is `null`.
//!
//! The payloads are turned into [`serde_json::Value`]s at the
//! [`Publication`](super::Publication) boundary ([`to_value`]): the hub
//! adds `delay_ms` and shifts the times of the public copies there.
//!
//! - [`board`]: what one board publishes (`state`, `moves`, `clock`,
//!   `pgn`, the acknowledgement on `alerts`, its `…/boards/<serial>/status`);
//! - [`alert`]: an alert, on `alerts` and as a line of the alerts file;
//! - [`summary`]: a round's `summary` and its lines;
//! - `analysis`: an engine's analysis (public tree only);
//! - [`bridge`]: the bridge's own topics (`status`, `notices`, `replies`).

pub(crate) mod alert;
pub(crate) mod analysis;
pub(crate) mod board;
pub mod bridge;
pub(crate) mod summary;

use serde::{Serialize, Serializer, ser::SerializeMap};
use serde_json::Value;

pub use self::{
    alert::{AlertFields, AlertPayload, EvidenceClock, EvidenceFields, alert_line},
    analysis::AnalysisPayload,
    board::{
        AcknowledgedPayload, BoardStatusPayload, ClockPayload, LastMove, MovePayload, PgnPayload, Replaces, StateGame,
        StatePayload,
    },
    bridge::{BridgeStatusPayload, CommandReply, NoticePayload},
    summary::{SummaryEntry, SummaryGame, SummaryPayload},
};

/// The version of the payloads (`schema`): 1 while fields are only added.
pub const SCHEMA: u32 = 1;

/// A payload as the [`Publication`](super::Publication) carries it.
pub fn to_value(payload: &impl Serialize) -> Value {
    // Strings, numbers and string-keyed maps only: nothing that can fail.
    serde_json::to_value(payload).expect("payloads serialise")
}

/// What every board's payload starts with (docs/mqtt.md, "Payloads").
#[derive(Clone, Debug, Serialize)]
pub struct Envelope<'a> {
    /// `1`.
    pub schema: u32,
    /// This run of the daemon (changes at every start).
    pub boot: &'a str,
    /// The recording session (the capture's name; the same after a restart
    /// resumes it).
    pub session: &'a str,
    /// When it happened: wall-clock milliseconds since 1970 (in `public/`,
    /// moved forward by the delay).
    pub ts_ms: i64,
    /// The board's configured name.
    pub board: &'a str,
}

/// The topic levels above the board, for consumers of wildcard
/// subscriptions (on `moves`, `state` and `pgn`).
#[derive(Clone, Debug, Serialize)]
pub struct Place<'a> {
    /// The event's topic level.
    pub event: &'a str,
    /// The round's topic level.
    pub round: &'a str,
}

/// A clock reading as `state`, `clock` and `summary` carry it
/// (docs/mqtt.md, "`clock`").
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Clock {
    /// White's remaining time when read.
    pub white_ms: u64,
    /// Black's remaining time when read.
    pub black_ms: u64,
    /// `"white"`, `"black"`, or `null` when stopped.
    pub running: Option<&'static str>,
    /// When it was read (wall clock; in `public/` moved forward by the
    /// delay): a running clock shows `white_ms - (now - read_at_ms)`.
    pub read_at_ms: i64,
}

/// The two players of a game as `state` and `summary` carry them
/// (`players`), from the game's PGN tags (pairings, configuration).
#[derive(Clone, Debug, Serialize)]
pub struct Players<'a> {
    /// The player with the white pieces.
    pub white: Player<'a>,
    /// The player with the black pieces.
    pub black: Player<'a>,
}

/// One player; `null` where the tags say nothing.
#[derive(Clone, Debug, Serialize)]
pub struct Player<'a> {
    /// The name (`White`, `Black`).
    pub name: Option<&'a str>,
    /// The FIDE title, `GM`, `WIM` … (`WhiteTitle`).
    pub title: Option<&'a str>,
    /// The rating (`WhiteElo`).
    pub rating: Option<u32>,
    /// The FIDE federation, three letters (`WhiteFed`); its flag is served
    /// at `/flags/<fed>.svg`.
    pub fed: Option<&'a str>,
    /// The FIDE id (`WhiteFideId`).
    pub fide_id: Option<u64>,
}

impl<'a> Players<'a> {
    /// The players of a game with these tags.
    pub fn of(tags: &'a [(String, String)]) -> Self {
        Self { white: Player::of(tags, "White"), black: Player::of(tags, "Black") }
    }
}

impl<'a> Player<'a> {
    fn of(tags: &'a [(String, String)], side: &str) -> Self {
        // An empty tag, `?` or `-` is PGN's "unknown".
        let tag = |suffix: &str| {
            tags.iter()
                .find(|(k, _)| k.strip_prefix(side) == Some(suffix))
                .map(|(_, v)| v.trim())
                .filter(|v| !v.is_empty() && *v != "?" && *v != "-")
        };
        Self {
            name: tag(""),
            title: tag("Title"),
            rating: tag("Elo").and_then(|v| v.parse().ok()).filter(|&r| r > 0),
            fed: tag("Fed"),
            fide_id: tag("FideId").and_then(|v| v.parse().ok()).filter(|&id| id > 0),
        }
    }
}

/// The move in each display language (`display`): an object keyed by the
/// language code, in the order of `mqtt.languages`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Display(pub Vec<(&'static str, String)>);

impl Serialize for Display {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (code, text) in &self.0 {
            map.serialize_entry(code, text)?;
        }
        map.end()
    }
}
