//! Bluetooth LE boards (Chessnut, DGT Pegasus) as a user meets them in the
//! command line: `boardcast synth --protocol chessnut|pegasus` writes
//! captures of their notifications that `boardcast replay` turns back into
//! the game.

use std::{fs, path::PathBuf, process::Command};

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
    for protocol in ["chessnut", "pegasus"] {
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
fn a_bluetooth_board_in_the_configuration_is_refused_with_what_can_be_done() {
    let dir = scratch("ble_config");
    let file = dir.join("boardcast.toml");
    for protocol in ["chessnut", "pegasus"] {
        fs::write(&file, format!("[[boards]]\nname = \"t1\"\nprotocol = \"{protocol}\"\nport = \"/dev/ttyUSB0\"\n"))
            .unwrap();
        let out = boardcast(&["config", "check", "--config", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(&format!("boards[0].protocol = \"{protocol}\"")), "{said}");
        assert!(said.contains("Bluetooth LE, which `boardcast run` does not read yet"), "{said}");
    }
}
