//! The MQTT feed through a real Mosquitto: latency from a sensor event to
//! the `moves` message a subscriber receives, and sustained throughput with
//! hundreds of boards at tournament rates.
//!
//! Everything between the sensor event and the broker is the daemon's real
//! in-process path: per board a [`BoardSession`] driven by
//! [`shell::driver::drive`](boardcast::shell::driver::drive) with a
//! [`BoardFeed`], and one shared publisher task
//! ([`shell::mqtt::client::run`](boardcast::shell::mqtt::client::run))
//! writing to a Mosquitto that this benchmark starts as a child process on
//! a free port (a broker already running on 1883 is left alone). The boards
//! are simulated: instead of a port task reading a serial line, a task per
//! board sends the sensor events a board's decoder would give.
//!
//! 1. **Latency.** Real games (`livechess-vestland-round1.pgn`), one board
//!    per game, one ply at a time: the squares a move empties, then the
//!    squares it fills, 20 ms apart. The clock starts just before the last
//!    square is handed to the driver and stops when a subscriber on
//!    `bench/v1/live/+/+/+/moves` receives the `made` message. The next ply
//!    waits for it. Moves judged only after `settle_ms` are reported apart,
//!    with the settle time subtracted (see benches/latency.rs).
//! 2. **Throughput.** `--boards` boards (500) in one round, each playing a
//!    real game (cycling through the vendored games), a move every 10–30 s
//!    (20 s on average, divided by `--rate-factor`), the clock pressed
//!    0.2–1 s after each move and read once a second, for `--seconds` (60).
//!    A subscriber on `bench/#` counts everything and checks that every
//!    `made` message arrives; its latency is the receiving wall-clock time
//!    minus the payload's `ts_ms`. CPU time is read from /proc per thread
//!    group (the daemon's runtime, the simulated boards, the subscriber)
//!    and for Mosquitto. Without `--rate-factor` a second run at 10× the
//!    move rate shows the headroom.
//!
//! 3. **Soak.** The same run as a whole round played at high speed:
//!    `--games 0 --boards 100 --rate-factor 100 --seconds 90` gives every
//!    board a move every 0.1–0.3 s, so that each of the 100 games is played
//!    to its end (`games ran out of moves` says how many were), with CPU,
//!    memory, and the moves lost: `made` messages that never arrived, and
//!    boards whose moves made differ from the plies played.
//!
//! 4. **Engine analysis** (`--phase analysis`, issue 24; not part of the
//!    default run). Throughput runs of `--boards` boards (100) at
//!    `--rate-factor` (1) for `--seconds` (120) each, four of them, one
//!    process each: analysis off, on, off, on, so that load drifting on the
//!    machine hits both sides alike. With analysis on, the real engine pool
//!    (`shell::analysis`, Stockfish at `/usr/games/stockfish` or
//!    `STOCKFISH_BIN`, `--engines` (1) of one thread at `--engine-nice`
//!    (19, the configuration's default), `--nodes` (1 000 000) or
//!    `--movetime-ms`) gets every board's positions as the daemon wires
//!    it; every run has the public tree at `--public-delay-s` (2). Each
//!    analysis run reports positions sent vs analyses published, the time
//!    from a position's public `state` to its `analysis` (both as the
//!    subscriber receives them) and the engines' CPU (child processes, from
//!    /proc); then the `made` p99 with analysis on over off.
//!
//! Run: `cargo bench --bench mqtt` (about four minutes), or
//! `cargo bench --bench mqtt -- --games 8 --boards 500 --seconds 60 --rate-factor 1`.
//! Add `--mosquitto-nagle` for a Mosquitto without `set_tcp_nodelay`.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use boardcast::{
    config::{BrokerUrl, Scheme},
    shell::{
        analysis::{PoolSettings, run as run_pool},
        clock::SessionClock,
        driver::{Forward, Input, InputBody, Outlets, drive},
        mqtt::client::{self, PublisherEvent, PublisherSettings},
    },
};
use boardcast_core::{
    analysis::{Positions, schedule::Position as Searched, uci::Budget},
    event::EventKind,
    protocol::Protocol,
    publish::{
        Item,
        board::{BoardFeed, FeedSettings},
        render::Language,
        topics::{BoardPath, Topics},
    },
    reconstruct::{GameSetup, ReconstructorConfig},
    sensor::{Cell, ClockReading, Picture, SensorEvent},
    session::{BoardSession, Output},
    sink::EveryOutput,
};
use boardcast_sim::synth::{Rng, SourceGame, read_games};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;
use shakmaty::{Board, Chess, Color, Position, Square};
use tokio::{runtime::Runtime, sync::mpsc, task::JoinHandle};

#[allow(dead_code, unreachable_pub)]
#[path = "../tests/it/support/mqtt.rs"]
mod mqtt_support;

#[allow(dead_code, unreachable_pub)]
#[path = "support/proc.rs"]
mod proc;
use proc::{clock_ticks_per_second, stat_ticks, status_kib};

use mqtt_support::{Mosquitto, Subscriber};

const ROOT: &str = "bench";

/// Whether `--mosquitto-nagle` was given: the broker keeps Nagle's
/// algorithm on its sockets (Mosquitto's default).
fn nagle() -> bool {
    std::env::args().any(|a| a == "--mosquitto-nagle")
}

