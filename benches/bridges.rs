//! A hall of several bridges on one feed, at scale: `--bridges` real
//! `boardcast run` daemons (4), each reading `--boards-per-bridge`
//! simulated DGT boards (10) over pseudo-terminals, all publishing to one
//! hall Mosquitto, and a replica Mosquitto bridged from it as
//! docs/service.md sets one up for the displays. The small version of this
//! run, with a dying bridge and the overview page, is the test
//! tests/it/bridges.rs.
//!
//! Every board is a `boardcast simulate` child replaying a capture
//! synthesised from a real game (`livechess-vestland-round1.pgn`, then
//! `twic0920-sample.pgn`: the first standard games of at most
//! `--max-plies` plies (140), one per board) at ten times real speed, as
//! the tests' `Hall` does: 2–2.5 s of thinking between moves in board
//! time, so a move about every 0.3 s per board with the hands' movements,
//! and the daemons' reconstruction timings divided by ten.
//! All boards start together; the run ends when every simulator has
//! replayed its game and the last `made` message has reached the replica
//! (or 30 s after the last simulator ended), about a minute at the
//! defaults.
//!
//! One subscriber on the replica, on `boardcast/v1/#`, counts what the
//! displays would get: the `made` messages against the plies of the games
//! (lost: a ply of a game with no `made` message of that ply number and
//! SAN on its board; duplicates: the same session, game and seq twice),
//! each board's game rebuilt from its `moves` topic as the tests do, the
//! latency of `made` (the receiving wall time minus the payload's `ts_ms`,
//! which is when the daemon judged the move; both the machine's clock), and
//! each bridge's part of the round's summary (each part must list exactly
//! its own bridge's boards, so that together they cover every board). CPU
//! time (utime + stime) and peak memory (VmHWM) come from /proc for each
//! daemon and each Mosquitto, read just before they are stopped (so over
//! their whole life, start-up included), and for the simulators, summed,
//! as each ends.
//!
//! The run fails (exit status 1) if a move is lost, a board's game differs
//! from the one played, or a summary part is missing or lists other boards
//! than its bridge's.
//!
//! Startup code is shared with the tests by including their support
//! modules (`tests/it/support/live.rs`: `Hall`, which writes the captures
//! and configurations and starts the daemons and simulators, hence the
//! replay speed is the tests' `SPEED`; `tests/it/support/mqtt.rs`:
//! Mosquitto on free ports, the bridged replica, `game_from_moves`). Small
//! pieces are copied: a bridge's configuration from tests/it/bridges.rs,
//! and `flag` and restarting a broker without its per-message log from
//! benches/mqtt.rs (a few lines each). What `/proc` says of a process is
//! benches/support/proc.rs, shared with benches/mqtt.rs through `#[path]`.
//! The bench's own: a subscriber that only tallies (the tests' keeps every
//! message). The halls' folders (configurations, daemon and simulator
//! logs, captures, PGN) stay under `target/tmp/hall-bench-bridges-*` until
//! a later run reuses them.
//!
//! Run: `cargo bench --bench bridges`, or
//! `cargo bench --bench bridges -- --bridges 2 --boards-per-bridge 5`.

use std::{
    collections::{BTreeMap, HashMap},
    path::{Path, PathBuf},
    process::Child,
    sync::{Arc, Mutex},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

#[allow(dead_code, unreachable_pub)]
#[path = "../tests/it/support/mqtt.rs"]
mod mqtt_support;

#[allow(dead_code, unreachable_pub)]
#[path = "../tests/it/support/live.rs"]
mod live_support;

#[allow(dead_code, unreachable_pub)]
#[path = "support/proc.rs"]
mod proc;
use proc::{clock_ticks_per_second, cpu_split, status_kib};

use live_support::{Hall, SPEED, game_san, stop};
use mqtt_support::{Mosquitto, Received, game_from_moves};

const EVENT_TOPIC: &str = "boardcast/v1/live/Hall-Open/1";
const GAME_FILES: [&str; 2] = ["livechess-vestland-round1.pgn", "twic0920-sample.pgn"];

/// The value after `name` on the command line (cargo adds `--bench`, which
/// is ignored like anything else unknown).
fn flag<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::args().skip_while(|a| a != name).nth(1).and_then(|v| v.parse().ok())
}

