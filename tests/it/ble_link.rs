//! Bluetooth LE boards read live by `boardcast run`, through a mock BlueZ
//! (python-dbusmock on a private D-Bus, tests/fixtures/bluez-gatt): the
//! test plays a `synth` capture's notifications into the mock in order,
//! at the hall's speed, and checks what a user sees: the game move-exact
//! in the PGN file and on a real broker's feed, the bytes a board needs
//! written to it (a Pegasus's developer key, a ChessUp's acknowledgements),
//! a dropped link made again without losing a move, a message cut over two
//! notifications put together, BlueZ's battery level in the board's status,
//! and a live capture that replays to the same game.

use std::{
    path::Path,
    process::Child,
    time::{Duration, Instant},
};

use crate::support::{
    bluez::{MockBluez, wait_for},
    live::{Hall, SPEED, pgn_moves, scaled, stop},
    mqtt::{Mosquitto, Received, Subscriber, game_from_moves},
};
use boardcast_core::protocol::{FAMILIES, Family};

/// A short game that ends on the board (mate). No capture: on a board
/// that tells only occupancy (Pegasus, Square Off) a capture by the mating
/// move may be read more than one way, and nothing after it settles which.
const GAME: &str = "e4 g5 Nc3 f5 Qh5#";

/// The developer key the Pegasus test configures.
const PEGASUS_KEY: [u8; 6] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xab];

/// A hall with a mock BlueZ, a broker, a subscriber on the whole feed and
/// `boardcast run` reading Bluetooth LE boards.
struct BleHall {
    hall: Hall,
    bluez: MockBluez,
    broker: Mosquitto,
    runtime: tokio::runtime::Runtime,
    bus: zbus::Connection,
    feed: Subscriber,
    daemon: Option<Child>,
}

/// One notification of a capture: when (µs) and what.
type Notification = (u64, Vec<u8>);

impl BleHall {
    /// `None` (the tests skip, with a message) without dbusmock or
    /// Mosquitto.
    fn start(name: &str) -> Option<Self> {
        let bluez = MockBluez::start(&format!("ble_link_{name}"))?;
        let hall = Hall::new(&format!("ble-{name}"));
        let broker = Mosquitto::start(&hall.dir.join("mosquitto"), false)?;
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let bus = runtime.block_on(async {
            zbus::connection::Builder::address(bluez.address.as_str()).unwrap().build().await.unwrap()
        });
        let feed = Subscriber::start(&runtime, broker.port, "boardcast/v1/#", &format!("feed-{name}"));
        Some(Self { hall, bluez, broker, runtime, bus, feed, daemon: None })
    }

    /// Adds a board of `family` advertising `name` at `address`.
    fn add(&self, address: &str, name: &str, family: &Family) {
        let gatt = family.bluetooth.as_ref().unwrap();
        self.bluez.add_board(address, name, gatt.service, gatt.notify, gatt.write);
    }

    /// Starts the daemon with these `[[boards]]` tables and these more
    /// `[link]` settings, on the mock's bus.
    fn run(&mut self, boards: &str, link: &str) {
        let mqtt = format!("[mqtt]\nbridge_id = \"hall\"\nurl = \"mqtt://127.0.0.1:{}\"\n{boards}", self.broker.port);
        let config = self.hall.config_with_mqtt(&[], &mqtt);
        let text = std::fs::read_to_string(&config).unwrap().replace("[link]\n", &format!("[link]\n{link}"));
        std::fs::write(&config, text).unwrap();
        let bus = format!("DBUS_SYSTEM_BUS_ADDRESS={}", self.bluez.address);
        self.daemon = Some(self.hall.run_in(&config, &["env", &bus]));
    }