fn main() {
    let games: usize = flag("--games").unwrap_or(8);
    let boards: usize = flag("--boards").unwrap_or(500);
    let run = Run {
        boards,
        per_round: flag("--boards-per-round").unwrap_or(boards).max(1),
        seconds: Duration::from_secs(flag("--seconds").unwrap_or(60)),
        factor: flag("--rate-factor").unwrap_or(1.0),
        max_rss_mib: flag("--max-rss-mib").unwrap_or(2048),
        analysis: analysis_flags(),
    };
    match flag::<String>("--phase").as_deref() {
        Some("latency") => return latency(games),
        Some("throughput") => return throughput(&run),
        Some("analysis") => return analysis_comparison(),
        _ => {}
    }

    // A broker just to learn whether Mosquitto is there at all.
    let probe_dir = std::env::temp_dir().join(format!("boardcast-bench-mqtt-{}", std::process::id()));
    let Some(probe) = Mosquitto::start(&probe_dir, false) else {
        println!(
            "Mosquitto is not installed: the MQTT benchmark needs it (`apt-get install mosquitto`, or set MOSQUITTO_BIN)"
        );
        return;
    };
    drop(probe);
    let _ = std::fs::remove_dir_all(&probe_dir);

    // Each part runs in a process of its own: its CPU time and peak memory
    // are its own, and a run that falls behind cannot take the others with
    // it.
    let mut parts: Vec<Vec<String>> = Vec::new();
    if games > 0 {
        parts.push(vec!["--phase".into(), "latency".into(), "--games".into(), games.to_string()]);
    }
    let factors = flag::<f64>("--rate-factor").map_or_else(|| vec![1.0, 10.0], |f| vec![f]);
    for factor in factors {
        parts.push(
            [
                "--phase",
                "throughput",
                "--boards",
                &run.boards.to_string(),
                "--boards-per-round",
                &run.per_round.to_string(),
                "--seconds",
                &run.seconds.as_secs().to_string(),
                "--rate-factor",
                &factor.to_string(),
                "--max-rss-mib",
                &run.max_rss_mib.to_string(),
            ]
            .map(str::to_owned)
            .to_vec(),
        );
    }
    let exe = std::env::current_exe().expect("this benchmark's path");
    let mut failed = Vec::new();
    for mut args in parts {
        if nagle() {
            args.push("--mosquitto-nagle".into());
        }
        let status = std::process::Command::new(&exe).args(&args).status().expect("the benchmark runs itself");
        if !status.success() {
            failed.push(format!("{} ({status})", args.join(" ")));
        }
    }
    if !failed.is_empty() {
        println!("FAILED: {}", failed.join("; "));
        std::process::exit(1);
    }
}

/// Engine analysis during a throughput run (`--engines` given).
#[derive(Clone, Copy)]
struct AnalysisRun {
    engines: usize,
    nice: i32,
    budget: Budget,
    delay: Duration,
}

/// The analysis flags: `--engines N` turns analysis on, with `--nodes`
/// (1 000 000) or `--movetime-ms`, and `--public-delay-s` (2).
fn analysis_flags() -> Option<AnalysisRun> {
    let engines: usize = flag("--engines")?;
    let budget = match flag::<u64>("--movetime-ms") {
        Some(ms) => Budget::MoveTime { ms },
        None => Budget::Nodes { nodes: flag("--nodes").unwrap_or(1_000_000) },
    };
    Some(AnalysisRun {
        engines,
        nice: flag("--engine-nice").unwrap_or(19),
        budget,
        delay: Duration::from_secs(flag("--public-delay-s").unwrap_or(2)),
    })
}

/// Part 4, analysis: throughput runs with analysis off, on, off, on, each in a
/// process of its own with the same boards and moves, so that the daemon's
/// `made` latency with and without the engines is compared under the same
/// load; then the p99 ratio.
fn analysis_comparison() {
    let boards: usize = flag("--boards").unwrap_or(100);
    let seconds: u64 = flag("--seconds").unwrap_or(120);
    let factor: f64 = flag("--rate-factor").unwrap_or(1.0);
    let engines: usize = flag("--engines").unwrap_or(1);
    let nice: i32 = flag("--engine-nice").unwrap_or(19);
    let delay: u64 = flag("--public-delay-s").unwrap_or(2);
    let budget = match flag::<u64>("--movetime-ms") {
        Some(ms) => vec!["--movetime-ms".to_owned(), ms.to_string()],
        None => vec!["--nodes".to_owned(), flag::<u64>("--nodes").unwrap_or(1_000_000).to_string()],
    };
    let exe = std::env::current_exe().expect("this benchmark's path");
    let mut p99 = [Vec::new(), Vec::new()];
    for on in [false, true, false, true] {
        let mut args: Vec<String> = [
            "--phase",
            "throughput",
            "--boards",
            &boards.to_string(),
            "--seconds",
            &seconds.to_string(),
            "--rate-factor",
            &factor.to_string(),
            "--public-delay-s",
            &delay.to_string(),
        ]
        .map(str::to_owned)
        .to_vec();
        if on {
            args.extend(["--engines".to_owned(), engines.to_string(), "--engine-nice".to_owned(), nice.to_string()]);
            args.extend(budget.iter().cloned());
        }
        let label = if on { "on" } else { "off" };
        eprintln!("analysis {label}: {}", args.join(" "));
        let out = std::process::Command::new(&exe)
            .args(&args)
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("the benchmark runs itself");
        let text = String::from_utf8_lossy(&out.stdout);
        print!("analysis {label}: {text}");
        assert!(out.status.success(), "the analysis-{label} phase succeeds");
        if let Some(us) =
            text.lines().find_map(|l| l.strip_prefix("  made-p99-us: ")).and_then(|v| v.trim().parse::<f64>().ok())
        {
            p99[usize::from(on)].push(us);
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let (off, on) = (mean(&p99[0]), mean(&p99[1]));
    println!(
        "analysis: `made` latency p99, analysis off {:.1} ms, on {:.1} ms (mean of two phases each): ratio on/off {:.2}",
        off / 1000.0,
        on / 1000.0,
        on / off
    );
    println!("  target (issue 24): analysis adds at most 10 % to the p99, a ratio of at most 1.10");
}

/// One throughput run.
struct Run {
    boards: usize,
    /// Boards per round (each round has its own summary topic).
    per_round: usize,
    seconds: Duration,
    /// Moves this many times as often as at a tournament.
    factor: f64,
    /// The run is stopped, and fails, when the process grows beyond this.
    max_rss_mib: u64,
    analysis: Option<AnalysisRun>,
}

/// A scratch folder for one part, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(part: &str) -> Self {
        Self(std::env::temp_dir().join(format!("boardcast-bench-mqtt-{part}-{}", std::process::id())))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The value after `name` on the command line (cargo adds `--bench`, which
/// is ignored like anything else unknown).
fn flag<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::args().skip_while(|a| a != name).nth(1).and_then(|v| v.parse().ok())
}

fn fixture_games(file: &str) -> Vec<SourceGame> {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/games/{file}", env!("CARGO_MANIFEST_DIR")))
        .expect("the vendored games");
    read_games(&text).expect("they parse")
}

/// The daemon's runtime (two workers, as `boardcast run` has on this
/// machine), and separate ones for the simulated boards and the
/// subscriber, so that their CPU time can be told apart by thread name.
struct Runtimes {
    daemon: Runtime,
    boards: Runtime,
    subscriber: Runtime,
}

impl Runtimes {
    fn new() -> Self {
        let build = |name: &str, workers: usize| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .thread_name(name)
                .enable_all()
                .build()
                .expect("a runtime")
        };
        Self { daemon: build("bc-daemon", 2), boards: build("bc-boards", 1), subscriber: build("bc-subscriber", 1) }
    }
}

/// A Mosquitto for one part of the benchmark: the test helper's broker,
/// restarted with a configuration for load (the helper's logs every
/// message to a file, which would slow the broker down) and with `$SYS`
/// statistics every second. `set_tcp_nodelay true` as the daemon's managed
/// Mosquitto has it, and as docs/service.md asks of a hall's broker;
/// `--mosquitto-nagle` leaves Mosquitto's default (Nagle's algorithm on)
/// to show what that costs.
fn broker(dir: &Path) -> Mosquitto {
    let mut broker = Mosquitto::start(dir, false).expect("Mosquitto was there a moment ago");
    broker.stop();
    let config = format!(
        "listener {port} 127.0.0.1\nallow_anonymous true\nlog_dest file {log}\nlog_type error\nlog_type warning\n\
         log_type notice\nlog_type information\nmax_queued_messages 100000\npersistence false\nsys_interval 1\n{nodelay}",
        port = broker.port,
        log = dir.join("mosquitto.log").display(),
        nodelay = if nagle() { "" } else { "set_tcp_nodelay true\n" }
    );
    std::fs::write(dir.join("mosquitto.conf"), config).expect("the broker's configuration");
    broker.restart();
    broker
}

/// The wall clock in milliseconds, and a session clock started at that
/// millisecond (so that `ts_ms` in payloads is exact to the millisecond,
/// not up to one early).
fn start_clock() -> (SessionClock, i64) {
    loop {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970");
        if now.subsec_micros() % 1000 < 50 {
            return (SessionClock::start(1.0), now.as_millis() as i64);
        }
        std::hint::spin_loop();
    }
}

fn wall_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_micros() as i64
}

