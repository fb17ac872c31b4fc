//! `boardcast simulate --bluetooth`: a capture of every Bluetooth LE family
//! played as a board on the mock BlueZ, read by a host that is the
//! family's own link (what the daemon writes to a live board) speaking
//! D-Bus to the mock: it connects, starts the notifications, writes what
//! the link writes and decodes what comes. What the host read must be the
//! capture's game; a ChessUp host that does not acknowledge is dropped.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use boardcast_core::{
    protocol::{Bluetooth, FAMILIES, Family, Protocol, link::LinkConfig},
    time::Timestamp,
};
use futures_util::StreamExt;
use zbus::{
    Connection, MatchRule, MessageStream,
    message::Type,
    zvariant::{OwnedObjectPath, OwnedValue, Value},
};

use crate::support::bluez::MockBluez;

/// Times the recorded speed the captures are played at.
const SPEED: u64 = 10;

/// What the objects on the mock are: their interfaces and properties.
type Objects = std::collections::HashMap<
    OwnedObjectPath,
    std::collections::HashMap<String, std::collections::HashMap<String, OwnedValue>>,
>;

fn boardcast(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boardcast")).args(args).output().expect("the binary runs")
}

/// A calm synthesized game as a capture of `family`'s bytes, in `dir`.
fn synth(family: &Family, dir: &Path) -> PathBuf {
    let games = format!("{}/tests/fixtures/games/raws.san.txt", env!("CARGO_MANIFEST_DIR"));
    let out = dir.to_str().unwrap();
    let made = boardcast(&["synth", &games, "--game", "2", "--calm", "--protocol", family.name, "--out", out]);
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    dir.join("game-2.jsonl")
}

/// The moves and result `boardcast replay` reads from a capture, without
/// its comments (on an occupancy-only board, whether a capture was
/// `{inferred}` depends on when the scans fell, not on the game).
fn game_of(capture: &Path) -> String {
    let pgn = capture.with_extension("pgn");
    let replayed = boardcast(&["replay", capture.to_str().unwrap(), "--pgn", pgn.to_str().unwrap()]);
    assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
    let text = fs::read_to_string(pgn).unwrap();
    let movetext = text.lines().filter(|line| !line.starts_with('[')).collect::<Vec<_>>().join(" ");
    let mut plain = String::new();
    let mut in_comment = false;
    for c in movetext.chars() {
        match c {
            '{' => in_comment = true,
            '}' => in_comment = false,
            _ if !in_comment => plain.push(c),
            _ => {}
        }
    }
    // Without comments, a move's number may be said again (`7... dxe5`).
    let words: Vec<&str> = plain.split_whitespace().filter(|w| !w.ends_with("...")).collect();
    words.join(" ")
}

/// `boardcast simulate --bluetooth` on the mock, at [`SPEED`].
fn simulate(bluez: &MockBluez, capture: &Path, address: &str) -> Child {
    Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["simulate", "--bluetooth", address, "--capture", capture.to_str().unwrap()])
        .args(["--speed", &SPEED.to_string()])
        .env("DBUS_SYSTEM_BUS_ADDRESS", &bluez.address)
        .stderr(Stdio::piped())
        .spawn()
        .expect("the simulator starts")
}

/// How the host treats what the board says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Manners {
    /// Everything the family's link writes.
    Link,
    /// Only what the link writes on connecting (no acknowledgements).
    FirstWordsOnly,
}

/// What the host got.
struct Heard {
    /// Each notification, at the capture's time it came (real time since
    /// connecting, times the speed).
    notifications: Vec<(Timestamp, Vec<u8>)>,
    /// The board dropped the link.
    dropped: bool,
}

