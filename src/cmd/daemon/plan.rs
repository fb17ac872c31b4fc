//! What the daemon will do, checked before anything starts: the
//! configuration turned into a [`Plan`] in one place, which `run` and
//! `demo` start from and `config check` describes (so the check refuses
//! exactly what `run` would refuse, and says what `run` would build).

use std::{path::PathBuf, time::Duration};

use anyhow::{anyhow, bail};

use boardcast::{
    accounts::Role,
    config::{
        Analysis, Board, BrokerChoice, Config, ConfigError, EmbeddedKind, FindBoard, Http, Lichess, LiveChess, Mqtt,
        Pairing, Speech, StateFile, StateOrConfig,
    },
    shell::lichess::Token,
};
use boardcast_core::{protocol::link::LinkConfig, reconstruct::ReconstructorConfig};

/// Everything the daemon will do, checked before anything starts.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub(crate) boards: Vec<Board>,
    pub(crate) reconstruction: ReconstructorConfig,
    pub(crate) link: LinkConfig,
    pub(crate) reconnect_max: Duration,
    pub(crate) extra_ports: Vec<PathBuf>,
    pub(crate) recording: Option<PathBuf>,
    pub(crate) pgn_dir: PathBuf,
    /// `None`: no MQTT feed (`mqtt.enabled = false`).
    pub(crate) mqtt: Option<Mqtt>,
    /// The operator key file (`[operator] key_file`).
    pub(crate) key_file: PathBuf,
    /// `None`: no display pages (`http.enabled = false`).
    pub(crate) http: Option<Http>,
    /// How far delivered PGN (HTTP, lichess) is behind the boards: the
    /// public tree's delay (`mqtt.public_delay_s`).
    pub(crate) public_delay: Duration,
    /// `None`: nothing pushed to lichess (no round has an id).
    pub(crate) lichess: Option<(Lichess, Token)>,
    /// `None`: no board speaks (`speech.enabled = false`).
    pub(crate) speech: Option<Speech>,
    /// The pairings file (`broadcast.pairings`), if one is given.
    pub(crate) pairings: Option<PathBuf>,
    /// Pairings of the round no board here stands for (the log and `config
    /// check` say so).
    pub(crate) unplaced: Vec<String>,
    /// The broker's accounts, with which the operator console logs in
    /// (`mqtt.embedded.accounts_file`, whatever the broker).
    pub(crate) accounts_file: PathBuf,
    /// What the managed broker lets anonymous clients read (`mqtt.embedded.anonymous`).
    pub(crate) anonymous: String,
    /// `None`: the LiveChess API is not served (`livechess.enabled = false`).
    pub(crate) livechess: Option<LiveChess>,
    /// Where the event is played (`[broadcast] site`), for the LiveChess
    /// tournaments' location.
    pub(crate) site: Option<String>,
    /// `None`: no engine analysis (`analysis.enabled = false`).
    pub(crate) analysis: Option<Analysis>,
    /// Boards not configured: looked for, assigned, kept in the state file.
    pub(crate) hall: Hall,
}

/// What the daemon needs to look for boards not configured and to assign
/// them (`[hall]`).
#[derive(Clone, Debug)]
pub(crate) struct Hall {
    /// The configuration, which an assigned board is checked against and
    /// takes its defaults from.
    pub(crate) config: Config,
    /// The state file (`hall.state_file`).
    pub(crate) state_file: PathBuf,
    /// What it holds now.
    pub(crate) state: StateFile,
    /// The names of the boards it added.
    pub(crate) assigned: Vec<String>,
    /// How often unheld ports are asked what is behind them; zero: never.
    pub(crate) probe_interval: Duration,
}

