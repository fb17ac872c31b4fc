//! `boardcast demo`: the whole feed on one machine with nothing else
//! installed: the embedded MQTT broker, simulated DGT boards replaying
//! bundled real games behind pseudo-terminals, the daemon reading them
//! exactly as it reads real boards, and a subscriber printing the moves as
//! the feed carries them.

use std::{
    fmt::Write as _,
    net::{SocketAddr, TcpListener},
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::{Context, bail};
use clap::Args;
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use tokio_util::sync::CancellationToken;

use boardcast::{
    accounts::{Account, Role, SALT_BYTES, hash_password},
    shell::{
        console::link::LINK_LIFETIME,
        mqtt::mosquitto::{hex, random},
        simulate::{self, SimulateSettings},
    },
};
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody},
    game::TimeControl,
    protocol::Protocol,
    reconstruct::ReconstructorConfig,
    replay::read_capture,
    sensor::ClockSide,
};
use boardcast_sim::synth::{Style, header, play, read_games, rng_for};

use super::daemon::{self, FeedReady, Plan};

/// Real DGT board recordings (tests/fixtures/dgt-real/SOURCE.md says where
/// from), bundled so that the demo needs no files.
const RECORDINGS: [&str; 2] = [
    include_str!("../../tests/fixtures/dgt-real/dgt-real-1.jsonl"),
    include_str!("../../tests/fixtures/dgt-real/dgt-real-2.jsonl"),
];

/// Real games (tests/fixtures/games/SOURCE.md), played by simulated hands
/// for the other boards.
const GAMES: &str = include_str!("../../tests/fixtures/games/livechess-vestland-round1.pgn");

/// Runs everything on this machine, with no board and no broker: the
/// embedded MQTT broker, simulated DGT boards replaying real games (two
/// real board recordings, then real games played by simulated hands), and
/// the daemon reading them through pseudo-terminals exactly as it reads
/// real boards. Prints how to subscribe, and every move as the feed
/// carries it. Runs until Ctrl-C (or, with --exit-when-done, until the
/// games are over).
#[derive(Debug, Args)]
pub(crate) struct DemoArgs {
    /// How many boards (1 to 12).
    #[arg(long, value_name = "N", default_value_t = 4)]
    boards: usize,
    /// Play at N times the recorded speed.
    #[arg(long, value_name = "N", default_value_t = 5.0)]
    speed: f64,
    /// The broker's MQTT port (default: 1883 if free, otherwise any free
    /// port).
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
    /// The broker's WebSocket port, for browser displays (default: 8083 if
    /// free, otherwise any free port).
    #[arg(long, value_name = "PORT")]
    ws_port: Option<u16>,
    /// The display pages' port (default: 8080 if free, otherwise any free
    /// port).
    #[arg(long, value_name = "PORT")]
    http_port: Option<u16>,
    /// The LiveChess API's port (default: 1982, LiveChess's own, if free,
    /// otherwise any free port).
    #[arg(long, value_name = "PORT")]
    livechess_port: Option<u16>,
    /// Delay the public tree by this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    public_delay_s: u64,
    /// Where the PGN files and captures go (default: a new folder in the
    /// system's temporary folder).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Stop once every game has been played.
    #[arg(long)]
    exit_when_done: bool,
}