/// The shared publisher task, as `boardcast run` starts it.
struct Publisher {
    items: mpsc::UnboundedSender<Item>,
    task: JoinHandle<()>,
    log: JoinHandle<Vec<String>>,
    settings: FeedSettings,
}

fn start_publisher(rt: &Runtime, port: u16, boards: Vec<String>, epoch_ms: i64, delay: Duration) -> Publisher {
    let topics = Topics::new(ROOT, "bench");
    let boot: Arc<str> = format!("{epoch_ms:x}-{:x}", std::process::id()).into();
    let settings = PublisherSettings {
        broker: BrokerUrl {
            scheme: Scheme::Mqtt,
            host: "127.0.0.1".into(),
            port,
            url: format!("mqtt://127.0.0.1:{port}"),
            ca_file: None,
            client_auth: None,
        },
        client_id: "boardcast-bench".into(),
        credentials: None,
        keep_alive: Duration::from_secs(15),
        topics: topics.clone(),
        boot: boot.clone(),
        public_delay: delay,
        queue_limit: 1_000_000,
        boards,
        started_ms: epoch_ms,
    };
    let (items, items_rx) = mpsc::unbounded_channel();
    // Nobody here waits for the publisher to catch up.
    let (_marks, marks_rx) = mpsc::unbounded_channel();
    let (report_tx, mut report_rx) = mpsc::unbounded_channel();
    let task = rt.spawn(client::run(settings, items_rx, marks_rx, report_tx));
    // What the publisher says, kept for the end (connections, failures,
    // refusals, undelivered messages).
    let log = rt.spawn(async move {
        let mut lines = Vec::new();
        while let Some(event) = report_rx.recv().await {
            match event {
                PublisherEvent::Connected { .. } => {}
                other => lines.push(format!("{other:?}")),
            }
        }
        lines
    });
    Publisher { items, task, log, settings: FeedSettings { topics, boot, languages: Language::ALL.to_vec() } }
}

impl Publisher {
    /// Lets the publisher deliver what is left and stop; returns what it
    /// reported.
    fn finish(self, rt: &Runtime) -> Vec<String> {
        drop(self.items);
        let _ = rt.block_on(self.task);
        rt.block_on(self.log).unwrap_or_default()
    }
}

/// A board: its driver, fed from `inputs`, its outputs on `outputs`.
struct BoardTask {
    inputs: mpsc::Sender<Input>,
    outputs: mpsc::UnboundedReceiver<Output>,
    driver: JoinHandle<BoardSession>,
}

fn start_board(
    rt: &Runtime,
    publisher: &Publisher,
    name: &str,
    round: &str,
    clock: SessionClock,
    epoch_ms: i64,
    positions: Option<&mpsc::UnboundedSender<Searched>>,
) -> BoardTask {
    let session = BoardSession::new(Protocol::EVENTS, ReconstructorConfig::default(), GameSetup::default());
    let feed = BoardFeed::new(publisher.settings.clone(), name, BoardPath::new("Bench", round, name), epoch_ms, name);
    let (inputs, inputs_rx) = mpsc::channel(256);
    let (outputs_tx, outputs) = mpsc::unbounded_channel();
    let mut outlets = Outlets::default();
    outlets.push(Forward::to(feed, publisher.items.clone()));
    outlets.push(Forward::to(EveryOutput::default(), outputs_tx));
    if let Some(positions) = positions {
        // As the daemon wires it (cmd/daemon/analysis.rs): every new
        // position of the board to the engine pool.
        outlets.push(Forward::to(Positions::new(BoardPath::new("Bench", round, name), name), positions.clone()));
    }
    let driver = rt.spawn(drive(session, inputs_rx, outlets, clock));
    BoardTask { inputs, outputs, driver }
}

fn start_picture() -> SensorEvent {
    SensorEvent::Board(Box::new(Picture::from_board(&Board::new())))
}

// ---------------------------------------------------------------------------
// 1. Latency