impl Plan {
    /// The plan for a configuration read from `sources`.
    pub(crate) fn from_config(config: &Config, sources: &str) -> anyhow::Result<Self> {
        let in_sources = |e: ConfigError| anyhow!("{e} (configuration read from {sources})");
        let state_file = config.hall.state_file.clone();
        let state = StateFile::read(&state_file)?;
        let mut boards = config.boards_with(&state, &state_file).map_err(|e| match e {
            StateOrConfig::Config(e) => in_sources(e),
            StateOrConfig::State(e) => anyhow!(e),
        })?;
        let assigned = state.boards.iter().map(|b| b.name.clone()).collect();
        let unplaced = config.apply_pairings(&mut boards).map_err(in_sources)?;
        // A hall PC may start with no board at all when it looks for boards
        // and has a feed to offer them on: the operator assigns every board
        // in the console.
        let discovers = config.hall.probe_interval_s > 0 && config.mqtt.enabled;
        if boards.is_empty() && !discovers {
            bail!(
                "no boards configured (read from {sources}) or assigned (in {}): add a [[boards]] table with name, protocol and port or serial (`boardcast config default` shows one), or let the daemon look for boards to assign in the console (hall.probe_interval_s > 0, with mqtt.enabled)",
                state_file.display()
            );
        }
        Ok(Self {
            hall: Hall {
                config: config.clone(),
                state_file,
                state,
                assigned,
                probe_interval: Duration::from_secs(config.hall.probe_interval_s),
            },
            boards,
            reconstruction: config.reconstructor().map_err(in_sources)?,
            link: config.link().map_err(in_sources)?,
            reconnect_max: Duration::from_millis(config.link.reconnect_max_ms),
            extra_ports: config.discovery.extra_ports.clone(),
            recording: config.recording.enabled.then(|| config.recording.dir.clone()),
            pgn_dir: config.pgn.dir.clone(),
            mqtt: if config.mqtt.enabled {
                Some(with_password_file(config.mqtt().map_err(in_sources)?)?)
            } else {
                None
            },
            key_file: config.operator.key_file.clone(),
            http: config.http().map_err(in_sources)?,
            public_delay: Duration::from_secs(config.mqtt.public_delay_s),
            lichess: match config.lichess().map_err(in_sources)? {
                Some(lichess) => {
                    let token = boardcast::shell::lichess::read_token(&lichess.token_file, &lichess.url)
                        .map_err(|e| anyhow!("{e} (configuration read from {sources})"))?;
                    Some((lichess, token))
                }
                None => None,
            },
            speech: config.speech().map_err(in_sources)?,
            pairings: (!config.broadcast.pairings.as_os_str().is_empty()).then(|| config.broadcast.pairings.clone()),
            unplaced,
            accounts_file: config.mqtt.embedded.accounts_file.clone(),
            anonymous: config.mqtt.embedded.anonymous.clone(),
            livechess: config.livechess().map_err(in_sources)?,
            site: Some(config.broadcast.site.trim().to_owned()).filter(|s| !s.is_empty()),
            analysis: config.analysis().map_err(in_sources)?,
        })
    }
}

/// The MQTT settings with the password read from `[mqtt] password_file`,
/// when one is given.
fn with_password_file(mut mqtt: Mqtt) -> anyhow::Result<Mqtt> {
    if let Some(file) = &mqtt.password_file {
        let text =
            std::fs::read_to_string(file).map_err(|e| anyhow!("reading mqtt.password_file {}: {e}", file.display()))?;
        let password = text.lines().next().unwrap_or_default().to_owned();
        match &mut mqtt.credentials {
            Some((_, p)) => *p = password,
            None => bail!("mqtt.password_file is given without mqtt.username: name the account too"),
        }
    }
    Ok(mqtt)
}

impl Plan {
    /// What `run` would build, one line per part, as `config check` says it.
    pub(crate) fn describe(&self) -> anyhow::Result<Vec<String>> {
        let mut lines: Vec<String> = self
            .boards
            .iter()
            .map(|b| match self.hall.assigned.contains(&b.name) {
                true => format!("{} (assigned in the console)", describe_board(b)),
                false => describe_board(b),
            })
            .collect();
        lines.push(self.describe_hall());
        if !self.extra_ports.is_empty() {
            let extra: Vec<String> = self.extra_ports.iter().map(|p| p.display().to_string()).collect();
            lines.push(format!("also probed for boards: {}", extra.join(", ")));
        }
        lines.push(String::new());
        lines.push(match &self.recording {
            Some(dir) => format!("captures: {}", folder(dir)),
            None => "captures: not recorded (recording.enabled = false)".to_owned(),
        });
        lines.push(format!("PGN: {}", folder(&self.pgn_dir)));
        if let Some(mqtt) = &self.mqtt {
            lines.push(self.describe_mqtt(mqtt)?);
        }
        lines.extend(self.describe_delivery());
        lines.extend(self.describe_pairings());
        lines.extend(self.describe_speech());
        lines.push(self.describe_analysis());
        lines.push(describe_judging(&self.reconstruction));
        Ok(lines)
    }

