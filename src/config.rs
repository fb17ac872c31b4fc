//! The daemon's configuration: what the file says, checked and turned into
//! the typed settings the rest of the daemon uses.
//!
//! The layering (built-in defaults, then `/etc/boardcast/boardcast.toml`,
//! then `--config FILE`, then `BOARDCAST__SECTION__KEY` environment
//! variables) is done by the binary with the `config` crate; this module
//! only knows the shape and the rules, so that it can be tested without
//! files. Every key carries its unit (`settle_ms`), and a wrong value is
//! reported with its key, the value and what is accepted.

use std::{collections::BTreeMap, net::SocketAddr, path::PathBuf, time::Duration};

use serde::Deserialize;

pub use crate::accounts::Anonymous;
pub use livechess::{LiveChess, LiveChessConfig};

mod livechess;
use boardcast_core::{
    game::{Tempo, TimeControl},
    names,
    pair::{DEFAULT_DIVERGE_AFTER, PairSettings},
    pairings::{Pairings, board_number},
    protocol::dgt::display::{ClockDisplayMode, ClockDisplaySettings},
    protocol::{Protocol, names_of},
    publish::{render::Language, topics::BoardPath},
    reconstruct::{ReconstructorConfig, RotatedBoard, UncertainOrder, WhiteClock},
    session::LightsMode,
};

/// The built-in defaults, documented key by key (`config/default.toml`).
pub const DEFAULTS: &str = include_str!("../config/default.toml");

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
    /// DGT LiveChess's local API (`src/config/livechess.rs`).
    pub livechess: LiveChessConfig,
    /// The boards.
    #[serde(default)]
    pub boards: Vec<BoardConfig>,
}

/// `[recording]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingConfig {
    /// Record captures at all.
    pub enabled: bool,
    /// Where.
    pub dir: PathBuf,
}

/// `[pgn]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgnConfig {
    /// Where.
    pub dir: PathBuf,
}

/// `[reconstruction]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ReconstructionConfig {
    pub settle_ms: u64,
    pub touch_min_ms: u64,
    #[serde(default = "default_release_min_ms")]
    pub release_min_ms: u64,
    pub out_of_sync_ms: u64,
    pub gesture_hold_ms: u64,
    pub press_grace_ms: u64,
    pub quiet_completion_ms: u64,
    pub fill_in_plies: usize,
    pub rotated_board: RotatedBoard,
    pub uncertain_order: UncertainOrder,
}

/// `release_min_ms` for configuration files written before it existed.
const fn default_release_min_ms() -> u64 {
    1000
}

/// `[link]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LinkSettings {
    pub keepalive_ms: u64,
    pub silent_ms: u64,
    pub reconnect_max_ms: u64,
}

/// `[discovery]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoveryConfig {
    /// Devices to probe besides the machine's serial ports.
    pub extra_ports: Vec<PathBuf>,
}

/// `[operator]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// The operator key (created by the daemon when missing; read by
    /// `boardcast ctl`).
    pub key_file: PathBuf,
}

/// `[lichess]`: see `config/default.toml`. Holds the token file's path,
/// never the token.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LichessConfig {
    pub url: String,
    pub token_file: PathBuf,
    pub interval_ms: u64,
    /// The daemon's round (or `<event>/<round>`) → the lichess round id.
    #[serde(default)]
    pub rounds: BTreeMap<String, String>,
}

/// `[speech]`: see `config/default.toml` and docs/speech.md.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SpeechConfig {
    pub enabled: bool,
    /// The program and its arguments; the announcement is added as the
    /// last argument.
    pub command: Vec<String>,
    pub language: String,
    /// The boards that speak (empty: every board).
    #[serde(default)]
    pub boards: Vec<String>,
    pub max_queue: usize,
    pub timeout_ms: u64,
}

/// Announcing moves aloud, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Speech {
    /// The program and its arguments (not empty); the announcement is
    /// added as the last argument.
    pub command: Vec<String>,
    /// The announcements' language, unless a board says otherwise
    /// (`speech_language`).
    pub language: Language,
    /// The boards that speak (empty: every board).
    pub boards: Vec<String>,
    /// Announcements waiting at most per board; older ones are dropped.
    pub max_queue: usize,
    /// The longest one announcement may take.
    pub timeout: Duration,
}

impl Speech {
    /// The language `board` speaks in, if it speaks.
    pub fn language_of(&self, board: &Board) -> Option<Language> {
        if self.boards.is_empty() || self.boards.contains(&board.name) {
            Some(board.speech_language.unwrap_or(self.language))
        } else {
            None
        }
    }
}

/// Pushing to lichess, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lichess {
    /// The base address, without a trailing `/` (`https://lichess.org`).
    pub url: String,
    /// The file holding the API token.
    pub token_file: PathBuf,
    /// A round is pushed at most once per this.
    pub interval: Duration,
    /// The daemon's round (or `<event>/<round>`) → the lichess round id.
    pub rounds: BTreeMap<String, String>,
}

impl Lichess {
    /// The lichess round id of the games of `event` and `round` (their PGN
    /// tags), if they are pushed: `"<event>/<round>"` first, then
    /// `"<round>"`.
    pub fn round_id(&self, event: &str, round: &str) -> Option<&str> {
        self.rounds.get(&format!("{event}/{round}")).or_else(|| self.rounds.get(round)).map(String::as_str)
    }
}

/// `[log]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// How lines look.
    pub format: LogFormat,
    /// The least important lines shown.
    pub level: LogLevel,
}

/// How log lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// The least important log lines shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl LogLevel {
    /// `"info"`, …
    pub const fn name(self) -> &'static str {
        match self {
            Self::Error => "error",
            Self::Warn => "warn",
            Self::Info => "info",
            Self::Debug => "debug",
            Self::Trace => "trace",
        }
    }
}

/// `[broadcast]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BroadcastConfig {
    pub event: String,
    pub site: String,
    pub round: String,
    pub time_control: String,
    pub rules: String,
    pub supervised: bool,
    #[serde(default)]
    pub pairings: PathBuf,
}

/// `[mqtt]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct MqttConfig {
    pub enabled: bool,
    pub url: String,
    pub username: String,
    pub password: String,
    #[serde(default)]
    pub password_file: String,
    pub ca_file: String,
    #[serde(default)]
    pub client_cert_file: String,
    #[serde(default)]
    pub client_key_file: String,
    pub root: String,
    pub bridge_id: String,
    pub public_delay_s: u64,
    pub keep_alive_s: u64,
    pub languages: Vec<String>,
    pub max_queued_messages: usize,
    pub embedded: EmbeddedConfig,
}

/// `[http]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct HttpConfig {
    pub enabled: bool,
    pub listen: String,
    pub broker_ws_url: String,
}

/// The display pages' server, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Http {
    /// Where the pages are served.
    pub listen: SocketAddr,
    /// The WebSocket broker the pages connect to, when it is not the
    /// embedded broker's listener (`ws://…` or `wss://…`).
    pub broker_ws_url: Option<String>,
}

/// `[mqtt.embedded]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct EmbeddedConfig {
    #[serde(default = "default_embedded_broker")]
    pub broker: String,
    #[serde(default)]
    pub mosquitto_bin: String,
    pub listen: String,
    pub ws_listen: String,
    #[serde(default = "default_accounts_file")]
    pub accounts_file: PathBuf,
    #[serde(default = "default_anonymous")]
    pub anonymous: String,
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    #[serde(default)]
    pub tls_cert_file: String,
    #[serde(default)]
    pub tls_key_file: String,
}

fn default_embedded_broker() -> String {
    "auto".into()
}

fn default_accounts_file() -> PathBuf {
    "mqtt-accounts".into()
}

fn default_anonymous() -> String {
    "public".into()
}

const fn default_max_connections() -> u32 {
    4096
}

/// The MQTT settings, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mqtt {
    /// Which broker.
    pub broker: BrokerChoice,
    /// User name and password, if the broker wants them.
    pub credentials: Option<(String, String)>,
    /// A file holding the password (its first line), read by the binary
    /// when `credentials` has a name and no password.
    pub password_file: Option<PathBuf>,
    /// The topic root.
    pub root: String,
    /// This bridge's name in the topics (empty: the host name).
    pub bridge_id: String,
    /// How far the public tree is behind the live one.
    pub public_delay: Duration,
    /// MQTT keep-alive.
    pub keep_alive: Duration,
    /// Display languages for moves.
    pub languages: Vec<Language>,
    /// Moves and alerts kept at most while the broker is away.
    pub queue_limit: usize,
    /// `[mqtt] ca_file`, when given (for `boardcast ctl` to check the
    /// embedded broker's TLS certificate).
    pub ca_file: Option<PathBuf>,
}

/// Which broker the feed goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrokerChoice {
    /// Start a broker of our own.
    Embedded(Embedded),
    /// Publish to this broker.
    External(BrokerUrl),
}

