//! Engine analysis for spectators (docs/displays.md, "Analysis") with the
//! real Stockfish (Debian's, at /usr/games/stockfish): a simulated board
//! plays a real game into `boardcast run` with analysis on, and a
//! subscriber to the whole tree (the live tree and the console's bridge
//! topics included) checks that analysis appears only on the public tree,
//! each no earlier than the public state of its position; an engine killed
//! or frozen mid-game is replaced and its board's analysis cleared
//! meanwhile; a daemon without an engine says so once and runs as usual.
//!
//! Under CI a missing Stockfish fails the tests; elsewhere they are
//! skipped with a message (`apt-get install stockfish`).

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use serde_json::Value;
use shakmaty::{CastlingMode, Chess, Position, fen::Fen, san::SanPlus, uci::UciMove};

use crate::support::{
    live::{Hall, stop, wait},
    mqtt::{Received, Subscriber, free_port, wait_listening},
};

const GAMES: &str = "livechess-vestland-round1.pgn";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// Stockfish, wherever Debian or the user put it; a missing one fails the
/// test under CI and skips it elsewhere.
fn stockfish() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("stockfish")).collect::<Vec<_>>())
        .unwrap_or_default();
    let found = on_path.into_iter().chain([PathBuf::from("/usr/games/stockfish")]).find(|p| p.is_file());
    if found.is_none() {
        let why = "Stockfish is not installed (`apt-get install stockfish`)";
        assert!(std::env::var_os("CI").is_none(), "{why}: under CI the analysis tests must run");
        eprintln!("skipped: {why}");
    }
    found
}

/// The daemon's `[mqtt]`, `[broadcast]` and `[analysis]` sections.
fn sections(listen: u16, ws: u16, delay_s: u64, engine: &Path, hung_after_ms: u64) -> String {
    format!(
        "[mqtt]\nbridge_id = \"test-bridge\"\npublic_delay_s = {delay_s}\nkeep_alive_s = 2\n\
         [mqtt.embedded]\nlisten = \"127.0.0.1:{listen}\"\nws_listen = \"127.0.0.1:{ws}\"\nanonymous = \"live\"\n\
         [broadcast]\nevent = \"Test Open\"\nround = \"3\"\n\
         [analysis]\nenabled = true\nengine = \"{}\"\nmovetime_ms = 50\nhash_mb = 16\nhung_after_ms = {hung_after_ms}\n",
        engine.display()
    )
}

fn topic(tree: &str, what: &str) -> String {
    format!("boardcast/v1/{tree}/Test-Open/3/b1/{what}")
}

/// Whether a payload carries an engine's opinion anywhere.
fn has_analysis(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("best_uci") || map.contains_key("pv") || map.values().any(has_analysis),
        Value::Array(items) => items.iter().any(has_analysis),
        _ => false,
    }
}

/// The engine processes the daemon `daemon` runs.
fn engines_of(daemon: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // `pid (comm) state ppid …`: the name may hold spaces, the part
        // after the last ')' does not.
        let Some((head, rest)) = stat.rsplit_once(')') else { continue };
        let ppid = rest.split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(daemon) && head.contains("(stockfish") {
            found.push(pid);
        }
    }
    found
}

/// A process's nice value (`/proc/<pid>/stat`, field 19).
fn nice_of(pid: u32) -> i64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    // After the name: state is field 3, nice field 19.
    rest.split_whitespace().nth(16).unwrap().parse().unwrap()
}

fn signal(pid: u32, signal: &str) {
    assert!(Command::new("kill").args([signal, &pid.to_string()]).status().unwrap().success());
}

/// The analyses published on the board's topic (`Null`: cleared).
fn analyses(received: &[Received]) -> Vec<&Received> {
    received.iter().filter(|r| r.topic == topic("public", "analysis")).collect()
}