fn latency(games_wanted: usize) {
    let games: Vec<SourceGame> =
        fixture_games("livechess-vestland-round1.pgn").into_iter().take(games_wanted).collect();
    let runtimes = Runtimes::new();
    let scratch = Scratch::new("latency");
    let mosquitto = broker(&scratch.0);
    let rt = &runtimes.daemon;
    let subscriber =
        Subscriber::start(&runtimes.subscriber, mosquitto.port, &format!("{ROOT}/v1/live/+/+/+/moves"), "bench-moves");
    let connected = Instant::now() + Duration::from_secs(10);
    while subscriber.connections() == 0 {
        assert!(Instant::now() < connected, "the subscriber connects to Mosquitto");
        std::thread::sleep(Duration::from_millis(5));
    }
    // Its SUBSCRIBE follows the CONNACK at once.
    std::thread::sleep(Duration::from_millis(300));

    let (clock, epoch_ms) = start_clock();
    let names: Vec<String> = (1..=games.len()).map(|i| format!("L{i}")).collect();
    let publisher = start_publisher(rt, mosquitto.port, names.clone(), epoch_ms, Duration::ZERO);
    let settle = ReconstructorConfig::default().settle;
    let (mut at_once, mut settled) = (Vec::new(), Vec::new());
    let mut seen = 0;
    for (game, name) in games.iter().zip(&names) {
        let mut board = start_board(rt, &publisher, name, "latency", clock, epoch_ms, None);
        let send = |event: SensorEvent| {
            board
                .inputs
                .blocking_send(Input { t: clock.now(), body: InputBody::Event(event) })
                .expect("the driver runs");
        };
        send(start_picture());
        loop {
            match board.outputs.blocking_recv().expect("the driver runs") {
                Output::Event(e) if matches!(e.kind, EventKind::GameStarted { .. }) => break,
                _ => {}
            }
        }
        let topic = format!("{ROOT}/v1/live/Bench/latency/{name}/moves");
        let mut pos = game.start.clone();
        for (ply, &m) in game.moves.iter().enumerate() {
            let before = pos.board().clone();
            pos.play_unchecked(m);
            let mut written = Instant::now();
            for (i, (square, cell)) in changes(&before, pos.board()).into_iter().enumerate() {
                if i > 0 {
                    // A hand takes a moment from one square to the next.
                    std::thread::sleep(Duration::from_millis(20));
                }
                written = Instant::now();
                send(SensorEvent::Square { square, cell });
            }
            let is_it = |r: &mqtt_support::Received| {
                r.topic == topic && r.json["kind"] == "made" && r.json["ply"].as_u64() == Some(ply as u64 + 1)
            };
            assert!(
                subscriber.wait_for(Duration::from_secs(5), |r| r[seen..].iter().any(is_it)),
                "no made message for ply {} ({m}) on {name}",
                ply + 1
            );
            let received = subscriber.received();
            let index = seen + received[seen..].iter().position(is_it).expect("found above");
            seen = index + 1;
            let latency = received[index].at - written;
            if latency >= settle {
                settled.push(latency - settle);
            } else {
                at_once.push(latency);
            }
            while board.outputs.try_recv().is_ok() {}
            // Players take more than a moment between moves.
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(board.inputs);
        let _ = rt.block_on(board.driver);
    }
    let said = publisher.finish(rt);
    println!(
        "latency, last sensor event into the driver -> `made` message received from Mosquitto ({} games, {} moves)",
        games.len(),
        at_once.len() + settled.len()
    );
    report("moves judged at once", &mut at_once);
    report(&format!("moves judged after settle_ms ({} ms subtracted)", settle.as_millis()), &mut settled);
    if !said.is_empty() {
        println!("publisher said: {said:?}");
    }
    println!();
}

fn report(what: &str, samples: &mut [Duration]) {
    if samples.is_empty() {
        println!("  {what}: none");
        return;
    }
    samples.sort();
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "  {what}: n={}, p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        samples.len(),
        us(pick(0.5)),
        us(pick(0.99)),
        us(pick(1.0))
    );
    let bounds = [1, 2, 5, 10, 20, 50, u64::MAX];
    let mut counts = [0usize; 7];
    for s in samples.iter() {
        counts[bounds.iter().position(|&b| s.as_millis() < u128::from(b)).expect("the last is unbounded")] += 1;
    }
    println!(
        "    < 1 ms: {}, 1-2 ms: {}, 2-5 ms: {}, 5-10 ms: {}, 10-20 ms: {}, 20-50 ms: {}, more: {}",
        counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6]
    );
}

/// The field updates a move makes, as hands make them: every square it
/// empties first (the captured piece, the piece lifted), then every square
/// it fills (as in benches/latency.rs).
fn changes(before: &Board, after: &Board) -> Vec<(Square, Cell)> {
    let cell = |board: &Board, sq: Square| board.piece_at(sq).map_or(Cell::Empty, Cell::Piece);
    let mut lifts = Vec::new();
    let mut places = Vec::new();
    for sq in Square::ALL {
        let (was, is) = (cell(before, sq), cell(after, sq));
        if was == is {
            continue;
        }
        if was != Cell::Empty {
            lifts.push((sq, Cell::Empty));
        }
        if is != Cell::Empty {
            places.push((sq, is));
        }
    }
    lifts.extend(places);
    lifts
}

// ---------------------------------------------------------------------------
// 2. Throughput

/// What the throughput subscriber has counted.
#[derive(Default)]
struct Tally {
    messages: u64,
    bytes: u64,
    /// By tree and topic: `live/moves`, `public/state`, `live/summary`,
    /// `bridges` …
    by_topic: BTreeMap<String, u64>,
    /// Live `moves` messages by kind.
    moves_by_kind: BTreeMap<String, u64>,
    /// (board, game, seq) of every live `made` message.
    made: HashSet<(String, u64, u64)>,
    made_duplicates: u64,
    /// Receiving wall-clock time minus `ts_ms`, in microseconds.
    made_latency_us: Vec<i64>,
    last_made: Option<Instant>,
    /// Mosquitto's `$SYS/broker/publish/messages/…` counters.
    sys: BTreeMap<String, u64>,
    /// When the public `state` of (board, game, ply) was first received.
    public_state_at: HashMap<(String, u64, u64), Instant>,
    /// Non-empty `analysis` messages received.
    analyses: u64,
    /// From a position's public `state` to its `analysis`, in microseconds.
    analysis_latency_us: Vec<i64>,
}