fn main() {
    let bridges: usize = flag("--bridges").unwrap_or(4);
    let per_bridge: usize = flag("--boards-per-bridge").unwrap_or(10);
    let max_plies: usize = flag("--max-plies").unwrap_or(140);
    let ok = run(bridges, per_bridge, max_plies);
    if !ok {
        println!("FAILED");
        std::process::exit(1);
    }
}

/// One board: its bridge, name, game and simulator.
struct Board {
    bridge: usize,
    name: String,
    game: (&'static str, usize),
    san: Vec<String>,
    sim: Option<Child>,
    /// Its simulator's last CPU ticks read, and when it ended.
    sim_ticks: u64,
    ended: Option<Instant>,
}

/// What the subscriber on the replica counted.
#[derive(Default)]
struct Tally {
    messages: u64,
    /// Every message on a `moves` topic, for `game_from_moves`.
    moves: Vec<Received>,
    /// `made` messages by (board, session, game, seq): how many times.
    made: HashMap<(String, String, u64, u64), u32>,
    /// (board, ply, san) of every `made` message.
    made_plies: std::collections::HashSet<(String, u64, String)>,
    made_latency_us: Vec<i64>,
    moves_by_kind: BTreeMap<String, u64>,
    last_made: Option<Instant>,
    /// The labels of the last summary part of each bridge.
    summaries: BTreeMap<String, Vec<String>>,
    online: std::collections::BTreeSet<String>,
    probe: bool,
    subscribed: bool,
}

fn wall_us() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_micros() as i64
}

