//! `boardcast ctl`: operator commands to a running daemon, through its MQTT
//! broker (the same requests a control panel sends; docs/operator.md),
//! signed with the operator key the daemon made. Over TLS it shows the
//! broker a client certificate when one is given (`[mqtt] client_cert_file`
//! and `client_key_file`, or `--client-cert-file` and `--client-key-file`).

use std::{collections::BTreeMap, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand};
use serde_json::json;

use boardcast::{
    config::{self, BrokerChoice, BrokerUrl, MqttConfig, Scheme, TlsFiles},
    shell::mqtt::{ask, client::connect_options},
};
use boardcast_core::{
    operator::{Command, Reason},
    pairings::Pairings,
    publish::{commands::EVERY_BOARD, topics::Topics},
};

use super::settings;

/// Sends an operator command to the daemon reading BOARD and prints its
/// answer: exit status 0 when done (the PGN files hold it by then), 1 when
/// the daemon refused (the answer says why), 2 when it could not be asked. The broker and the daemon's
/// bridge id are taken from the configuration, as the daemon takes them;
/// so is the operator key that signs the command (`[operator] key_file`).
#[derive(Debug, Args)]
pub(crate) struct CtlArgs {
    /// The configuration file the daemon runs with (for its broker and
    /// bridge id).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The broker, e.g. mqtt://broker.hall:1883 (default: the
    /// configuration's).
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The daemon's bridge id (default: the configuration's, or this
    /// computer's name).
    #[arg(long, value_name = "ID")]
    bridge: Option<String>,
    /// The operator key file (default: the configuration's
    /// `[operator] key_file`, which the daemon creates).
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// The broker account to log in with (default: the configuration's
    /// `[mqtt] username`). With the daemon's own broker (Mosquitto) it must
    /// be an operator account (`boardcast accounts add NAME --role
    /// operator`).
    #[arg(long, value_name = "NAME")]
    user: Option<String>,
    /// A file whose first line is the account's password (default: the
    /// environment variable BOARDCAST_MQTT_PASSWORD, then the
    /// configuration's `[mqtt] password_file` or `password`).
    #[arg(long, value_name = "FILE")]
    password_file: Option<PathBuf>,
    /// The certificate (PEM) to show a broker that asks for one, over
    /// mqtts:// or wss:// (default: the configuration's `[mqtt]
    /// client_cert_file`). With --client-key-file.
    #[arg(long, value_name = "FILE")]
    client_cert_file: Option<PathBuf>,
    /// The certificate's private key (PEM; default: the configuration's
    /// `[mqtt] client_key_file`).
    #[arg(long, value_name = "FILE")]
    client_key_file: Option<PathBuf>,
    /// How long to wait for the answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    timeout_s: u64,
    /// The board's name. Without it, `next-round` goes to every board of
    /// the daemon (the other commands need a board).
    board: Option<String>,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Closes the game on the board (without a result if it has none); the
    /// board waits for the next game.
    NewGame,
    /// The board's next games are round ROUND; the game on it is closed.
    /// Without a board, every board's.
    NextRound {
        /// The round, e.g. 4.
        round: String,
        /// The round's pairings, read here: a FIDE tournament report
        /// (TRF16, as Swiss-Manager exports it) or a CSV with board, white
        /// and black columns (docs/delivery.md, "Pairings"). Each board gets
        /// the players of the pairing of its number: White, Black, their
        /// Elo, title, FIDE id and federation.
        #[arg(long, value_name = "FILE")]
        pairings: Option<PathBuf>,
    },
    /// Enters the result: 1-0, 0-1 or 1/2-1/2.
    Result {
        /// The result.
        result: String,
        /// Why: resignation, agreement, forfeit or arbiter.
        #[arg(long, default_value = "arbiter")]
        reason: String,
    },
    /// Takes back the last move (put the position back on the board too).
    TakeBack,
    /// Enters moves from the scoresheet, in SAN, from the game position.
    ///
    /// When an occupancy-only board's moves can be read more than one way
    /// (an ambiguous_moves alert), the first move of the right reading is
    /// enough: the moves the board showed after it follow.
    Moves {
        /// The moves, e.g. Nc3 e5 Nf3.
        #[arg(required = true)]
        san: Vec<String>,
    },
    /// The last promotion made this piece (an occupancy-only board records
    /// a queen).
    Promote {
        /// queen, rook, bishop or knight.
        piece: String,
    },
    /// Goes on from this position (FEN), as a new game record.
    Position {
        /// The position.
        fen: String,
    },
    /// The board is turned the other way.
    Flip,
    /// Sets the players.
    Players {
        /// White.
        white: String,
        /// Black.
        black: String,
    },
    /// Sets a PGN tag (an empty value removes it).
    Tag {
        /// The tag's name, e.g. Annotator.
        name: String,
        /// Its value.
        value: String,
    },
    /// Acknowledges an alert (its game and seq, as published).
    Ack {
        /// The alert's game.
        game: u32,
        /// The alert's seq.
        seq: u64,
    },
    /// Shows a message (at most 8 characters) on the board's DGT 3000 clock
    /// for a moment, when no player is short of time.
    ClockText {
        /// The message.
        text: String,
    },
    /// The board shows itself, to be found in the hall: a Millennium or
    /// Certabo board lights every LED for 5 s, a DGT board shows TEXT on its
    /// DGT 3000 clock; other boards refuse.
    Identify {
        /// What a DGT 3000 shows (at most 8 characters; default HERE).
        text: Option<String>,
    },
    /// A Certabo board learns its pieces from its next reports (they must
    /// stand in the start position), uses them at once, and the daemon
    /// writes the board's calibration file; other boards refuse.
    Calibrate,
    /// Assigns a board the daemon found plugged in but not configured (the
    /// console's Assign), named as the board given before the command.
    AssignBoard(Box<AssignArgs>),
    /// Un-assigns a board assigned in the console: it is no longer read,
    /// its games and captures are kept, it is offered again as "not
    /// assigned" (a board of the configuration file is refused).
    Unassign,
}

