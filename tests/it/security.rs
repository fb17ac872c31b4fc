//! Only the operator changes a game (issue 16), through the real binary and
//! the broker it runs by default (the managed Mosquitto): a storm of
//! clients reconnecting with their own fixed ids does not stop the broker;
//! anonymous clients and display accounts read the public tree but what
//! they publish reaches nobody and changes nothing; an operator account
//! with `ctl` changes a game; the default configuration listens on
//! loopback only; Mosquitto's own password hashes and ours are the same.

use std::{
    collections::HashSet,
    io::{Read, Write},
    net::TcpStream,
    process::Command as Process,
    time::Duration,
};

use crate::support::{
    live::{Hall, stop},
    mqtt::{Received, Subscriber, free_port, wait_listening},
};
use boardcast_core::{
    operator::Command,
    publish::guard::{OperatorKey, request_json, seal},
};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};

pub(crate) const GAMES: &str = "livechess-vestland-round1.pgn";
const LIVE_STATE: &str = "boardcast/v1/live/event/1/b1/state";
const PUBLIC_STATE: &str = "boardcast/v1/public/event/1/b1/state";
const COMMANDS: &str = "boardcast/v1/bridges/hall/commands";

pub(crate) fn mosquitto_installed() -> bool {
    let found = ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/bin/mosquitto"]
        .iter()
        .any(|p| std::path::Path::new(p).exists());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "under CI Mosquitto must be installed");
        eprintln!("skipped: Mosquitto is not installed (apt-get install mosquitto)");
    }
    found
}

pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// A hall whose daemon runs the default broker on free loopback ports.
pub(crate) fn hall_with_broker(name: &str, extra: &str) -> (Hall, u16, u16) {
    let hall = Hall::new(name);
    let (port, ws) = (free_port(), free_port());
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"127.0.0.1:{ws}\"\n{extra}"
    );
    hall.config_with_mqtt(&["b1"], &mqtt);
    (hall, port, ws)
}

/// A CONNECT packet (MQTT 3.1.1) for `id`, with a Last Will, as an
/// auto-reconnecting display sends it.
pub(crate) fn connect_packet(id: &str) -> Vec<u8> {
    let will_topic = b"boardcast/test/will";
    let will = b"gone";
    let mut body = Vec::new();
    body.extend_from_slice(&[0, 4, b'M', b'Q', b'T', b'T', 4, 0b0000_1110, 0, 5]);
    for field in [id.as_bytes(), will_topic, will] {
        body.extend_from_slice(&(field.len() as u16).to_be_bytes());
        body.extend_from_slice(field);
    }
    let mut packet = vec![0x10, body.len() as u8];
    packet.extend(body);
    packet
}

/// A publish that the broker must keep from every subscriber: as a stranger
/// (`None`) or logged in.
fn publish_as(
    runtime: &tokio::runtime::Runtime,
    port: u16,
    login: Option<(&str, &str)>,
    topic: &str,
    payload: Vec<u8>,
) {
    let mut options = MqttOptions::new(format!("intruder-{}", free_port()), "127.0.0.1", port);
    if let Some((user, password)) = login {
        options.set_credentials(user, password);
    }
    runtime.block_on(async {
        let (client, mut eventloop) = AsyncClient::new(options, 4);
        client.publish(topic, QoS::AtLeastOnce, true, payload).await.unwrap();
        // Mosquitto acknowledges a publish it does not allow, and drops it.
        let acknowledged = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match eventloop.poll().await {
                    Ok(Event::Incoming(Packet::PubAck(_))) => return true,
                    Ok(_) => {}
                    Err(_) => return false,
                }
            }
        })
        .await;
        assert!(matches!(acknowledged, Ok(true)), "the broker took the publish on {topic} (and kept it)");
        let _ = client.disconnect().await;
        let _ = tokio::time::timeout(Duration::from_millis(200), eventloop.poll()).await;
    });
}