/// A subscriber on the replica that tallies (see [`Tally`]).
fn subscribe(rt: &tokio::runtime::Runtime, port: u16) -> Arc<Mutex<Tally>> {
    let tally = Arc::new(Mutex::new(Tally::default()));
    let mut options = MqttOptions::new("bench-displays", "127.0.0.1", port);
    options.set_max_packet_size(1 << 20, 1 << 20).set_keep_alive(Duration::from_secs(5));
    let (client, mut eventloop) = AsyncClient::new(options, 1024);
    let t = tally.clone();
    rt.spawn(async move {
        loop {
            match eventloop.poll().await {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    let _ = client.subscribe("boardcast/v1/#", QoS::AtLeastOnce).await;
                }
                Ok(Event::Incoming(Packet::SubAck(_))) => t.lock().expect("not poisoned").subscribed = true,
                Ok(Event::Incoming(Packet::Publish(p))) => {
                    let now_us = wall_us();
                    let at = Instant::now();
                    let json: Value = serde_json::from_slice(&p.payload).unwrap_or(Value::Null);
                    let mut t = t.lock().expect("not poisoned");
                    t.messages += 1;
                    let levels: Vec<&str> = p.topic.split('/').collect();
                    if p.topic == "boardcast/v1/probe" {
                        t.probe = true;
                    } else if levels.len() == 5 && levels[2] == "bridges" && levels[4] == "status" {
                        if json["status"] == "online" {
                            t.online.insert(levels[3].to_owned());
                        }
                    } else if p.topic.starts_with(EVENT_TOPIC) && levels.len() == 7 && levels[5] == "summary" {
                        let labels = json["boards"]
                            .as_array()
                            .map(|b| b.iter().filter_map(|b| b["label"].as_str().map(str::to_owned)).collect())
                            .unwrap_or_default();
                        t.summaries.insert(levels[6].to_owned(), labels);
                    } else if p.topic.starts_with(EVENT_TOPIC) && levels.len() == 7 && levels[6] == "moves" {
                        let kind = json["kind"].as_str().unwrap_or("?").to_owned();
                        *t.moves_by_kind.entry(kind.clone()).or_default() += 1;
                        if kind == "made" {
                            let board = levels[5].to_owned();
                            let key = (
                                board.clone(),
                                json["session"].as_str().unwrap_or_default().to_owned(),
                                json["game"].as_u64().unwrap_or(0),
                                json["seq"].as_u64().unwrap_or(0),
                            );
                            *t.made.entry(key).or_default() += 1;
                            let ply = json["ply"].as_u64().unwrap_or(0);
                            let san = json["san"].as_str().unwrap_or_default().to_owned();
                            t.made_plies.insert((board, ply, san));
                            if let Some(ts) = json["ts_ms"].as_i64() {
                                t.made_latency_us.push(now_us - ts * 1000);
                            }
                            t.last_made = Some(at);
                        }
                        t.moves.push(Received { topic: p.topic.clone(), json, retained: p.retain, at });
                    }
                }
                Ok(_) => {}
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
    });
    tally
}

/// Restarts a broker of the test helper without its per-message log (as
/// benches/mqtt.rs does), keeping the rest of its configuration (the
/// replica's bridge section, `set_tcp_nodelay true`).
fn quiet(broker: &mut Mosquitto, dir: &Path) {
    let config = dir.join("mosquitto.conf");
    let text = std::fs::read_to_string(&config)
        .expect("the broker's configuration")
        .replace("log_type all\n", "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n");
    std::fs::write(&config, text).expect("the broker's configuration");
    broker.restart();
}

/// The pid of the Mosquitto this process started with its files in `dir`.
fn mosquitto_pid(dir: &Path) -> Option<u32> {
    let dir = dir.to_string_lossy().into_owned();
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    tasks
        .flatten()
        .flat_map(|t| {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            children.split_whitespace().filter_map(|p| p.parse().ok()).collect::<Vec<u32>>()
        })
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default().trim() == "mosquitto"
                && String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default())
                    .contains(&dir)
        })
}

/// utime + stime of a process, in clock ticks (0 once it is gone).
fn cpu_ticks(pid: u32) -> u64 {
    let (user, system) = cpu_split(pid);
    user + system
}