/// A subscriber on `bench/#` that counts what it receives and reads only
/// the `moves` payloads (the test helper keeps every message as JSON, which
/// at these rates would make the process's memory the subscriber's).
struct Counter {
    tally: Arc<Mutex<Tally>>,
    subscribed: Arc<AtomicUsize>,
    /// The broker is about to stop: a lost connection is no news.
    stopping: Arc<AtomicBool>,
}

impl Counter {
    fn start(rt: &Runtime, port: u16) -> Self {
        let tally = Arc::new(Mutex::new(Tally::default()));
        let subscribed = Arc::new(AtomicUsize::new(0));
        let mut options = MqttOptions::new("bench-counter", "127.0.0.1", port);
        options.set_max_packet_size(1 << 21, 1 << 21).set_keep_alive(Duration::from_secs(15));
        let (client, mut eventloop) = AsyncClient::new(options, 64);
        let stopping = Arc::new(AtomicBool::new(false));
        let (tally2, subscribed2, stopping2) = (tally.clone(), subscribed.clone(), stopping.clone());
        rt.spawn(async move {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        let _ = client.subscribe(format!("{ROOT}/#"), QoS::AtLeastOnce).await;
                        let _ = client.subscribe("$SYS/broker/publish/messages/+", QoS::AtMostOnce).await;
                    }
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        subscribed2.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(Event::Incoming(Packet::Publish(p))) => {
                        let at = Instant::now();
                        let received_us = wall_us();
                        let mut tally = tally2.lock().expect("not poisoned");
                        if let Some(name) = p.topic.strip_prefix("$SYS/broker/publish/messages/") {
                            let value = std::str::from_utf8(&p.payload).ok().and_then(|v| v.trim().parse().ok());
                            tally.sys.insert(name.to_owned(), value.unwrap_or(0));
                            continue;
                        }
                        tally.messages += 1;
                        tally.bytes += p.payload.len() as u64;
                        let levels: Vec<&str> = p.topic.split('/').collect();
                        let key = match levels.as_slice() {
                            [_, _, "bridges", ..] => "bridges".to_owned(),
                            [_, _, tree, .., last] => format!("{tree}/{last}"),
                            _ => p.topic.clone(),
                        };
                        *tally.by_topic.entry(key.clone()).or_default() += 1;
                        if key == "public/state" || key == "public/analysis" {
                            let Ok(json) = serde_json::from_slice::<Value>(&p.payload) else { continue };
                            let board = levels.get(levels.len().saturating_sub(2)).copied().unwrap_or("?");
                            let id = (
                                board.to_owned(),
                                json["game"].as_u64().unwrap_or(0),
                                json["ply"].as_u64().unwrap_or(0),
                            );
                            if key == "public/state" {
                                tally.public_state_at.entry(id).or_insert(at);
                            } else {
                                tally.analyses += 1;
                                if let Some(public) = tally.public_state_at.get(&id).copied() {
                                    tally.analysis_latency_us.push(at.duration_since(public).as_micros() as i64);
                                }
                            }
                            continue;
                        }
                        if key != "live/moves" {
                            continue;
                        }
                        let Ok(json) = serde_json::from_slice::<Value>(&p.payload) else { continue };
                        let kind = json["kind"].as_str().unwrap_or("?").to_owned();
                        *tally.moves_by_kind.entry(kind.clone()).or_default() += 1;
                        if kind == "made" {
                            let board = json["board"].as_str().unwrap_or("?").to_owned();
                            let id = (board, json["game"].as_u64().unwrap_or(0), json["seq"].as_u64().unwrap_or(0));
                            if tally.made.insert(id) {
                                let ts_ms = json["ts_ms"].as_i64().unwrap_or(0);
                                tally.made_latency_us.push(received_us - ts_ms * 1000);
                                tally.last_made = Some(at);
                            } else {
                                tally.made_duplicates += 1;
                            }
                        }
                    }
                    Ok(_) => {}
                    Err(error) => {
                        if !stopping2.load(Ordering::SeqCst) {
                            eprintln!("subscriber: {error}");
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
        });
        Self { tally, subscribed, stopping }
    }

    fn with<R>(&self, f: impl FnOnce(&Tally) -> R) -> R {
        f(&self.tally.lock().expect("not poisoned"))
    }
}

/// CPU time so far, in clock ticks: the whole process, and its threads by
/// name.
#[derive(Clone, Debug, Default)]
struct Cpu {
    process: u64,
    threads: BTreeMap<String, u64>,
    mosquitto: u64,
    /// The engines (child processes named `stockfish`).
    engines: u64,
}

fn cpu_now() -> Cpu {
    let mut cpu = Cpu { process: stat_ticks(Path::new("/proc/self/stat")).unwrap_or(0), ..Cpu::default() };
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return cpu };
    for task in tasks.flatten() {
        let path = task.path();
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default().trim().to_owned();
        let group = if name.starts_with("bc-") { name } else { "main and other".to_owned() };
        *cpu.threads.entry(group).or_default() += stat_ticks(&path.join("stat")).unwrap_or(0);
        // Mosquitto is this process's child.
        for child in std::fs::read_to_string(path.join("children")).unwrap_or_default().split_whitespace() {
            let proc_dir = PathBuf::from(format!("/proc/{child}"));
            let comm = std::fs::read_to_string(proc_dir.join("comm")).unwrap_or_default();
            if comm.trim() == "mosquitto" {
                cpu.mosquitto += stat_ticks(&proc_dir.join("stat")).unwrap_or(0);
            } else if comm.trim().starts_with("stockfish") {
                cpu.engines += stat_ticks(&proc_dir.join("stat")).unwrap_or(0);
            }
        }
    }
    cpu
}

/// What a simulated board did.
#[derive(Default)]
struct Played {
    plies: u64,
    readings: u64,
    finished: bool,
}