/// `assign-board`'s arguments (boxed: the other commands are small).
#[derive(Debug, clap::Args)]
struct AssignArgs {
    /// Its family: dgt, millennium, certabo, …
    #[arg(long)]
    family: String,
    /// The device it was found on (for a board without a serial number).
    #[arg(long, value_name = "DEVICE", required_unless_present = "serial")]
    port: Option<String>,
    /// Its serial number (a DGT board's): found by it wherever it is.
    #[arg(long)]
    serial: Option<String>,
    /// Its number or label in the round, e.g. 7 (default: the name).
    #[arg(long)]
    label: Option<String>,
    /// White.
    #[arg(long)]
    white: Option<String>,
    /// Black.
    #[arg(long)]
    black: Option<String>,
}

impl Action {
    fn command(self) -> anyhow::Result<Command> {
        Ok(match self {
            Self::NewGame => Command::NewGame,
            Self::NextRound { round, pairings } => {
                let pairings = match pairings {
                    None => Default::default(),
                    Some(file) => pairings_of(&file, &round)?,
                };
                Command::NextRound { round, tags: Default::default(), pairings }
            }
            Self::Result { result, reason } => {
                let reason: Reason = serde_json::from_value(json!(reason))
                    .map_err(|_| anyhow!("--reason {reason}: resignation, agreement, forfeit or arbiter"))?;
                Command::SetResult { result, reason }
            }
            Self::TakeBack => Command::TakeBack,
            Self::Moves { san } => Command::Moves { san },
            Self::Promote { piece } => Command::Promote { piece },
            Self::Position { fen } => Command::SetPosition { fen },
            Self::Flip => Command::Flip,
            Self::Players { white, black } => {
                Command::SetTags { tags: [("White".into(), white), ("Black".into(), black)].into_iter().collect() }
            }
            Self::Tag { name, value } => Command::SetTags { tags: [(name, value)].into_iter().collect() },
            Self::Ack { game, seq } => Command::AcknowledgeAlert { game, seq },
            Self::ClockText { text } => Command::ClockText { text },
            Self::Identify { text } => Command::Identify { text },
            Self::Calibrate => Command::Calibrate,
            Self::AssignBoard(args) => {
                let AssignArgs { family, port, serial, label, white, black } = *args;
                Command::AssignBoard(Box::new(boardcast_core::operator::Assignment {
                    family,
                    port,
                    serial,
                    // Filled with the board's name below when not given.
                    label: label.unwrap_or_default(),
                    white,
                    black,
                    by: Some("ctl".into()),
                }))
            }
            Self::Unassign => Command::UnassignBoard { by: Some("ctl".into()) },
        })
    }
}

/// Each board number's tags from the pairings file for `round`.
fn pairings_of(file: &std::path::Path, round: &str) -> anyhow::Result<BTreeMap<String, BTreeMap<String, String>>> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading the pairings {}", file.display()))?;
    let pairings = Pairings::parse(&text)
        .and_then(|p| p.round(round))
        .with_context(|| format!("reading the pairings {}", file.display()))?;
    Ok(pairings.iter().map(|p| (p.board.to_string(), p.tags())).collect())
}