    fn describe_mqtt(&self, mqtt: &Mqtt) -> anyhow::Result<String> {
        let embedded = match &mqtt.broker {
            BrokerChoice::External(url) => return Ok(format!("MQTT: the feed goes to {}", url.url)),
            BrokerChoice::Embedded(embedded) => embedded,
        };
        let mosquitto = match embedded.kind {
            EmbeddedKind::Builtin => None,
            _ => boardcast::shell::mqtt::mosquitto::find_binary(embedded.mosquitto_bin.as_deref()),
        };
        let where_ = format!(
            "{}{}{}",
            embedded.listen,
            embedded.ws_listen.map(|ws| format!(", WebSocket {ws}")).unwrap_or_default(),
            embedded
                .tls
                .as_ref()
                .map(|t| format!(" (TLS only, certificate {})", t.cert_file.display()))
                .unwrap_or_default()
        );
        Ok(match mosquitto {
            Some(binary) => {
                let accounts = crate::cmd::accounts::load(&embedded.accounts_file)?;
                format!(
                    "MQTT: the daemon runs Mosquitto ({}) on {where_}; {} account(s) in {}; anonymous clients: {}",
                    binary.display(),
                    accounts.len(),
                    embedded.accounts_file.display(),
                    self.anonymous
                )
            }
            None if embedded.kind == EmbeddedKind::Mosquitto => {
                "MQTT: WARNING: broker = \"mosquitto\" but Mosquitto is not installed: the daemon will not start"
                    .to_owned()
            }
            None => format!(
                "MQTT: WARNING: the built-in broker on {where_}: NO access control, anyone who reaches it can publish fake moves (install Mosquitto)"
            ),
        })
    }

    /// Who may log in to the operator console, and what they may do.
    fn describe_console(&self, http: &Http) -> String {
        let accounts = crate::cmd::accounts::load(&self.accounts_file).unwrap_or_default();
        let count = |role: Role| accounts.iter().filter(|a| a.role == role).count();
        let live = if http.console.live_may_change {
            "change games too (http.live_may_change = true)"
        } else {
            "acknowledge alerts only (http.live_may_change = false)"
        };
        format!(
            "operator console: http://{}/console.html, log-in with the accounts of {} ({} operator, {} live; live accounts {live}); sessions end after {} min unused or {} h (http.session_idle_min, session_max_h)",
            http.listen,
            self.accounts_file.display(),
            count(Role::Operator),
            count(Role::Live),
            http.console.idle.as_secs() / 60,
            http.console.max.as_secs() / 3600,
        )
    }

    /// The display pages, PGN over HTTP and lichess.
    fn describe_delivery(&self) -> Vec<String> {
        let mut lines = vec![match &self.http {
            Some(http) if http.listen.ip().is_loopback() => {
                format!("display pages: http://{}/ (this machine only)", http.listen)
            }
            Some(http) => format!(
                "display pages: http://{}/ (reachable from the network: anyone there can open them; the broker decides what they read)",
                http.listen
            ),
            None => "display pages: not served (http.enabled = false)".to_owned(),
        }];
        if let Some(http) = &self.http {
            lines.push(self.describe_console(http));
        }
        lines.push(self.describe_livechess());
        let delay = match self.public_delay.as_secs() {
            0 => String::new(),
            s => format!(", {s} s behind the boards (mqtt.public_delay_s)"),
        };
        if let Some(http) = &self.http {
            lines.push(format!(
                "PGN over HTTP: http://{}/pgn/<event>/round-<round>/games.pgn, completed moves only{delay}",
                http.listen
            ));
        }
        lines.push(match &self.lichess {
            None => "lichess: nothing pushed (no round in [lichess.rounds])".to_owned(),
            Some((lichess, _)) => {
                let rounds: Vec<String> =
                    lichess.rounds.iter().map(|(round, id)| format!("round {round} → {id}")).collect();
                format!(
                    "lichess: {} pushed to {} at most every {} ms, completed moves only{delay}{}; token read from {}",
                    rounds.join(", "),
                    lichess.url,
                    lichess.interval.as_millis(),
                    if self.public_delay.is_zero() {
                        ""
                    } else {
                        " (leave each lichess round's Delay empty, or the games come twice as late: docs/delivery.md)"
                    },
                    lichess.token_file.display()
                )
            }
        });
        lines
    }