/// One simulated board at a tournament: the game's moves as hands make
/// them, a clock pressed after every move and read once a second, from `go`
/// until `end`.
#[allow(clippy::too_many_arguments)]
async fn play_board(
    game: SourceGame,
    inputs: mpsc::Sender<Input>,
    clock: SessionClock,
    go: tokio::time::Instant,
    end: tokio::time::Instant,
    factor: f64,
    mut rng: Rng,
) -> Played {
    let think = |rng: &mut Rng| Duration::from_millis(rng.range(10_000, 30_000)).div_f64(factor);
    let send = |event: SensorEvent| {
        let inputs = inputs.clone();
        async move {
            let _ = inputs.send(Input { t: clock.now(), body: InputBody::Event(event) }).await;
        }
    };
    let mut played = Played::default();
    let mut pos = game.start.clone();
    let mut moves = game.moves.iter();
    // Ninety minutes each; White's clock starts at `go`.
    let mut left = [5_400_000u64; 2];
    let mut running = Some(Color::White);
    let mut charged = go;
    let mut charge = |running: Option<Color>, left: &mut [u64; 2]| {
        let now = tokio::time::Instant::now();
        if let Some(color) = running {
            let i = usize::from(color == Color::Black);
            left[i] = left[i].saturating_sub(now.duration_since(charged).as_millis() as u64);
        }
        charged = now;
    };
    let reading = |left: &[u64; 2], running| {
        SensorEvent::Clock(ClockReading::ByColor { white_ms: left[0], black_ms: left[1], running })
    };
    // Readings are spread over the second rather than all boards at once.
    let mut next_tick = go + Duration::from_millis(rng.range(0, 999));
    let mut next_move = go + think(&mut rng).mul_f64(rng.range(1, 100) as f64 / 100.0);
    let mut press: Option<tokio::time::Instant> = None;
    tokio::time::sleep_until(go).await;
    send(reading(&left, running)).await;
    played.readings += 1;
    loop {
        let next = next_tick.min(next_move).min(press.unwrap_or(next_tick));
        if next >= end {
            break;
        }
        tokio::time::sleep_until(next).await;
        if press == Some(next) {
            press = None;
            charge(running, &mut left);
            running = Some(pos.turn());
            send(reading(&left, running)).await;
            played.readings += 1;
        } else if next == next_move {
            let Some(&m) = moves.next() else {
                // The game is over: the clock is stopped.
                charge(running, &mut left);
                running = None;
                send(reading(&left, running)).await;
                played.finished = true;
                next_move = end;
                continue;
            };
            let before = pos.board().clone();
            pos.play_unchecked(m);
            for (i, (square, cell)) in changes(&before, pos.board()).into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                send(SensorEvent::Square { square, cell }).await;
            }
            played.plies += 1;
            // The next move comes `think` after this one; the clock is
            // pressed in between.
            let now = tokio::time::Instant::now();
            let think = think(&mut rng);
            press = Some(now + Duration::from_millis(rng.range(200, 1000)).min(think / 2));
            next_move = now + think;
        } else {
            charge(running, &mut left);
            send(reading(&left, running)).await;
            played.readings += 1;
            next_tick += Duration::from_secs(1);
        }
    }
    played
}

/// What a board's outputs said: the (game, seq) of every move made, and the
/// alerts by kind.
#[derive(Default)]
struct Heard {
    made: Vec<(u64, u64)>,
    alerts: BTreeMap<String, u64>,
}

/// Reads a board's outputs as the daemon's log task does: notes the game's
/// start, every move made and every alert.
async fn listen(
    mut outputs: mpsc::UnboundedReceiver<Output>,
    started: Arc<AtomicUsize>,
    made_events: Arc<AtomicU64>,
) -> Heard {
    let mut heard = Heard::default();
    while let Some(output) = outputs.recv().await {
        let Output::Event(event) = output else { continue };
        match &event.kind {
            EventKind::GameStarted { .. } => {
                started.fetch_add(1, Ordering::SeqCst);
            }
            EventKind::MoveMade(_) => {
                heard.made.push((u64::from(event.game), event.seq));
                made_events.fetch_add(1, Ordering::SeqCst);
            }
            EventKind::Alert(alert) => {
                let kind = alert.kind.code().to_owned();
                *heard.alerts.entry(kind).or_default() += 1;
            }
            _ => {}
        }
    }
    heard
}