pub(crate) fn ctl(hall: &Hall, args: &[&str], password: Option<&str>) -> (i32, String) {
    let mut command = Process::new(env!("CARGO_BIN_EXE_boardcast"));
    command.args(["ctl", "--config"]).arg(hall.dir.join("boardcast.toml")).args(["--timeout-s", "5"]);
    if let Some(password) = password {
        command.env("BOARDCAST_MQTT_PASSWORD", password).args(["--user", "op"]);
    }
    let out = command.args(args).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

/// Waits until the board's game has its first move in the PGN file.
pub(crate) fn game_started(hall: &Hall) {
    let end = std::time::Instant::now() + Duration::from_secs(60);
    while !hall.pgn("b1").contains("1. ") && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(hall.pgn("b1").contains("1. "), "{}", hall.log());
}

#[test]
fn sixteen_clients_reconnecting_with_their_own_ids_do_not_stop_the_broker() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, _) = hall_with_broker("security-storm", "");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    // Each thread connects with its fixed id, is accepted, and drops the
    // connection without a word (its Last Will then goes out), again and
    // again: the next connection with the same id arrives while the broker
    // is still taking the last one down.
    let threads: Vec<_> = (0..16)
        .map(|n| {
            std::thread::spawn(move || {
                let packet = connect_packet(&format!("display-{n}"));
                let mut accepted = 0;
                for _ in 0..150 {
                    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { continue };
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut ack = [0u8; 4];
                    if stream.write_all(&packet).is_ok() && stream.read_exact(&mut ack).is_ok() && ack[3] == 0 {
                        accepted += 1;
                    }
                }
                accepted
            })
        })
        .collect();
    let accepted: u32 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert!(accepted > 16 * 100, "most connections were accepted: {accepted} of 2400");

    // Afterwards a new display connects and the feed still arrives.
    let display = Subscriber::start(&runtime, port, "boardcast/v1/public/#", "display-after");
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let moved = |r: &[Received]| r.iter().any(|m| m.topic == PUBLIC_STATE && m.json["ply"].as_u64() >= Some(2));
    assert!(display.wait_for(Duration::from_secs(60), moved), "the feed arrives after the storm: {}", hall.log());
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

#[test]
fn anonymous_clients_and_displays_read_the_public_tree_and_change_nothing() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, ws) = hall_with_broker("security-acl", "");
    let display = hall.account("tv-1", "public");
    let arbiter = hall.account("arbiter", "live");
    let operator = hall.account("op", "operator");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    // Who reads what: everything an operator may read is recorded.
    let everything = Subscriber::start_as(&runtime, port, "#", "op-watch", "op", &operator);
    let anonymous = Subscriber::start(&runtime, port, "boardcast/#", "anonymous");
    let anonymous_ws = Subscriber::start_ws(&runtime, ws, "boardcast/#", "anonymous-ws");
    let tv = Subscriber::start_as(&runtime, port, "boardcast/#", "tv", "tv-1", &display);
    let console = Subscriber::start_as(&runtime, port, "boardcast/#", "console", "arbiter", &arbiter);
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    game_started(&hall);
    let has = |topic: &'static str| move |r: &[Received]| r.iter().any(|m| m.topic == topic);
    for (who, subscriber) in [("anonymous", &anonymous), ("anonymous over WebSocket", &anonymous_ws), ("tv-1", &tv)] {
        assert!(subscriber.wait_for(Duration::from_secs(10), has(PUBLIC_STATE)), "{who} reads the public tree");
        assert!(
            subscriber.received().iter().all(|m| m.topic.starts_with("boardcast/v1/public/")
                || (m.topic.starts_with("boardcast/v1/bridges/") && m.topic.ends_with("/status"))),
            "{who} reads nothing else"
        );
    }
    assert!(console.wait_for(Duration::from_secs(10), has(LIVE_STATE)), "the console reads the live tree");
    assert!(console.received().iter().all(|m| !m.topic.ends_with("/replies")), "but not the replies");

    // Fake moves, fake states and a command signed with the real key, from
    // a stranger, a display account and an arbiter's console.
    let key = OperatorKey::from_hex(&std::fs::read_to_string(hall.dir.join("operator.key")).unwrap()).unwrap();
    let fake_state = br#"{"schema":1,"fen":"8/8/8/8/8/8/8/K6k w - - 0 1","result":"0-1","forged":true}"#.to_vec();
    let logins = [
        (None, "stranger"),
        (Some(("tv-1", display.as_str())), "tv"),
        (Some(("arbiter", arbiter.as_str())), "console"),
    ];
    for (login, who) in logins {
        for topic in
            [LIVE_STATE, PUBLIC_STATE, "boardcast/v1/live/event/1/b1/moves", "boardcast/v1/bridges/hall/status"]
        {
            publish_as(&runtime, port, login, topic, fake_state.clone());
        }
        let command =
            Command::SetTags { tags: [("Annotator".to_owned(), format!("forged by {who}"))].into_iter().collect() };
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        publish_as(
            &runtime,
            port,
            login,
            COMMANDS,
            seal(&key, &request_json(&format!("forged-{who}"), "b1", now, &command)),
        );
    }
    // A command the operator sends after them is answered: had any forged
    // one reached the daemon, it would have been answered (and applied)
    // first.
    let (code, said) = ctl(&hall, &["b1", "tag", "Annotator", "the operator"], Some(&operator));
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    let replies: Vec<Received> =
        everything.received().into_iter().filter(|m| m.topic == "boardcast/v1/bridges/hall/replies").collect();
    assert!(replies.iter().all(|m| !m.json["id"].as_str().unwrap_or_default().starts_with("forged")), "{replies:?}");
    let pgn = hall.pgn("b1");
    assert!(pgn.contains("[Annotator \"the operator\"]") && !pgn.contains("forged"), "{pgn}");
    for (who, subscriber) in [("the operator", &everything), ("anonymous", &anonymous), ("the console", &console)] {
        let forged: Vec<Received> =
            subscriber.received().into_iter().filter(|m| m.json.get("forged").is_some()).collect();
        assert!(forged.is_empty(), "{who} received a forged message: {forged:?}");
    }
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

