//! `calibrate` on a running daemon (the console's Calibrate, here through
//! `boardcast ctl`): a simulated Certabo board behind a pseudo-terminal,
//! read by `boardcast run` with another set's calibration file, learns its
//! own set from the start position, the file is rewritten, and the game
//! that follows is read with it, without a restart.

use std::{fs, time::Duration};

use boardcast_core::{
    capture::CaptureHeader,
    protocol::Protocol,
    sensor::{Picture, SensorEvent},
    time::Timestamp,
};
use boardcast_sim::board::CertaboSim;
use shakmaty::{Chess, Position, uci::UciMove};

use crate::support::{
    live::{Hall, stop},
    mqtt::{free_port, wait_listening},
};

/// The start position held for 100 s of capture time (10 s at the hall's
/// speed), then 1. e4 e5.
fn start_then_two_moves(hall: &Hall) -> std::path::PathBuf {
    let mut pos = Chess::default();
    let mut events = vec![(Timestamp::ZERO, SensorEvent::Board(Box::new(Picture::from_board(pos.board()))))];
    for (i, uci) in ["e2e4", "e7e5"].iter().enumerate() {
        let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
        let t = Timestamp::from_millis(100_000 + i as u64 * 3_000);
        events.push((t, SensorEvent::Board(Box::new(Picture::from_board(pos.board())))));
    }
    events.push((Timestamp::from_millis(120_000), SensorEvent::Board(Box::new(Picture::from_board(pos.board())))));
    hall.write_capture("cert", &CaptureHeader::new(Protocol::EVENTS, "cert"), &events)
}

#[test]
fn ctl_calibrate_writes_the_file_and_the_game_is_read_with_it() {
    let hall = Hall::new("console-calibrate");
    let port = free_port();
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nbroker = \"builtin\"\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"\"\n"
    );
    let file = hall.dir.join("cert-calibration.json");
    // Another set's calibration: none of this board's tags is known.
    fs::write(&file, "{\"9-9-9-9-1\": \"K\", \"9-9-9-9-2\": \"k\"}\n").unwrap();
    let config = hall.config_with_mqtt(&["cert"], &mqtt);
    let text = fs::read_to_string(&config)
        .unwrap()
        .replace("protocol = \"dgt\"", &format!("protocol = \"certabo\"\ncalibration = \"{}\"", file.display()));
    fs::write(&config, text).unwrap();
    let capture = start_then_two_moves(&hall);
    let mut board = hall.simulate(&capture, "cert", &["--protocol", "certabo"]);
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "{}", hall.log());
    std::thread::sleep(Duration::from_secs(2));
    let (code, said) = hall.ctl(&["cert", "calibrate"]);
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    assert!(said.contains(&format!("calibrated: 32 pieces learnt, written to {}", file.display())), "{said}");
    let written: std::collections::BTreeMap<String, String> =
        serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let sim = CertaboSim::calibration();
    assert_eq!(written.len(), 32);
    for (tag, letter) in sim.entries() {
        if let Some(learnt) = written.get(&tag) {
            assert_eq!(learnt, &letter.to_string(), "tag {tag}");
        }
    }
    // A board not running here is refused.
    let (code, said) = hall.ctl(&["nobody", "calibrate"]);
    assert_ne!(code, 0, "{said}");
    // The game after it is read with the new calibration.
    let end = std::time::Instant::now() + Duration::from_secs(40);
    while !hall.pgn("cert").contains("1. e4 e5") && std::time::Instant::now() < end {
        std::thread::sleep(Duration::from_millis(200));
    }
    let pgn = hall.pgn("cert");
    stop(&mut daemon);
    let _ = board.kill();
    let _ = board.wait();
    assert!(pgn.contains("1. e4 e5"), "{pgn}\n{}", hall.log());
}