#[test]
fn analysis_reaches_the_public_tree_only_and_never_before_its_position() {
    let Some(engine) = stockfish() else { return };
    let hall = Hall::new("analysis-public");
    let runtime = runtime();
    let (port, ws) = (free_port(), free_port());
    // One second of delay: ten seconds of this game's time.
    let config = hall.config_with_mqtt(&["b1"], &sections(port, ws, 1, &engine, 5_000));
    let capture = hall.synth_capture(GAMES, 1, "b1");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "the embedded broker listens: {}", hall.log());
    let everything = Subscriber::start(&runtime, port, "boardcast/v1/#", "everything");
    // What the console subscribes to, on a connection of its own.
    let live = Subscriber::start(&runtime, port, "boardcast/v1/live/#", "console-live");
    let bridges = Subscriber::start(&runtime, port, "boardcast/v1/bridges/#", "console-bridges");
    for subscriber in [&everything, &live, &bridges] {
        assert!(subscriber.wait_subscribed(Duration::from_secs(10)));
    }
    let mut board = hall.simulate(&capture, "b1", &[]);
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    let final_state = |r: &[Received]| {
        let Some(state) = r.iter().rfind(|m| m.topic == topic("public", "state")) else { return false };
        state.json["result"] != "*"
            && analyses(r)
                .last()
                .is_some_and(|a| a.json["fen"] == state.json["fen"] && a.json["ply"] == state.json["ply"])
    };
    assert!(
        everything.wait_for(Duration::from_secs(20), final_state),
        "the final position is analysed: {}",
        hall.log()
    );
    stop(&mut daemon);
    let log = hall.log();
    let received = everything.received();

    // Only on the public tree: not on the live tree, the console's topics,
    // or in any other payload.
    for r in live.received().iter().chain(&bridges.received()).chain(&received) {
        if r.topic != topic("public", "analysis") {
            assert!(!r.topic.ends_with("/analysis"), "analysis on {}", r.topic);
            assert!(!has_analysis(&r.json), "an engine's opinion in {}: {}", r.topic, r.json);
        }
    }
    assert!(live.received().iter().any(|r| r.topic == topic("live", "moves")), "the console saw the game");

    // Each no earlier than its position's public state, which comes no
    // earlier than the delay after the live one.
    let published = analyses(&received);
    let plies = received.iter().filter(|r| r.topic == topic("live", "moves") && r.json["kind"] == "made").count();
    assert!(published.len() * 2 >= plies, "{} analyses for {plies} moves: {log}", published.len());
    for analysis in &published {
        let a = &analysis.json;
        let at = received.iter().position(|r| std::ptr::eq(r, *analysis)).unwrap();
        let shows =
            |r: &Received| r.json["game"] == a["game"] && r.json["ply"] == a["ply"] && r.json["fen"] == a["fen"];
        let public = received[..at].iter().position(|r| r.topic == topic("public", "state") && shows(r));
        assert!(public.is_some(), "analysis of ply {} before its public state: {log}", a["ply"]);
        let first_live = received.iter().find(|r| r.topic == topic("live", "state") && shows(r)).unwrap();
        let behind = analysis.at.duration_since(first_live.at);
        // Arrival times carry the broker's delivery (another process on a
        // loaded machine): the order above is the exact check.
        assert!(behind >= Duration::from_millis(800), "ply {} analysed public after only {behind:?}", a["ply"]);

        // What a display draws: White's score, a legal line in SAN, the
        // engine's name.
        let score = a["score"].as_object().unwrap();
        assert!(score.len() == 1 && (score.contains_key("cp") || score.contains_key("mate")), "{a}");
        assert!(a["engine"].as_str().unwrap().starts_with("Stockfish"), "{a}");
        let fen: Fen = a["fen"].as_str().unwrap().parse().unwrap();
        let mut position: Chess = fen.into_position(CastlingMode::Standard).unwrap();
        let pv: Vec<&str> = a["pv"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        if position.legal_moves().is_empty() {
            // Mate or stalemate: nothing to search.
            assert!(pv.is_empty() && a["best_uci"].is_null(), "{a}");
            continue;
        }
        assert!(a["depth"].as_u64().unwrap() > 0 && a["nodes"].as_u64().unwrap() > 0, "{a}");
        assert!(!pv.is_empty(), "{a}");
        let best: UciMove = a["best_uci"].as_str().unwrap().parse().unwrap();
        assert_eq!(SanPlus::from_move(position.clone(), best.to_move(&position).unwrap()).to_string(), pv[0]);
        for san in pv {
            let m = san.parse::<shakmaty::san::SanPlus>().unwrap().san.to_move(&position).unwrap();
            position.play_unchecked(m);
        }
    }
    // Sanity of the score's side: the game is decisive at the end, and the
    // last analysis agrees with the result's side (or sees a draw).
    let result = received.iter().rfind(|r| r.topic == topic("public", "state")).unwrap().json["result"].clone();
    let last = &published.last().unwrap().json["score"];
    let white_better = last["cp"].as_i64().map_or_else(|| last["mate"].as_i64().unwrap() > 0, |cp| cp > 0);
    if result == "1-0" || result == "0-1" {
        let decisive = last["cp"].as_i64().is_none_or(|cp| cp.abs() > 100);
        if decisive {
            assert_eq!(white_better, result == "1-0", "score {last} for a game won {result}");
        }
    }
}

