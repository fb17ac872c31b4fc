//! `[[boards]]` and `[discovery]`: each board's family, where it is (a port,
//! a serial number found on any port, or a Bluetooth LE address or name),
//! its players and round, its
//! clock and lights, and its pair (appendix D); the round's pairings
//! applied to the boards.

use super::{Config, ConfigError, error, parse_language, quoted};
use boardcast_core::{
    game::{Tempo, TimeControl},
    names,
    pair::{DEFAULT_DIVERGE_AFTER, PairSettings},
    pairings::{Pairings, board_number},
    protocol::dgt::display::{ClockDisplayMode, ClockDisplaySettings},
    protocol::{Protocol, names_of},
    publish::{render::Language, topics::BoardPath},
    reconstruct::{RotatedBoard, WhiteClock},
    session::LightsMode,
};
use serde::Deserialize;
use std::{path::PathBuf, time::Duration};

/// `[discovery]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoveryConfig {
    /// Devices to probe besides the machine's serial ports.
    pub extra_ports: Vec<PathBuf>,
}

/// One `[[boards]]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    /// How outputs and logs name the board.
    pub name: String,
    /// The board's protocol (`dgt`); may be left out for a Bluetooth LE
    /// board configured by the name it advertises (`Chessnut Air`).
    pub protocol: Option<String>,
    /// The device to open.
    pub port: Option<PathBuf>,
    /// A Bluetooth LE board's address (`C0:FF:EE:00:00:01`) or the name it
    /// advertises.
    pub bluetooth: Option<String>,
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
    /// Its calibration file (Certabo): as configured, or
    /// `calibration-<name>.json` beside the state file.
    pub calibration: Option<PathBuf>,
    /// The language its moves are announced in, if not `speech.language`.
    pub speech_language: Option<Language>,
    /// Its part in a pair of boards for a visually impaired player, if any.
    pub pair: Option<Pairing>,
    /// Assigned in the operator console (a board of the state file), not
    /// configured: the console may un-assign it.
    pub assigned: bool,
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
    /// Reach this Bluetooth LE board through BlueZ.
    Bluetooth(BluetoothTarget),
}

/// Which Bluetooth LE board: by address, or by the name it advertises.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BluetoothTarget {
    /// Its address, upper case (`C0:FF:EE:00:00:01`).
    Address(String),
    /// The name it advertises (`Chessnut Air`), matched whole, ignoring
    /// case.
    Name(String),
}

impl BluetoothTarget {
    /// An address when `text` is six pairs of hex digits joined by colons,
    /// otherwise a name.
    pub fn parse(text: &str) -> Self {
        let text = text.trim();
        let parts: Vec<&str> = text.split(':').collect();
        if parts.len() == 6 && parts.iter().all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit())) {
            Self::Address(text.to_ascii_uppercase())
        } else {
            Self::Name(text.to_owned())
        }
    }

    /// Whether two targets stand for the same board.
    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Address(a), Self::Address(b)) => a == b,
            (Self::Name(a), Self::Name(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        }
    }
}

impl std::fmt::Display for BluetoothTarget {
    /// `C0:FF:EE:00:00:01`, or `"Chessnut Air"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Address(address) => f.write_str(address),
            Self::Name(name) => write!(f, "{name:?}"),
        }
    }
}

/// A board's tag, or `""`.
fn tag_of(board: &Board, name: &str) -> String {
    board.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_default()
}

/// How a board's keys are named in messages: `boards[2].port` (a board
/// of the state file: `<file> boards[0].port`).
pub(super) struct BoardKeys(pub(super) String);

impl BoardKeys {
    /// The keys of the configuration's board `index`.
    fn nth(index: usize) -> Self {
        Self(format!("boards[{index}]"))
    }

    fn key(&self, name: &str) -> String {
        format!("{}.{name}", self.0)
    }
}

