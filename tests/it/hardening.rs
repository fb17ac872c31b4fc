//! What a stranger on the hall network cannot do to the feed (issue 29),
//! against the real daemon and its managed Mosquitto on free loopback
//! ports: take over the daemon's MQTT sessions.

use std::{
    io::{Read, Write},
    net::TcpStream,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU32, Ordering},
    },
    time::Duration,
};

use crate::{
    security::{GAMES, connect_packet, ctl, game_started, hall_with_broker, mosquitto_installed, runtime},
    support::{
        live::stop,
        mqtt::{Subscriber, wait_listening},
    },
};

const BRIDGE_STATUS: &str = "boardcast/v1/bridges/hall/status";

/// The client ids a stranger can tell from the bridge id (which every topic
/// and `/config.json` give): those of the daemon before issue 29, and the
/// same with anything a guess would add.
const KNOWN_IDS: [&str; 4] =
    ["boardcast-hall", "boardcast-hall-commands", "boardcast-hall-0", "boardcast-hall-commands-0"];

#[test]
fn a_stranger_reconnecting_with_the_ids_it_can_know_disturbs_neither_the_feed_nor_the_commands() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, _) = hall_with_broker("hardening-takeover", "");
    let operator = hall.account("op", "operator");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    let status = Subscriber::start(&runtime, port, BRIDGE_STATUS, "status-watch");
    assert!(status.wait_subscribed(Duration::from_secs(10)));
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    game_started(&hall);

    // The stranger: anonymous connections with every id it knows, one
    // after the other, each accepted and dropped without a word, until the
    // operator is done (at most 4000).
    let done = Arc::new(AtomicBool::new(false));
    let accepted = Arc::new(AtomicU32::new(0));
    let stranger = {
        let (done, accepted) = (done.clone(), accepted.clone());
        std::thread::spawn(move || {
            for id in KNOWN_IDS.iter().cycle().take(4000) {
                if done.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut ack = [0u8; 4];
                if stream.write_all(&connect_packet(id)).is_ok() && stream.read_exact(&mut ack).is_ok() && ack[3] == 0 {
                    accepted.fetch_add(1, Ordering::Relaxed);
                }
            }
        })
    };
    // Meanwhile, five commands from the operator: each is answered and
    // applied.
    for n in 1..=5 {
        let value = format!("the operator {n}");
        let (code, said) = ctl(&hall, &["b1", "tag", "Annotator", &value], Some(&operator));
        assert_eq!(code, 0, "command {n} answered: {said}\n{}", hall.log());
        assert!(hall.pgn("b1").contains(&format!("[Annotator \"{value}\"]")), "command {n} applied");
    }
    done.store(true, Ordering::Relaxed);
    stranger.join().unwrap();
    let accepted = accepted.load(Ordering::Relaxed);
    assert!(accepted >= 40, "the stranger's connections were let in (anonymous may read): {accepted}");

    // The bridge never went offline for the displays: no Last Will.
    let flips: Vec<String> =
        status.received().iter().filter(|m| m.json["status"] != "online").map(|m| m.json.to_string()).collect();
    assert!(flips.is_empty(), "{} offline flips after {accepted} connections: {flips:?}", flips.len());
    assert!(status.received().iter().any(|m| m.json["status"] == "online"), "{}", hall.log());
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}
