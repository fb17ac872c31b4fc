//! Bluetooth LE boards (Chessnut, DGT Pegasus) as a user meets them in the
//! command line: `boardcast synth --protocol chessnut|pegasus` writes
//! captures of their notifications that `boardcast replay` turns back into
//! the game; `list-ports` finds the boards in range through BlueZ (a mock
//! BlueZ on a private D-Bus: python-dbusmock with the template in
//! tests/fixtures/bluez-gatt); `config check` takes a board by its
//! Bluetooth address or name, and refuses one on a serial port.

use std::{fs, path::PathBuf, process::Command};

use crate::support::bluez::MockBluez;

fn boardcast(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_boardcast")).args(args).output().expect("the binary runs")
}

/// A fresh folder under the target directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn synth_writes_ble_captures_that_replay_to_the_game() {
    let games = format!("{}/tests/fixtures/games/raws.san.txt", env!("CARGO_MANIFEST_DIR"));
    let families = boardcast_core::protocol::FAMILIES.into_iter().filter(|f| f.bluetooth.is_some());
    for protocol in families.map(|f| f.name) {
        let dir = scratch(&format!("ble_synth_{protocol}"));
        let out = dir.to_str().unwrap();
        let made = boardcast(&["synth", &games, "--game", "2", "--calm", "--protocol", protocol, "--out", out]);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let capture = fs::read_to_string(dir.join("game-2.jsonl")).unwrap();
        assert!(capture.lines().next().unwrap().contains(&format!("\"protocol\":\"{protocol}\"")), "{capture:.200}");
        let pgn = dir.join("out.pgn");
        let replayed =
            boardcast(&["replay", dir.join("game-2.jsonl").to_str().unwrap(), "--pgn", pgn.to_str().unwrap()]);
        assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
        let pgn = fs::read_to_string(pgn).unwrap();
        assert!(
            pgn.contains('#') && (pgn.contains("1-0") || pgn.contains("0-1")),
            "{protocol}: the game ends in mate: {pgn}"
        );
    }
}

#[test]
fn a_bluetooth_board_is_configured_by_address_or_name_and_not_on_a_port() {
    let dir = scratch("ble_config");
    let file = dir.join("boardcast.toml");
    let check = |text: &str| {
        fs::write(&file, text).unwrap();
        boardcast(&["config", "check", "--config", file.to_str().unwrap()])
    };
    for protocol in ["chessnut", "pegasus"] {
        let out = check(&format!("[[boards]]\nname = \"t1\"\nprotocol = \"{protocol}\"\nport = \"/dev/ttyUSB0\"\n"));
        assert_eq!(out.status.code(), Some(2));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(&format!("boards[0].protocol = \"{protocol}\"")), "{said}");
        assert!(said.contains("bluetooth = \"C0:FF:EE:00:00:01\""), "{said}");
        assert!(said.contains("speak Bluetooth LE"), "{said}");
    }
    // By address, with its family; by the name it advertises, whose
    // family the name says.
    let out = check(
        "[[boards]]\nname = \"t1\"\nprotocol = \"pegasus\"\nbluetooth = \"c0:ff:ee:00:00:01\"\n\
         [[boards]]\nname = \"t2\"\nbluetooth = \"Chessnut Air\"\n",
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", String::from_utf8_lossy(&out.stderr));
    assert!(said.contains("Bluetooth LE C0:FF:EE:00:00:01"), "{said}");
    assert!(said.contains("Bluetooth LE \"Chessnut Air\""), "{said}");
    // What cannot be: both a port and Bluetooth, an address without a
    // family, a serial family over Bluetooth LE, one board twice.
    let refused = [
        (
            "protocol = \"chessnut\"\nport = \"/dev/ttyUSB0\"\nbluetooth = \"Chessnut Air\"\n",
            "boards[0].port = (given with bluetooth): nothing: a board is found either by bluetooth or by port or serial",
        ),
        (
            "bluetooth = \"C0:FF:EE:00:00:01\"\n",
            "boards[0].protocol = (missing): the board's family, one of millennium, chessnut,",
        ),
        ("bluetooth = \"My board\"\n", "the name \"My board\" does not say which"),
        ("protocol = \"dgt\"\nbluetooth = \"C0:FF:EE:00:00:01\"\n", "dgt boards are read on a serial port"),
    ];
    for (table, error) in refused {
        let out = check(&format!("[[boards]]\nname = \"t1\"\n{table}"));
        assert_eq!(out.status.code(), Some(2), "{table}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(error), "{table}: {said}");
    }
    let twice = "[[boards]]\nname = \"t1\"\nbluetooth = \"Chessnut Air\"\n[[boards]]\nname = \"t2\"\nbluetooth = \"chessnut air\"\n";
    let said = String::from_utf8_lossy(&check(twice).stderr).into_owned();
    assert!(
        said.contains("boards[1].bluetooth = \"\\\"chessnut air\\\"\": a Bluetooth board no other board reads"),
        "{said}"
    );
}

#[test]
fn list_ports_shows_the_bluetooth_boards_in_range_by_their_family() {
    use boardcast_core::protocol::{chessnut, pegasus};
    let Some(bluez) = MockBluez::start("ble_list_ports") else { return };
    bluez.add_board(
        "AA:BB:CC:DD:EE:01",
        "Chessnut Air",
        chessnut::POSITION_SERVICE,
        chessnut::POSITION_CHARACTERISTIC,
        chessnut::COMMAND_CHARACTERISTIC,
    );
    bluez.add_board(
        "AA:BB:CC:DD:EE:02",
        "DGT_Pegasus_1234",
        pegasus::UART_SERVICE,
        pegasus::UART_NOTIFY,
        pegasus::UART_WRITE,
    );
    // A device of no family, with the Nordic UART service a Pegasus uses
    // too: its name says it is no board this daemon reads.
    bluez.add_board(
        "AA:BB:CC:DD:EE:03",
        "Heart rate",
        pegasus::UART_SERVICE,
        pegasus::UART_NOTIFY,
        pegasus::UART_WRITE,
    );
    // A Square Off by the name it advertises, and a device whose name
    // only starts alike.
    for (address, name) in [("AA:BB:CC:DD:EE:04", "Squareoff Pro"), ("AA:BB:CC:DD:EE:05", "Square 2")] {
        bluez.add_board(address, name, pegasus::UART_SERVICE, pegasus::UART_NOTIFY, pegasus::UART_WRITE);
    }
    let out = bluez.boardcast(&["list-ports", "--scan-ms", "300"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("Bluetooth LE AA:BB:CC:DD:EE:01  \"Chessnut Air\"  Chessnut board (chessnut), RSSI -60 dBm"),
        "{said}"
    );
    assert!(said.contains("Bluetooth LE AA:BB:CC:DD:EE:02  \"DGT_Pegasus_1234\"  DGT Pegasus"), "{said}");
    assert!(!said.contains("AA:BB:CC:DD:EE:03"), "{said}");
    assert!(said.contains("Bluetooth LE AA:BB:CC:DD:EE:04  \"Squareoff Pro\"  Square Off"), "{said}");
    assert!(!said.contains("AA:BB:CC:DD:EE:05"), "{said}");
}

#[test]
fn list_ports_says_why_there_is_no_bluetooth_scan() {
    // A bus address where no bus is.
    let dir = scratch("ble_no_bus");
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["list-ports", "--scan-ms", "100"])
        .env("DBUS_SYSTEM_BUS_ADDRESS", format!("unix:path={}", dir.join("nobody").display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("Bluetooth LE: not scanned: no system D-Bus to reach BlueZ through"), "{said}");
}
