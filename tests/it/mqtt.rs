//! The MQTT feed as displays and arbiters see it: a simulated board playing
//! a real game into `boardcast run`, and subscribers on the embedded broker
//! and on a real Mosquitto. Every move arrives (duplicates allowed, none
//! after de-duplication by seq), retained state equals the game, alerts are
//! on the live tree only, the public tree is delayed, and a cut link or a
//! restarted broker loses nothing.

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use crate::support::{
    live::{Hall, stop, synth_events, wait},
    mqtt::{Mosquitto, Proxy, Received, Subscriber, free_port, game_from_moves, wait_listening},
};
use boardcast_core::{
    sensor::{Cell, Picture, SensorEvent},
    time::Timestamp,
};
use shakmaty::{Color, Piece, Role, Square};

const GAMES: &str = "livechess-vestland-round1.pgn";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// The SAN of a vendored game.
fn expected(index: usize) -> Vec<String> {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/games/{GAMES}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let game = &boardcast_sim::synth::read_games(&text).unwrap()[index];
    let mut pos = game.start.clone();
    game.moves.iter().map(|&m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string()).collect()
}

/// Game `index` with an intruder: a third of the way in, a white queen is
/// put on an empty square for three seconds (game time) and taken away
/// again, which the daemon alerts as out of sync; play then goes on.
fn capture_with_intruder(hall: &Hall, index: usize, name: &str) -> std::path::PathBuf {
    let (header, events) = synth_events(GAMES, index, name);
    let cut = events.len() / 3;
    let at = events[cut].0;
    let mut picture = Picture::empty();
    for (_, event) in &events[..cut] {
        match event {
            SensorEvent::Board(board) => picture = (**board).clone(),
            SensorEvent::Square { square, cell } => {
                picture.set(*square, *cell);
            }
            SensorEvent::Clock(_) => {}
        }
    }
    let empty = Square::ALL.into_iter().find(|&sq| picture.get(sq) == Cell::Empty && sq.rank() as u8 >= 2).unwrap();
    let queen = Cell::Piece(Piece { color: Color::White, role: Role::Queen });
    let shift = Duration::from_secs(4);
    let mut out: Vec<(Timestamp, SensorEvent)> = events[..cut].to_vec();
    out.push((at, SensorEvent::Square { square: empty, cell: queen }));
    out.push((at + Duration::from_secs(3), SensorEvent::Square { square: empty, cell: Cell::Empty }));
    out.extend(events[cut..].iter().map(|(t, e)| (*t + shift, e.clone())));
    hall.write_capture(name, &header, &out)
}

/// The `[mqtt]` section of a test daemon.
fn mqtt_section(url: &str, listen: u16, ws: u16, delay_s: u64) -> String {
    format!(
        "[mqtt]\nurl = \"{url}\"\nbridge_id = \"test-bridge\"\npublic_delay_s = {delay_s}\nkeep_alive_s = 2\n\
         [mqtt.embedded]\nlisten = \"127.0.0.1:{listen}\"\nws_listen = \"127.0.0.1:{ws}\"\nanonymous = \"live\"\n\
         [broadcast]\nevent = \"Test Open\"\nround = \"3\"\n"
    )
}

fn topic(tree: &str, what: &str) -> String {
    format!("boardcast/v1/{tree}/Test-Open/3/b1/{what}")
}

/// (game, seq) of every event of these kinds the daemon logged
/// (`b1: game 1 #17 1.234s made 4. Nf3 (g1f3)`).
fn logged(log: &str, kinds: &[&str]) -> BTreeSet<(u64, u64)> {
    log.lines()
        .filter_map(|l| {
            let mut parts = l.split("game ").nth(1)?.split_whitespace();
            let game = parts.next()?.parse().ok()?;
            let seq = parts.next()?.strip_prefix('#')?.parse().ok()?;
            let kind = parts.nth(1)?;
            kinds.contains(&kind).then_some((game, seq))
        })
        .collect()
}

fn received_keys(received: &[Received], topic: &str) -> BTreeSet<(u64, u64)> {
    received
        .iter()
        .filter(|r| r.topic == topic)
        .map(|r| (r.json["game"].as_u64().unwrap(), r.json["seq"].as_u64().unwrap()))
        .collect()
}

