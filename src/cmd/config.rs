//! `boardcast config default` and `boardcast config check`: the built-in
//! defaults with every key explained, and the configuration the daemon
//! would run with, read and checked without starting it.

use std::{path::PathBuf, process::ExitCode};

use anyhow::{anyhow, bail};
use clap::{Args, Subcommand};

use boardcast::config::{DEFAULTS, FindBoard, Pairing};

use super::settings;

/// Shows or checks the configuration.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Prints the built-in defaults, every key explained: a starting point
    /// for your own file.
    Default,
    /// Reads the configuration as `boardcast run` would (defaults, then
    /// /etc/boardcast/boardcast.toml, then --config, then BOARDCAST__*
    /// variables), checks every value, and says what the daemon would do.
    /// Exits with status 2 and the first problem if something is wrong.
    Check {
        /// Your configuration file.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

pub(crate) fn run(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ConfigCommand::Default => {
            out!("{DEFAULTS}");
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Check { config } => check(config),
    }
}

fn check(file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let loaded = settings::load(file.as_deref())?;
    let sources = loaded.sources.join(", then ");
    let in_sources = |e: boardcast::config::ConfigError| anyhow!("{e} (configuration read from {sources})");
    let config = &loaded.config;
    let mut boards = config.boards().map_err(in_sources)?;
    let unplaced = config.apply_pairings(&mut boards).map_err(in_sources)?;
    let reconstruction = config.reconstructor().map_err(in_sources)?;
    config.link().map_err(in_sources)?;
    let lichess = config.lichess().map_err(in_sources)?;
    let speech = config.speech().map_err(in_sources)?;
    if let Some(lichess) = &lichess {
        boardcast::shell::lichess::read_token(&lichess.token_file, &lichess.url)
            .map_err(|e| anyhow!("{e} (configuration read from {sources})"))?;
    }
    // `run` refuses a configuration without boards; so does the check.
    if boards.is_empty() {
        bail!(
            "no boards configured (read from {sources}): add a [[boards]] table with name, protocol and port or serial; `boardcast config default` shows one"
        );
    }
    outln!("configuration read from {sources}: no problems found");
    outln!();
    for board in &boards {
        let found = match &board.find {
            FindBoard::Port(path) => format!("at {}", path.display()),
            FindBoard::Serial(serial) => format!("the board with serial number {serial}, wherever it is plugged in"),
        };
        let chess960 = if board.chess960 { ", Chess960" } else { "" };
        let pair = match &board.pair {
            None => String::new(),
            Some(Pairing::MirrorOf { game }) => {
                format!(
                    "; mirrors the game of board {game} for a visually impaired player (publishes no game of its own)"
                )
            }
            Some(Pairing::Game(pair)) => format!(
                "; mirrored by board {} (boards_diverge when a move is not copied within {} s)",
                pair.mirror_board,
                pair.diverge_after.as_secs_f64()
            ),
        };
        outln!(
            "board {}: {} {found}; White's clock display: {}{chess960}{pair}",
            board.name,
            board.protocol.name(),
            format!("{:?}", board.white_clock).to_lowercase()
        );
    }
    if !config.discovery.extra_ports.is_empty() {
        let extra: Vec<String> = config.discovery.extra_ports.iter().map(|p| p.display().to_string()).collect();
        outln!("also probed for boards: {}", extra.join(", "));
    }
    outln!();
    if config.recording.enabled {
        outln!("captures: {}", folder(&config.recording.dir));
    } else {
        outln!("captures: not recorded (recording.enabled = false)");
    }
    outln!("PGN: {}", folder(&config.pgn.dir));
    if config.mqtt.enabled {
        match config.mqtt().map_err(in_sources)?.broker {
            boardcast::config::BrokerChoice::External(url) => outln!("MQTT: the feed goes to {}", url.url),
            boardcast::config::BrokerChoice::Embedded(e) => {
                let mosquitto = match e.kind {
                    boardcast::config::EmbeddedKind::Builtin => None,
                    _ => boardcast::shell::mqtt::mosquitto::find_binary(e.mosquitto_bin.as_deref()),
                };
                let where_ = format!(
                    "{}{}{}",
                    e.listen,
                    e.ws_listen.map(|ws| format!(", WebSocket {ws}")).unwrap_or_default(),
                    e.tls
                        .as_ref()
                        .map(|t| format!(" (TLS only, certificate {})", t.cert_file.display()))
                        .unwrap_or_default()
                );
                match mosquitto {
                    Some(binary) => {
                        let accounts = super::accounts::load(&e.accounts_file)?;
                        outln!(
                            "MQTT: the daemon runs Mosquitto ({}) on {where_}; {} account(s) in {}; anonymous clients: {}",
                            binary.display(),
                            accounts.len(),
                            e.accounts_file.display(),
                            config.mqtt.embedded.anonymous
                        );
                    }
                    None if e.kind == boardcast::config::EmbeddedKind::Mosquitto => outln!(
                        "MQTT: WARNING: broker = \"mosquitto\" but Mosquitto is not installed: the daemon will not start"
                    ),
                    None => outln!(
                        "MQTT: WARNING: the built-in broker on {where_}: NO access control, anyone who reaches it can publish fake moves (install Mosquitto)"
                    ),
                }
            }
        }
    }
    match config.http().map_err(in_sources)? {
        Some(http) if http.listen.ip().is_loopback() => {
            outln!("display pages: http://{}/ (this machine only)", http.listen);
        }
        Some(http) => outln!(
            "display pages: http://{}/ (reachable from the network: anyone there can open them; the broker decides what they read)",
            http.listen
        ),
        None => outln!("display pages: not served (http.enabled = false)"),
    }
    match config.livechess().map_err(in_sources)? {
        None => outln!("LiveChess API: not served (livechess.enabled = false)"),
        Some(livechess) => {
            let writes = if livechess.writes(livechess.listen) {
                "setup and flip carried out (livechess.allow_writes)"
            } else if livechess.allow_writes {
                "setup and flip refused: writes are allowed on a loopback address only"
            } else {
                "read-only"
            };
            if livechess.listen.ip().is_loopback() {
                outln!("LiveChess API: http://{}/api/v1.0/ (this machine only), {writes}", livechess.listen);
            } else {
                outln!(
                    "LiveChess API: WARNING: http://{}/api/v1.0/ is reachable from the network: anyone there reads the live, undelayed games (livechess.allow_remote = true), {writes}",
                    livechess.listen
                );
            }
        }
    }
    let delay = match config.mqtt.public_delay_s {
        0 => String::new(),
        s => format!(", {s} s behind the boards (mqtt.public_delay_s)"),
    };
    if let Some(http) = config.http().map_err(in_sources)? {
        outln!(
            "PGN over HTTP: http://{}/pgn/<event>/round-<round>/games.pgn, completed moves only{delay}",
            http.listen
        );
    }
    match &lichess {
        None => outln!("lichess: nothing pushed (no round in [lichess.rounds])"),
        Some(lichess) => {
            let rounds: Vec<String> =
                lichess.rounds.iter().map(|(round, id)| format!("round {round} → {id}")).collect();
            outln!(
                "lichess: {} pushed to {} at most every {} ms, completed moves only{delay}{}; token read from {}",
                rounds.join(", "),
                lichess.url,
                lichess.interval.as_millis(),
                if config.mqtt.public_delay_s > 0 {
                    " (leave each lichess round's Delay empty, or the games come twice as late: docs/delivery.md)"
                } else {
                    ""
                },
                lichess.token_file.display()
            );
        }
    }
    if !config.broadcast.pairings.as_os_str().is_empty() {
        let tag = |board: &boardcast::config::Board, name: &str| {
            board.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).unwrap_or_else(|| "?".into())
        };
        let players: Vec<String> =
            boards.iter().map(|b| format!("{}: {} - {}", b.name, tag(b, "White"), tag(b, "Black"))).collect();
        outln!("pairings from {}: {}", config.broadcast.pairings.display(), players.join("; "));
        for unplaced in &unplaced {
            outln!("pairings: WARNING: no board here for the pairing of {unplaced}");
        }
    }
    match &speech {
        None => outln!("speech: nothing announced aloud (speech.enabled = false)"),
        Some(speech) => {
            for board in &boards {
                match speech.language_of(board) {
                    Some(language) => outln!(
                        "speech: {} announces in {} with {:?} (the words as the last argument), at most {} waiting, {} ms each",
                        board.name,
                        language.code(),
                        speech.command,
                        speech.max_queue,
                        speech.timeout.as_millis()
                    ),
                    None => outln!("speech: {} is silent (not in speech.boards)", board.name),
                }
            }
        }
    }
    outln!(
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
    );
    Ok(ExitCode::SUCCESS)
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
