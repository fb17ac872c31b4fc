//! Publications: what the games mean for the MQTT topics of docs/mqtt.md.
//! All sans-I/O, in the order the data flows:
//!
//! - [`announcer`]: one board's events → what its speaker says (N3);
//! - [`board`]: one board's session outputs → move, clock and alert
//!   messages as they happen, and its state, PGN and summary entry per
//!   batch;
//! - [`hub`]: all boards → the public tree (a delayed copy without alerts,
//!   clock times shifted with it), the per-round summaries, and each
//!   board's status, whose `sync` (the game's) is as delayed as the public
//!   tree;
//! - [`payload`]: the payload of every topic, as types (the contract of
//!   docs/mqtt.md);
//! - [`outbox`]: what the MQTT client still has to send: the latest value
//!   of every retained topic (superseded values are never sent), and every
//!   move and alert until the broker has acknowledged it, resent after a
//!   reconnection that lost them;
//! - [`render`]: moves in display languages (rules.md N2);
//! - [`spoken`]: moves and results as words to be spoken (N3);
//! - [`topics`]: the topic names.
//!
//! The MQTT client itself (rumqttc) and the embedded broker (rumqttd) are
//! in `shell::mqtt`.

pub mod announcer;
pub mod board;
pub mod commands;
pub mod guard;
pub mod hub;
pub mod notices;
pub mod outbox;
pub mod payload;
pub mod render;
pub mod spoken;
pub mod topics;

use serde_json::Value;

use self::topics::RoundPath;

/// MQTT delivery guarantee.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qos {
    /// Sent once, lost if the link drops meanwhile (retained state, which
    /// is republished after every reconnection anyway).
    AtMostOnce,
    /// Resent until acknowledged (moves, alerts).
    AtLeastOnce,
}

/// One message for a topic.
#[derive(Clone, Debug, PartialEq)]
pub struct Publication {
    /// The topic (in the live tree, or the public tree once released).
    pub topic: String,
    /// The JSON payload; `None` clears a retained topic (an empty retained
    /// message).
    pub payload: Option<Value>,
    /// Kept by the broker for subscribers that come later.
    pub retain: bool,
    /// Delivery guarantee.
    pub qos: Qos,
    /// Also goes to the public tree, delayed.
    pub public: bool,
}

impl Publication {
    /// Clears the retained message of `topic`.
    pub(crate) fn clear(topic: String) -> Self {
        Self { topic, payload: None, retain: true, qos: Qos::AtMostOnce, public: false }
    }

    /// The payload's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        self.payload.as_ref().map_or_else(Vec::new, |v| serde_json::to_vec(v).expect("JSON values serialise"))
    }
}

/// What a board's feed produces.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A message.
    Publish(Publication),
    /// The board's line in its round's summary changed.
    SummaryEntry {
        /// The round.
        round: RoundPath,
        /// The board's topic level (the key in the summary).
        board: String,
        /// Its line.
        entry: Value,
    },
    /// A board's status (`bridges/<id>/boards/<serial>/status`), with the
    /// board's `sync` as it is now. The topic is read by every account and
    /// anonymous client, so the hub publishes it at once with the `sync`
    /// the public tree shows (the one of the public delay ago) and lets a
    /// change of `sync` out only after the delay, as it does the public
    /// `state`: a game's end or an illegal move must not show there first.
    /// Its connection, firmware and battery are not the game's, and go out
    /// at once.
    BoardStatus {
        /// The board's configured name (its status topic changes once its
        /// serial number is known).
        board: String,
        /// The message, `sync` as the board is now, `ts_ms` when its
        /// connection, firmware or battery last changed.
        publication: Publication,
        /// When `sync` last changed (wall-clock milliseconds, as `ts_ms`).
        sync_ts_ms: i64,
    },
    /// An engine's analysis of a board's position, already on its public
    /// topic: the hub lets it out only once the public copy of the board's
    /// `state` shows that very position (at once if it does already), so
    /// that no evaluation ever runs ahead of the delayed position
    /// (crate::analysis). A clearing (no payload) goes out at once.
    Analysis {
        /// The board's `state` topic in the live tree (names the board).
        state: String,
        /// The analysed position's game, as `state` has it.
        game: u32,
        /// Its plies on the record, as `state` has them.
        ply: usize,
        /// The message.
        publication: Publication,
    },
}