#[test]
fn an_operator_account_with_ctl_changes_a_game_and_nobody_else_does() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, _) = hall_with_broker("security-ctl", "anonymous = \"none\"\n");
    let operator = hall.account("op", "operator");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    game_started(&hall);
    let (code, said) = ctl(&hall, &["b1", "players", "Carlsen, Magnus", "Caruana, Fabiano"], None);
    assert_eq!(code, 2, "without an account ctl is not let in: {said}");
    let (code, said) = ctl(&hall, &["b1", "players", "Carlsen, Magnus", "Caruana, Fabiano"], Some("not the password"));
    assert_eq!(code, 2, "nor with a wrong password: {said}");
    assert!(!hall.pgn("b1").contains("Carlsen"));
    let (code, said) = ctl(&hall, &["b1", "players", "Carlsen, Magnus", "Caruana, Fabiano"], Some(&operator));
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    assert!(hall.pgn("b1").contains("[White \"Carlsen, Magnus\"]"), "{}", hall.pgn("b1"));
    // anonymous = "none": a display without an account reads nothing.
    let stranger = Subscriber::start(&runtime, port, "boardcast/#", "stranger");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!((stranger.connections(), stranger.received().len()), (0, 0));
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

/// The listening TCP sockets (address, port) of `pids`, from /proc.
fn listening(pids: &[u32]) -> Vec<(String, u16)> {
    let mut inodes = HashSet::new();
    for pid in pids {
        for fd in std::fs::read_dir(format!("/proc/{pid}/fd")).into_iter().flatten().flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let target = target.to_string_lossy().into_owned();
                if let Some(inode) = target.strip_prefix("socket:[").and_then(|t| t.strip_suffix(']')) {
                    inodes.insert(inode.to_owned());
                }
            }
        }
    }
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        for line in std::fs::read_to_string(table).unwrap_or_default().lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() > 9 && fields[3] == "0A" && inodes.contains(fields[9]) {
                let (address, port) = fields[1].split_once(':').unwrap();
                found.push((address.to_owned(), u16::from_str_radix(port, 16).unwrap()));
            }
        }
    }
    found
}

/// The processes whose parent is `pid`.
pub(crate) fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| rest.split(' ').nth(1).map(str::to_owned)))
                .flatten()
                .is_some_and(|ppid| ppid == pid.to_string())
        })
        .collect()
}