pub(crate) fn run(args: CtlArgs) -> anyhow::Result<ExitCode> {
    let loaded = settings::load(args.config.as_deref())?;
    let mqtt = loaded
        .config
        .mqtt()
        .map_err(|e| anyhow!("{e} (configuration read from {})", loaded.sources.join(", then ")))?;
    let mut broker = match (&args.url, &mqtt.broker) {
        (Some(url), _) => {
            let mut config = loaded.config.clone();
            config.mqtt.url = url.clone();
            match config.mqtt().map_err(|e| anyhow!("--url: {e}"))?.broker {
                BrokerChoice::External(url) => url,
                BrokerChoice::Embedded { .. } => bail!("--url is empty"),
            }
        }
        (None, BrokerChoice::External(url)) => url.clone(),
        (None, BrokerChoice::Embedded(embedded)) => {
            let listen = embedded.listen;
            let host = if listen.ip().is_unspecified() { "127.0.0.1".to_owned() } else { listen.ip().to_string() };
            // With TLS the listener is checked like any broker: against
            // `[mqtt] ca_file`, else the broker's own certificate (enough
            // when it is self-signed); the name is the listener's address,
            // so a certificate for a host name needs --url with that name.
            let (scheme, ca_file) = match &embedded.tls {
                Some(files) => (Scheme::Mqtts, Some(mqtt.ca_file.clone().unwrap_or_else(|| files.cert_file.clone()))),
                None => (Scheme::Mqtt, None),
            };
            let name = if scheme == Scheme::Mqtts { "mqtts" } else { "mqtt" };
            BrokerUrl {
                url: format!("{name}://{host}:{}", listen.port()),
                scheme,
                host,
                port: listen.port(),
                ca_file,
                client_auth: None,
            }
        }
    };
    broker.client_auth = client_certificate(&args, &loaded.config.mqtt, &broker)?;
    let bridge = args.bridge.clone().unwrap_or_else(|| {
        if mqtt.bridge_id.trim().is_empty() { super::daemon::host_name() } else { mqtt.bridge_id.clone() }
    });
    let topics = Topics::new(&mqtt.root, &bridge);
    let credentials = login(&args, &mqtt)?;
    let board = match (&args.board, &args.action) {
        (Some(board), _) => board.clone(),
        (None, Action::NextRound { .. }) => EVERY_BOARD.to_owned(),
        (None, _) => bail!("name the board: only next-round goes to every board"),
    };
    let mut command = args.action.command()?;
    if let Command::AssignBoard(assignment) = &mut command
        && assignment.label.is_empty()
    {
        assignment.label.clone_from(&board);
    }
    let key_file = args.key_file.clone().unwrap_or_else(|| loaded.config.operator.key_file.clone());
    let key = boardcast::shell::key::load(&key_file)
        .context("signing the command (on another machine than the daemon's, copy its key file and give --key-file)")?;
    let id = format!("ctl-{}-{}", std::process::id(), now_ms());
    let request = ask::signed_request(&key, &id, &board, now_ms(), &command)?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the event loop")?;
    let options = connect_options(&broker, &id, credentials.as_ref(), Duration::from_secs(5));
    let answer = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(args.timeout_s), ask::ask(options, &topics, &id, request)).await
    });
    match answer {
        Ok(Ok(reply)) => {
            let message = reply["message"].as_str().unwrap_or_default();
            if reply["ok"] == true {
                println!("{message}");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("boardcast: refused: {message}");
                Ok(ExitCode::from(1))
            }
        }
        Ok(Err(error)) => {
            let hint = refused_certificate(&error.to_string(), &broker).unwrap_or_default();
            Err(anyhow::Error::new(error).context(format!("asking the daemon through {}{hint}", broker.url)))
        }
        Err(_) => bail!(
            "no answer within {} s through {} (is the daemon running, with bridge id {:?}? `--bridge` and `--url` say otherwise{})",
            args.timeout_s,
            broker.url,
            topics.bridge(),
            match &credentials {
                None =>
                    "; the broker may not let anonymous clients send commands: log in with --user and an operator account",
                Some(_) => "; is the account an operator's?",
            }
        ),
    }
}

