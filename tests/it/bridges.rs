//! A hall of several bridges on one feed, as docs/service.md lays it out:
//! two daemons (each its own `bridge_id`, each reading its own simulated
//! DGT board of the same round) publishing to one Mosquitto, and a second
//! Mosquitto bridged from the first, where the displays are. Subscribed on
//! the second: every move of both boards arrives, the round's summary comes
//! in one part per bridge that together cover every board, and a bridge
//! whose daemon dies shows `offline` while the other bridge's board goes on;
//! the overview page (headless Chromium, reading the second Mosquitto) shows
//! the round with both bridges' boards and marks the dead bridge's.

use std::{
    process::{Child, Command},
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::{
    displays::Browser,
    support::{
        live::{Hall, game_san, stop, wait},
        mqtt::{Mosquitto, Received, Subscriber, free_port, game_from_moves, wait_listening},
    },
};

const GAMES: &str = "livechess-vestland-round1.pgn";

/// The configuration of bridge `id` reading board `board`, publishing to
/// the hall's broker on `port`; with `pages`, serving the display pages on
/// that HTTP port, which read the feed from the replica's WebSocket.
fn bridge_config(hall: &Hall, id: &str, board: &str, port: u16, pages: Option<(u16, u16)>) -> std::path::PathBuf {
    let mqtt = format!(
        "[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nbridge_id = \"{id}\"\nkeep_alive_s = 2\n\
         [broadcast]\nevent = \"Hall Open\"\nround = \"1\"\n"
    );
    let config = hall.config_with_mqtt(&[board], &mqtt);
    if let Some((http, ws)) = pages {
        let text = std::fs::read_to_string(&config).unwrap().replace(
            "[http]\nenabled = false\n",
            &format!("[http]\nlisten = \"127.0.0.1:{http}\"\nbroker_ws_url = \"ws://127.0.0.1:{ws}/mqtt\"\n"),
        );
        std::fs::write(&config, text).unwrap();
    }
    config
}

fn topic(board: &str, what: &str) -> String {
    format!("boardcast/v1/live/Hall-Open/1/{board}/{what}")
}

/// The board labels in the last summary of bridge `id`.
fn summary_boards(received: &[Received], id: &str) -> Option<Vec<String>> {
    let last = received.iter().rev().find(|m| m.topic == format!("boardcast/v1/live/Hall-Open/1/summary/{id}"))?;
    Some(last.json["boards"].as_array()?.iter().filter_map(|b| b["label"].as_str().map(str::to_owned)).collect())
}

fn kill(child: &mut Child) {
    let _ = Command::new("kill").arg("-KILL").arg(child.id().to_string()).status();
    let _ = child.wait();
}

#[test]
fn two_bridges_reach_displays_through_a_bridged_broker_and_one_dying_leaves_the_other_going() {
    let brokers = Hall::new("bridges-brokers");
    let Some(hub) = Mosquitto::start(&brokers.dir.join("hub"), false) else { return };
    let Some(replica) = Mosquitto::start_bridged(&brokers.dir.join("replica"), hub.port) else { return };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let displays = Subscriber::start(&runtime, replica.port, "boardcast/v1/#", "display-side");
    assert!(displays.wait_subscribed(Duration::from_secs(10)));
    // The replica's bridge is up once a message published on the hub
    // comes out of the replica.
    let probe = Subscriber::start(&runtime, hub.port, "boardcast/v1/probe", "probe");
    assert!(probe.wait_subscribed(Duration::from_secs(10)));
    let client = {
        let options = rumqttc::MqttOptions::new("prober", "127.0.0.1", hub.port);
        let (client, mut events) = rumqttc::AsyncClient::new(options, 10);
        runtime.spawn(async move { while events.poll().await.is_ok() {} });
        client
    };
    let end = Instant::now() + Duration::from_secs(20);
    while !displays.received().iter().any(|m| m.topic == "boardcast/v1/probe") {
        assert!(Instant::now() < end, "the replica never bridged in the hub's messages");
        let _ = runtime.block_on(client.publish("boardcast/v1/probe", rumqttc::QoS::AtMostOnce, false, "{}"));
        std::thread::sleep(Duration::from_millis(200));
    }

    // The shorter game on the first bridge, the longer on the second: the
    // second is still playing when the first bridge dies.
    let (short, long) = {
        let mut by_length: Vec<usize> = (0..4).collect();
        by_length.sort_by_key(|&i| game_san(GAMES, i).len());
        (by_length[0], by_length[3])
    };
    let halls = [Hall::new("bridges-1"), Hall::new("bridges-2")];
    let plan = [("hall-pc-1", "b1", short), ("hall-pc-2", "b2", long)];
    // The second bridge also serves the display pages, reading the replica.
    let http = free_port();
    let pages = [None, Some((http, replica.ws_port.unwrap()))];
    let mut daemons: Vec<Child> = halls
        .iter()
        .zip(&plan)
        .zip(pages)
        .map(|((hall, (id, board, _)), pages)| hall.run(&bridge_config(hall, id, board, hub.port, pages)))
        .collect();
    let online = |r: &[Received]| {
        plan.iter().all(|(id, _, _)| {
            r.iter().any(|m| m.topic == format!("boardcast/v1/bridges/{id}/status") && m.json["status"] == "online")
        })
    };
    assert!(displays.wait_for(Duration::from_secs(20), online), "{}", halls[0].log() + &halls[1].log());
    let mut boards: Vec<Child> = halls
        .iter()
        .zip(&plan)
        .map(|(hall, (_, board, game))| hall.simulate(&hall.synth_capture(GAMES, *game, board), board, &[]))
        .collect();

    // The first board's game ends; its bridge then dies without a word.
    assert!(wait(&mut boards[0], Duration::from_secs(240)), "the first game ended");
    let expected = [game_san(GAMES, short), game_san(GAMES, long)];
    fn done(board: &'static str, plies: usize) -> impl Fn(&[Received]) -> bool {
        move |r| game_from_moves(r, &topic(board, "moves")).0.len() >= plies
    }
    assert!(
        displays.wait_for(Duration::from_secs(30), done("b1", expected[0].len())),
        "the first game reached the displays: {}",
        halls[0].log()
    );
    kill(&mut daemons[0]);
    let killed_at = displays.received().len();
    let offline = |r: &[Received]| {
        r.iter().any(|m| m.topic == "boardcast/v1/bridges/hall-pc-1/status" && m.json["status"] == "offline")
    };
    assert!(displays.wait_for(Duration::from_secs(20), offline), "the dead bridge shows offline on the display side");

    // The overview, on the display side: both bridges' boards in one round,
    // the dead bridge's board marked.
    if let Some(browser) = Browser::start(&brokers.dir.join("chromium")) {
        assert!(wait_listening(http, Duration::from_secs(20)), "the pages are served: {}", halls[1].log());
        // The live tree asks an arbiter to log in (the replica takes anyone).
        let overview = format!("http://127.0.0.1:{http}/overview.html?tree=live");
        browser.open(&overview);
        browser.run("sessionStorage.setItem('boardcast-login', JSON.stringify({username: 'arbiter', password: 'x'}))");
        browser.open(&overview);
        let cards = browser.wait_for(
            Duration::from_secs(20),
            "const c = [...document.querySelectorAll('.card')]; \
             return c.length == 2 && c[0].dataset.connection == 'bridge_offline' && \
             c.map(c => [c.dataset.board, c.dataset.bridge, c.querySelector('.status').textContent])",
        );
        assert_eq!(
            cards,
            serde_json::json!([["b1", "hall-pc-1", "bridge hall-pc-1 offline"], ["b2", "hall-pc-2", ""]]),
            "one round of both bridges' boards, the dead bridge's marked"
        );
        browser.screenshot(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/displays/overview-bridges.png"),
        );
    }

    // The second bridge goes on to the end of its game.
    assert!(wait(&mut boards[1], Duration::from_secs(300)), "the second game ended");
    assert!(
        displays.wait_for(Duration::from_secs(30), done("b2", expected[1].len())),
        "the second game reached the displays: {}",
        halls[1].log()
    );
    stop(&mut daemons[1]);
    let received = displays.received();
    for (i, board) in ["b1", "b2"].iter().enumerate() {
        let (game, _) = game_from_moves(&received, &topic(board, "moves"));
        assert_eq!(game, expected[i], "every move of {board} arrived through both brokers");
    }
    let later: Vec<&Value> =
        received[killed_at..].iter().filter(|m| m.topic == topic("b2", "moves")).map(|m| &m.json).collect();
    assert!(!later.is_empty(), "the second bridge's moves kept coming after the first died");

    // The round's overview: one part per bridge, each its own board, the
    // two together the whole round.
    assert_eq!(summary_boards(&received, "hall-pc-1"), Some(vec!["b1".to_owned()]));
    assert_eq!(summary_boards(&received, "hall-pc-2"), Some(vec!["b2".to_owned()]));
    // A display arriving now gets both parts, retained on the replica.
    let late = Subscriber::start(&runtime, replica.port, "boardcast/v1/live/Hall-Open/1/summary/+", "late-display");
    assert!(
        late.wait_for(Duration::from_secs(10), |r| summary_boards(r, "hall-pc-1").is_some()
            && summary_boards(r, "hall-pc-2").is_some()),
        "the replica keeps each bridge's summary"
    );
}