fn throughput(run: &Run) {
    let Run { boards, per_round, seconds, factor, max_rss_mib, analysis } = *run;
    let mut corpus = fixture_games("livechess-vestland-round1.pgn");
    corpus.extend(fixture_games("twic0920-sample.pgn"));
    corpus.retain(|g| !g.chess960 && g.start == Chess::default());
    let clk_tck = clock_ticks_per_second();
    let runtimes = Runtimes::new();
    let scratch = Scratch::new(&format!("throughput-{factor}"));
    let mosquitto = broker(&scratch.0);
    let port = mosquitto.port;
    let mosquitto = Arc::new(Mutex::new(Some(mosquitto)));
    let rt = &runtimes.daemon;
    let counter = Counter::start(&runtimes.subscriber, port);
    let subscribed = Instant::now() + Duration::from_secs(10);
    while counter.subscribed.load(Ordering::SeqCst) < 2 {
        assert!(Instant::now() < subscribed, "the subscriber subscribes");
        std::thread::sleep(Duration::from_millis(5));
    }
    let made_events = Arc::new(AtomicU64::new(0));
    let t_start = Instant::now();
    watchdog(
        mosquitto.clone(),
        counter.tally.clone(),
        made_events.clone(),
        max_rss_mib,
        t_start + seconds + Duration::from_secs(240),
        scratch.0.clone(),
    );

    let rounds = boards.div_ceil(per_round);
    eprintln!("throughput at {factor}x: starting {boards} boards in {rounds} round(s)");
    let (clock, epoch_ms) = start_clock();
    let names: Vec<String> = (1..=boards).map(|i| format!("b{i:03}")).collect();
    let delay = Duration::from_secs(flag("--public-delay-s").unwrap_or(0));
    let publisher = start_publisher(rt, port, names.clone(), epoch_ms, delay);
    // The engine pool, fed through a relay that counts the positions.
    let positions_sent = Arc::new(AtomicU64::new(0));
    let (pool, relay) = match analysis {
        Some(a) => {
            let engine = PathBuf::from(std::env::var("STOCKFISH_BIN").unwrap_or("/usr/games/stockfish".into()));
            assert!(engine.exists(), "{} is there (apt-get install stockfish, or set STOCKFISH_BIN)", engine.display());
            let settings = PoolSettings {
                engine,
                engines: a.engines,
                threads: 1,
                hash_mb: 16,
                budget: a.budget,
                nice: a.nice,
                deadline: match a.budget {
                    Budget::MoveTime { ms } => Duration::from_millis(ms) + Duration::from_secs(10),
                    Budget::Nodes { .. } => Duration::from_secs(30),
                },
                delay: a.delay,
                topics: publisher.settings.topics.clone(),
            };
            let (to_pool, pool_rx) = mpsc::unbounded_channel::<Searched>();
            let (relay, mut relay_rx) = mpsc::unbounded_channel::<Searched>();
            let sent = positions_sent.clone();
            rt.spawn(async move {
                while let Some(position) = relay_rx.recv().await {
                    sent.fetch_add(1, Ordering::SeqCst);
                    let _ = to_pool.send(position);
                }
            });
            (Some(rt.spawn(run_pool(settings, pool_rx, publisher.items.clone()))), Some(relay))
        }
        None => (None, None),
    };
    let started = Arc::new(AtomicUsize::new(0));
    let mut inputs = Vec::new();
    let mut drivers = Vec::new();
    let mut listeners = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let round = (i / per_round + 1).to_string();
        let board = start_board(rt, &publisher, name, &round, clock, epoch_ms, relay.as_ref());
        board.inputs.blocking_send(Input { t: clock.now(), body: InputBody::Event(start_picture()) }).expect("runs");
        listeners.push(rt.spawn(listen(board.outputs, started.clone(), made_events.clone())));
        inputs.push(board.inputs);
        drivers.push(board.driver);
    }
    let limit = Instant::now() + Duration::from_secs(30);
    while started.load(Ordering::SeqCst) < boards {
        assert!(Instant::now() < limit, "every board sees the start position");
        std::thread::sleep(Duration::from_millis(10));
    }
    eprintln!("throughput at {factor}x: every board sees its game; playing for {} s", seconds.as_secs());
    // Let the start-up publications through before timing.
    std::thread::sleep(Duration::from_secs(2));

    let snapshot = |t: &Tally| (t.messages, t.bytes, t.by_topic.clone(), t.sys.clone());
    let before = (cpu_now(), counter.with(snapshot));
    let t0 = tokio::time::Instant::now() + Duration::from_millis(100);
    let end = t0 + seconds;
    let players: Vec<JoinHandle<Played>> = inputs
        .into_iter()
        .enumerate()
        .map(|(i, tx)| {
            let game = corpus[i % corpus.len()].clone();
            let rng = Rng::new(0x6d71_7474 ^ (i as u64 * 7919) ^ factor.to_bits());
            runtimes.boards.spawn(play_board(game, tx, clock, t0, end, factor, rng))
        })
        .collect();
    loop {
        let left = end.into_std().saturating_duration_since(Instant::now());
        if left < Duration::from_secs(1) {
            std::thread::sleep(left);
            break;
        }
        std::thread::sleep(left.min(Duration::from_secs(10)));
        let (messages, made) = counter.with(|t| (t.messages, t.made.len()));
        eprintln!(
            "  {:>3.0} s: {made} of {} `made` messages received, {messages} messages in all, RSS {} MiB",
            t0.elapsed().as_secs_f64(),
            made_events.load(Ordering::SeqCst),
            status_kib("self", "VmRSS:") / 1024
        );
    }
    let window_end = Instant::now();
    let after = (cpu_now(), counter.with(snapshot));
    let rss_window = status_kib("self", "VmRSS:");

    eprintln!("throughput at {factor}x: the boards stop; waiting for the last messages");
    let played: Vec<Played> = players.into_iter().map(|p| runtimes.boards.block_on(p).expect("a board")).collect();
    // The boards' inputs have closed: the drivers judge what is left and
    // stop.
    for driver in drivers {
        let _ = rt.block_on(driver);
    }
    drop(relay);
    let heard: Vec<Heard> = listeners.into_iter().map(|l| rt.block_on(l).expect("a listener")).collect();
    let expected: HashSet<(String, u64, u64)> = heard
        .iter()
        .zip(&names)
        .flat_map(|(h, name)| h.made.iter().map(move |&(game, seq)| (name.clone(), game, seq)))
        .collect();
    // Everything published arrives before the publisher is stopped (which
    // would give it only 3 s).
    let arrived = |t: &Tally| expected.iter().all(|id| t.made.contains(id));
    let drain_limit = Instant::now() + Duration::from_secs(120);
    while !counter.with(arrived) && Instant::now() < drain_limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    if let Some(pool) = pool {
        let _ = rt.block_on(pool);
    }
    let said = publisher.finish(rt);
    std::thread::sleep(Duration::from_millis(1500)); // the last $SYS figures
    let rss_peak = status_kib("self", "VmHWM:");
    let mosquitto_peak = mosquitto_pid().map_or(0, |pid| status_kib(&pid, "VmHWM:"));

    // The figures.
    let secs = seconds.as_secs_f64();
    let plies: u64 = played.iter().map(|p| p.plies).sum();
    let readings: u64 = played.iter().map(|p| p.readings).sum();
    let finished = played.iter().filter(|p| p.finished).count();
    let mut alerts: BTreeMap<String, u64> = BTreeMap::new();
    for (kind, n) in heard.iter().flat_map(|h| &h.alerts) {
        *alerts.entry(kind.clone()).or_default() += n;
    }
    // Every ply a board played must have become exactly one move made:
    // fewer would be a move lost by the reconstructor, more an invented one.
    let misread: Vec<&String> = played
        .iter()
        .zip(&heard)
        .zip(&names)
        .filter(|((p, h), _)| p.plies != h.made.len() as u64)
        .map(|(_, name)| name)
        .collect();
    let tally = counter.tally.lock().expect("not poisoned");
    let missing = expected.iter().filter(|id| !tally.made.contains(*id)).count();
    let unexpected = tally.made.iter().filter(|id| !expected.contains(*id)).count();
    println!(
        "throughput: {boards} boards in {rounds} round(s), {secs:.0} s, a move every {:.1} s per board on average \
         (10-30 s / {factor}), the clock read every second and pressed after each move",
        20.0 / factor
    );
    println!(
        "  sensor inputs: {plies} moves made ({:.1}/s), {readings} clock readings ({:.0}/s); {finished} games ran out of moves",
        plies as f64 / secs,
        readings as f64 / secs
    );
    println!(
        "  moves lost or invented by the reconstructor: {} boards whose moves made differ from the plies played {:?}",
        misread.len(),
        misread
    );
    println!(
        "  `made` messages: {} expected (MoveMade events), {} received, {missing} missing, {unexpected} unexpected, \
         {} duplicates",
        expected.len(),
        tally.made.len(),
        tally.made_duplicates
    );
    println!("  live `moves` by kind: {:?}", tally.moves_by_kind);
    if !alerts.is_empty() {
        println!("  alerts: {alerts:?}");
    }
    let (m0, b0, topics0, sys0) = &before.1;
    let (m1, b1, topics1, sys1) = &after.1;
    println!(
        "  received by the subscriber on {ROOT}/# during the run: {} messages ({:.0}/s), {:.1} MB ({:.2} MB/s)",
        m1 - m0,
        (m1 - m0) as f64 / secs,
        (b1 - b0) as f64 / 1e6,
        (b1 - b0) as f64 / 1e6 / secs
    );
    let per_topic: Vec<String> = topics1
        .iter()
        .map(|(k, v)| (k, v - topics0.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{k} {:.0}/s", n as f64 / secs))
        .collect();
    println!("    by topic: {}", per_topic.join(", "));
    let dropped = |sys: &BTreeMap<String, u64>| sys.get("dropped").copied().unwrap_or(0);
    println!(
        "  Mosquitto dropped {} messages during the run ({} in all)",
        dropped(sys1).saturating_sub(dropped(sys0)),
        dropped(&tally.sys)
    );
    let mut lat = tally.made_latency_us.clone();
    lat.sort_unstable();
    if !lat.is_empty() {
        let pick = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
        println!(
            "  `made` latency (receiving wall time - ts_ms): n={}, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            lat.len(),
            pick(0.5),
            pick(0.99),
            pick(1.0)
        );
        println!("  made-p99-us: {}", lat[((lat.len() - 1) as f64 * 0.99).round() as usize]);
    }
    if let Some(last) = tally.last_made {
        let after_end = last.checked_duration_since(window_end).map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        println!("  the last `made` message arrived {after_end:.0} ms after the boards stopped");
    }
    let ticks = |a: u64, b: u64| (b.saturating_sub(a)) as f64 / clk_tck as f64;
    let cpu_s = ticks(before.0.process, after.0.process);
    println!("  CPU time during the run: process {:.2} s ({:.1} % of one core)", cpu_s, cpu_s / secs * 100.0);
    for (group, t1) in &after.0.threads {
        let t0 = before.0.threads.get(group).copied().unwrap_or(0);
        println!("    {group}: {:.2} s ({:.1} %)", ticks(t0, *t1), ticks(t0, *t1) / secs * 100.0);
    }
    let mq = ticks(before.0.mosquitto, after.0.mosquitto);
    println!("    Mosquitto (child process): {:.2} s ({:.1} %)", mq, mq / secs * 100.0);
    if analysis.is_some() {
        let en = ticks(before.0.engines, after.0.engines);
        println!("    engines (child processes): {:.2} s ({:.1} % of one core)", en, en / secs * 100.0);
        let mut lat = tally.analysis_latency_us.clone();
        lat.sort_unstable();
        let sent = positions_sent.load(Ordering::SeqCst);
        println!(
            "  analysis: {sent} positions to the engines, {} analyses published, {} not (dropped as stale, or the run ended)",
            tally.analyses,
            sent.saturating_sub(tally.analyses)
        );
        if !lat.is_empty() {
            let pick = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0;
            println!(
                "  public `state` received -> its `analysis` received: n={}, p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
                lat.len(),
                pick(0.5),
                pick(0.99),
                pick(1.0)
            );
        }
    }
    println!(
        "  memory: process VmRSS {:.0} MiB at the end of the run, VmHWM {:.0} MiB; Mosquitto VmHWM {:.0} MiB",
        rss_window as f64 / 1024.0,
        rss_peak as f64 / 1024.0,
        mosquitto_peak as f64 / 1024.0
    );
    if !said.is_empty() {
        println!("  publisher said: {said:?}");
    }
    println!();
    drop(tally);
    counter.stopping.store(true, Ordering::SeqCst);
    drop(mosquitto.lock().expect("not poisoned").take());
    assert_eq!(missing, 0, "every `made` message arrives");
    assert!(misread.is_empty(), "every ply played is one move made");
}

/// The pid of the Mosquitto this process started.
fn mosquitto_pid() -> Option<String> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    tasks
        .flatten()
        .flat_map(|t| {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            children.split_whitespace().map(str::to_owned).collect::<Vec<_>>()
        })
        .find(|pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim() == "mosquitto")
}

