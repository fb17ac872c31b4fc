//! `boardcast calibrate` through the binary, reading a simulated Certabo
//! board behind a pseudo-terminal: it learns the set on the board, says
//! which piece is missing, and takes the port and file from the
//! configuration. (The Certabo decoder and reconstruction are tested in
//! the core: crates/boardcast-core/tests/it/certabo.rs.)

use std::{fs, process::Command, time::Duration};

use boardcast_core::{
    capture::CaptureHeader,
    protocol::Protocol,
    sensor::{Cell, Picture, SensorEvent},
    time::Timestamp,
};
use boardcast_sim::board::CertaboSim;
use shakmaty::{Board, Color, Square};

use crate::support::live::Hall;

/// An events capture whose board shows `picture` for a minute of capture
/// time (six seconds at the hall's speed: long enough to be read).
fn still_board(hall: &Hall, name: &str, picture: &Picture) -> std::path::PathBuf {
    let events = vec![
        (Timestamp::ZERO, SensorEvent::Board(Box::new(picture.clone()))),
        (Timestamp::from_millis(60_000), SensorEvent::Board(Box::new(picture.clone()))),
    ];
    hall.write_capture(name, &CaptureHeader::new(Protocol::EVENTS, name), &events)
}

fn calibration_setup() -> Picture {
    let mut picture = Picture::from_board(&Board::new());
    picture.set(Square::D6, Cell::Piece(Color::Black.queen()));
    picture.set(Square::D3, Cell::Piece(Color::White.queen()));
    picture
}

fn wait_for_link(hall: &Hall, name: &str) {
    let link = hall.link(name);
    for _ in 0..200 {
        if link.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    panic!("the simulated board never appeared at {}: {}", link.display(), hall.simulate_log(name));
}

#[test]
fn calibrate_learns_a_simulated_boards_set() {
    let hall = Hall::new("certabo-calibrate");
    let capture = still_board(&hall, "cert", &calibration_setup());
    let mut board = hall.simulate(&capture, "cert", &["--protocol", "certabo"]);
    wait_for_link(&hall, "cert");
    let out = hall.dir.join("calibration/cert.json");
    let run = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["calibrate", "--port"])
        .arg(hall.link("cert"))
        .arg("--out")
        .arg(&out)
        .args(["--wait-s", "20"])
        .output()
        .unwrap();
    crate::support::live::stop(&mut board);
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "calibrate failed: {stderr}");
    assert!(stderr.contains("spare black queen on d6 and a spare white queen on d3"), "{stderr}");
    assert!(stdout.starts_with("calibrated 34 pieces from 10 reports"), "{stdout}");
    assert!(stdout.contains("white: P 8, N 2, B 2, R 2, Q 2, K 1"), "{stdout}");
    let written: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&fs::read_to_string(&out).unwrap()).unwrap();
    let expected: std::collections::BTreeMap<String, String> =
        CertaboSim::calibration().entries().into_iter().map(|(tag, letter)| (tag, letter.to_string())).collect();
    assert_eq!(written, expected);
}

#[test]
fn calibrate_says_which_piece_is_missing() {
    let hall = Hall::new("certabo-calibrate-missing");
    // The start position without the spare queens.
    let capture = still_board(&hall, "cert", &Picture::from_board(&Board::new()));
    let mut board = hall.simulate(&capture, "cert", &["--protocol", "certabo"]);
    wait_for_link(&hall, "cert");
    let out = hall.dir.join("cert.json");
    let run = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["calibrate", "--port"])
        .arg(hall.link("cert"))
        .arg("--out")
        .arg(&out)
        .args(["--wait-s", "2"])
        .output()
        .unwrap();
    crate::support::live::stop(&mut board);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no piece on d6: put the black queen there"), "{stderr}");
    assert!(!out.exists(), "nothing written");
}

#[test]
fn calibrate_takes_the_port_and_file_from_the_configuration() {
    let hall = Hall::new("certabo-calibrate-config");
    let capture = still_board(&hall, "cert", &calibration_setup());
    let mut board = hall.simulate(&capture, "cert", &["--protocol", "certabo"]);
    wait_for_link(&hall, "cert");
    let file = hall.dir.join("cert-calibration.json");
    let config = hall.dir.join("boardcast.toml");
    fs::write(
        &config,
        format!(
            "[mqtt]\nenabled = false\n[[boards]]\nname = \"cert\"\nprotocol = \"certabo\"\nport = \"{}\"\ncalibration = \"{}\"\n",
            hall.link("cert").display(),
            file.display()
        ),
    )
    .unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["calibrate", "--config"])
        .arg(&config)
        .args(["--board", "cert", "--wait-s", "20"])
        .output()
        .unwrap();
    crate::support::live::stop(&mut board);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let text = fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches(": \"").count(), 34, "{text}");
}