/// The host: finds the board on the mock, connects, starts the
/// notifications and speaks as the family's link does until the
/// simulator exits (or, with `stop_when_dropped`, the board drops it).
fn host(bus: &str, address: &str, family: &Family, manners: Manners, simulator: &mut Child) -> Heard {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let conn = zbus::connection::Builder::address(bus).unwrap().build().await.unwrap();
        let bluetooth = family.bluetooth.as_ref().unwrap();
        let (device, notify, write) = wait_for_board(&conn, address, bluetooth).await;
        let rule = MatchRule::builder().msg_type(Type::Signal).path_namespace(device.as_str()).unwrap().build();
        let mut signals = MessageStream::for_match_rule(rule, &conn, Some(100_000)).await.unwrap();
        call(&conn, &device, "org.bluez.Device1", "Connect", &()).await;
        call(&conn, &notify, "org.bluez.GattCharacteristic1", "StartNotify", &()).await;
        let start = Instant::now();
        let now = || Timestamp::from_micros(start.elapsed().as_micros() as u64);
        let mut link = (family.link)(LinkConfig::default());
        let mut decoder = Protocol::of(family_static(family)).decoder().unwrap();
        link.handle_connected(now());
        let mut heard = Heard { notifications: Vec::new(), dropped: false };
        let mut first_words = true;
        let (mut exited, mut last_signal) = (None::<Instant>, Instant::now());
        loop {
            while let Some(bytes) = link.poll_transmit(now()) {
                if manners == Manners::Link || first_words {
                    let options: std::collections::HashMap<&str, Value> = std::collections::HashMap::new();
                    call(&conn, &write, "org.bluez.GattCharacteristic1", "WriteValue", &(bytes, options)).await;
                }
            }
            first_words = false;
            let wake = link.poll_timeout().map_or(Duration::from_millis(100), |t| {
                Duration::from_micros(t.as_micros().saturating_sub(now().as_micros())).min(Duration::from_millis(100))
            });
            tokio::select! {
                message = signals.next() => {
                    last_signal = Instant::now();
                    let message = message.unwrap().unwrap();
                    let header = message.header();
                    if header.member().map(|m| m.as_str()) != Some("PropertiesChanged") {
                        continue;
                    }
                    let (interface, changed, _): (String, std::collections::HashMap<String, OwnedValue>, Vec<String>) =
                        message.body().deserialize().unwrap();
                    let path = header.path().unwrap().as_str().to_owned();
                    if path == device.as_str() && interface == "org.bluez.Device1" {
                        if changed.get("Connected").and_then(|v| bool::try_from(v).ok()) == Some(false) {
                            heard.dropped = true;
                        }
                    } else if path == notify.as_str()
                        && let Some(value) = changed.get("Value")
                    {
                        let bytes: Vec<u8> = value.try_clone().unwrap().try_into().unwrap();
                        let t = Timestamp::from_micros(start.elapsed().as_micros() as u64 * SPEED);
                        heard.notifications.push((t, bytes.clone()));
                        decoder.handle_bytes(&bytes);
                        link.handle_rx(now());
                        while let Some(decoded) = decoder.poll_decoded() {
                            link.handle_decoded(now(), &decoded);
                        }
                    }
                }
                () = tokio::time::sleep(wake) => {
                    if link.poll_timeout().is_some_and(|t| t <= now()) {
                        link.handle_timeout(now());
                    }
                    // The simulator exits once it has sent its last
                    // notification; on a loaded machine the last signals
                    // may still be on their way: the host reads on until
                    // the bus has been quiet for a second.
                    if exited.is_none() && simulator.try_wait().unwrap().is_some() {
                        exited = Some(Instant::now());
                    }
                    if exited.is_some() && last_signal.elapsed() >= Duration::from_secs(1) {
                        return heard;
                    }
                }
            }
        }
    })
}

/// The family as the `'static` entry of [`FAMILIES`].
fn family_static(family: &Family) -> &'static Family {
    FAMILIES.into_iter().find(|f| *f == family).unwrap()
}

async fn call<B>(conn: &Connection, path: &OwnedObjectPath, interface: &str, method: &str, body: &B)
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    conn.call_method(Some("org.bluez"), path.as_str(), Some(interface), method, body)
        .await
        .unwrap_or_else(|e| panic!("{interface}.{method} on {path}: {e}"));
}