#[test]
fn the_default_configuration_listens_on_loopback_only() {
    if !mosquitto_installed() {
        return;
    }
    let hall = Hall::new("security-loopback");
    let (port, ws, http) = (free_port(), free_port(), free_port());
    // The printed defaults, with only the ports changed (1883, 8083 and
    // 8080 may be taken on this machine) and a board.
    let defaults = Process::new(env!("CARGO_BIN_EXE_boardcast")).args(["config", "default"]).output().unwrap();
    let text = String::from_utf8(defaults.stdout)
        .unwrap()
        .replace(":1883\"", &format!(":{port}\""))
        .replace(":8083\"", &format!(":{ws}\""))
        .replace(":8080\"", &format!(":{http}\""))
        .replace("key_file = \"operator.key\"", &format!("key_file = \"{}/operator.key\"", hall.dir.display()))
        .replace("dir = \"captures\"", &format!("dir = \"{}/captures\"", hall.dir.display()))
        .replace("dir = \"pgn\"", &format!("dir = \"{}/pgn\"", hall.dir.display()));
    let config = hall.dir.join("defaults.toml");
    std::fs::write(
        &config,
        format!("{text}\n[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nport = \"{}\"\n", hall.link("b1").display()),
    )
    .unwrap();
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    assert!(wait_listening(http, Duration::from_secs(10)), "{}", hall.log());
    let mut pids = vec![daemon.id()];
    pids.extend(children(daemon.id()));
    assert!(pids.len() >= 2, "the broker runs as the daemon's child: {pids:?}\n{}", hall.log());
    let sockets = listening(&pids);
    let ports: HashSet<u16> = sockets.iter().map(|(_, p)| *p).collect();
    assert!([port, ws, http].iter().all(|p| ports.contains(p)), "{sockets:?}");
    // 0100007F is 127.0.0.1 in /proc/net/tcp; ::1 in tcp6.
    let loopback = |a: &str| a == "0100007F" || a == "00000000000000000000000001000000";
    assert!(sockets.iter().all(|(a, _)| loopback(a)), "every listener is on loopback: {sockets:?}");
    stop(&mut daemon);
    // The broker stopped with the daemon.
    assert!(pids[1..].iter().all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()), "{pids:?}");
}

#[test]
fn mosquitto_passwd_hashes_are_ours() {
    let Ok(dir) = std::env::var("CARGO_TARGET_TMPDIR") else { return };
    let file = std::path::Path::new(&dir).join("mosquitto_passwd-check");
    let _ = std::fs::remove_file(&file);
    std::fs::write(&file, "").unwrap();
    let made =
        Process::new("/usr/bin/mosquitto_passwd").arg("-b").arg(&file).args(["alice", "s3cret:with colon"]).status();
    if !made.is_ok_and(|s| s.success()) {
        assert!(std::env::var_os("CI").is_none(), "under CI mosquitto_passwd must be installed");
        eprintln!("skipped: mosquitto_passwd is not installed");
        return;
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let hash = text.trim().strip_prefix("alice:").unwrap();
    assert!(boardcast::accounts::verify("s3cret:with colon", hash));
    assert!(!boardcast::accounts::verify("s3cret", hash));
}

#[test]
fn a_broker_that_dies_is_started_again_with_the_whole_state_and_dies_with_the_daemon() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, _) = hall_with_broker("security-restart", "");
    let runtime = runtime();
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    game_started(&hall);
    let broker = children(daemon.id());
    assert_eq!(broker.len(), 1, "{broker:?}");
    // The broker dies (persistence off: every retained message is gone).
    Process::new("kill").args(["-KILL", &broker[0].to_string()]).status().unwrap();
    let restarted = || children(daemon.id()).iter().any(|p| !broker.contains(p));
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while !restarted() && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(restarted(), "the broker was started again: {}", hall.log());
    assert!(hall.log().contains("the broker (Mosquitto) stopped by itself"), "said loudly: {}", hall.log());
    let end = std::time::Instant::now() + Duration::from_secs(30);
    while !hall.log().contains("connected again to") && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    // A display that connects once the feed is back gets the retained
    // state the daemon published again, and the game goes on.
    let display = Subscriber::start(&runtime, port, "boardcast/v1/public/#", "display-after-restart");
    let retained = |r: &[Received]| r.iter().any(|m| m.topic == PUBLIC_STATE && m.retained);
    assert!(display.wait_for(Duration::from_secs(30), retained), "the state is back: {}", hall.log());
    let ply =
        |r: &[Received]| r.iter().filter(|m| m.topic == PUBLIC_STATE).filter_map(|m| m.json["ply"].as_u64()).max();
    let first = ply(&display.received()).unwrap_or(0);
    assert!(display.wait_for(Duration::from_secs(60), |r| ply(r) > Some(first)), "the game goes on: {}", hall.log());
    // The daemon killed outright: the kernel takes its broker with it.
    let broker = children(daemon.id());
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let gone = || broker.iter().all(|p| !std::path::Path::new(&format!("/proc/{p}")).exists());
    let end = std::time::Instant::now() + Duration::from_secs(10);
    while !gone() && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(gone(), "the broker died with the daemon: {broker:?}");
    let _ = board.kill();
    let _ = board.wait();
}