    /// Calls a test hook of the mock.
    fn hook<B>(&self, method: &str, body: &B) -> zbus::Message
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        self.runtime
            .block_on(self.bus.call_method(Some("org.bluez"), "/", Some("org.boardcast.Mock"), method, body))
            .unwrap_or_else(|e| panic!("the mock's {method}: {e}"))
    }

    /// The board sends a notification.
    fn notify(&self, address: &str, bytes: &[u8]) {
        self.hook("Notify", &(address, bytes.to_vec()));
    }

    /// Everything written to the board's write characteristic.
    fn written(&self, address: &str) -> Vec<Vec<u8>> {
        self.hook("Written", &(address,)).body().deserialize().unwrap()
    }

    /// Whether the daemon has subscribed to the board's notifications.
    fn notifying(&self, address: &str) -> bool {
        let path = format!("/org/bluez/hci0/dev_{}/service0010/char0011", address.replace(':', "_"));
        let reply = self.runtime.block_on(self.bus.call_method(
            Some("org.bluez"),
            path.as_str(),
            Some("org.freedesktop.DBus.Properties"),
            "Get",
            &("org.bluez.GattCharacteristic1", "Notifying"),
        ));
        reply.is_ok_and(|r| {
            r.body().deserialize::<zbus::zvariant::OwnedValue>().is_ok_and(|v| bool::try_from(&v).unwrap_or(false))
        })
    }

    /// Waits until the daemon listens to the board.
    fn wait_notifying(&self, address: &str) {
        let until = Instant::now() + Duration::from_secs(30);
        while !self.notifying(address) {
            assert!(Instant::now() < until, "the daemon did not subscribe to {address}: {}", self.hall.log());
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the link has written its start-up to the board (and
    /// written nothing more for 300 ms): a board's first notifications in
    /// a capture answer it (a Millennium's version and status).
    fn wait_start_up(&self, address: &str) {
        let until = Instant::now() + Duration::from_secs(20);
        let (mut count, mut since) = (0, Instant::now());
        loop {
            let now = self.written(address).len();
            if now != count {
                (count, since) = (now, Instant::now());
            } else if count > 0 && since.elapsed() >= Duration::from_millis(300) {
                return;
            }
            assert!(Instant::now() < until, "no start-up written to {address}: {}", self.hall.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Plays `notifications` at the hall's speed, each cut in two when
    /// `cut` (a message over two notifications); `from` is where the
    /// capture's time starts.
    fn play(&self, address: &str, notifications: &[Notification], cut: bool) {
        let Some(&(from, _)) = notifications.first() else { return };
        let start = Instant::now();
        for (t_us, bytes) in notifications {
            let at = start + Duration::from_micros((t_us - from) / u64::from(SPEED));
            std::thread::sleep(at.saturating_duration_since(Instant::now()));
            if cut && bytes.len() > 1 {
                let (head, tail) = bytes.split_at(bytes.len() / 2);
                self.notify(address, head);
                self.notify(address, tail);
            } else {
                self.notify(address, bytes);
            }
        }
    }

    /// Waits until the board's PGN file holds a finished game.
    fn wait_game_over(&self, board: &str) {
        let done = || {
            let pgn = self.hall.pgn(board);
            pgn.contains("1-0") && pgn.contains('#')
        };
        let until = Instant::now() + Duration::from_secs(20);
        while !done() {
            assert!(
                Instant::now() < until,
                "no finished game for {board}: {}\n{}",
                self.hall.pgn(board),
                self.hall.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stops the daemon (cleanly: the PGN and the capture are complete).
    fn stop(&mut self) {
        if let Some(mut daemon) = self.daemon.take() {
            stop(&mut daemon);
        }
    }

    /// The game as the feed's `moves` topic of `board` told it (empty
    /// before its first move).
    fn fed_game(&self, board: &str) -> Vec<String> {
        let received = self.feed.received();
        let topic = received
            .iter()
            .map(|r| r.topic.clone())
            .find(|t| t.starts_with("boardcast/v1/live/") && t.ends_with(&format!("/{board}/moves")));
        topic.map(|topic| game_from_moves(&received, &topic).0).unwrap_or_default()
    }

    /// The board statuses so far (`bridges/<id>/boards/<serial>/status`;
    /// the tests have one board).
    fn statuses(&self) -> Vec<Received> {
        self.feed.received().into_iter().filter(|r| is_status(&r.topic)).collect()
    }

    /// Checks the game in the PGN file, on the feed, and in the replay of
    /// the capture the daemon recorded.
    fn assert_game(&self, board: &str) {
        let expected: Vec<String> = GAME.split(' ').map(str::to_owned).collect();
        let pgn = self.hall.pgn(board);
        assert_eq!(pgn_moves(&pgn), std::slice::from_ref(&expected), "{pgn}\n{}", self.hall.log());
        assert!(
            self.feed.wait_for(Duration::from_secs(10), |_| self.fed_game(board) == expected),
            "the feed has the game: {:?}",
            self.fed_game(board)
        );
        let captures = self.hall.captures(board);
        assert_eq!(captures.len(), 1, "{captures:?}");
        let replayed =
            boardcast_core::replay::replay(&std::fs::read_to_string(&captures[0]).unwrap(), &scaled()).unwrap();
        assert!(replayed.error.is_none(), "{:?}", replayed.error);
        let mut text = String::new();
        boardcast_core::game::pgn::write_pgn(&replayed.games[0], &mut text);
        assert_eq!(pgn_moves(&text), [expected], "the live capture replays to the game");
    }
}

impl Drop for BleHall {
    fn drop(&mut self) {
        if let Some(daemon) = &mut self.daemon {
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
    }
}

/// The board → host notifications of a `synth` capture of [`GAME`] for
/// `protocol`, in order.
fn notifications(dir: &Path, protocol: &str) -> Vec<Notification> {
    let games = dir.join("game.san.txt");
    std::fs::write(&games, format!("{GAME}\n")).unwrap();
    let out = dir.join(format!("synth-{protocol}"));
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .arg("synth")
        .arg(&games)
        .args(["--game", "1", "--calm", "--protocol", protocol, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let capture = std::fs::read_to_string(out.join("game-1.jsonl")).unwrap();
    capture
        .lines()
        .skip(1)
        .filter_map(|line| {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let rx = record["rx"].as_str()?;
            let bytes = (0..rx.len()).step_by(2).map(|i| u8::from_str_radix(&rx[i..i + 2], 16).unwrap()).collect();
            Some((record["t_us"].as_u64().unwrap(), bytes))
        })
        .collect()
}

/// A board's status topic.
fn is_status(topic: &str) -> bool {
    topic.contains("/boards/") && topic.ends_with("/status")
}

fn family(name: &str) -> &'static Family {
    FAMILIES.into_iter().find(|f| f.name == name).unwrap()
}

/// The name a board of `family` advertises in these tests.
fn advertised(family: &Family) -> String {
    format!("{} 7", family.bluetooth.as_ref().unwrap().name_contains)
}

/// One game on one board of `protocol`, configured by address, with these
/// more `[link]` settings; returns the hall (stopped) for more checks.
fn one_game(protocol: &str, link: &str) -> Option<BleHall> {
    let mut ble = BleHall::start(&format!("game_{protocol}"))?;
    let address = "C0:FF:EE:00:00:01";
    let family = family(protocol);
    ble.add(address, &advertised(family), family);
    ble.run(&format!("[[boards]]\nname = \"t1\"\nprotocol = \"{protocol}\"\nbluetooth = \"{address}\"\n"), link);
    ble.wait_notifying(address);
    ble.wait_start_up(address);
    ble.play(address, &notifications(&ble.hall.dir, protocol), false);
    ble.wait_game_over("t1");
    ble.stop();
    ble.assert_game("t1");
    Some(ble)
}

#[test]
fn a_chessnut_game_is_read_live_move_exact() {
    let Some(ble) = one_game("chessnut", "") else { return };
    // Real-time mode asked after the connection.
    let written = ble.written("C0:FF:EE:00:00:01");
    assert_eq!(written.first().map(Vec::as_slice), Some(&[0x21, 0x01, 0x00][..]), "{written:02x?}");
}

#[test]
fn a_pegasus_is_sent_its_developer_key_first_and_its_game_is_read() {
    let key: String = PEGASUS_KEY.iter().map(|b| format!("{b:02x}")).collect();
    let Some(ble) = one_game("pegasus", &format!("pegasus_key = \"{key}\"\n")) else { return };
    let written = ble.written("C0:FF:EE:00:00:01");
    let mut expected = vec![0x63, 0x07];
    expected.extend_from_slice(&PEGASUS_KEY);
    expected.push(0x00);
    assert_eq!(written.first(), Some(&expected), "the key goes first: {written:02x?}");
    assert!(written.len() > 1, "then the DGT start-up: {written:02x?}");
}

#[test]
fn a_chessup_is_acknowledged_every_move_and_its_game_is_read() {
    let Some(ble) = one_game("chessup", "") else { return };
    let acks = ble.written("C0:FF:EE:00:00:01").iter().filter(|w| w.as_slice() == [0x21]).count();
    let plies = GAME.split(' ').count();
    assert!(acks >= plies, "{acks} acknowledgements (21) for {plies} moves");
}

#[test]
fn square_off_ichessone_and_millennium_games_are_read_live() {
    for protocol in ["squareoff", "ichessone", "millennium"] {
        let Some(ble) = one_game(protocol, "") else { return };
        if protocol == "millennium" {
            // A Millennium wants 100 ms between frames.
            let at: Vec<f64> = ble.hook("WrittenAt", &("C0:FF:EE:00:00:01",)).body().deserialize().unwrap();
            assert!(at.len() >= 3, "its start-up was written: {at:?}");
            let closest = at.windows(2).map(|w| w[1] - w[0]).fold(f64::MAX, f64::min);
            assert!(closest >= 0.095, "writes {closest} s apart: {at:?}");
        }
    }
}

#[test]
fn a_dropped_link_is_made_again_and_no_move_is_lost() {
    let Some(mut ble) = BleHall::start("drop") else { return };
    let address = "C0:FF:EE:00:00:02";
    let family = family("chessnut");
    ble.add(address, "Chessnut Air", family);
    ble.hook("SetBattery", &(address, 77u8));
    // The first two attempts fail, as a busy adapter's do.
    ble.hook("FailConnect", &(address, 2u32));
    // By name, its family from the name.
    ble.run("[[boards]]\nname = \"t1\"\nbluetooth = \"Chessnut Air\"\n", "");
    ble.wait_notifying(address);
    let notes = notifications(&ble.hall.dir, "chessnut");
    // The link drops halfway, between two positions (a position is `01 24`
    // and 36 bytes, cut over two notifications by the board).
    let cut = (notes.len() / 2..notes.len()).find(|&i| notes[i].1.starts_with(&[0x01, 0x24])).unwrap();
    // Every notification cut in two once more: the decoder puts messages
    // together from any cut.
    ble.play(address, &notes[..cut], true);
    std::thread::sleep(Duration::from_millis(300));
    ble.hook("Drop", &(address,));
    let dropped = || ble.statuses().iter().any(|s| s.json["connection"] == "disconnected");
    wait_for(dropped, "the status saying disconnected");
    ble.wait_notifying(address);
    // The board says its position again on the new connection (a Chessnut
    // does when real-time mode is asked again), then play goes on.
    ble.play(address, &notes[cut - 2..cut], true);
    ble.play(address, &notes[cut..], true);
    ble.wait_game_over("t1");
    ble.hook("SetBattery", &(address, 64u8));
    let battery = |percent: u64| {
        move |r: &[Received]| {
            r.iter()
                .rfind(|m| is_status(&m.topic))
                .is_some_and(|s| s.json["battery_percent"] == percent && s.json["connection"] == "connected")
        }
    };
    assert!(ble.feed.wait_for(Duration::from_secs(10), battery(64)), "{:?}", ble.statuses().last());
    assert!(ble.statuses().iter().any(|s| s.json["battery_percent"] == 77), "BlueZ's first battery level");
    ble.stop();
    ble.assert_game("t1");
    let log = ble.hall.log();
    assert!(log.contains("BlueZ could not connect to \"Chessnut Air\""), "{log}");
    assert!(log.contains("the Bluetooth LE link dropped"), "{log}");
    assert!(log.matches("t1: connected").count() >= 2, "{log}");
}

#[test]
fn a_board_switched_on_after_the_daemon_started_is_found_by_scanning() {
    let Some(mut ble) = BleHall::start("scan") else { return };
    let address = "C0:FF:EE:00:00:03";
    ble.run("[[boards]]\nname = \"t1\"\nprotocol = \"ichessone\"\nbluetooth = \"c0:ff:ee:00:00:03\"\n", "");
    // The daemon looks for it, and has BlueZ scan while it is not there.
    wait_for(|| ble.hall.log().contains("looking for the iChessOne"), "the daemon looking for the board");
    std::thread::sleep(Duration::from_millis(500));
    let family = family("ichessone");
    ble.add(address, &advertised(family), family);
    ble.wait_notifying(address);
    // Its link asks for every change and the position (`CPIRQ`, `RP`).
    let written = || ble.written(address).iter().any(|w| w.as_slice() == b"RP");
    wait_for(written, "the position asked");
    ble.stop();
    let log = ble.hall.log();
    assert!(log.contains("t1: reading Bluetooth LE C0:FF:EE:00:00:03"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

/// docs/boards.md's "Try a Bluetooth family without the board", as a user
/// follows it: `boardcast simulate --bluetooth` plays a capture as a board
/// on the mock BlueZ, answering the daemon as the family's board does (a
/// ChessUp drops a host that does not acknowledge its moves), and
/// `boardcast run` configured with `bluetooth = "<address>"` reads the game
/// live, move-exact.
#[test]
fn a_board_simulated_on_the_mock_bluez_is_read_live_as_the_docs_say() {
    for protocol in ["chessnut", "chessup"] {
        let Some(mut ble) = BleHall::start(&format!("try_{protocol}")) else { return };
        let address = "C0:FF:EE:00:00:07";
        // The capture the simulator plays: `notifications` makes it with synth.
        let _ = notifications(&ble.hall.dir, protocol);
        let capture = ble.hall.dir.join(format!("synth-{protocol}")).join("game-1.jsonl");
        let mut simulator = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["simulate", "--bluetooth", address, "--capture", capture.to_str().unwrap()])
            .args(["--speed", &SPEED.to_string()])
            .env("DBUS_SYSTEM_BUS_ADDRESS", &ble.bluez.address)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("the simulator starts");
        ble.run(&format!("[[boards]]\nname = \"t1\"\nprotocol = \"{protocol}\"\nbluetooth = \"{address}\"\n"), "");
        ble.wait_game_over("t1");
        ble.stop();
        let _ = simulator.kill();
        let _ = simulator.wait();
        ble.assert_game("t1");
    }
}