/// The names of the board families read live, quoted, for an error:
/// `"dgt", "millennium", … or "chessup"`.
pub(super) fn live_families() -> String {
    let names: Vec<String> = Protocol::LIVE.into_iter().map(|p| format!("{:?}", p.name())).collect();
    match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The board's family, and the keys that only some families take. A
/// Bluetooth LE board configured by name may leave `protocol` out: the
/// family is the one whose boards advertise such a name.
fn protocol_of(keys: &BoardKeys, b: &BoardConfig) -> Result<Protocol, ConfigError> {
    let Some(text) = &b.protocol else {
        return protocol_from_name(keys, b);
    };
    let protocol = text.parse::<Protocol>().ok().filter(|p| *p != Protocol::EVENTS).ok_or_else(|| {
        error(
            keys.key("protocol"),
            &format!("{text:?}"),
            &format!("{} (the board families this daemon reads live)", live_families()),
        )
    })?;
    let family = protocol.family().expect("`events` is refused above");
    if b.bluetooth.is_some() && family.bluetooth.is_none() {
        return Err(error(
            keys.key("bluetooth"),
            &quoted(b.bluetooth.as_deref().unwrap_or_default()),
            &format!(
                "port = \"/dev/…\": {protocol} boards are read on a serial port (USB, or Bluetooth Classic through /dev/rfcomm…); \
                 only {} boards speak Bluetooth LE",
                names_of(|f| f.bluetooth.is_some())
            ),
        ));
    }
    if !family.on_serial && b.bluetooth.is_none() {
        return Err(error(
            keys.key("protocol"),
            &format!("{text:?}"),
            &format!(
                "a board configured with bluetooth = \"C0:FF:EE:00:00:01\" (its address) or the name it advertises, \
                 in place of port or serial: {protocol} boards speak Bluetooth LE, not on a serial port \
                 (`boardcast list-ports` shows the boards in range; docs/boards.md)"
            ),
        ));
    }
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

/// The family of a board configured without `protocol`: only a Bluetooth
/// LE board's advertised name can say it.
fn protocol_from_name(keys: &BoardKeys, b: &BoardConfig) -> Result<Protocol, ConfigError> {
    let missing = |why: &str| error(keys.key("protocol"), "(missing)", why);
    let Some(target) = &b.bluetooth else {
        return Err(missing(&format!("one of {} (the board's family)", live_families())));
    };
    let BluetoothTarget::Name(name) = BluetoothTarget::parse(target) else {
        return Err(missing(&format!(
            "the board's family, one of {}: an address does not say which (`boardcast list-ports` shows it)",
            names_of(|f| f.bluetooth.is_some())
        )));
    };
    let lower = name.to_lowercase();
    let family = boardcast_core::protocol::FAMILIES
        .into_iter()
        .find(|f| f.bluetooth.as_ref().is_some_and(|ble| lower.contains(&ble.name_contains.to_lowercase())))
        .ok_or_else(|| {
            missing(&format!(
                "the board's family, one of {}: the name {} does not say which",
                names_of(|f| f.bluetooth.is_some()),
                quoted(&name)
            ))
        })?;
    Ok(family.protocol())
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
    if let Some(target) = &b.bluetooth {
        for (key, given) in [("port", b.port.is_some()), ("serial", b.serial.is_some())] {
            if given {
                return Err(error(
                    keys.key(key),
                    "(given with bluetooth)",
                    "nothing: a board is found either by bluetooth or by port or serial; remove one of them",
                ));
            }
        }
        let target = BluetoothTarget::parse(target);
        if let BluetoothTarget::Name(name) = &target
            && name.is_empty()
        {
            return Err(error(
                keys.key("bluetooth"),
                "\"\"",
                "the board's address (\"C0:FF:EE:00:00:01\") or the name it advertises (`boardcast list-ports`)",
            ));
        }
        if let Some(other) =
            before.iter().find(|other| matches!(&other.find, FindBoard::Bluetooth(t) if t.same(&target)))
        {
            return Err(error(
                keys.key("bluetooth"),
                &quoted(&target.to_string()),
                &format!("a Bluetooth board no other board reads (board {:?} reads it)", other.name),
            ));
        }
        return Ok(FindBoard::Bluetooth(target));
    }
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
                "port = \"/dev/…\", serial = \"…\" (the board's serial number) or bluetooth = \"…\" (a Bluetooth LE board's address or name)",
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

impl Config {
    /// The boards, checked: names unique and non-empty, a known protocol,
    /// and exactly one of `port`, `serial` and `bluetooth`.
    ///
    /// # Errors
    ///
    /// The first value that is not accepted.
    pub fn boards(&self) -> Result<Vec<Board>, ConfigError> {
        let mut boards: Vec<Board> = Vec::new();
        for (i, b) in self.boards.iter().enumerate() {
            let board = self.board(&BoardKeys::nth(i), b, &boards)?;
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
            let keys = BoardKeys::nth(i);
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
    pub(super) fn board(&self, keys: &BoardKeys, b: &BoardConfig, before: &[Board]) -> Result<Board, ConfigError> {
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
            // A Certabo board without one has a file of its own beside the
            // state file, which the console's Calibrate writes.
            calibration: b.calibration.clone().or_else(|| {
                protocol.features().calibration.then(|| {
                    let dir = self.hall.state_file.parent().unwrap_or_else(|| std::path::Path::new(""));
                    dir.join(format!("calibration-{}.json", b.name))
                })
            }),
            speech_language: b
                .speech_language
                .as_deref()
                .map(|code| parse_language(&keys.key("speech_language"), code))
                .transpose()?,
            pair: None,
            assigned: false,
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
}