pub(crate) fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    if !(1..=12).contains(&args.boards) {
        bail!("--boards must be between 1 and 12, not {}", args.boards);
    }
    if !(args.speed.is_finite() && args.speed > 0.0) {
        bail!("--speed must be a positive number such as 1 (real time) or 10, not {}", args.speed);
    }
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("boardcast-demo-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let listen = SocketAddr::from(([127, 0, 0, 1], pick_port(args.port, 1883)?));
    let ws_listen = SocketAddr::from(([127, 0, 0, 1], pick_port(args.ws_port, 8083)?));
    let http_listen = SocketAddr::from(([127, 0, 0, 1], pick_port(args.http_port, 8080)?));
    let livechess_listen = SocketAddr::from(([127, 0, 0, 1], pick_port(args.livechess_port, LIVECHESS_PORT)?));
    let captures = demo_captures(args.boards)?;
    // The demo runs through the configuration code like `boardcast run`:
    // what it runs is a file the newcomer can read and start from.
    let mut text = demo_config(&args, &dir, &captures, listen, ws_listen, http_listen);
    text.push_str(&format!(
        "\n# Tools written for DGT LiveChess read the boards here (docs/livechess.md).\n[livechess]\nenabled = true\nlisten = \"{livechess_listen}\"\n"
    ));
    tell_livechess(livechess_listen, args.livechess_port.is_some());
    let config_file = dir.join("boardcast.toml");
    std::fs::write(&config_file, &text).with_context(|| format!("writing {}", config_file.display()))?;
    let config = super::settings::from_text(&text, &config_file)?;
    let plan = Plan::from_config(&config, &config_file.display().to_string())?;
    operator_account(&dir)?;
    super::logging::init(super::logging::LogFormat::Text, "info");
    let runtime = super::daemon_runtime()?;
    runtime.block_on(async move {
        let shutdown = CancellationToken::new();
        let on_signal = shutdown.clone();
        tokio::spawn(async move {
            super::signals::wait().await;
            tracing::info!("stopping the demo");
            on_signal.cancel();
        });
        let simulations = CancellationToken::new();
        let mut boards = Vec::new();
        for (n, (header, records)) in captures.into_iter().enumerate() {
            let settings = SimulateSettings {
                protocol: Protocol::DGT,
                link: dir.join(format!("board-{}.tty", n + 1)),
                speed: args.speed,
                unplug_at: None,
                replug_after: None,
                white_side: ClockSide::Left,
                noise: 0.0,
                serial: Some(format!("{:05}", n + 1)),
                pause_while_unread: false,
            };
            let stop = simulations.clone();
            boards.push(tokio::spawn(async move {
                simulate::run(&header, records, settings, Duration::from_secs(5), stop).await
            }));
        }
        // When the games are over: stop by itself if asked to.
        let done = shutdown.clone();
        let exit_when_done = args.exit_when_done;
        tokio::spawn(async move {
            for board in boards {
                let _ = board.await;
            }
            if exit_when_done {
                done.cancel();
            } else {
                outln!("demo: every game has been played; the feed keeps its retained state until Ctrl-C");
            }
        });
        let listener = shutdown.clone();
        let pgn_dir = dir.join("pgn");
        let result = daemon::serve(plan, shutdown.clone(), None, move |ready| {
            tell(ready, &pgn_dir);
            tokio::spawn(print_moves(ready.clone(), listener));
        })
        .await;
        simulations.cancel();
        result
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The demo's operator account.
const DEMO_ACCOUNT: &str = "operator";

/// An operator account for `boardcast ctl` against the demo (when the
/// broker is Mosquitto): its password in `operator.password` (mode 600).
fn operator_account(dir: &std::path::Path) -> anyhow::Result<()> {
    use std::{io::Write, os::unix::fs::OpenOptionsExt};
    let password = hex(&random::<16>()?);
    let file = dir.join("operator.password");
    let _ = std::fs::remove_file(&file);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&file)
        .and_then(|mut f| f.write_all(format!("{password}\n").as_bytes()))
        .with_context(|| format!("writing {}", file.display()))?;
    let account = Account {
        name: DEMO_ACCOUNT.into(),
        role: Role::Operator,
        hash: hash_password(&password, &random::<SALT_BYTES>()?),
    };
    super::accounts::save(&dir.join("accounts"), &[account])
}

/// The demo's configuration: the built-in defaults but for its boards
/// (behind pseudo-terminals in `dir`), its folders, its broker and page
/// ports on loopback, and judging times scaled to the speed.
fn demo_config(
    args: &DemoArgs,
    dir: &Path,
    captures: &[(CaptureHeader, Vec<Record>)],
    listen: SocketAddr,
    ws_listen: SocketAddr,
    http_listen: SocketAddr,
) -> String {
    // A JSON string is a valid TOML basic string (the same escapes), so
    // any folder name is quoted safely.
    let quote = |text: &str| serde_json::to_string(text).expect("strings serialise");
    let path = |name: &str| quote(&dir.join(name).display().to_string());
    let mut text = format!(
        "# What `boardcast demo` runs: the defaults (`boardcast config default`) but\n\
         # for the keys below. `boardcast run --config` takes a file like this one;\n\
         # give real boards their port or serial (docs/boards.md).\n\n\
         [log]\nformat = \"text\"\nlevel = \"info\"\n\n\
         [recording]\ndir = {captures}\n\n\
         [pgn]\ndir = {pgn}\n\n\
         [operator]\nkey_file = {key}\n\n\
         [hall]\nstate_file = {state}\n\n\
         [broadcast]\nevent = \"demo\"\nround = \"1\"\n\n\
         [link]\nreconnect_max_ms = 2000\n\n\
         [mqtt]\nbridge_id = \"demo\"\npublic_delay_s = {delay}\n\n\
         # The demo's pages and its move printer read the live tree without an\n\
         # account: it listens on loopback only.\n\
         [mqtt.embedded]\nlisten = \"{listen}\"\nws_listen = \"{ws_listen}\"\naccounts_file = {accounts}\nanonymous = \"live\"\n\n\
         [http]\nlisten = \"{http_listen}\"\n\n",
        captures = path("captures"),
        pgn = path("pgn"),
        key = path("operator.key"),
        state = path("assigned-boards.json"),
        delay = args.public_delay_s,
        accounts = path("accounts"),
    );
    // Spectators' analysis when Stockfish is installed (Debian puts it in
    // /usr/games, outside most users' PATH): the demo shows what a hall
    // gets, and says where it comes from.
    if let Some(engine) = boardcast::config::find_stockfish() {
        let _ = write!(
            text,
            "# Stockfish ({}) analyses each position for the public tree (docs/displays.md, \"Analysis\"),\n\
             # a second of the game's time each: a position is dropped once the board has moved on.\n\
             [analysis]\nenabled = true\nmovetime_ms = {}\n\n",
            engine.display(),
            ((1000.0 / args.speed).round() as u64).max(20)
        );
    }
    // Games played `speed` times faster than real play: a board must
    // settle for 300 ms of the game's time, not of ours.
    let scale = |ms: u64| ((ms as f64 / args.speed.max(1.0)).round() as u64).max(1);
    let r = ReconstructorConfig::default();
    let ms = |d: Duration| scale(d.as_millis() as u64);
    let _ = write!(
        text,
        "# Judging times scaled to --speed {speed}.\n[reconstruction]\nsettle_ms = {}\ntouch_min_ms = {}\n\
         release_min_ms = {}\nout_of_sync_ms = {}\ngesture_hold_ms = {}\npress_grace_ms = {}\nquiet_completion_ms = {}\n",
        ms(r.settle),
        ms(r.touch_min),
        ms(r.release_min),
        ms(r.out_of_sync_after),
        ms(r.gesture_hold),
        ms(r.press_grace),
        ms(r.quiet_completion),
        speed = args.speed,
    );
    for (i, (header, _)) in captures.iter().enumerate() {
        let n = i + 1;
        let _ = write!(
            text,
            "\n[[boards]]\nname = \"board-{n}\"\nprotocol = \"dgt\"\nport = {}\nboard = \"{n}\"\n",
            path(&format!("board-{n}.tty"))
        );
        // The players of the game each board replays.
        for (tag, key) in [("White", "white"), ("Black", "black"), ("TimeControl", "time_control")] {
            let Some(value) = header.game_tag(tag) else { continue };
            if tag == "TimeControl" && value.parse::<TimeControl>().is_err() {
                continue;
            }
            let _ = writeln!(text, "{key} = {}", quote(value));
        }
    }
    text
}

/// LiveChess's own port, which its clients hard-code.
const LIVECHESS_PORT: u16 = 1982;

/// Where the LiveChess API is, and whether it could have LiveChess's port.
fn tell_livechess(listen: SocketAddr, chosen: bool) {
    if listen.port() == LIVECHESS_PORT || chosen {
        outln!("demo: the LiveChess API: http://{listen}/api/v1.0/eboards and ws://{listen}/api/v1.0");
    } else {
        outln!(
            "demo: port {LIVECHESS_PORT} is taken (DGT LiveChess itself?): the LiveChess API is on http://{listen}/api/v1.0/ and ws://{listen}/api/v1.0 instead; clients that only know port {LIVECHESS_PORT} do not reach it (--livechess-port)"
        );
    }
}

/// `preferred` if given, else `usual` if it is free, else any free port.
fn pick_port(preferred: Option<u16>, usual: u16) -> anyhow::Result<u16> {
    if let Some(port) = preferred {
        return Ok(port);
    }
    if TcpListener::bind(("127.0.0.1", usual)).is_ok() {
        return Ok(usual);
    }
    let listener = TcpListener::bind(("127.0.0.1", 0)).context("finding a free port")?;
    Ok(listener.local_addr()?.port())
}

/// The captures the simulated boards play: the real recordings first, then
/// real games played by simulated hands.
fn demo_captures(boards: usize) -> anyhow::Result<Vec<(CaptureHeader, Vec<Record>)>> {
    let mut captures = Vec::new();
    for (n, text) in RECORDINGS.iter().enumerate().take(boards) {
        let capture = read_capture(text).with_context(|| format!("the bundled recording {}", n + 1))?;
        captures.push((capture.header, capture.records));
    }
    let games = read_games(GAMES).context("the bundled games")?;
    for index in 0..boards.saturating_sub(captures.len()) {
        let game = &games[index % games.len()];
        let mut rng = rng_for(11, index);
        let mut style = Style::calm();
        style.think_ms = (3_000, 12_000);
        let stream = play(game, &style, &mut rng);
        let records =
            stream.events.into_iter().map(|(t, event)| Record { t, body: RecordBody::Event(event) }).collect();
        captures.push((header(game, Protocol::EVENTS, &format!("board-{}", captures.len() + 1)), records));
    }
    Ok(captures)
}

/// Tells the user where to look: the pages first.
fn tell(ready: &FeedReady, pgn_dir: &std::path::Path) {
    if let Some(http) = ready.http {
        outln!("demo: open the displays in a browser:");
        outln!("    round overview:  http://{http}/overview.html");
        outln!("    one board:       http://{http}/board.html?event=demo&round=1&board=1");
        // A one-time token in the address's fragment, which the browser
        // sends to no server: the first click logs in, and only within
        // minutes; the password stays out of every address.
        match ready.console.as_ref().map(|console| console.login_link(DEMO_ACCOUNT)) {
            Some(Ok(token)) => {
                outln!("    operator console: http://{http}/console.html#login={token}");
                outln!(
                    "    (the link logs in as {DEMO_ACCOUNT} once, within {} minutes; after that log in at http://{http}/console.html",
                    LINK_LIFETIME.as_secs() / 60
                );
            }
            _ => outln!("    operator console: http://{http}/console.html"),
        }
        if let Some(dir) = pgn_dir.parent() {
            let password = std::fs::read_to_string(dir.join("operator.password")).unwrap_or_default();
            outln!("     as {DEMO_ACCOUNT}, password {})", password.trim());
        }
    }
    let Some(broker) = ready.embedded else { return };
    let port = broker.listen.port();
    let which = if ready.managed { "Mosquitto" } else { "built-in, no access control" };
    match broker.ws_listen {
        Some(ws) => outln!("demo: the MQTT broker ({which}) listens on {} (WebSocket on {ws})", broker.listen),
        None => outln!("demo: the MQTT broker ({which}) listens on {}", broker.listen),
    }
    outln!("demo: watch the feed with:");
    outln!("    mosquitto_sub -h 127.0.0.1 -p {port} -t '{}/v1/live/#' -v", ready.root);
    outln!("demo: a display needs only the round summary:");
    outln!("    mosquitto_sub -h 127.0.0.1 -p {port} -t '{}/v1/public/demo/1/summary/#'", ready.root);
    outln!("demo: PGN files are in {}", pgn_dir.display());
    if let Some(dir) = pgn_dir.parent() {
        outln!("demo: the configuration it runs is {} (a start for your own)", dir.join("boardcast.toml").display());
    }
    if let Some(dir) = pgn_dir.parent() {
        outln!("demo: operator commands are signed with the key the demo made, e.g.:");
        let login = if ready.managed {
            format!(" --user operator --password-file {}", dir.join("operator.password").display())
        } else {
            String::new()
        };
        outln!(
            "    boardcast ctl --url mqtt://127.0.0.1:{port} --bridge demo --key-file {}{login} board-1 result 1-0 --reason resignation",
            dir.join("operator.key").display()
        );
    }
}

/// Subscribes to the feed and prints every move it carries.
async fn print_moves(ready: FeedReady, shutdown: CancellationToken) {
    let Some(broker) = ready.embedded else { return };
    let mut options =
        MqttOptions::new(format!("boardcast-demo-viewer-{}", std::process::id()), "127.0.0.1", broker.listen.port());
    options.set_max_packet_size(1 << 20, 1 << 20);
    let (client, mut eventloop) = AsyncClient::new(options, 16);
    let filter = format!("{}/v1/live/+/+/+/moves", ready.root);
    loop {
        let event = tokio::select! {
            () = shutdown.cancelled() => return,
            event = eventloop.poll() => event,
        };
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                let _ = client.subscribe(filter.clone(), QoS::AtLeastOnce).await;
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => {
                if let Ok(m) = serde_json::from_slice::<serde_json::Value>(&publish.payload) {
                    print_move(&m);
                }
            }
            Ok(_) => {}
            Err(_) => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}

/// `board-2   14... Nf6   made        Springer Gustav acht Felix sechs`.
fn print_move(m: &serde_json::Value) {
    let text = |key: &str| m.get(key).and_then(serde_json::Value::as_str).unwrap_or_default().to_owned();
    let ply = m.get("ply").and_then(serde_json::Value::as_u64).unwrap_or(0);
    let number = ply.div_ceil(2);
    let dots = if ply % 2 == 1 { "." } else { "..." };
    outln!("{:<9} {:>4}{:<4}{:<8} {:<10} {}", text("board"), number, dots, text("san"), text("kind"), text("spoken"));
}