#[test]
fn a_game_reaches_subscribers_once_by_seq_with_retained_state_alerts_on_live_only_and_the_public_tree_delayed() {
    let hall = Hall::new("mqtt-embedded");
    let runtime = runtime();
    let (port, ws) = (free_port(), free_port());
    // One second of delay is ten seconds of this game's time.
    let config = hall.config_with_mqtt(&["b1"], &mqtt_section("", port, ws, 1));
    let capture = capture_with_intruder(&hall, 1, "b1");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "the embedded broker listens: {}", hall.log());
    let subscriber = Subscriber::start(&runtime, port, "boardcast/v1/#", "watcher");
    assert!(subscriber.wait_for(Duration::from_secs(5), |r| r.iter().any(|m| m.topic.ends_with("/b1/state"))));
    let mut board = hall.simulate(&capture, "b1", &[]);
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    let expected = expected(1);
    let last_public = |r: &[Received]| {
        r.iter().any(|m| m.topic == topic("public", "state") && m.json["result"].as_str() != Some("*"))
    };
    assert!(subscriber.wait_for(Duration::from_secs(10), last_public), "the public tree caught up: {}", hall.log());

    // A display that comes late, over WebSocket, gets the whole picture
    // from the retained topics.
    let late = Subscriber::start_ws(&runtime, ws, "boardcast/v1/#", "late-display");
    let whole = |r: &[Received]| {
        ["state", "pgn", "clock"].iter().all(|t| r.iter().any(|m| m.topic == topic("public", t)))
            && r.iter().any(|m| m.topic == "boardcast/v1/public/Test-Open/3/summary/test-bridge")
    };
    assert!(late.wait_for(Duration::from_secs(10), whole), "retained topics: {:?}", late.received());
    stop(&mut daemon);
    let log = hall.log();

    let received = subscriber.received();
    let (live_game, _) = game_from_moves(&received, &topic("live", "moves"));
    assert_eq!(live_game, expected, "{log}");
    let (public_game, _) = game_from_moves(&received, &topic("public", "moves"));
    assert_eq!(public_game, expected);
    assert_eq!(
        received_keys(&received, &topic("live", "moves")),
        logged(&log, &["made", "completed", "amended", "retracted"])
    );

    // The status follows the board: in sync from the start of the game,
    // out of sync while the intruder stands, in sync again, and awaiting the
    // next game once this one has ended. Displays rely on it.
    let mut states: Vec<&str> = received
        .iter()
        .filter(|r| r.topic == topic("live", "state"))
        .filter_map(|r| r.json["status"].as_str())
        .collect();
    states.dedup();
    assert_eq!(states, ["awaiting_start", "in_sync", "out_of_sync", "in_sync", "awaiting_start"], "{log}");
    let summaries: Vec<&serde_json::Value> = received
        .iter()
        .filter(|r| r.topic == "boardcast/v1/live/Test-Open/3/summary/test-bridge")
        .filter_map(|r| r.json["boards"].as_array()?.first())
        .collect();
    let playing = |v: &serde_json::Value| v["result"] == "*" && v["ply"].as_u64().is_some_and(|p| p > 0);
    assert!(summaries.iter().any(|b| playing(b) && b["status"] == "in_sync"), "{summaries:?}");
    assert!(summaries.iter().all(|b| !playing(b) || b["status"] != "awaiting_start"), "{summaries:?}");
    let syncs: Vec<&str> = received
        .iter()
        .filter(|r| r.topic.starts_with("boardcast/v1/bridges/test-bridge/boards/"))
        .filter_map(|r| r.json["sync"].as_str())
        .collect();
    assert!(syncs.contains(&"in_sync") && syncs.contains(&"out_of_sync"), "board status: {syncs:?}");

    // Alerts: on the live tree, with the evidence; never in public.
    let alerts: Vec<&Received> = received.iter().filter(|r| r.topic == topic("live", "alerts")).collect();
    assert!(alerts.iter().any(|a| a.json["kind"] == "out_of_sync"), "the intruder was alerted: {log}");
    assert_eq!(received_keys(&received, &topic("live", "alerts")), logged(&log, &["alert"]));
    assert!(received.iter().all(|r| !(r.topic.contains("/public/") && r.topic.ends_with("/alerts"))));

    // The public tree is a second behind, and its times say so.
    for public in received.iter().filter(|r| r.topic == topic("public", "moves")) {
        let live =
            received.iter().find(|r| r.topic == topic("live", "moves") && r.json["seq"] == public.json["seq"]).unwrap();
        // Arrival times carry the broker's delivery of both messages (a
        // separate process, on a loaded machine): the exact delay is in
        // ts_ms and delay_ms below.
        let behind = public.at.duration_since(live.at);
        assert!(behind >= Duration::from_millis(800), "public {} only {behind:?} behind", public.json["san"]);
        assert_eq!(public.json["ts_ms"].as_i64().unwrap(), live.json["ts_ms"].as_i64().unwrap() + 1000);
        assert_eq!(public.json["delay_ms"], 1000);
    }

    // The retained state is the game.
    let late = late.received();
    let state = &late.iter().rfind(|m| m.topic == topic("public", "state")).unwrap().json;
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/games/{GAMES}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let game = &boardcast_sim::synth::read_games(&text).unwrap()[1];
    let mut pos = game.start.clone();
    for &m in &game.moves {
        shakmaty::Position::play_unchecked(&mut pos, m);
    }
    let fen = shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string();
    assert_eq!(state["fen"], fen.as_str());
    assert_eq!(state["last_move"]["san"], expected.last().unwrap().as_str());
    assert_eq!(
        state["result"],
        hall.pgn("b1").lines().find_map(|l| l.strip_prefix("[Result \"")?.strip_suffix("\"]")).unwrap()
    );
    let mut first = BTreeSet::new();
    for m in &late {
        if first.insert(m.topic.clone()) {
            assert!(m.retained, "{} reaches a late subscriber as retained", m.topic);
        }
    }
    let pgn = &late.iter().rfind(|m| m.topic == topic("public", "pgn")).unwrap().json["pgn"];
    assert_eq!(pgn.as_str().unwrap(), hall.pgn("b1"), "the PGN topic is the PGN file");
    // Moves carry every display language and the spoken announcement.
    let knight = received.iter().find(|r| r.topic == topic("live", "moves") && r.json["san"] == "Nf3").unwrap();
    assert_eq!(knight.json["display"]["de"], "Sf3");
    assert_eq!(knight.json["display"]["fr"], "Cf3");
    assert_eq!(knight.json["spoken"], "Springer Gustav eins Felix drei");
    // The bridge says it is online while running, and offline once stopped.
    let bridge = |r: &[Received]| {
        r.iter()
            .filter(|r| r.topic == "boardcast/v1/bridges/test-bridge/status")
            .map(|r| r.json["status"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(bridge(&late).first().unwrap(), "online");
    assert_eq!(bridge(&received).last().unwrap(), "offline");
    assert!(received.iter().any(|r| r.topic == "boardcast/v1/bridges/test-bridge/boards/00001/status"));
}

#[test]
fn no_move_or_alert_is_lost_when_the_link_is_cut_or_the_broker_restarts() {
    let hall = Hall::new("mqtt-mosquitto");
    let Some(mut mosquitto) = Mosquitto::start(&hall.dir.join("mosquitto"), true) else { return };
    let runtime = runtime();
    let proxy = Proxy::start(&runtime, mosquitto.port);
    let config = hall.config_with_mqtt(&["b1"], &mqtt_section(&format!("mqtt://127.0.0.1:{}", proxy.port), 0, 0, 0));
    let subscriber = Subscriber::start(&runtime, mosquitto.port, "boardcast/v1/#", "arbiter");
    let capture = capture_with_intruder(&hall, 2, "b1");
    let mut daemon = hall.run(&config);
    let mut board = hall.simulate(&capture, "b1", &[]);
    let start = Instant::now();
    // Four seconds in (forty of play), the hall's network drops for one
    // and a half seconds.
    std::thread::sleep(Duration::from_secs(4));
    proxy.cut();
    std::thread::sleep(Duration::from_millis(1500));
    proxy.restore();
    // Later the broker is restarted (as `systemctl restart mosquitto`).
    std::thread::sleep(Duration::from_secs(4));
    mosquitto.restart();
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    let expected = expected(2);
    let done = |r: &[Received]| {
        r.iter()
            .any(|m| m.topic == topic("live", "state") && m.json["ply"] == expected.len() && m.json["result"] != "*")
    };
    assert!(subscriber.wait_for(Duration::from_secs(15), done), "the final state arrived: {}", hall.log());
    stop(&mut daemon);
    let log = hall.log();
    assert!(start.elapsed() > Duration::from_secs(10), "the game outlasted both outages");
    assert!(log.matches("mqtt: connected").count() >= 3, "connected, again after the cut and after the restart: {log}");
    assert!(subscriber.connections() >= 2, "the subscriber saw the restart too");

    let received = subscriber.received();
    let (game, _) = game_from_moves(&received, &topic("live", "moves"));
    assert_eq!(game, expected, "{log}");
    assert_eq!(
        received_keys(&received, &topic("live", "moves")),
        logged(&log, &["made", "completed", "amended", "retracted"])
    );
    assert_eq!(received_keys(&received, &topic("live", "alerts")), logged(&log, &["alert"]), "{log}");
    assert!(received.iter().any(|r| r.topic == topic("live", "alerts")), "the intruder was alerted");
    // The clean stop says the bridge is offline.
    let bridge = received.iter().rfind(|r| r.topic == "boardcast/v1/bridges/test-bridge/status").unwrap();
    assert_eq!(bridge.json["status"], "offline", "{log}");
}

#[test]
fn a_broker_that_lost_every_session_gets_again_what_it_had_not_acknowledged() {
    let hall = Hall::new("mqtt-lost-session");
    // Without persistence a restarted Mosquitto knows no session.
    let Some(mut mosquitto) = Mosquitto::start(&hall.dir.join("mosquitto"), false) else { return };
    let runtime = runtime();
    let proxy = Proxy::start(&runtime, mosquitto.port);
    let config = hall.config_with_mqtt(&["b1"], &mqtt_section(&format!("mqtt://127.0.0.1:{}", proxy.port), 0, 0, 0));
    let subscriber = Subscriber::start(&runtime, mosquitto.port, "boardcast/v1/#", "display");
    let capture = hall.synth_capture(GAMES, 3, "b1");
    let mut daemon = hall.run(&config);
    let mut board = hall.simulate(&capture, "b1", &[]);
    for _ in 0..2 {
        std::thread::sleep(Duration::from_secs(3));
        // The link swallows what the daemon sends for a second and a half
        // (less than the keep-alive would notice): those moves are in
        // flight, never acknowledged. Then the broker restarts, forgetting
        // every session, and the link comes back. The daemon must send
        // them again itself.
        proxy.swallow();
        std::thread::sleep(Duration::from_millis(1500));
        mosquitto.restart();
        proxy.cut();
        proxy.restore();
    }
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    let expected = expected(3);
    let done = |r: &[Received]| r.iter().any(|m| m.topic == topic("live", "state") && m.json["ply"] == expected.len());
    assert!(subscriber.wait_for(Duration::from_secs(15), done), "{}", hall.log());
    stop(&mut daemon);
    let log = hall.log();
    assert!(log.contains("the broker lost the session"), "{log}");
    let received = subscriber.received();
    let (game, _) = game_from_moves(&received, &topic("live", "moves"));
    assert_eq!(game, expected, "{log}");
    assert_eq!(
        received_keys(&received, &topic("live", "moves")),
        logged(&log, &["made", "completed", "amended", "retracted"])
    );
    // Every retained topic was published again after each restart (the
    // bridge's status only changes then).
    let statuses = received.iter().filter(|r| r.topic == "boardcast/v1/bridges/test-bridge/status").count();
    assert!(statuses >= 3, "the retained topics after every restart ({statuses})");
}