/// What to do when the broker's TLS refused ctl for its certificate (or
/// for having none), from the alert the broker sent (`received fatal
/// alert: …` in `error`).
fn refused_certificate(error: &str, broker: &BrokerUrl) -> Option<String> {
    let alert = ["CertificateRequired", "HandshakeFailure", "BadCertificate", "UnknownCA", "CertificateUnknown"]
        .into_iter()
        .find(|alert| error.contains(&format!("received fatal alert: {alert}")))?;
    let set = "set [mqtt] client_cert_file and client_key_file, or give --client-cert-file and --client-key-file";
    match (&broker.client_auth, alert) {
        // TLS 1.3 says so; TLS 1.2 only fails the handshake.
        (None, "CertificateRequired") => {
            Some(format!(" (the broker wants a client certificate and ctl showed none: {set})"))
        }
        (None, "HandshakeFailure") => {
            Some(format!(" (the broker refused the TLS handshake; if it wants a client certificate: {set})"))
        }
        (None, _) => None,
        (Some(files), _) => Some(format!(
            " (the broker refused the client certificate {}: is it signed by an authority the broker trusts, for client authentication, and not expired?)",
            files.cert_file.display()
        )),
    }
}

/// The certificate ctl shows the broker: `--client-cert-file` and
/// `--client-key-file`, else (over TLS) the configuration's `[mqtt]
/// client_cert_file` and `client_key_file`, checked as the daemon checks
/// them.
fn client_certificate(args: &CtlArgs, m: &MqttConfig, broker: &BrokerUrl) -> anyhow::Result<Option<TlsFiles>> {
    if args.client_cert_file.is_some() || args.client_key_file.is_some() {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string()).unwrap_or_default();
        let files = config::client_certificate(
            ("--client-cert-file", &path(&args.client_cert_file)),
            ("--client-key-file", &path(&args.client_key_file)),
        )?;
        if !broker.scheme.tls() {
            bail!(
                "--client-cert-file: the broker {} does not speak TLS, and client certificates need mqtts:// or wss:// (--url)",
                broker.url
            );
        }
        return Ok(files);
    }
    if !broker.scheme.tls() {
        return Ok(None);
    }
    if broker.client_auth.is_some() {
        return Ok(broker.client_auth.clone());
    }
    // The daemon's own broker: the keys are not checked with it (the
    // daemon does not use them there), so here.
    Ok(config::client_certificate(
        ("mqtt.client_cert_file", &m.client_cert_file),
        ("mqtt.client_key_file", &m.client_key_file),
    )?)
}

/// The account ctl logs in with: `--user` or `[mqtt] username`, its
/// password from `--password-file`, `BOARDCAST_MQTT_PASSWORD`, or the
/// configuration.
fn login(args: &CtlArgs, mqtt: &boardcast::config::Mqtt) -> anyhow::Result<Option<(String, String)>> {
    let configured = mqtt.credentials.clone();
    let Some(user) = args.user.clone().or_else(|| configured.as_ref().map(|(u, _)| u.clone())) else {
        return Ok(None);
    };
    let from_file = |file: &std::path::Path| -> anyhow::Result<String> {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading the password file {}", file.display()))?;
        Ok(text.lines().next().unwrap_or_default().to_owned())
    };
    let password = if let Some(file) = &args.password_file {
        from_file(file)?
    } else if let Ok(password) = std::env::var("BOARDCAST_MQTT_PASSWORD") {
        password
    } else if let Some(file) = &mqtt.password_file {
        from_file(file)?
    } else {
        configured.map(|(_, p)| p).unwrap_or_default()
    };
    if password.is_empty() {
        bail!("no password for the broker account {user:?}: give --password-file FILE, or set BOARDCAST_MQTT_PASSWORD");
    }
    Ok(Some((user, password)))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_for_the_certificate_says_what_to_set() {
        let mut broker = BrokerUrl {
            url: "mqtts://hall:8883".into(),
            scheme: Scheme::Mqtts,
            host: "hall".into(),
            port: 8883,
            ca_file: None,
            client_auth: None,
        };
        let refused = |alert: &str| format!("Mqtt state: IO: received fatal alert: {alert}");
        let none = refused_certificate(&refused("CertificateRequired"), &broker).unwrap();
        assert!(none.contains("wants a client certificate and ctl showed none: set [mqtt] client_cert_file"), "{none}");
        let tls12 = refused_certificate(&refused("HandshakeFailure"), &broker).unwrap();
        assert!(tls12.contains("if it wants a client certificate"), "{tls12}");
        assert_eq!(refused_certificate("connection refused", &broker), None);
        broker.client_auth = Some(TlsFiles { cert_file: "op.pem".into(), key_file: "op.key".into() });
        let unknown = refused_certificate(&refused("UnknownCA"), &broker).unwrap();
        assert!(unknown.contains("refused the client certificate op.pem"), "{unknown}");
    }
}
