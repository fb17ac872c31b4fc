//! The daemon's configuration: what the file says, checked and turned into
//! the typed settings the rest of the daemon uses.
//!
//! The layering (built-in defaults, then `/etc/boardcast/boardcast.toml`,
//! then `--config FILE`, then `BOARDCAST__SECTION__KEY` environment
//! variables) is done by the binary with the `config` crate; this module
//! only knows the shape and the rules, so that it can be tested without
//! files. Every key carries its unit (`settle_ms`), and a wrong value is
//! reported with its key, the value and what is accepted.

mod analysis;
mod boards;
mod broadcast;
mod files;
mod hall;
mod http;
mod judging;
mod lichess;
mod livechess;
mod log;
mod mqtt;
mod operator;
mod speech;
#[cfg(test)]
mod tests;

pub use self::{
    analysis::{Analysis, AnalysisConfig, DEBIAN_STOCKFISH, find_stockfish},
    boards::{BluetoothTarget, Board, BoardConfig, DiscoveryConfig, FindBoard, Pairing},
    broadcast::BroadcastConfig,
    files::{PgnConfig, RecordingConfig},
    hall::{AssignedBoard, HallConfig, StateError, StateFile, StateOrConfig},
    http::{ConsoleSettings, Http, HttpConfig},
    judging::{LinkSettings, ReconstructionConfig},
    lichess::{Lichess, LichessConfig},
    livechess::{LiveChess, LiveChessConfig},
    log::{LogConfig, LogFormat, LogLevel},
    mqtt::{
        BrokerChoice, BrokerUrl, Embedded, EmbeddedConfig, EmbeddedKind, Mqtt, MqttConfig, Scheme, TlsFiles,
        client_certificate,
    },
    operator::OperatorConfig,
    speech::{Speech, SpeechConfig},
};
pub use crate::accounts::Anonymous;
use boardcast_core::publish::render::Language;
use serde::Deserialize;

/// The built-in defaults, documented key by key (`config/default.toml`).
pub const DEFAULTS: &str = include_str!("../../config/default.toml");

/// The configuration as the file says it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Recording captures.
    pub recording: RecordingConfig,
    /// Writing PGN.
    pub pgn: PgnConfig,
    /// Judging the boards.
    pub reconstruction: ReconstructionConfig,
    /// Talking to boards.
    pub link: LinkSettings,
    /// Finding boards by serial number.
    pub discovery: DiscoveryConfig,
    /// Boards not configured: looked for, and assigned in the console.
    pub hall: HallConfig,
    /// The event and round boards belong to unless they say otherwise.
    pub broadcast: BroadcastConfig,
    /// The MQTT feed.
    pub mqtt: MqttConfig,
    /// The display pages.
    pub http: HttpConfig,
    /// The daemon's log.
    pub log: LogConfig,
    /// Operator commands.
    pub operator: OperatorConfig,
    /// Pushing rounds to lichess broadcasts.
    pub lichess: LichessConfig,
    /// Announcing moves aloud.
    pub speech: SpeechConfig,
    /// DGT LiveChess's local API (`livechess.rs`).
    pub livechess: LiveChessConfig,
    /// Engine analysis for spectators (`analysis.rs`).
    pub analysis: AnalysisConfig,
    /// The boards.
    #[serde(default)]
    pub boards: Vec<BoardConfig>,
}

/// A configuration value that is not accepted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value}: {accepted}")]
pub struct ConfigError {
    /// The key, e.g. `boards[2].protocol`.
    pub key: String,
    /// The value given, as written.
    pub value: String,
    /// What is accepted instead.
    pub accepted: String,
}

/// A name as the error quotes it: cut after 80 characters (a name of
/// thousands would fill the terminal), with its length said.
fn quoted(name: &str) -> String {
    let count = name.chars().count();
    if count <= 80 {
        format!("{name:?}")
    } else {
        let head: String = name.chars().take(80).collect();
        format!("{head:?}… ({count} characters)")
    }
}

/// A language code, or the error naming `key`.
fn parse_language(key: &str, code: &str) -> Result<Language, ConfigError> {
    code.parse::<Language>()
        .map_err(|_| error(key.to_owned(), &format!("{code:?}"), "one of \"en\", \"nl\", \"de\", \"af\", \"fr\""))
}

fn error(key: String, value: &str, accepted: &str) -> ConfigError {
    ConfigError { key, value: value.to_owned(), accepted: accepted.to_owned() }
}
