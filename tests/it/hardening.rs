//! What a stranger on the hall network cannot do to the feed (issue 29),
//! against the real daemon and its managed Mosquitto on free loopback
//! ports: take over the daemon's MQTT sessions, make the broker hold an
//! unbounded amount of memory.

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
    security::{GAMES, children, connect_packet, ctl, game_started, hall_with_broker, mosquitto_installed, runtime},
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

/// A process's resident memory in KiB (`VmRSS`).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// MQTT's variable-length remaining length.
fn remaining_length(mut n: usize, packet: &mut Vec<u8>) {
    loop {
        let byte = (n % 128) as u8;
        n /= 128;
        packet.push(if n > 0 { byte | 0x80 } else { byte });
        if n == 0 {
            return;
        }
    }
}

/// One anonymous client with a persistent session subscribing to `count`
/// filters of 10 KB inside the public tree (which the ACL lets it read),
/// until the broker cuts it off; the number it sent.
fn subscription_flood(port: u16, id: &str, count: usize) -> usize {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return 0 };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    // CONNECT, MQTT 3.1.1, clean session off, keep-alive 60 s.
    let mut body = vec![0, 4, b'M', b'Q', b'T', b'T', 4, 0, 0, 60];
    body.extend_from_slice(&(id.len() as u16).to_be_bytes());
    body.extend_from_slice(id.as_bytes());
    let mut connect = vec![0x10];
    remaining_length(body.len(), &mut connect);
    connect.extend(body);
    let mut ack = [0u8; 4];
    if stream.write_all(&connect).is_err() || stream.read_exact(&mut ack).is_err() || ack[3] != 0 {
        return 0;
    }
    for n in 0..count {
        let filter = format!("boardcast/v1/public/{n}/{}", "x".repeat(10_000));
        let mut body = ((n % 65_535 + 1) as u16).to_be_bytes().to_vec();
        body.extend_from_slice(&(filter.len() as u16).to_be_bytes());
        body.extend_from_slice(filter.as_bytes());
        body.push(0);
        let mut packet = vec![0x82];
        remaining_length(body.len(), &mut packet);
        packet.extend(body);
        if stream.write_all(&packet).is_err() {
            return n;
        }
    }
    std::thread::sleep(Duration::from_millis(500));
    count
}

#[test]
fn a_subscription_flood_from_a_stranger_leaves_the_broker_under_its_memory_bound() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, _) = hall_with_broker("hardening-memory", "memory_limit_mb = 64\n");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    let broker = children(daemon.id());
    assert_eq!(broker.len(), 1, "the managed Mosquitto: {broker:?}");
    let before = rss_kib(broker[0]);
    // 100 MB of subscriptions, twice (the session stays: the second
    // connection finds it).
    let sent: Vec<usize> = (0..2).map(|_| subscription_flood(port, "flooder", 10_000)).collect();
    let after = rss_kib(broker[0]);
    // The bound: the 64 MiB heap and the program itself.
    assert!(
        after < (64 + 32) * 1024,
        "the broker grew from {before} KiB to {after} KiB (subscriptions sent: {sent:?})\n{}",
        hall.log()
    );
    assert!(sent[0] < 10_000, "the flooder was cut off: {sent:?}");
    // The broker still serves a display.
    let display = Subscriber::start(&runtime, port, "boardcast/v1/bridges/hall/status", "display-after");
    assert!(display.wait_for(Duration::from_secs(10), |r| !r.is_empty()), "{}", hall.log());
    stop(&mut daemon);
}