/// The broker the daemon starts itself (`[mqtt.embedded]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedded {
    /// Which program.
    pub kind: EmbeddedKind,
    /// The Mosquitto program, when given (otherwise looked for).
    pub mosquitto_bin: Option<PathBuf>,
    /// MQTT over TCP.
    pub listen: SocketAddr,
    /// MQTT over WebSocket, if wanted.
    pub ws_listen: Option<SocketAddr>,
    /// The accounts (`name:role:hash` lines; missing: none).
    pub accounts_file: PathBuf,
    /// Who may connect without a name.
    pub anonymous: Anonymous,
    /// Connections Mosquitto takes at most.
    pub max_connections: u32,
    /// The certificate and key the listeners serve TLS with, if they do.
    pub tls: Option<TlsFiles>,
}

/// A certificate (PEM, the chain from the leaf) and its private key (PEM).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert_file: PathBuf,
    /// The private key.
    pub key_file: PathBuf,
}

impl Embedded {
    /// A broker on these addresses with the defaults of `[mqtt.embedded]`.
    pub fn on(listen: SocketAddr, ws_listen: Option<SocketAddr>) -> Self {
        Self {
            kind: EmbeddedKind::Auto,
            mosquitto_bin: None,
            listen,
            ws_listen,
            accounts_file: default_accounts_file(),
            anonymous: Anonymous::Public,
            max_connections: default_max_connections(),
            tls: None,
        }
    }
}

/// Which program the embedded broker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbeddedKind {
    /// Mosquitto when installed, otherwise the built-in one (with a warning).
    Auto,
    /// Mosquitto, as the daemon's child; refuse to start without it.
    Mosquitto,
    /// rumqttd inside the daemon: no accounts, no access control.
    Builtin,
}

/// How to reach a broker: `mqtt://host:1883`, `mqtts://host:8883`,
/// `ws://host:8080/mqtt`, `wss://…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerUrl {
    /// The URL as written.
    pub url: String,
    /// The scheme.
    pub scheme: Scheme,
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// The certificates that may sign the broker's (TLS schemes).
    pub ca_file: Option<PathBuf>,
    /// The certificate and key this client proves itself with (TLS
    /// schemes, when the broker asks for one).
    pub client_auth: Option<TlsFiles>,
}

/// A broker URL's scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `mqtt://`: MQTT over TCP.
    Mqtt,
    /// `mqtts://`: MQTT over TLS.
    Mqtts,
    /// `ws://`: MQTT over WebSocket.
    Ws,
    /// `wss://`: MQTT over WebSocket over TLS.
    Wss,
}

impl Scheme {
    /// Whether the connection is encrypted.
    pub const fn tls(self) -> bool {
        matches!(self, Self::Mqtts | Self::Wss)
    }
}

/// One `[[boards]]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    /// How outputs and logs name the board.
    pub name: String,
    /// The board's protocol (`dgt`).
    pub protocol: String,
    /// The device to open.
    pub port: Option<PathBuf>,
    /// The board's serial number, to find it among the ports.
    pub serial: Option<String>,
    /// Which clock display is White's.
    #[serde(default)]
    pub white_clock: WhiteClock,
    /// Games on this board are Chess960.
    #[serde(default)]
    pub chess960: bool,
    /// The event it plays in (default: `broadcast.event`).
    pub event: Option<String>,
    /// The round (default: `broadcast.round`).
    pub round: Option<String>,
    /// Its label in topics and PGN file names (default: its name).
    pub board: Option<String>,
    /// The player with the white pieces.
    pub white: Option<String>,
    /// The player with the black pieces.
    pub black: Option<String>,
    /// The PGN `TimeControl` (default: `broadcast.time_control`).
    pub time_control: Option<String>,
    /// `standard`, `rapid` or `blitz` (default: `broadcast.rules`).
    pub rules: Option<String>,
    /// A rapid or blitz game adequately supervised (A.4, B.2).
    pub supervised: Option<bool>,
    /// What to do when the board is turned 180° (default:
    /// `reconstruction.rotated_board`).
    pub rotated_board: Option<RotatedBoard>,
    /// What the board's LEDs show (Millennium, Certabo).
    #[serde(default)]
    pub leds: LightsMode,
    /// What a DGT 3000 clock shows besides the times: `off` (default) or
    /// `moves` (docs/boards.md, "Clock display").
    pub clock_display: Option<String>,
    /// How long a move stays on the clock before the times come back.
    pub clock_display_show_ms: Option<u64>,
    /// Nothing is shown while either player has this much time or less.
    pub clock_display_min_left_s: Option<u64>,
    /// Certabo boards: the calibration file `boardcast calibrate` wrote.
    pub calibration: Option<PathBuf>,
    /// The language its moves are announced in (default:
    /// `speech.language`).
    pub speech_language: Option<String>,
    /// A visually impaired player's board (Laws appendix D): the name of
    /// the board whose game it mirrors.
    pub mirror_of: Option<String>,
    /// With `mirror_of`: how long the two boards may show different
    /// positions before `boards_diverge` (default 20 000).
    pub diverge_after_ms: Option<u64>,
}

/// A board's settings, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// Its name.
    pub name: String,
    /// Its protocol.
    pub protocol: Protocol,
    /// How to find it.
    pub find: FindBoard,
    /// Which clock display is White's.
    pub white_clock: WhiteClock,
    /// Chess960 games.
    pub chess960: bool,
    /// Where its game is published.
    pub path: BoardPath,
    /// PGN tags for its games: Event, Site, Round, Board, White, Black,
    /// TimeControl, as configured.
    pub tags: Vec<(String, String)>,
    /// Which Laws apply, when fixed by the configuration (otherwise from
    /// the `TimeControl` tag).
    pub rules: Option<Tempo>,
    /// Rapid or blitz under adequate supervision.
    pub supervised: bool,
    /// What to do with a board turned 180°, if not the general setting.
    pub rotated_board: Option<RotatedBoard>,
    /// What its LEDs show.
    pub leds: LightsMode,
    /// What its DGT 3000 clock shows besides the times, and when.
    pub clock_display: ClockDisplaySettings,
    /// Its calibration file (Certabo).
    pub calibration: Option<PathBuf>,
    /// The language its moves are announced in, if not `speech.language`.
    pub speech_language: Option<Language>,
    /// Its part in a pair of boards for a visually impaired player, if any.
    pub pair: Option<Pairing>,
}

/// A board's part in a pair (Laws appendix D): the game is played on the
/// sighted player's board, and the visually impaired player's board
/// mirrors it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// This board mirrors the game of board `game`: it is read and
    /// recorded, but publishes no game of its own.
    MirrorOf {
        /// The game board's name.
        game: String,
    },
    /// This board's game is mirrored; the two are compared.
    Game(PairSettings),
}

/// How to find a board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FindBoard {
    /// Open this device.
    Port(PathBuf),
    /// Probe the serial ports for the board with this serial number.
    Serial(String),
}