/// Waits until the simulator has added the board; its device and its
/// notify and write characteristics.
async fn wait_for_board(
    conn: &Connection,
    address: &str,
    bluetooth: &Bluetooth,
) -> (OwnedObjectPath, OwnedObjectPath, OwnedObjectPath) {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < until, "the simulator did not add the board within 20 s");
        let reply = conn
            .call_method(Some("org.bluez"), "/", Some("org.freedesktop.DBus.ObjectManager"), "GetManagedObjects", &())
            .await
            .unwrap();
        let objects: Objects = reply.body().deserialize().unwrap();
        let text = |props: &std::collections::HashMap<String, OwnedValue>, key: &str| {
            props.get(key).and_then(|v| <&str>::try_from(v).ok()).map(str::to_owned)
        };
        let device = objects.iter().find_map(|(path, interfaces)| {
            let props = interfaces.get("org.bluez.Device1")?;
            (text(props, "Address")? == address).then(|| path.clone())
        });
        let characteristic = |uuid: &str| {
            objects.iter().find_map(|(path, interfaces)| {
                let props = interfaces.get("org.bluez.GattCharacteristic1")?;
                (text(props, "UUID")? == uuid).then(|| path.clone())
            })
        };
        if let (Some(device), Some(notify), Some(write)) =
            (device, characteristic(bluetooth.notify), characteristic(bluetooth.write))
        {
            return (device, notify, write);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The notifications as a capture of the family's bytes (the capture's
/// header, their times).
fn write_capture(original: &Path, heard: &Heard, to: &Path) {
    let header = fs::read_to_string(original).unwrap().lines().next().unwrap().to_owned();
    let mut text = header + "\n";
    for (t, bytes) in &heard.notifications {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        text.push_str(&format!("{{\"t_us\":{},\"rx\":\"{hex}\"}}\n", t.as_micros()));
    }
    fs::write(to, text).unwrap();
}

/// One family: the board played on its own mock, read by its link.
fn plays_as_the_capture(family: &'static Family) {
    let Some(bluez) = MockBluez::start(&format!("ble_sim_{}", family.name)) else { return };
    let capture = synth(family, &bluez.dir);
    let address = "AA:BB:CC:00:00:01";
    let mut simulator = simulate(&bluez, &capture, address);
    let heard = host(&bluez.address, address, family, Manners::Link, &mut simulator);
    let said = simulator.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&said.stderr);
    assert!(said.contains("waiting for a host to connect"), "{}: {said}", family.name);
    assert!(!heard.dropped, "{}: the board dropped a host that said everything: {said}", family.name);
    assert!(!heard.notifications.is_empty(), "{}: no notification came: {said}", family.name);
    let read = bluez.dir.join("read.jsonl");
    write_capture(&capture, &heard, &read);
    let (expected, got) = (game_of(&capture), game_of(&read));
    assert!(expected.contains('#'), "{}: the capture's game ends in mate: {expected}", family.name);
    assert_eq!(got, expected, "{}: what the host read is the capture's game", family.name);
}

#[test]
fn every_bluetooth_family_plays_its_capture_on_the_mock_bluez() {
    let families: Vec<&'static Family> = FAMILIES.into_iter().filter(|f| f.bluetooth.is_some()).collect();
    assert!(families.len() >= 6, "the Bluetooth LE families");
    // In parallel: each plays for the length of a game.
    let played: Vec<_> = families
        .into_iter()
        .map(|family| (family.name, std::thread::spawn(move || plays_as_the_capture(family))))
        .collect();
    let failed: Vec<&str> =
        played.into_iter().filter_map(|(name, thread)| thread.join().is_err().then_some(name)).collect();
    assert!(failed.is_empty(), "failed: {failed:?}");
}

#[test]
fn a_chessup_drops_a_host_that_does_not_acknowledge() {
    use boardcast_core::protocol::chessup;
    let Some(bluez) = MockBluez::start("ble_sim_chessup_rude") else { return };
    let capture = synth(&chessup::FAMILY, &bluez.dir);
    let address = "AA:BB:CC:00:00:02";
    let mut simulator = simulate(&bluez, &capture, address);
    let heard = host(&bluez.address, address, &chessup::FAMILY, Manners::FirstWordsOnly, &mut simulator);
    let said = simulator.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&said.stderr);
    assert!(heard.dropped, "the board dropped the link: {said}");
    assert!(said.contains("the board dropped its host, which did not acknowledge"), "{said}");
    let moves = heard.notifications.iter().filter(|(_, bytes)| bytes.first() == Some(&chessup::MOVE)).count();
    assert_eq!(moves, boardcast_sim::board::chessup::PATIENCE + 1, "the move messages it waited for, then the drop");
}

#[test]
fn simulate_bluetooth_says_to_start_the_mock_when_there_is_no_bluez() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ble_sim_no_bus");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let capture = synth(&boardcast_core::protocol::chessnut::FAMILY, &dir);
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["simulate", "--bluetooth", "AA:BB:CC:00:00:03", "--capture", capture.to_str().unwrap()])
        .env("DBUS_SYSTEM_BUS_ADDRESS", format!("unix:path={}", dir.join("nobody").display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("simulating a Bluetooth LE board at AA:BB:CC:00:00:03"), "{said}");
    assert!(said.contains("no D-Bus to play the board on"), "{said}");
    assert!(said.contains("Try a Bluetooth family without the board"), "{said}");
}