#[test]
fn a_killed_or_frozen_engine_is_replaced_and_its_board_shows_no_stale_analysis_meanwhile() {
    let Some(engine) = stockfish() else { return };
    let hall = Hall::new("analysis-restart");
    let runtime = runtime();
    let (port, ws) = (free_port(), free_port());
    let config = hall.config_with_mqtt(&["b1"], &sections(port, ws, 0, &engine, 500));
    let capture = hall.synth_capture(GAMES, 1, "b1");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "the embedded broker listens: {}", hall.log());
    let subscriber = Subscriber::start(&runtime, port, "boardcast/v1/public/#", "spectator");
    assert!(subscriber.wait_subscribed(Duration::from_secs(10)));
    let mut board = hall.simulate(&capture, "b1", &[]);
    let analysed = |n: usize| move |r: &[Received]| analyses(r).iter().filter(|a| !a.json.is_null()).count() >= n;
    assert!(subscriber.wait_for(Duration::from_secs(30), analysed(3)), "analysis comes: {}", hall.log());

    // Killed, then frozen (SIGSTOP: no bestmove within the budget and
    // hung_after_ms): each time the engine is replaced, and analysis comes
    // back, of positions no older than the one it failed on. (The clearing
    // in between is retained only until the new engine's first analysis;
    // when that comes at once, the publisher sends only the newer value:
    // crates/boardcast-core/src/publish/outbox.rs.)
    let mut engine = engines_of(daemon.id());
    assert_eq!(engine.len(), 1, "one engine runs: {engine:?}");
    // At the configured nice value (19 by default): the boards' moves come
    // first on a machine the engines could fill.
    assert_eq!(nice_of(engine[0]), 19, "the engine runs at [analysis] nice");
    for (failures, signal_name, said) in [(1, "-KILL", "killed and started again"), (2, "-STOP", "hung: no bestmove")] {
        signal(engine[0], signal_name);
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while hall.log().matches("killed and started again").count() < failures {
            assert!(std::time::Instant::now() < deadline, "the engine's failure is noticed: {}", hall.log());
            std::thread::sleep(Duration::from_millis(50));
        }
        let log = hall.log();
        assert!(log.contains(said), "{log}");
        // `… on board b1 (ply N): killed and started again`.
        let failed_ply: u64 = log
            .lines()
            .filter(|l| l.contains("killed and started again"))
            .nth(failures - 1)
            .and_then(|l| l.split("(ply ").nth(1)?.split(')').next()?.parse().ok())
            .unwrap();
        let after = analyses(&subscriber.received()).len();
        let back = |r: &[Received]| analyses(r)[after.min(analyses(r).len())..].iter().any(|a| !a.json.is_null());
        assert!(subscriber.wait_for(Duration::from_secs(30), back), "analysed again: {}", hall.log());
        for a in &analyses(&subscriber.received())[after..] {
            assert!(a.json.is_null() || a.json["ply"].as_u64().unwrap() >= failed_ply, "stale: {}", a.json);
        }
        let replaced = engines_of(daemon.id());
        assert!(replaced.len() == 1 && replaced != engine, "a new engine runs: {engine:?} then {replaced:?}");
        engine = replaced;
    }
    let log = hall.log();
    assert!(log.contains("killed and started again"), "{log}");
    assert!(log.contains("hung: no bestmove within 550 ms"), "the budget and hung_after_ms: {log}");
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    let running = engines_of(daemon.id());
    stop(&mut daemon);
    for pid in running {
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "engine {pid} outlived the daemon");
    }
}

#[test]
fn without_an_engine_the_daemon_says_so_once_and_runs_as_usual() {
    let hall = Hall::new("analysis-none");
    let runtime = runtime();
    let (port, ws) = (free_port(), free_port());
    let missing = hall.dir.join("no-such-engine");
    let config = hall.config_with_mqtt(&["b1"], &sections(port, ws, 0, &missing, 5_000));
    let capture = hall.synth_capture(GAMES, 1, "b1");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "the embedded broker listens: {}", hall.log());
    let subscriber = Subscriber::start(&runtime, port, "boardcast/v1/#", "watcher");
    assert!(subscriber.wait_subscribed(Duration::from_secs(10)));
    let mut board = hall.simulate(&capture, "b1", &[]);
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    let ended = |r: &[Received]| r.iter().any(|m| m.topic == topic("public", "state") && m.json["result"] != "*");
    assert!(subscriber.wait_for(Duration::from_secs(10), ended), "the game is published: {}", hall.log());
    stop(&mut daemon);
    let log = hall.log();
    let said: Vec<&str> = log.lines().filter(|l| l.contains("analysis:")).collect();
    assert_eq!(said.len(), 1, "one line about analysis: {said:?}");
    assert!(said[0].contains("no-such-engine") && said[0].contains("without analysis"), "{}", said[0]);
    assert!(subscriber.received().iter().all(|r| !r.topic.ends_with("/analysis")));
}