/// A board's tag, or `""`.
fn tag_of(board: &Board, name: &str) -> String {
    board.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default()
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

impl Config {
    /// The boards, checked: names unique and non-empty, a known protocol,
    /// and exactly one of `port` and `serial`.
    ///
    /// # Errors
    ///
    /// The first value that is not accepted.
    pub fn boards(&self) -> Result<Vec<Board>, ConfigError> {
        let mut boards: Vec<Board> = Vec::new();
        for (i, b) in self.boards.iter().enumerate() {
            let board = self.board(&BoardKeys(i), b, &boards)?;
            boards.push(board);
        }
        self.pair_boards(&mut boards)?;
        Ok(boards)
    }

    /// Pairs each visually impaired player's board (`mirror_of`) with the
    /// board the game is played on: that board exists, is not the mirror
    /// itself, is no mirror, and is mirrored once.
    fn pair_boards(&self, boards: &mut [Board]) -> Result<(), ConfigError> {
        let mut pairs: Vec<(usize, usize, Duration)> = Vec::new();
        for (i, b) in self.boards.iter().enumerate() {
            let keys = BoardKeys(i);
            let Some(game) = &b.mirror_of else {
                if let Some(ms) = b.diverge_after_ms {
                    return Err(error(
                        keys.key("diverge_after_ms"),
                        &ms.to_string(),
                        "nothing on this board: it belongs with mirror_of, on the visually impaired player's board",
                    ));
                }
                continue;
            };
            let value = quoted(game);
            let key = keys.key("mirror_of");
            if *game == b.name {
                return Err(error(
                    key,
                    &value,
                    "the name of another board: the sighted player's board, where the game is played (a board cannot mirror itself)",
                ));
            }
            let Some(target) = self.boards.iter().position(|other| other.name == *game) else {
                let names: Vec<String> =
                    self.boards.iter().filter(|o| o.name != b.name).map(|o| quoted(&o.name)).collect();
                let others = if names.is_empty() {
                    "no other board is configured".to_owned()
                } else {
                    format!("the others are {}", names.join(", "))
                };
                return Err(error(
                    key,
                    &value,
                    &format!(
                        "the name of a configured board, the sighted player's board where the game is played: none is called {value} ({others})"
                    ),
                ));
            };
            if let Some(further) = &self.boards[target].mirror_of {
                return Err(error(
                    key,
                    &value,
                    &format!(
                        "a board that is not itself a mirror: board {value} mirrors {}; name the board the game is played on",
                        quoted(further)
                    ),
                ));
            }
            if let Some(&(other, _, _)) = pairs.iter().find(|&&(_, g, _)| g == target) {
                return Err(error(
                    key,
                    &value,
                    &format!(
                        "a board no other board mirrors: board {} mirrors it already (one visually impaired player's board per game)",
                        quoted(&self.boards[other].name)
                    ),
                ));
            }
            let diverge_after = match b.diverge_after_ms {
                None => DEFAULT_DIVERGE_AFTER,
                Some(ms) if (500..=600_000).contains(&ms) => Duration::from_millis(ms),
                Some(ms) => {
                    return Err(error(
                        keys.key("diverge_after_ms"),
                        &ms.to_string(),
                        "500 to 600000 milliseconds: how long copying a move may take (docs/live-boards.md, \"Paired boards\")",
                    ));
                }
            };
            pairs.push((i, target, diverge_after));
        }
        for (mirror, game, diverge_after) in pairs {
            let settings = PairSettings {
                game_board: boards[game].name.clone(),
                mirror_board: boards[mirror].name.clone(),
                diverge_after,
            };
            boards[mirror].pair = Some(Pairing::MirrorOf { game: settings.game_board.clone() });
            boards[game].pair = Some(Pairing::Game(settings));
        }
        Ok(())
    }

    /// Board `keys.0` of the file, checked against the boards before it.
    fn board(&self, keys: &BoardKeys, b: &BoardConfig, before: &[Board]) -> Result<Board, ConfigError> {
        self.check_names(keys, b, before)?;
        let protocol = protocol_of(keys, b)?;
        let find = find_of(keys, b, before)?;
        let event = b.event.as_deref().unwrap_or(&self.broadcast.event);
        let round = b.round.as_deref().unwrap_or(&self.broadcast.round);
        let path = BoardPath::new(event, round, b.board.as_deref().unwrap_or(&b.name));
        if let Some(other) = before.iter().find(|other| other.path == path) {
            return Err(error(
                keys.key("board"),
                &format!("{:?}", path.board),
                &format!(
                    "a label no other board of event {:?} round {:?} has (board {:?} has it)",
                    path.event, path.round, other.name
                ),
            ));
        }
        let time_control = self.time_control_of(keys, b)?;
        let rules = self.rules_of(keys, b)?;
        let clock_display = clock_display_of(keys, b, protocol)?;
        let tags = self.tags_of(b, event, round, &time_control);
        Ok(Board {
            name: b.name.clone(),
            protocol,
            find,
            white_clock: b.white_clock,
            chess960: b.chess960,
            path,
            tags,
            rules,
            supervised: b.supervised.unwrap_or(self.broadcast.supervised),
            rotated_board: b.rotated_board,
            leds: b.leds,
            clock_display,
            calibration: b.calibration.clone(),
            speech_language: b
                .speech_language
                .as_deref()
                .map(|code| parse_language(&keys.key("speech_language"), code))
                .transpose()?,
            pair: None,
        })
    }

    /// The board's name, event, round and label: present, unique, and
    /// usable as file and folder names.
    fn check_names(&self, keys: &BoardKeys, b: &BoardConfig, before: &[Board]) -> Result<(), ConfigError> {
        if b.name.trim().is_empty() {
            return Err(error(keys.key("name"), "\"\"", "a name for the board, such as \"board-1\""));
        }
        if before.iter().any(|other| other.name == b.name) {
            return Err(error(keys.key("name"), &quoted(&b.name), "a name no other board has"));
        }
        // Names become file and folder names (captures, PGN folders): a
        // name that cannot be one is refused here, not found out when
        // nothing is saved.
        let event_key = if b.event.is_some() { keys.key("event") } else { "broadcast.event".into() };
        let round_key = if b.round.is_some() { keys.key("round") } else { "broadcast.round".into() };
        let names = [
            (keys.key("name"), Some(&b.name)),
            (event_key, Some(b.event.as_ref().unwrap_or(&self.broadcast.event))),
            (round_key, Some(b.round.as_ref().unwrap_or(&self.broadcast.round))),
            (keys.key("board"), b.board.as_ref()),
        ];
        for (name_key, name) in names {
            if let Some(why) = name.and_then(|n| names::unusable(n)) {
                return Err(error(name_key, &quoted(name.map_or("", |n| n.as_str())), &why));
            }
        }
        if let Some(other) = before.iter().find(|other| names::component(&other.name) == names::component(&b.name)) {
            return Err(error(
                keys.key("name"),
                &quoted(&b.name),
                &format!("a name whose capture files differ from board {:?}'s", other.name),
            ));
        }
        Ok(())
    }

    /// The board's time control (its own, or the broadcast's), checked.
    fn time_control_of(&self, keys: &BoardKeys, b: &BoardConfig) -> Result<String, ConfigError> {
        let time_control = b.time_control.as_deref().unwrap_or(&self.broadcast.time_control).trim().to_owned();
        if !time_control.is_empty() && time_control.parse::<TimeControl>().is_err() {
            return Err(error(
                if b.time_control.is_some() { keys.key("time_control") } else { "broadcast.time_control".into() },
                &format!("{time_control:?}"),
                "a PGN TimeControl such as \"5400+30\" (seconds, + increment), \"40/5400+30:1800+30\" or \"300+2\"",
            ));
        }
        Ok(time_control)
    }

    /// Which Laws apply (its own, or the broadcast's); `None`: from the
    /// time control.
    fn rules_of(&self, keys: &BoardKeys, b: &BoardConfig) -> Result<Option<Tempo>, ConfigError> {
        match b.rules.as_deref().unwrap_or(&self.broadcast.rules).trim() {
            "" => Ok(None),
            "standard" => Ok(Some(Tempo::Standard)),
            "rapid" => Ok(Some(Tempo::Rapid)),
            "blitz" => Ok(Some(Tempo::Blitz)),
            other => Err(error(
                keys.key("rules"),
                &format!("{other:?}"),
                "\"standard\", \"rapid\", \"blitz\", or \"\" to take it from the time control",
            )),
        }
    }

    /// Gives each board the players of the `[broadcast] pairings` file's
    /// pairing for its round and number (docs/delivery.md, "Pairings"):
    /// White, Black and their Elo, title, FIDE id and federation, in place
    /// of its `white` and `black`. A board without a pairing keeps its own.
    /// Says which pairings no board has (`"round 3 board 17"`).
    ///
    /// # Errors
    ///
    /// The file cannot be read, does not parse (the error has the line and
    /// field), has no pairings for a board's round, or two boards stand for
    /// one board number of a round.
    pub fn apply_pairings(&self, boards: &mut [Board]) -> Result<Vec<String>, ConfigError> {
        let file = &self.broadcast.pairings;
        if file.as_os_str().is_empty() {
            return Ok(Vec::new());
        }
        let refused = |why: String| error("broadcast.pairings".into(), &quoted(&file.display().to_string()), &why);
        let text = std::fs::read_to_string(file).map_err(|e| refused(format!("a readable pairings file ({e})")))?;
        let pairings = Pairings::parse(&text).map_err(|e| refused(format!("a pairings file (TRF16 or CSV): {e}")))?;
        let mut unplaced = Vec::new();
        let mut rounds: Vec<String> = boards.iter().map(|b| tag_of(b, "Round")).collect();
        rounds.sort();
        rounds.dedup();
        for round in rounds {
            let of_round = pairings.round(&round).map_err(|e| refused(e.to_string()))?;
            for pairing in of_round {
                let mut matching = boards
                    .iter_mut()
                    .filter(|b| tag_of(b, "Round") == round && board_number(&b.path.board) == Some(pairing.board));
                let Some(board) = matching.next() else {
                    unplaced.push(format!("round {round} board {}", pairing.board));
                    continue;
                };
                if let Some(other) = matching.next() {
                    return Err(refused(format!(
                        "boards whose labels end in different numbers: {} and {} both stand for board {} of round {round}",
                        board.name, other.name, pairing.board
                    )));
                }
                for (name, value) in pairing.tags() {
                    board.tags.retain(|(k, _)| *k != name);
                    if !value.is_empty() {
                        board.tags.push((name, value));
                    }
                }
            }
        }
        Ok(unplaced)
    }

    /// The PGN tags the board's games start with.
    fn tags_of(&self, b: &BoardConfig, event: &str, round: &str, time_control: &str) -> Vec<(String, String)> {
        let mut tags = vec![("Event".to_owned(), event.to_owned())];
        if !self.broadcast.site.is_empty() {
            tags.push(("Site".into(), self.broadcast.site.clone()));
        }
        tags.push(("Round".into(), round.to_owned()));
        tags.push(("Board".into(), b.board.clone().unwrap_or_else(|| b.name.clone())));
        for (tag, value) in [("White", &b.white), ("Black", &b.black)] {
            if let Some(value) = value.as_ref().filter(|v| !v.trim().is_empty()) {
                tags.push((tag.into(), value.trim().to_owned()));
            }
        }
        if !time_control.is_empty() {
            tags.push(("TimeControl".into(), time_control.to_owned()));
        }
        tags
    }

    /// The reconstructor's settings.
    ///
    /// # Errors
    ///
    /// When a duration is zero where it cannot be, or `fill_in_plies` is out
    /// of range.
    pub fn reconstructor(&self) -> Result<ReconstructorConfig, ConfigError> {
        let r = &self.reconstruction;
        let positive = |key: &str, ms: u64| {
            if ms == 0 {
                Err(error(format!("reconstruction.{key}"), "0", "a positive number of milliseconds"))
            } else {
                Ok(Duration::from_millis(ms))
            }
        };
        if !(1..=4).contains(&r.fill_in_plies) {
            return Err(error(
                "reconstruction.fill_in_plies".into(),
                &r.fill_in_plies.to_string(),
                "1 to 4 (plies filled in at most)",
            ));
        }
        Ok(ReconstructorConfig {
            settle: positive("settle_ms", r.settle_ms)?,
            touch_min: positive("touch_min_ms", r.touch_min_ms)?,
            release_min: positive("release_min_ms", r.release_min_ms)?,
            out_of_sync_after: positive("out_of_sync_ms", r.out_of_sync_ms)?,
            gesture_hold: positive("gesture_hold_ms", r.gesture_hold_ms)?,
            press_grace: positive("press_grace_ms", r.press_grace_ms)?,
            quiet_completion: positive("quiet_completion_ms", r.quiet_completion_ms)?,
            fill_in_plies: r.fill_in_plies,
            rotated_board: r.rotated_board,
            uncertain_order: r.uncertain_order,
            white_clock: WhiteClock::Auto,
        })
    }

    /// The link's settings.
    ///
    /// # Errors
    ///
    /// When a duration is zero, or the board is taken for silent before it
    /// is asked to speak.
    pub fn link(&self) -> Result<boardcast_core::protocol::link::LinkConfig, ConfigError> {
        let l = &self.link;
        if l.keepalive_ms == 0 {
            return Err(error("link.keepalive_ms".into(), "0", "a positive number of milliseconds"));
        }
        if l.silent_ms <= l.keepalive_ms {
            return Err(error(
                "link.silent_ms".into(),
                &l.silent_ms.to_string(),
                &format!(
                    "more than link.keepalive_ms ({}), so that a quiet board is asked before it is given up",
                    l.keepalive_ms
                ),
            ));
        }
        Ok(boardcast_core::protocol::link::LinkConfig {
            keepalive_after: Duration::from_millis(l.keepalive_ms),
            silent_after: Duration::from_millis(l.silent_ms),
            ..Default::default()
        })
    }
}

impl Config {
    /// Announcing moves aloud (`None`: not enabled).
    ///
    /// # Errors
    ///
    /// An empty command, an unknown language, a board that is not
    /// configured, no room to wait or no time to speak.
    pub fn speech(&self) -> Result<Option<Speech>, ConfigError> {
        let s = &self.speech;
        if !s.enabled {
            return Ok(None);
        }
        if s.command.first().is_none_or(|program| program.trim().is_empty()) {
            return Err(error(
                "speech.command".into(),
                &format!("{:?}", s.command),
                "a program and its arguments, such as [\"espeak-ng\", \"-v\", \"de\"] (the announcement is added as the last argument)",
            ));
        }
        let language = parse_language("speech.language", &s.language)?;
        let boards = self.boards()?;
        for (i, name) in s.boards.iter().enumerate() {
            if !boards.iter().any(|b| &b.name == name) {
                let names: Vec<String> = boards.iter().map(|b| format!("{:?}", b.name)).collect();
                return Err(error(
                    format!("speech.boards[{i}]"),
                    &quoted(name),
                    &format!("the name of a configured board ([[boards]] name: {})", names.join(", ")),
                ));
            }
        }
        if s.max_queue == 0 {
            return Err(error(
                "speech.max_queue".into(),
                "0",
                "at least 1 announcement waiting per board (16 suits a hall)",
            ));
        }
        if s.timeout_ms < 100 {
            return Err(error(
                "speech.timeout_ms".into(),
                &s.timeout_ms.to_string(),
                "at least 100 milliseconds for one announcement (10000 suits espeak-ng)",
            ));
        }
        Ok(Some(Speech {
            command: s.command.clone(),
            language,
            boards: s.boards.clone(),
            max_queue: s.max_queue,
            timeout: Duration::from_millis(s.timeout_ms),
        }))
    }

    /// Pushing to lichess (`None`: no round has a lichess id).
    ///
    /// # Errors
    ///
    /// A URL that is not http(s), a zero interval, or a round id that is
    /// not one (lichess round ids are 8 letters and digits).
    pub fn lichess(&self) -> Result<Option<Lichess>, ConfigError> {
        let l = &self.lichess;
        if l.rounds.is_empty() {
            return Ok(None);
        }
        let url = l.url.trim().trim_end_matches('/');
        let host = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
        if host.is_none_or(|h| h.is_empty() || h.contains('@')) {
            return Err(error(
                "lichess.url".into(),
                &quoted(&l.url),
                "an https:// (or http://) address without user name, such as \"https://lichess.org\"",
            ));
        }
        if l.interval_ms < 100 {
            return Err(error(
                "lichess.interval_ms".into(),
                &l.interval_ms.to_string(),
                "at least 100 milliseconds between two pushes of a round (2000 suits lichess)",
            ));
        }
        for (round, id) in &l.rounds {
            if round.trim().is_empty() {
                return Err(error("lichess.rounds".into(), "\"\"", "a round name, such as \"1\" = \"abcdefgh\""));
            }
            if id.len() != 8 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(error(
                    format!("lichess.rounds.{round:?}"),
                    &quoted(id),
                    "the lichess round id: the 8 letters and digits after the round's name in its address (https://lichess.org/broadcast/<tournament>/<round>/<round id>)",
                ));
            }
        }
        Ok(Some(Lichess {
            url: url.to_owned(),
            token_file: l.token_file.clone(),
            interval: Duration::from_millis(l.interval_ms),
            rounds: l.rounds.clone(),
        }))
    }

    /// The display pages' server (`None`: not served).
    ///
    /// # Errors
    ///
    /// An address that cannot be used, or a broker URL the pages cannot
    /// speak to.
    pub fn http(&self) -> Result<Option<Http>, ConfigError> {
        let h = &self.http;
        if !h.enabled {
            return Ok(None);
        }
        let listen = h.listen.trim().parse::<SocketAddr>().map_err(|_| {
            error("http.listen".into(), &format!("{:?}", h.listen), "an address and port such as \"127.0.0.1:8080\"")
        })?;
        let url = h.broker_ws_url.trim();
        let broker_ws_url = if url.is_empty() {
            None
        } else if url.starts_with("ws://") || url.starts_with("wss://") {
            Some(url.to_owned())
        } else {
            return Err(error(
                "http.broker_ws_url".into(),
                &format!("{url:?}"),
                "\"\" (the embedded broker) or a ws:// or wss:// URL such as \"wss://broker.example.org/mqtt\"",
            ));
        };
        Ok(Some(Http { listen, broker_ws_url }))
    }

    /// The MQTT settings.
    ///
    /// # Errors
    ///
    /// A URL or address that cannot be used, an unknown language, or a
    /// TLS URL without certificates to check the broker with.
    pub fn mqtt(&self) -> Result<Mqtt, ConfigError> {
        let m = &self.mqtt;
        let broker = if m.url.trim().is_empty() {
            let address = |key: &str, value: &str| {
                value.trim().parse::<SocketAddr>().map_err(|_| {
                    error(
                        format!("mqtt.embedded.{key}"),
                        &format!("{value:?}"),
                        "an address and port such as \"127.0.0.1:1883\"",
                    )
                })
            };
            let e = &m.embedded;
            let listen = address("listen", &e.listen)?;
            let ws_listen =
                if e.ws_listen.trim().is_empty() { None } else { Some(address("ws_listen", &e.ws_listen)?) };
            let kind = match e.broker.as_str() {
                "auto" => EmbeddedKind::Auto,
                "mosquitto" => EmbeddedKind::Mosquitto,
                "builtin" => EmbeddedKind::Builtin,
                other => {
                    return Err(error(
                        "mqtt.embedded.broker".into(),
                        &quoted(other),
                        "\"auto\" (Mosquitto when installed), \"mosquitto\" or \"builtin\" (no access control)",
                    ));
                }
            };
            let anonymous = match e.anonymous.as_str() {
                "public" => Anonymous::Public,
                "live" => Anonymous::Live,
                "none" => Anonymous::None,
                other => {
                    return Err(error(
                        "mqtt.embedded.anonymous".into(),
                        &quoted(other),
                        "\"public\" (read the public tree), \"live\" (also the live tree) or \"none\"",
                    ));
                }
            };
            if e.max_connections == 0 {
                return Err(error(
                    "mqtt.embedded.max_connections".into(),
                    "0",
                    "a positive number of connections (4096 suits a hall)",
                ));
            }
            let mosquitto_bin = (!e.mosquitto_bin.trim().is_empty()).then(|| PathBuf::from(e.mosquitto_bin.trim()));
            let tls = pem_pair(
                ("mqtt.embedded.tls_cert_file", &e.tls_cert_file),
                ("mqtt.embedded.tls_key_file", &e.tls_key_file),
                "the broker's certificate",
            )?;
            if tls.is_some() && kind == EmbeddedKind::Builtin {
                return Err(error(
                    "mqtt.embedded.broker".into(),
                    "\"builtin\"",
                    "\"mosquitto\" or \"auto\" when mqtt.embedded.tls_cert_file is set (the built-in broker cannot serve TLS)",
                ));
            }
            BrokerChoice::Embedded(Embedded {
                kind,
                mosquitto_bin,
                listen,
                ws_listen,
                accounts_file: e.accounts_file.clone(),
                anonymous,
                max_connections: e.max_connections,
                tls,
            })
        } else {
            let mut broker = parse_broker_url(m.url.trim(), &m.ca_file)?;
            broker.client_auth = pem_pair(
                ("mqtt.client_cert_file", &m.client_cert_file),
                ("mqtt.client_key_file", &m.client_key_file),
                "this client's certificate",
            )?;
            if broker.client_auth.is_some() && !broker.scheme.tls() {
                return Err(error(
                    "mqtt.client_cert_file".into(),
                    &quoted(&m.client_cert_file),
                    "\"\" with a mqtt:// or ws:// URL (client certificates need mqtts:// or wss://)",
                ));
            }
            BrokerChoice::External(broker)
        };
        let languages = m
            .languages
            .iter()
            .map(|l| {
                l.parse::<Language>().map_err(|_| {
                    error("mqtt.languages".into(), &format!("{l:?}"), "some of \"en\", \"nl\", \"de\", \"af\", \"fr\"")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if m.keep_alive_s == 0 {
            return Err(error(
                "mqtt.keep_alive_s".into(),
                "0",
                "a positive number of seconds (15 suits a hall network)",
            ));
        }
        if m.max_queued_messages == 0 {
            return Err(error(
                "mqtt.max_queued_messages".into(),
                "0",
                "a positive number (moves and alerts kept while the broker is away)",
            ));
        }
        let credentials = (!m.username.is_empty()).then(|| (m.username.clone(), m.password.clone()));
        let password_file = (!m.password_file.trim().is_empty()).then(|| PathBuf::from(m.password_file.trim()));
        Ok(Mqtt {
            broker,
            credentials,
            password_file,
            root: m.root.clone(),
            bridge_id: m.bridge_id.clone(),
            public_delay: Duration::from_secs(m.public_delay_s),
            keep_alive: Duration::from_secs(m.keep_alive_s),
            languages,
            queue_limit: m.max_queued_messages,
            ca_file: (!m.ca_file.trim().is_empty()).then(|| PathBuf::from(m.ca_file.trim())),
        })
    }
}

/// A client certificate and its key given as `cert` and `key`, each
/// `(name, path)`: checked as `[mqtt] client_cert_file` and
/// `client_key_file` are (both or neither, each a readable PEM file), and
/// named by `name` in the error (`boardcast ctl`'s flags, or those keys).
///
/// # Errors
///
/// One given without the other, or a file that cannot be read or is not
/// PEM.
pub fn client_certificate(cert: (&str, &str), key: (&str, &str)) -> Result<Option<TlsFiles>, ConfigError> {
    pem_pair(cert, key, "this client's certificate")
}

/// A certificate and its key, both given or both `""`; each must be a
/// readable PEM file.
fn pem_pair(
    (cert_key, cert): (&str, &str),
    (key_key, key): (&str, &str),
    what: &str,
) -> Result<Option<TlsFiles>, ConfigError> {
    let (cert, key) = (cert.trim(), key.trim());
    match (cert.is_empty(), key.is_empty()) {
        (true, true) => return Ok(None),
        (false, true) => {
            return Err(error(
                key_key.into(),
                "\"\"",
                &format!("the PEM file with the private key of {what} ({cert_key} is set)"),
            ));
        }
        (true, false) => {
            return Err(error(cert_key.into(), "\"\"", &format!("the PEM file with {what} ({key_key} is set)")));
        }
        (false, false) => {}
    }
    let cert_file =
        pem_file(cert_key, cert, "CERTIFICATE", &format!("a PEM file with {what} (-----BEGIN CERTIFICATE-----)"))?;
    let key_file = pem_file(
        key_key,
        key,
        "PRIVATE KEY",
        &format!("a PEM file with the private key of {what} (-----BEGIN … PRIVATE KEY-----)"),
    )?;
    Ok(Some(TlsFiles { cert_file, key_file }))
}

/// `path` if it can be read and holds a PEM block whose label contains
/// `label`; otherwise an error naming `key`, why, and what is wanted.
fn pem_file(key: &str, path: &str, label: &str, wanted: &str) -> Result<PathBuf, ConfigError> {
    let bad = |why: String| error(key.into(), &quoted(path), &format!("{wanted}; {why}"));
    // A certificate or key file is a few KiB: read at most 1 MiB of it.
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| std::io::Read::read_to_string(&mut std::io::Read::take(file, 1 << 20), &mut text))
        .map_err(|e| bad(format!("it cannot be read ({e}): give the right path, readable by the daemon's user")))?;
    let has_block = text.lines().any(|l| l.starts_with("-----BEGIN ") && l.contains(label));
    if !has_block {
        return Err(bad(format!(
            "it has no \"-----BEGIN …{label}-----\" block: give the PEM file, not DER or another file"
        )));
    }
    Ok(PathBuf::from(path))
}

/// The system's certificate bundle on Debian and its relatives.
const SYSTEM_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";

fn parse_broker_url(url: &str, ca_file: &str) -> Result<BrokerUrl, ConfigError> {
    let bad = |why: &str| error("mqtt.url".into(), &format!("{url:?}"), why);
    let accepted = "mqtt://host:port, mqtts://host:port, ws://host:port/path or wss://host:port/path, or \"\" for the embedded broker";
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad(accepted))?;
    let scheme = match scheme {
        "mqtt" | "tcp" => Scheme::Mqtt,
        "mqtts" | "ssl" | "tls" => Scheme::Mqtts,
        "ws" => Scheme::Ws,
        "wss" => Scheme::Wss,
        _ => return Err(bad(accepted)),
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad("a URL without user name or password (use mqtt.username and mqtt.password)"));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
            let port = port.parse::<u16>().map_err(|_| bad("a port number between 1 and 65535 after the host"))?;
            (host.trim_start_matches('[').trim_end_matches(']').to_owned(), port)
        }
        _ => {
            let port = match scheme {
                Scheme::Mqtt => 1883,
                Scheme::Mqtts => 8883,
                Scheme::Ws => 80,
                Scheme::Wss => 443,
            };
            (authority.to_owned(), port)
        }
    };
    if host.is_empty() || port == 0 {
        return Err(bad(accepted));
    }
    let ca_file = if scheme.tls() {
        let path = if ca_file.is_empty() { PathBuf::from(SYSTEM_CA_FILE) } else { PathBuf::from(ca_file) };
        if !path.is_file() {
            return Err(error(
                "mqtt.ca_file".into(),
                &format!("{:?}", path.display().to_string()),
                "a PEM file with the certificates that sign the broker's (needed for mqtts:// and wss://)",
            ));
        }
        Some(path)
    } else {
        None
    };
    Ok(BrokerUrl { url: url.to_owned(), scheme, host, port, ca_file, client_auth: None })
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

/// How a board's keys are named in messages: `boards[2].port`.
struct BoardKeys(usize);

impl BoardKeys {
    fn key(&self, name: &str) -> String {
        format!("boards[{}].{name}", self.0)
    }
}

/// The names of the board families read live, quoted, for an error:
/// `"dgt", "millennium", "certabo" or "sentio"`.
fn live_families() -> String {
    let names = Protocol::LIVE.map(|p| format!("{:?}", p.name()));
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The board's family, and the keys that only some families take.
fn protocol_of(keys: &BoardKeys, b: &BoardConfig) -> Result<Protocol, ConfigError> {
    let protocol = b.protocol.parse::<Protocol>().ok().filter(|p| *p != Protocol::EVENTS).ok_or_else(|| {
        error(
            keys.key("protocol"),
            &format!("{:?}", b.protocol),
            &format!("{} (the board families this daemon reads live)", live_families()),
        )
    })?;
    let family = protocol.family().expect("`events` is refused above");
    if !family.probe.tells_serial && b.serial.is_some() {
        return Err(error(
            keys.key("serial"),
            &format!("{:?}", b.serial.as_deref().unwrap_or_default()),
            &format!(
                "port = \"/dev/…\": {protocol} boards have no serial number to be found by (only {} boards do)",
                names_of(|f| f.probe.tells_serial)
            ),
        ));
    }
    if !family.features.calibration && b.calibration.is_some() {
        return Err(error(
            keys.key("calibration"),
            "(a file)",
            &format!("nothing: only {} boards are calibrated", names_of(|f| f.features.calibration)),
        ));
    }
    Ok(protocol)
}

/// What the board's DGT 3000 clock shows besides the times, and when.
fn clock_display_of(
    keys: &BoardKeys,
    b: &BoardConfig,
    protocol: Protocol,
) -> Result<ClockDisplaySettings, ConfigError> {
    let defaults = ClockDisplaySettings::default();
    let show_for = match b.clock_display_show_ms {
        None => defaults.show_for,
        Some(ms @ 500..=10_000) => Duration::from_millis(ms),
        Some(ms) => {
            return Err(error(
                keys.key("clock_display_show_ms"),
                &ms.to_string(),
                "500 to 10000: how long a move stays on the clock before the times come back (default 2000)",
            ));
        }
    };
    let min_remaining = match b.clock_display_min_left_s {
        None => defaults.min_remaining,
        Some(s @ 0..=3600) => Duration::from_secs(s),
        Some(s) => {
            return Err(error(
                keys.key("clock_display_min_left_s"),
                &s.to_string(),
                "0 to 3600: nothing is shown while either player has this many seconds or fewer (default 60)",
            ));
        }
    };
    let mode = clock_display_mode(keys, b, protocol)?;
    Ok(ClockDisplaySettings { mode, show_for, min_remaining })
}

/// `off` or `moves`.
fn clock_display_mode(keys: &BoardKeys, b: &BoardConfig, protocol: Protocol) -> Result<ClockDisplayMode, ConfigError> {
    match b.clock_display.as_deref().unwrap_or("off") {
        "off" => Ok(ClockDisplayMode::Off),
        "moves" if protocol.features().clock_text => Ok(ClockDisplayMode::Moves),
        "moves" => Err(error(
            keys.key("clock_display"),
            "\"moves\"",
            &format!(
                "\"off\": a {protocol} board has no clock that shows text (only {} boards' DGT 3000 does)",
                names_of(|f| f.features.clock_text)
            ),
        )),
        other => Err(error(
            keys.key("clock_display"),
            &format!("{other:?}"),
            "\"off\" (only the times) or \"moves\" (a DGT 3000 shows each move for 2 s)",
        )),
    }
}

/// How the board is found (by port, or by serial number), and not on the
/// port or with the serial number of a board before it.
fn find_of(keys: &BoardKeys, b: &BoardConfig, before: &[Board]) -> Result<FindBoard, ConfigError> {
    let find = match (&b.port, &b.serial) {
        (Some(port), None) => FindBoard::Port(port.clone()),
        (None, Some(serial)) => FindBoard::Serial(serial.clone()),
        (Some(port), Some(_)) => {
            return Err(error(
                keys.key("port"),
                &format!("{:?}", port.display().to_string()),
                "either port or serial, not both",
            ));
        }
        (None, None) => {
            return Err(error(
                keys.key("port"),
                "(missing)",
                "port = \"/dev/…\" or serial = \"…\" (the board's serial number)",
            ));
        }
    };
    // Two boards on one port: the second would never open it (the
    // first holds it exclusively), and one board found twice by
    // its serial number (leading zeros are often left out) would
    // be read by whichever asks first.
    for other in before {
        match (&find, &other.find) {
            (FindBoard::Port(a), FindBoard::Port(b)) if a == b => {
                return Err(error(
                    keys.key("port"),
                    &quoted(&a.display().to_string()),
                    &format!("a port no other board reads (board {:?} reads it)", other.name),
                ));
            }
            (FindBoard::Serial(a), FindBoard::Serial(b))
                if a.trim().trim_start_matches('0') == b.trim().trim_start_matches('0') =>
            {
                return Err(error(
                    keys.key("serial"),
                    &quoted(a),
                    &format!("the serial number of another board (board {:?} has {b:?}, the same board)", other.name),
                ));
            }
            _ => {}
        }
    }
    Ok(find)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(extra: &str) -> Config {
        let text = format!("{DEFAULTS}\n{extra}");
        toml_like(&text)
    }

    /// The defaults file parsed the way the binary does (through serde).
    fn toml_like(text: &str) -> Config {
        config::Config::builder()
            .add_source(config::File::from_str(text, config::FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap()
    }

    #[test]
    fn the_defaults_parse_and_match_the_built_in_settings() {
        let config = parse("");
        assert!(config.boards().unwrap().is_empty());
        assert_eq!(config.reconstructor().unwrap(), ReconstructorConfig::default());
        assert_eq!(config.link().unwrap(), boardcast_core::protocol::link::LinkConfig::default());
    }

    #[test]
    fn boards_need_a_protocol_and_a_way_to_be_found() {
        let ok = parse("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nserial = \"03921\"\n");
        assert_eq!(ok.boards().unwrap()[0].find, FindBoard::Serial("03921".into()));
        for (extra, message) in [
            (
                "[[boards]]\nname = \"b1\"\nprotocol = \"dgx\"\nport = \"/dev/x\"\n",
                "boards[0].protocol = \"dgx\": \"dgt\"",
            ),
            (
                "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\n",
                "boards[0].port = (missing): port = \"/dev/…\" or serial",
            ),
            (
                "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\n",
                "boards[1].name = \"b1\": a name no other board has",
            ),
        ] {
            let error = parse(extra).boards().unwrap_err().to_string();
            assert!(error.starts_with(message), "{error}");
        }
    }

    #[test]
    fn tls_files_are_checked_and_named_by_their_key() {
        let dir = std::env::temp_dir().join(format!("boardcast-config-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cert = dir.join("cert.pem");
        let key = dir.join("key.pem");
        std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n").unwrap();
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n").unwrap();
        let (cert, key) = (cert.display().to_string(), key.display().to_string());
        let embedded = |c: &str, k: &str, broker: &str| {
            let mut config = parse("");
            config.mqtt.embedded.tls_cert_file = c.into();
            config.mqtt.embedded.tls_key_file = k.into();
            config.mqtt.embedded.broker = broker.into();
            config.mqtt()
        };
        let BrokerChoice::Embedded(e) = embedded(&cert, &key, "auto").unwrap().broker else { panic!() };
        assert_eq!(e.tls, Some(TlsFiles { cert_file: cert.clone().into(), key_file: key.clone().into() }));
        for (c, k, broker, message) in [
            (cert.as_str(), "", "auto", "mqtt.embedded.tls_key_file = \"\": the PEM file with the private key"),
            ("", key.as_str(), "auto", "mqtt.embedded.tls_cert_file = \"\": the PEM file with"),
            ("/nonexistent/cert.pem", key.as_str(), "auto", "mqtt.embedded.tls_cert_file = \"/nonexistent/cert.pem\""),
            (key.as_str(), key.as_str(), "auto", "has no \"-----BEGIN …CERTIFICATE-----\" block"),
            (cert.as_str(), cert.as_str(), "auto", "mqtt.embedded.tls_key_file"),
            (cert.as_str(), key.as_str(), "builtin", "mqtt.embedded.broker = \"builtin\": \"mosquitto\" or \"auto\""),
        ] {
            let error = embedded(c, k, broker).unwrap_err().to_string();
            assert!(error.contains(message), "{message}: {error}");
        }
        assert!(embedded("/nonexistent/cert.pem", &key, "auto").unwrap_err().to_string().contains("cannot be read"));

        let external = |url: &str, c: &str, k: &str| {
            let mut config = parse("");
            config.mqtt.url = url.into();
            config.mqtt.ca_file = cert.clone();
            config.mqtt.client_cert_file = c.into();
            config.mqtt.client_key_file = k.into();
            config.mqtt()
        };
        let BrokerChoice::External(b) = external("mqtts://hall:8883", &cert, &key).unwrap().broker else { panic!() };
        assert_eq!(b.client_auth, Some(TlsFiles { cert_file: cert.clone().into(), key_file: key.clone().into() }));
        let error = external("mqtt://hall:1883", &cert, &key).unwrap_err().to_string();
        assert!(error.starts_with("mqtt.client_cert_file = ") && error.contains("need mqtts:// or wss://"), "{error}");
        let error = external("wss://hall/mqtt", &cert, "/nonexistent/key.pem").unwrap_err().to_string();
        assert!(error.starts_with("mqtt.client_key_file = \"/nonexistent/key.pem\""), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn broker_urls_and_mqtt_settings_are_checked() {
        let defaults = parse("").mqtt().unwrap();
        assert_eq!(
            defaults.broker,
            BrokerChoice::Embedded(Embedded::on(
                "127.0.0.1:1883".parse().unwrap(),
                Some("127.0.0.1:8083".parse().unwrap())
            ))
        );
        let mut config = parse("");
        config.mqtt.embedded.broker = "rumqttd".into();
        assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.broker = \"rumqttd\": \"auto\""));
        let mut config = parse("");
        config.mqtt.embedded.anonymous = "all".into();
        assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.anonymous = \"all\""));
        assert_eq!(defaults.languages.len(), 5);
        let url = |u: &str| {
            let mut config = parse("");
            config.mqtt.url = u.into();
            config.mqtt()
        };
        let BrokerChoice::External(broker) = url("mqtt://broker.hall:1884").unwrap().broker else { panic!() };
        assert_eq!((broker.scheme, broker.host.as_str(), broker.port), (Scheme::Mqtt, "broker.hall", 1884));
        let BrokerChoice::External(broker) = url("ws://10.0.0.2/mqtt").unwrap().broker else { panic!() };
        assert_eq!((broker.scheme, broker.port), (Scheme::Ws, 80));
        let BrokerChoice::External(broker) = url("mqtt://[::1]:1883").unwrap().broker else { panic!() };
        assert_eq!(broker.host, "::1");
        for (bad, message) in [
            ("broker.hall:1883", "mqtt.url = \"broker.hall:1883\": mqtt://host:port"),
            ("http://x", "mqtt.url = \"http://x\": mqtt://host:port"),
            ("mqtt://user:pw@x", "a URL without user name or password"),
            ("mqtt://x:99999", "a port number"),
        ] {
            let error = url(bad).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
        let mut config = parse("");
        config.mqtt.url = "mqtts://x".into();
        config.mqtt.ca_file = "/nonexistent.pem".into();
        assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.ca_file = \"/nonexistent.pem\""));
        let mut config = parse("");
        config.mqtt.languages = vec!["en".into(), "es".into()];
        assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.languages = \"es\""));
        let mut config = parse("");
        config.mqtt.embedded.listen = "localhost".into();
        assert!(config.mqtt().unwrap_err().to_string().starts_with("mqtt.embedded.listen = \"localhost\""));
    }

    #[test]
    fn one_board_twice_is_refused_with_the_key() {
        let board = |name: &str, find: &str| format!("[[boards]]\nname = \"{name}\"\nprotocol = \"dgt\"\n{find}\n");
        for (text, message) in [
            (
                board("a", "port = \"/dev/ttyUSB0\"") + &board("b", "port = \"/dev/ttyUSB0\""),
                "boards[1].port = \"/dev/ttyUSB0\": a port no other board reads (board \"a\" reads it)",
            ),
            (
                board("a", "serial = \"3921\"") + &board("b", "serial = \"03921\""),
                "boards[1].serial = \"03921\": the serial number of another board (board \"a\" has \"3921\"",
            ),
        ] {
            let got = parse(&text).boards().unwrap_err().to_string();
            assert!(got.contains(message), "{got}");
        }
        let mut config = parse(&board("a", "port = \"/dev/a\""));
        config.broadcast.time_control = "ninety".into();
        let got = config.boards().unwrap_err().to_string();
        assert!(got.contains("broadcast.time_control = \"ninety\": a PGN TimeControl"), "{got}");
        let distinct = board("a", "serial = \"3921\"") + &board("b", "serial = \"39210\"");
        assert_eq!(parse(&distinct).boards().unwrap().len(), 2);
    }

    #[test]
    fn paired_boards_name_the_game_board_once() {
        let board = |name: &str, extra: &str| {
            format!("[[boards]]\nname = \"{name}\"\nprotocol = \"dgt\"\nport = \"/dev/{name}\"\n{extra}\n")
        };
        let ok = board("b7", "") + &board("b7-vi", "mirror_of = \"b7\"\ndiverge_after_ms = 15000");
        let boards = parse(&ok).boards().unwrap();
        let settings = PairSettings {
            game_board: "b7".into(),
            mirror_board: "b7-vi".into(),
            diverge_after: Duration::from_secs(15),
        };
        assert_eq!(boards[0].pair, Some(Pairing::Game(settings)));
        assert_eq!(boards[1].pair, Some(Pairing::MirrorOf { game: "b7".into() }));
        // The mirror may come first; the tolerance has a default.
        let first = board("b7-vi", "mirror_of = \"b7\"") + &board("b7", "");
        let boards = parse(&first).boards().unwrap();
        assert!(
            matches!(&boards[1].pair, Some(Pairing::Game(s)) if s.diverge_after == DEFAULT_DIVERGE_AFTER && s.mirror_board == "b7-vi")
        );
        for (text, message) in [
            (
                board("b7", "") + &board("vi", "mirror_of = \"b8\""),
                "boards[1].mirror_of = \"b8\": the name of a configured board, the sighted player's board where the game is played: none is called \"b8\" (the others are \"b7\")",
            ),
            (
                board("b7", "mirror_of = \"b7\""),
                "boards[0].mirror_of = \"b7\": the name of another board: the sighted player's board, where the game is played (a board cannot mirror itself)",
            ),
            (
                board("b7", "") + &board("vi", "mirror_of = \"b7\"") + &board("vi2", "mirror_of = \"b7\""),
                "boards[2].mirror_of = \"b7\": a board no other board mirrors: board \"vi\" mirrors it already (one visually impaired player's board per game)",
            ),
            (
                board("b7", "") + &board("vi", "mirror_of = \"b7\"") + &board("vi2", "mirror_of = \"vi\""),
                "boards[2].mirror_of = \"vi\": a board that is not itself a mirror: board \"vi\" mirrors \"b7\"; name the board the game is played on",
            ),
            (
                board("b7", "diverge_after_ms = 15000"),
                "boards[0].diverge_after_ms = 15000: nothing on this board: it belongs with mirror_of",
            ),
            (
                board("b7", "") + &board("vi", "mirror_of = \"b7\"\ndiverge_after_ms = 0"),
                "boards[1].diverge_after_ms = 0: 500 to 600000 milliseconds",
            ),
        ] {
            let got = parse(&text).boards().unwrap_err().to_string();
            assert!(got.starts_with(message), "{got}\nwanted {message}");
        }
    }

    #[test]
    fn names_that_cannot_be_file_names_are_refused_with_the_key() {
        let board = |extra: &str| format!("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n{extra}");
        let long = "x".repeat(250);
        for (extra, message) in [
            (board("event = \"a\\u0000b\"\n"), "boards[0].event = \"a\\0b\": a name without control characters"),
            (board(&format!("board = \"{long}\"\n")), "(250 characters): a name of at most 100 characters"),
            (
                format!(
                    "{}[[boards]]\nname = \"b/1\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nboard = \"2\"\n",
                    board("")
                )
                .replace("\"b1\"", "\"b-1\""),
                "boards[1].name = \"b/1\": a name whose capture files differ from board \"b-1\"'s",
            ),
        ] {
            let message_got = parse(&extra).boards().unwrap_err().to_string();
            assert!(message_got.contains(message), "{message_got}");
            assert!(message_got.len() < 400, "the name is not echoed whole: {message_got}");
        }
        let mut config = parse(&board(""));
        config.broadcast.round = long;
        assert!(config.boards().unwrap_err().to_string().starts_with("broadcast.round = \"xxxx"));
        // Ordinary names, and names made safe where they become paths.
        let ok = parse(&board("event = \"Open A\"\nround = \"Round 3.1\"\nboard = \"Ålesund\"\n"));
        assert_eq!(ok.boards().unwrap()[0].path.event, "Open-A");
        assert!(parse(&board("event = \"..\"\nboard = \"../../x\"\n")).boards().is_ok());
    }

    #[test]
    fn the_clock_display_is_off_unless_a_dgt_board_opts_in() {
        let board = |protocol: &str, extra: &str| {
            parse(&format!("[[boards]]\nname = \"b1\"\nprotocol = \"{protocol}\"\nport = \"/dev/a\"\n{extra}"))
        };
        assert_eq!(board("dgt", "").boards().unwrap()[0].clock_display, ClockDisplaySettings::default());
        let moves = board("dgt", "clock_display = \"moves\"\n");
        assert_eq!(moves.boards().unwrap()[0].clock_display.mode, ClockDisplayMode::Moves);
        let tuned =
            board("dgt", "clock_display = \"moves\"\nclock_display_show_ms = 3000\nclock_display_min_left_s = 30\n");
        let tuned = tuned.boards().unwrap()[0].clock_display;
        assert_eq!((tuned.show_for, tuned.min_remaining), (Duration::from_secs(3), Duration::from_secs(30)));
        for (protocol, extra, message) in [
            (
                "dgt",
                "clock_display = \"on\"\n",
                "boards[0].clock_display = \"on\": \"off\" (only the times) or \"moves\"",
            ),
            (
                "millennium",
                "clock_display = \"moves\"\n",
                "boards[0].clock_display = \"moves\": \"off\": a millennium board",
            ),
            ("dgt", "clock_display_show_ms = 100\n", "boards[0].clock_display_show_ms = 100: 500 to 10000"),
            ("dgt", "clock_display_min_left_s = 7200\n", "boards[0].clock_display_min_left_s = 7200: 0 to 3600"),
        ] {
            let error = board(protocol, extra).boards().unwrap_err().to_string();
            assert!(error.starts_with(message), "{error}");
        }
    }

    #[test]
    fn broadcast_pairings_give_boards_their_players_and_a_bad_file_is_refused_with_its_line() {
        let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pairings/ch-rus-hl-w-2012-round4.trf");
        let mut config = parse(
            "[[boards]]\nname = \"board-1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\nwhite = \"Someone\"\n\
             [[boards]]\nname = \"top\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nwhite = \"Kept\"\n",
        );
        config.broadcast.round = "4".into();
        config.broadcast.pairings = fixture.into();
        let mut boards = config.boards().unwrap();
        let unplaced = config.apply_pairings(&mut boards).unwrap();
        let tag = |b: &Board, name: &str| b.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        assert_eq!(tag(&boards[0], "White").as_deref(), Some("Kovanova,B"));
        assert_eq!(tag(&boards[0], "BlackFideId").as_deref(), Some("4195752"));
        assert_eq!(tag(&boards[0], "WhiteFed"), None, "an empty field sets no tag");
        assert_eq!(tag(&boards[1], "White").as_deref(), Some("Kept"), "a board without a number keeps its players");
        assert_eq!(unplaced.len(), 15);
        assert_eq!(unplaced[0], "round 4 board 2");

        let dir = std::env::temp_dir().join(format!("boardcast-config-pairings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.trf");
        let text = std::fs::read_to_string(fixture).unwrap().replacen("2447", "24x7", 1);
        std::fs::write(&bad, text).unwrap();
        config.broadcast.pairings = bad.clone();
        let error = config.apply_pairings(&mut boards).unwrap_err().to_string();
        assert!(error.starts_with("broadcast.pairings = \""), "{error}");
        assert!(error.contains("line 7: rating (columns 49-52) \"24x7\""), "{error}");
        config.broadcast.pairings = fixture.into();
        config.broadcast.round = "9".into();
        let mut boards = config.boards().unwrap();
        let error = config.apply_pairings(&mut boards).unwrap_err().to_string();
        assert!(error.contains("no pairings for round \"9\" (rounds 1 to 4)"), "{error}");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn boards_are_published_under_their_event_round_and_label() {
        let mut config = parse(
            "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n\
             [[boards]]\nname = \"b2\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nround = \"3\"\nboard = \"1\"\n",
        );
        config.broadcast.event = "Open A".into();
        config.broadcast.round = "2".into();
        let boards = config.boards().unwrap();
        assert_eq!(boards[0].path, BoardPath::new("Open A", "2", "b1"));
        assert_eq!(boards[1].path, BoardPath::new("Open A", "3", "1"));
        let clash = parse(
            "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\nboard = \"7\"\n\
             [[boards]]\nname = \"b2\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nboard = \"7\"\n",
        );
        assert!(clash.boards().unwrap_err().to_string().starts_with("boards[1].board = \"7\": a label no other board"));
    }

    #[test]
    fn speech_commands_languages_and_boards_are_checked() {
        assert_eq!(parse("").speech().unwrap(), None, "off by default");
        let boards = "[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\n\
                      [[boards]]\nname = \"b2\"\nprotocol = \"dgt\"\nport = \"/dev/b\"\nspeech_language = \"nl\"\n";
        let with = |change: &dyn Fn(&mut SpeechConfig)| {
            let mut config = parse(boards);
            config.speech.enabled = true;
            change(&mut config.speech);
            config
        };
        let config = with(&|_| {});
        let speech = config.speech().unwrap().unwrap();
        assert_eq!(speech.command, ["espeak-ng", "-v", "de"]);
        assert_eq!(speech.timeout, Duration::from_secs(10));
        let boards = config.boards().unwrap();
        assert_eq!(speech.language_of(&boards[0]), Some(Language::De));
        assert_eq!(speech.language_of(&boards[1]), Some(Language::Nl), "a board's own language wins");
        let only_b2 = with(&|s| s.boards = vec!["b2".into()]).speech().unwrap().unwrap();
        assert_eq!(only_b2.language_of(&boards[0]), None, "boards not named stay silent");
        for (change, message) in [
            (
                &(|s: &mut SpeechConfig| s.command = Vec::new()) as &dyn Fn(&mut SpeechConfig),
                "speech.command = []: a program and its arguments",
            ),
            (&|s| s.command = vec![" ".into()], "speech.command = [\" \"]: a program"),
            (&|s| s.language = "german".into(), "speech.language = \"german\": one of \"en\""),
            (&|s| s.boards = vec!["b3".into()], "speech.boards[0] = \"b3\": the name of a configured board"),
            (&|s| s.max_queue = 0, "speech.max_queue = 0: at least 1"),
            (&|s| s.timeout_ms = 0, "speech.timeout_ms = 0: at least 100 milliseconds"),
        ] {
            let got = with(change).speech().unwrap_err().to_string();
            assert!(got.starts_with(message), "{got}");
        }
        let bad_board =
            parse("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"/dev/a\"\nspeech_language = \"xx\"\n");
        let got = bad_board.boards().unwrap_err().to_string();
        assert!(got.starts_with("boards[0].speech_language = \"xx\": one of"), "{got}");
    }

    #[test]
    fn an_unknown_family_is_answered_with_every_live_family() {
        assert_eq!(live_families(), r#""dgt", "millennium", "certabo" or "sentio""#);
    }

    #[test]
    fn lichess_rounds_urls_and_intervals_are_checked() {
        assert_eq!(parse("").lichess().unwrap(), None);
        let with = |rounds: &[(&str, &str)]| {
            let mut config = parse("");
            config.lichess.rounds = rounds.iter().map(|(r, id)| ((*r).to_owned(), (*id).to_owned())).collect();
            config
        };
        let ok = with(&[("1", "abcdEF12"), ("Open B/1", "zyxwvu98")]).lichess().unwrap().unwrap();
        assert_eq!(ok.url, "https://lichess.org");
        assert_eq!(ok.interval, Duration::from_millis(2000));
        assert_eq!(ok.round_id("Open A", "1"), Some("abcdEF12"));
        assert_eq!(ok.round_id("Open B", "1"), Some("zyxwvu98"));
        assert_eq!(ok.round_id("Open A", "2"), None);
        let bad_id = with(&[("1", "abc")]).lichess().unwrap_err().to_string();
        assert!(bad_id.starts_with("lichess.rounds.\"1\" = \"abc\": the lichess round id"), "{bad_id}");
        let mut bad_url = with(&[("1", "abcdefgh")]);
        bad_url.lichess.url = "lichess.org".into();
        let got = bad_url.lichess().unwrap_err().to_string();
        assert!(got.starts_with("lichess.url = \"lichess.org\": an https://"), "{got}");
        let mut bad_interval = with(&[("1", "abcdefgh")]);
        bad_interval.lichess.interval_ms = 0;
        let got = bad_interval.lichess().unwrap_err().to_string();
        assert!(got.starts_with("lichess.interval_ms = 0: at least 100"), "{got}");
        // The configuration says where the token is, never what it is.
        let debug = format!("{:?}", parse("").lichess);
        assert!(debug.contains("token_file"), "{debug}");
    }

    #[test]
    fn settings_out_of_range_say_what_is_accepted() {
        let mut config = parse("");
        config.reconstruction.settle_ms = 0;
        assert_eq!(
            config.reconstructor().unwrap_err().to_string(),
            "reconstruction.settle_ms = 0: a positive number of milliseconds"
        );
        let mut config = parse("");
        config.link.silent_ms = 1000;
        assert!(
            config
                .link()
                .unwrap_err()
                .to_string()
                .starts_with("link.silent_ms = 1000: more than link.keepalive_ms (2000)")
        );
    }
}