    /// The LiveChess API (docs/livechess.md).
    fn describe_livechess(&self) -> String {
        let Some(livechess) = &self.livechess else {
            return "LiveChess API: not served (livechess.enabled = false)".to_owned();
        };
        let writes = if livechess.writes(livechess.listen) {
            "setup and flip carried out (livechess.allow_writes)"
        } else if livechess.allow_writes {
            "setup and flip refused: writes are allowed on a loopback address only"
        } else {
            "read-only"
        };
        if livechess.listen.ip().is_loopback() {
            format!("LiveChess API: http://{}/api/v1.0/ (this machine only), {writes}", livechess.listen)
        } else {
            format!(
                "LiveChess API: WARNING: http://{}/api/v1.0/ is reachable from the network: anyone there reads the live, undelayed games (livechess.allow_remote = true), {writes}",
                livechess.listen
            )
        }
    }

    fn describe_pairings(&self) -> Vec<String> {
        let Some(file) = &self.pairings else { return Vec::new() };
        let tag = |board: &Board, name: &str| {
            board.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_else(|| "?".into())
        };
        let players: Vec<String> =
            self.boards.iter().map(|b| format!("{}: {} - {}", b.name, tag(b, "White"), tag(b, "Black"))).collect();
        let mut lines = vec![format!("pairings from {}: {}", file.display(), players.join("; "))];
        lines.extend(self.unplaced.iter().map(|u| format!("pairings: WARNING: no board here for the pairing of {u}")));
        lines
    }

    fn describe_speech(&self) -> Vec<String> {
        let Some(speech) = &self.speech else {
            return vec!["speech: nothing announced aloud (speech.enabled = false)".to_owned()];
        };
        self.boards
            .iter()
            .map(|board| match speech.language_of(board) {
                Some(language) => format!(
                    "speech: {} announces in {} with {:?} (the words as the last argument), at most {} waiting, {} ms each",
                    board.name,
                    language.code(),
                    speech.command,
                    speech.max_queue,
                    speech.timeout.as_millis()
                ),
                None => format!("speech: {} is silent (not in speech.boards)", board.name),
            })
            .collect()
    }
}

impl Plan {
    /// The state file and the boards it adds; looking for the others.
    fn describe_hall(&self) -> String {
        let file = std::path::absolute(&self.hall.state_file).unwrap_or_else(|_| self.hall.state_file.clone());
        let added = match self.hall.assigned.as_slice() {
            [] if self.boards.is_empty() => {
                "no board configured or assigned yet: every board is assigned in the console's hall".to_owned()
            }
            [] => "no board assigned yet".to_owned(),
            names => format!("adds board(s) {}", names.join(", ")),
        };
        let looking = match self.hall.probe_interval.as_secs() {
            0 => "boards not configured are not looked for (hall.probe_interval_s = 0)".to_owned(),
            s => format!(
                "serial ports no board holds are asked every {s} s for boards not configured, shown to operators in the console's hall to be assigned"
            ),
        };
        format!("state file: {} (hall.state_file): {added}; {looking}", file.display())
    }

    /// Engine analysis: which engine, how much of it, where it goes.
    fn describe_analysis(&self) -> String {
        let Some(analysis) = &self.analysis else {
            return "analysis: none (analysis.enabled = false)".to_owned();
        };
        if self.mqtt.is_none() {
            return "analysis: WARNING: enabled, but there is no feed to publish it on (mqtt.enabled = false): none"
                .to_owned();
        }
        let Some(engine) = analysis.find_engine() else {
            return format!("analysis: WARNING: {}: none (the rest runs as usual)", no_engine(analysis));
        };
        format!(
            "analysis: {} engine(s) {}, {} thread(s) and {} MiB hash each, {} per position (hung without bestmove after {} ms), on public/…/<board>/analysis no earlier than the position itself ({} s delay)",
            analysis.engines,
            engine.display(),
            analysis.threads,
            analysis.hash_mb,
            describe_budget(analysis.budget),
            analysis.deadline().as_millis(),
            self.public_delay.as_secs()
        )
    }
}