/// The games for `n` boards: the standard games of the vendored files, in
/// order, of at most `max_plies` plies.
fn pick_games(n: usize, max_plies: usize) -> Vec<(&'static str, usize, Vec<String>)> {
    let mut picked = Vec::new();
    for file in GAME_FILES {
        let text = std::fs::read_to_string(format!("{}/tests/fixtures/games/{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("the vendored games");
        let games = boardcast_sim::synth::read_games(&text).expect("they parse");
        for (i, game) in games.iter().enumerate() {
            if picked.len() == n {
                return picked;
            }
            if game.chess960 || game.start != shakmaty::Chess::default() || game.moves.len() > max_plies {
                continue;
            }
            picked.push((file, i, game_san(file, i)));
        }
    }
    assert_eq!(picked.len(), n, "enough vendored games of at most {max_plies} plies");
    picked
}

/// The configuration of bridge `id` reading `boards`, publishing to the
/// hall broker on `port` (as tests/it/bridges.rs writes it).
fn bridge_config(hall: &Hall, id: &str, boards: &[&str], port: u16) -> PathBuf {
    let mqtt = format!(
        "[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nbridge_id = \"{id}\"\nkeep_alive_s = 2\n\
         [broadcast]\nevent = \"Hall Open\"\nround = \"1\"\n"
    );
    hall.config_with_mqtt(boards, &mqtt)
}

fn percentile(sorted: &[i64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize] as f64 / 1000.0
}

#[allow(clippy::too_many_lines)]
fn run(bridges: usize, per_bridge: usize, max_plies: usize) -> bool {
    let clk_tck = clock_ticks_per_second() as f64;
    let brokers = Hall::new("bench-bridges-brokers");
    let (hub_dir, replica_dir) = (brokers.dir.join("hub"), brokers.dir.join("replica"));
    let Some(mut hub) = Mosquitto::start(&hub_dir, false) else {
        println!("Mosquitto is not installed: this benchmark needs it (`apt-get install mosquitto`)");
        return true;
    };
    quiet(&mut hub, &hub_dir);
    let hub_started = Instant::now();
    let mut replica = Mosquitto::start_bridged(&replica_dir, hub.port).expect("Mosquitto is there");
    quiet(&mut replica, &replica_dir);
    let replica_started = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("a runtime");
    let tally = subscribe(&rt, replica.port);
    let with = |f: &dyn Fn(&Tally) -> bool| f(&tally.lock().expect("not poisoned"));
    let until = |limit: Duration, what: &str, f: &dyn Fn(&Tally) -> bool| {
        let end = Instant::now() + limit;
        while !with(f) {
            assert!(Instant::now() < end, "{what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    until(Duration::from_secs(10), "the subscriber subscribes on the replica", &|t| t.subscribed);
    // The replica's bridge is up once a message published on the hub comes
    // out of the replica.
    let prober = {
        let (client, mut events) = AsyncClient::new(MqttOptions::new("bench-prober", "127.0.0.1", hub.port), 10);
        rt.spawn(async move { while events.poll().await.is_ok() {} });
        client
    };
    let end = Instant::now() + Duration::from_secs(20);
    while !with(&|t| t.probe) {
        assert!(Instant::now() < end, "the replica bridges in the hub's messages");
        let _ = rt.block_on(prober.publish("boardcast/v1/probe", QoS::AtMostOnce, false, "{}"));
        std::thread::sleep(Duration::from_millis(200));
    }

    // The halls: one per bridge, each with its boards' captures.
    let games = pick_games(bridges * per_bridge, max_plies);
    let halls: Vec<Hall> = (1..=bridges).map(|b| Hall::new(&format!("bench-bridges-{b}"))).collect();
    let mut boards: Vec<Board> = games
        .into_iter()
        .enumerate()
        .map(|(i, (file, index, san))| Board {
            bridge: i / per_bridge,
            name: format!("b{}-{:02}", i / per_bridge + 1, i % per_bridge + 1),
            game: (file, index),
            san,
            sim: None,
            sim_ticks: 0,
            ended: None,
        })
        .collect();
    let captures: Vec<PathBuf> =
        boards.iter().map(|b| halls[b.bridge].synth_capture(b.game.0, b.game.1, &b.name)).collect();
    let ids: Vec<String> = (1..=bridges).map(|b| format!("hall-pc-{b}")).collect();
    let daemons_started = Instant::now();
    let mut daemons: Vec<Child> = halls
        .iter()
        .enumerate()
        .map(|(b, hall)| {
            let names: Vec<&str> = boards.iter().filter(|x| x.bridge == b).map(|x| x.name.as_str()).collect();
            hall.run(&bridge_config(hall, &ids[b], &names, hub.port))
        })
        .collect();
    let daemon_pids: Vec<u32> = daemons.iter().map(Child::id).collect();
    until(Duration::from_secs(30), "every bridge shows online on the replica", &|t| {
        ids.iter().all(|id| t.online.contains(id))
    });

    let plies: usize = boards.iter().map(|b| b.san.len()).sum();
    eprintln!(
        "{bridges} bridges x {per_bridge} boards: {plies} plies to play at {SPEED}x (longest game {} plies)",
        boards.iter().map(|b| b.san.len()).max().unwrap_or(0)
    );
    let play_start = Instant::now();
    for (board, capture) in boards.iter_mut().zip(&captures) {
        board.sim = Some(halls[board.bridge].simulate(capture, &board.name, &[]));
    }
    let mut next_report = Instant::now() + Duration::from_secs(10);
    let sim_limit = Instant::now() + Duration::from_secs(300);
    loop {
        let mut running = 0;
        for board in &mut boards {
            let Some(sim) = board.sim.as_mut() else { continue };
            if board.ended.is_some() {
                continue;
            }
            // Read before asking whether it ended: a child that has ended
            // and is not yet waited for still shows its CPU time.
            let ticks = cpu_ticks(sim.id());
            if ticks > 0 {
                board.sim_ticks = ticks;
            }
            match sim.try_wait().expect("the simulator's status") {
                Some(status) => {
                    assert!(
                        status.success(),
                        "{}'s simulator: {}",
                        board.name,
                        halls[board.bridge].simulate_log(&board.name)
                    );
                    board.ended = Some(Instant::now());
                }
                None => running += 1,
            }
        }
        if running == 0 {
            break;
        }
        assert!(Instant::now() < sim_limit, "the simulators end within 300 s");
        if Instant::now() > next_report {
            eprintln!(
                "  {:>3.0} s: {running} boards playing, {} `made` received",
                play_start.elapsed().as_secs_f64(),
                tally.lock().expect("not poisoned").made.len()
            );
            next_report += Duration::from_secs(10);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let last_sim_end = boards.iter().filter_map(|b| b.ended).max().unwrap_or_else(Instant::now);
    let expected: Vec<(String, u64, String)> = boards
        .iter()
        .flat_map(|b| b.san.iter().enumerate().map(|(i, san)| (b.name.clone(), i as u64 + 1, san.clone())))
        .collect();
    let arrived = |t: &Tally| expected.iter().all(|k| t.made_plies.contains(k));
    let drain_limit = Instant::now() + Duration::from_secs(30);
    while !with(&arrived) && Instant::now() < drain_limit {
        std::thread::sleep(Duration::from_millis(50));
    }
    // The summaries go out at most once a second: let the last through.
    std::thread::sleep(Duration::from_millis(2500));

    // What the processes used, read before they stop.
    let daemon_wall = daemons_started.elapsed().as_secs_f64();
    let daemon_use: Vec<((u64, u64), u64)> =
        daemon_pids.iter().map(|&pid| (cpu_split(pid), status_kib(pid, "VmHWM:"))).collect();
    let broker_use: Vec<(&str, f64, f64, u64)> =
        [("hall", &hub_dir, hub_started), ("replica", &replica_dir, replica_started)]
            .into_iter()
            .map(|(what, dir, started)| {
                let pid = mosquitto_pid(dir).expect("the broker runs");
                (what, cpu_ticks(pid) as f64 / clk_tck, started.elapsed().as_secs_f64(), status_kib(pid, "VmHWM:"))
            })
            .collect();
    let sim_cpu: f64 = boards.iter().map(|b| b.sim_ticks).sum::<u64>() as f64 / clk_tck;
    for daemon in &mut daemons {
        stop(daemon);
    }

    // The figures.
    let t = tally.lock().expect("not poisoned");
    let lost: Vec<&(String, u64, String)> = expected.iter().filter(|k| !t.made_plies.contains(*k)).collect();
    let duplicates: u32 = t.made.values().map(|n| n - 1).sum();
    let wrong_games: Vec<&str> = boards
        .iter()
        .filter(|b| game_from_moves(&t.moves, &format!("{EVENT_TOPIC}/{}/moves", b.name)).0 != b.san)
        .map(|b| b.name.as_str())
        .collect();
    let mut summary_ok = true;
    let mut covered = std::collections::BTreeSet::new();
    for (b, id) in ids.iter().enumerate() {
        let own: Vec<String> = boards.iter().filter(|x| x.bridge == b).map(|x| x.name.clone()).collect();
        match t.summaries.get(id) {
            Some(labels) => {
                let mut labels = labels.clone();
                labels.sort();
                if labels != own {
                    summary_ok = false;
                    println!("  summary/{id} lists {labels:?}, not its boards {own:?}");
                }
                covered.extend(labels);
            }
            None => {
                summary_ok = false;
                println!("  summary/{id} never arrived");
            }
        }
    }
    let all_covered = covered.len() == boards.len() && boards.iter().all(|b| covered.contains(&b.name));
    let play_s = last_sim_end.duration_since(play_start).as_secs_f64();
    println!(
        "bridges: {bridges} `boardcast run` daemons, {per_bridge} boards each ({} boards, {} simulators over \
         pseudo-terminals, at {SPEED}x real speed), one hall Mosquitto, one replica bridged from it",
        boards.len(),
        boards.len()
    );
    println!(
        "  games: {} real games ({} from {}, {} from {}), {plies} plies; played in {play_s:.1} s (every board \
         started together, the last simulator ended {play_s:.1} s later)",
        boards.len(),
        boards.iter().filter(|b| b.game.0 == GAME_FILES[0]).count(),
        GAME_FILES[0],
        boards.iter().filter(|b| b.game.0 == GAME_FILES[1]).count(),
        GAME_FILES[1],
    );
    println!(
        "  `made` on the replica: {} received for {plies} plies played; lost {}, duplicates {duplicates}; \
         boards whose game on the replica differs from the one played: {} {wrong_games:?}",
        t.made.len(),
        lost.len(),
        wrong_games.len()
    );
    if !lost.is_empty() {
        println!("    lost (first 10): {:?}", &lost[..lost.len().min(10)]);
    }
    println!("  `moves` by kind: {:?}; {} messages in all on boardcast/v1/#", t.moves_by_kind, t.messages);
    if let Some(last) = t.last_made {
        // A simulator ends a little after its last move (the clock is
        // pressed and read after it).
        match last.checked_duration_since(last_sim_end) {
            Some(after) => println!(
                "  the last `made` arrived {:.0} ms after the last simulator ended",
                after.as_secs_f64() * 1000.0
            ),
            None => println!(
                "  the last `made` arrived {:.0} ms before the last simulator ended",
                last_sim_end.duration_since(last).as_secs_f64() * 1000.0
            ),
        }
    }
    let mut lat = t.made_latency_us.clone();
    lat.sort_unstable();
    if !lat.is_empty() {
        println!(
            "  `made` latency on the replica (received wall time - ts_ms): n={}, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            lat.len(),
            percentile(&lat, 0.5),
            percentile(&lat, 0.99),
            percentile(&lat, 1.0)
        );
    }
    println!(
        "  summary parts: {} of {bridges} bridges ({:?}), each its own bridge's boards: {summary_ok}, together \
         every board: {all_covered}",
        t.summaries.len(),
        t.summaries.keys().collect::<Vec<_>>()
    );
    println!("  CPU (utime + stime) and peak memory (VmHWM), read just before stopping:");
    for (id, ((user, system), hwm)) in ids.iter().zip(&daemon_use) {
        let (user, system) = (*user as f64 / clk_tck, *system as f64 / clk_tck);
        let cpu = user + system;
        println!(
            "    daemon {id}: {cpu:.2} s (user {user:.2}, system {system:.2}) over {daemon_wall:.0} s \
             ({:.1} % of one core), VmHWM {:.1} MiB",
            cpu / daemon_wall * 100.0,
            *hwm as f64 / 1024.0
        );
    }
    for (what, cpu, wall, hwm) in &broker_use {
        println!(
            "    Mosquitto ({what}): {cpu:.2} s over {wall:.0} s ({:.1} %), VmHWM {:.1} MiB",
            cpu / wall * 100.0,
            *hwm as f64 / 1024.0
        );
    }
    println!(
        "    the {} simulators together: {sim_cpu:.2} s over the {play_s:.0} s of play ({:.1} %)",
        boards.len(),
        sim_cpu / play_s * 100.0
    );
    let ok = lost.is_empty() && wrong_games.is_empty() && summary_ok && all_covered;
    drop(t);
    drop((hub, replica));
    ok
}