/// Stops the run, as failed, when the process grows beyond `max_rss_mib`
/// or the run takes far longer than it should: a publisher that falls
/// behind would otherwise take the machine's memory. Stops Mosquitto
/// first.
fn watchdog(
    mosquitto: Arc<Mutex<Option<Mosquitto>>>,
    tally: Arc<Mutex<Tally>>,
    made_events: Arc<AtomicU64>,
    max_rss_mib: u64,
    deadline: Instant,
    scratch: PathBuf,
) {
    let since = Instant::now();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let rss_mib = status_kib("self", "VmRSS:") / 1024;
            let why = if rss_mib > max_rss_mib {
                format!("the process grew to {rss_mib} MiB (more than --max-rss-mib {max_rss_mib})")
            } else if Instant::now() > deadline {
                "the run did not end in time".to_owned()
            } else {
                continue;
            };
            let (messages, made, last) = {
                let t = tally.lock().expect("not poisoned");
                (t.messages, t.made.len(), t.last_made)
            };
            let last = last.map_or_else(
                || "none".to_owned(),
                |at| format!("{:.1} s after the start", at.saturating_duration_since(since).as_secs_f64()),
            );
            println!(
                "  FAILED after {:.1} s: {why}. The subscriber had received {messages} messages and {made} of {} \
                 `made` messages (the last {last}): the publisher has fallen behind.",
                since.elapsed().as_secs_f64(),
                made_events.load(Ordering::SeqCst)
            );
            drop(mosquitto.lock().map(|mut m| m.take()));
            let _ = std::fs::remove_dir_all(&scratch);
            std::process::exit(2);
        }
    });
}