/// Why no engine is run, and what to do.
pub(crate) fn no_engine(analysis: &Analysis) -> String {
    match &analysis.engine {
        Some(path) => {
            format!("the engine {} (analysis.engine) is not there: install it or correct the path", path.display())
        }
        None => format!(
            "no engine found (stockfish is neither on PATH nor {}): `apt-get install stockfish`, or set analysis.engine",
            boardcast::config::DEBIAN_STOCKFISH
        ),
    }
}

fn describe_budget(budget: boardcast_core::analysis::uci::Budget) -> String {
    match budget {
        boardcast_core::analysis::uci::Budget::MoveTime { ms } => format!("{ms} ms"),
        boardcast_core::analysis::uci::Budget::Nodes { nodes } => format!("{nodes} nodes"),
    }
}

/// One board: where it is, its clock, Chess960, its pair.
fn describe_board(board: &Board) -> String {
    let found = match &board.find {
        FindBoard::Port(path) => format!("at {}", path.display()),
        FindBoard::Serial(serial) => format!("the board with serial number {serial}, wherever it is plugged in"),
        FindBoard::Bluetooth(target) => format!("Bluetooth LE {target}, through BlueZ"),
    };
    let chess960 = if board.chess960 { ", Chess960" } else { "" };
    let pair = match &board.pair {
        None => String::new(),
        Some(Pairing::MirrorOf { game }) => {
            format!("; mirrors the game of board {game} for a visually impaired player (publishes no game of its own)")
        }
        Some(Pairing::Game(pair)) => format!(
            "; mirrored by board {} (boards_diverge when a move is not copied within {} s)",
            pair.mirror_board,
            pair.diverge_after.as_secs_f64()
        ),
    };
    format!(
        "board {}: {} {found}; White's clock display: {}{chess960}{pair}",
        board.name,
        board.protocol.name(),
        format!("{:?}", board.white_clock).to_lowercase()
    )
}

fn describe_judging(reconstruction: &ReconstructorConfig) -> String {
    format!(
        "judging: settle {} ms, touch {} ms, out of sync after {} ms, result gesture held {} ms, \
         press grace {} ms, completion without a clock {} ms, fill in up to {} plies, turned board: {}",
        reconstruction.settle.as_millis(),
        reconstruction.touch_min.as_millis(),
        reconstruction.out_of_sync_after.as_millis(),
        reconstruction.gesture_hold.as_millis(),
        reconstruction.press_grace.as_millis(),
        reconstruction.quiet_completion.as_millis(),
        reconstruction.fill_in_plies,
        format!("{:?}", reconstruction.rotated_board).to_lowercase(),
    )
}

/// A folder and whether the daemon can write there.
fn folder(dir: &std::path::Path) -> String {
    let shown = dir.display();
    let absolute = std::path::absolute(dir).map(|p| p.display().to_string()).unwrap_or_else(|_| shown.to_string());
    // The nearest folder that exists is where the daemon would create it.
    let existing = dir.ancestors().find(|a| a.as_os_str().is_empty() || a.is_dir());
    let existing = existing.map(|a| if a.as_os_str().is_empty() { std::path::Path::new(".") } else { a });
    match existing {
        Some(parent) if parent == dir => match writable(dir) {
            true => absolute,
            false => format!("{absolute} (WARNING: not writable by this user)"),
        },
        Some(parent) if writable(parent) => format!("{absolute} (will be created)"),
        Some(parent) => {
            format!("{absolute} (WARNING: does not exist and {} is not writable by this user)", parent.display())
        }
        None => format!("{absolute} (WARNING: no part of it exists)"),
    }
}

fn writable(dir: &std::path::Path) -> bool {
    nix::unistd::access(dir, nix::unistd::AccessFlags::W_OK).is_ok()
}
