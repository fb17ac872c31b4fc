//! Live boards through the real daemon: simulated DGT boards behind
//! pseudo-terminals, speaking the board's protocol byte for byte, read by
//! `boardcast run`. The PGN must come out exact through a real game, a
//! pulled cable, a noisy line and two boards at once, and every byte must be
//! recorded as a capture that replays to the same game. A DGT 3000
//! configured to show moves is sent them, each followed by END.

use std::time::Duration;

use crate::support::live::{Hall, SPEED, game_san, pgn_moves, stop, wait};
use shakmaty::{Chess, san::SanPlus, uci::UciMove};

/// The SAN of a UCI move list from the start.
fn san_of(uci: &str) -> Vec<String> {
    let mut pos = Chess::default();
    uci.split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(|t| {
            let m = t.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string()
        })
        .collect()
}

#[test]
fn a_real_game_on_a_simulated_board_comes_out_exact() {
    let hall = Hall::new("real-game");
    let capture = format!("{}/tests/fixtures/dgt-real/dgt-real-1.jsonl", env!("CARGO_MANIFEST_DIR"));
    let mut board = hall.simulate(capture.as_ref(), "b1", &[]);
    let mut daemon = hall.run(&hall.config(&["b1"]));
    assert!(wait(&mut board, Duration::from_secs(600 / u64::from(SPEED) + 20)), "the simulated game ended");
    stop(&mut daemon);
    let games = pgn_moves(&hall.pgn("b1"));
    assert_eq!(games.len(), 1, "{}\n{}", hall.pgn("b1"), hall.log());
    assert_eq!(games[0], san_of(include_str!("../fixtures/dgt-real/1.uci")), "{}", hall.log());
    assert!(hall.pgn("b1").contains("1. e4 {[%clk 0:03:01]}"), "clocks recorded: {}", hall.pgn("b1"));
    // Every byte was recorded, and the capture replays to the same game.
    let captures = hall.captures("b1");
    assert_eq!(captures.len(), 1);
    let replayed = boardcast_core::replay::replay(
        &std::fs::read_to_string(&captures[0]).unwrap(),
        &crate::support::live::scaled(),
    )
    .unwrap();
    assert!(replayed.error.is_none());
    let mut pgn = String::new();
    boardcast_core::game::pgn::write_pgn(&replayed.games[0], &mut pgn);
    assert_eq!(pgn_moves(&pgn)[0], games[0]);
}

#[test]
fn a_cable_pulled_mid_game_loses_nothing_and_moves_made_meanwhile_are_recovered() {
    let hall = Hall::new("unplug");
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 0, "b1");
    // Unplugged 3 s into the game (at 10×: half a minute of play) for 0.2 s;
    // the daemon's next attempt to open the port comes 0.25 s after it
    // closed: two and a half seconds of play, a ply or two, are missed.
    let mut board = hall.simulate(&capture, "b1", &["--unplug-at", "3", "--replug-after", "0.2"]);
    let mut daemon = hall.run(&hall.config(&["b1"]));
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    assert!(
        log.contains("b1: disconnected") && log.matches("b1: connected").count() >= 2,
        "the cable was pulled and put back: {log}"
    );
    let simulated = hall.simulate_log("b1");
    let changed: usize = simulated
        .split("boardcast: ")
        .find_map(|l| l.strip_suffix(" square(s) changed while the cable was out\n")?.parse().ok())
        .unwrap_or_else(|| panic!("the simulator says what happened while unplugged: {simulated}"));
    assert!(changed >= 2, "a move was made while the cable was out: {simulated}");
    let games = pgn_moves(&hall.pgn("b1"));
    assert_eq!(games, [game_san("livechess-vestland-round1.pgn", 0)], "{log}");
}

#[test]
fn a_long_unplug_with_moves_meanwhile_is_told_as_a_gap_live_and_in_the_replay_and_the_rest_is_kept() {
    let hall = Hall::new("unplug-long");
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 0, "b1");
    // Unplugged 3 s into the game for 4 s: at 10× forty seconds of play,
    // more moves than the daemon fills in.
    let mut board = hall.simulate(&capture, "b1", &["--unplug-at", "3", "--replug-after", "4"]);
    let mut daemon = hall.run(&hall.config(&["b1"]));
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    let gap = log.lines().find(|l| l.contains("board_gap")).unwrap_or_else(|| panic!("board_gap alerted: {log}"));
    // The game ended while the board was away; the players' result gesture
    // is what the board shows when it is back.
    assert!(gap.contains("disconnected for") && gap.contains("result gesture"), "{gap}");
    // The record keeps the moves up to the loss, exactly.
    let expected = game_san("livechess-vestland-round1.pgn", 0);
    let games = pgn_moves(&hall.pgn("b1"));
    assert!(!games.is_empty() && !games[0].is_empty(), "{log}");
    assert!(games[0].len() < expected.len() && expected.starts_with(&games[0]), "{:?}\n{log}", games[0]);
    // The capture has the port's changes, and its replay says the same.
    let recorded = hall.captures("b1");
    let text = std::fs::read_to_string(&recorded[0]).unwrap();
    assert!(text.contains(r#""link":"disconnected""#) && text.contains(r#""link":"connected""#));
    let alerts = hall.dir.join("replayed-alerts.jsonl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .arg("replay")
        .arg(&recorded[0])
        .arg("--alerts")
        .arg(&alerts)
        .arg("--pgn")
        .arg(hall.dir.join("replayed.pgn"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let replayed = std::fs::read_to_string(&alerts).unwrap();
    assert_eq!(replayed.matches("\"kind\":\"board_gap\"").count(), 1, "{replayed}");
}

#[test]
fn a_noisy_line_is_resynchronised_and_the_game_comes_out_exact() {
    let hall = Hall::new("noise");
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 1, "b1");
    let mut board = hall.simulate(&capture, "b1", &["--noise", "0.05"]);
    let mut daemon = hall.run(&hall.config(&["b1"]));
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    assert!(log.contains("dropped"), "the noise was noticed: {log}");
    let games = pgn_moves(&hall.pgn("b1"));
    assert_eq!(games.len(), 1, "{log}");
    assert_eq!(games[0], game_san("livechess-vestland-round1.pgn", 1), "{log}");
}

#[test]
fn two_boards_at_once_do_not_disturb_each_other() {
    let hall = Hall::new("two-boards");
    let first = hall.synth_capture("livechess-vestland-round1.pgn", 2, "b1");
    let second = hall.synth_capture("livechess-vestland-round1.pgn", 3, "b2");
    let mut boards = [hall.simulate(&first, "b1", &[]), hall.simulate(&second, "b2", &["--white-clock", "right"])];
    let mut daemon = hall.run(&hall.config(&["b1", "b2"]));
    for board in &mut boards {
        assert!(wait(board, Duration::from_secs(120)), "the simulated game ended");
    }
    stop(&mut daemon);
    let log = hall.log();
    assert_eq!(pgn_moves(&hall.pgn("b1")), [game_san("livechess-vestland-round1.pgn", 2)], "{log}");
    assert_eq!(pgn_moves(&hall.pgn("b2")), [game_san("livechess-vestland-round1.pgn", 3)], "{log}");
}

#[test]
fn a_board_that_is_not_there_is_waited_for_and_shutdown_is_clean() {
    let hall = Hall::new("missing");
    let mut daemon = hall.run(&hall.config(&["ghost"]));
    std::thread::sleep(Duration::from_millis(1500));
    stop(&mut daemon);
    let log = hall.log();
    assert!(log.contains("ghost: cannot open the port"), "{log}");
    assert_eq!(log.matches("cannot open the port").count(), 1, "said once, not at every retry: {log}");
    assert!(log.contains("stopping"), "{log}");
}

#[test]
fn boards_configured_by_serial_number_are_found_and_found_again_after_a_replug() {
    let hall = Hall::new("by-serial");
    let first = hall.synth_capture("livechess-vestland-round1.pgn", 4, "b1");
    let second = hall.synth_capture("livechess-vestland-round1.pgn", 5, "b2");
    // Configured in the other order than the links are listed, so that each
    // board is found by asking, not by position.
    let mut boards = [
        hall.simulate(&first, "b1", &["--board-serial", "04242", "--unplug-at", "2", "--replug-after", "0.2"]),
        hall.simulate(&second, "b2", &["--board-serial", "00007"]),
    ];
    let config = hall.config_by_serial(&[("table-7", "7"), ("table-42", "4242")], &["b1", "b2"]);
    let mut daemon = hall.run(&config);
    for board in &mut boards {
        assert!(wait(board, Duration::from_secs(120)), "the simulated game ended");
    }
    stop(&mut daemon);
    let log = hall.log();
    let link = |name: &str| hall.link(name).display().to_string();
    assert!(log.contains(&format!("table-42: reading {}", link("b1"))), "{log}");
    assert!(log.contains(&format!("table-7: reading {}", link("b2"))), "{log}");
    assert!(log.contains("table-42: disconnected"), "{log}");
    assert_eq!(pgn_moves(&hall.pgn("table-7")), [game_san("livechess-vestland-round1.pgn", 5)], "{log}");
    assert_eq!(pgn_moves(&hall.pgn("table-42")), [game_san("livechess-vestland-round1.pgn", 4)], "{log}");
}

#[test]
fn list_ports_tells_what_answers_and_leaves_a_board_in_use_alone() {
    let hall = Hall::new("list-ports");
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 6, "b1");
    let mut board = hall.simulate(&capture, "b1", &["--board-serial", "04242"]);
    let config = hall.config_by_serial(&[("b1", "4242")], &["b1"]);
    let link = hall.link("b1").display().to_string();
    let list = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["list-ports", "--config"])
            .arg(&config)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    // The simulator needs a moment to make its link.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !hall.link("b1").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let listed = list();
    let entry = listed.split(&link).nth(1).unwrap_or_else(|| panic!("{link} is listed: {listed}"));
    assert!(entry.trim_start().starts_with("DGT board, serial 04242, firmware 1.2"), "{listed}");
    // Asking who it is did not start the game: the daemon still sees it from
    // the first move.
    let mut daemon = hall.run(&config);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !hall.log().contains("b1: connected") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let listed = list();
    let entry = listed.split(&link).nth(1).unwrap_or_else(|| panic!("{link} is listed: {listed}"));
    assert!(entry.trim_start().starts_with("in use by boardcast (PID"), "{listed}");
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    assert!(!log.contains("dropped"), "the probe stole nothing from the daemon: {log}");
    assert_eq!(pgn_moves(&hall.pgn("b1")), [game_san("livechess-vestland-round1.pgn", 6)], "{log}");
}

#[test]
fn the_log_can_be_one_json_object_per_line_for_log_collectors() {
    let hall = Hall::new("json-log");
    let config = hall.config_with_mqtt(&["ghost"], "[mqtt]\nenabled = false\n[log]\nformat = \"json\"\n");
    let mut daemon = hall.run(&config);
    std::thread::sleep(Duration::from_millis(1500));
    stop(&mut daemon);
    let log = hall.log();
    let lines: Vec<serde_json::Value> =
        log.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let open = lines
        .iter()
        .find(|l| l["fields"]["message"].as_str().is_some_and(|m| m.starts_with("cannot open the port")))
        .unwrap_or_else(|| panic!("{log}"));
    assert_eq!(open["level"], "WARN");
    assert_eq!(open["span"]["board"], "ghost", "the board's name is a field: {open}");
}

#[test]
fn boards_in_trouble_do_not_disturb_a_healthy_one() {
    let hall = Hall::new("troubled-neighbours");
    let healthy = hall.synth_capture("livechess-vestland-round1.pgn", 9, "b1");
    let noisy = hall.synth_capture("livechess-vestland-round1.pgn", 10, "b2");
    // b2's cable is as bad as a cable gets; b3 is not plugged in at all.
    let mut boards = [hall.simulate(&healthy, "b1", &[]), hall.simulate(&noisy, "b2", &["--noise", "1"])];
    let mut daemon = hall.run(&hall.config(&["b1", "b2", "b3"]));
    for board in &mut boards {
        assert!(wait(board, Duration::from_secs(120)), "the simulated game ended");
    }
    stop(&mut daemon);
    let log = hall.log();
    assert!(log.contains("b2: dropped"), "{log}");
    assert!(log.contains("b3: cannot open the port"), "{log}");
    assert_eq!(pgn_moves(&hall.pgn("b1")), [game_san("livechess-vestland-round1.pgn", 9)], "{log}");
    assert!(log.contains("stopping"), "{log}");
}

#[test]
fn a_reader_polling_the_pgn_folder_never_sees_half_a_file() {
    let hall = Hall::new("pgn-reader");
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 11, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let mut daemon = hall.run(&hall.config(&["b1"]));
    let files = [hall.dir.join("pgn/event/round-1/game-b1.pgn"), hall.dir.join("pgn/event/round-1/games.pgn")];
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (files, done) = (files.clone(), done.clone());
        std::thread::spawn(move || {
            let (mut reads, mut versions) = (0, std::collections::BTreeSet::new());
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                for file in &files {
                    let Ok(text) = std::fs::read_to_string(file) else { continue };
                    reads += 1;
                    let whole = text.starts_with("[Event ")
                        && ["*", "1-0", "0-1", "1/2-1/2"].iter().any(|r| text.trim_end().ends_with(r));
                    assert!(whole, "a half-written file after {reads} reads:\n{text}");
                    versions.insert(text.len());
                }
            }
            (reads, versions.len())
        })
    };
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let (reads, versions) = reader.join().unwrap();
    assert!(reads > 1000 && versions > 50, "the reader saw the files change: {reads} reads, {versions} versions");
    assert_eq!(pgn_moves(&hall.pgn("b1")), [game_san("livechess-vestland-round1.pgn", 11)], "{}", hall.log());
}

#[test]
fn a_dgt_3000_configured_to_show_moves_is_sent_each_move_then_end() {
    // The simulated board's clock is a DGT 3000; the real 3+2 game has more
    // than a minute on both clocks for its first moves.
    let hall = Hall::new("clock-display");
    let capture = format!("{}/tests/fixtures/dgt-real/dgt-real-1.jsonl", env!("CARGO_MANIFEST_DIR"));
    let config = hall.config(&["b1"]);
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("clock_display = \"moves\"\n");
    std::fs::write(&config, text).unwrap();
    let mut board = hall.simulate(capture.as_ref(), "b1", &[]);
    let mut daemon = hall.run(&config);
    assert!(wait(&mut board, Duration::from_secs(600 / u64::from(SPEED) + 20)), "the simulated game ended");
    stop(&mut daemon);
    let captures = hall.captures("b1");
    let recorded = std::fs::read_to_string(&captures[0]).unwrap();
    // Every byte the daemon sent is in the capture, as hex.
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let first_move = [0x2B, 0x0C, 0x03, 0x0C, b'1', b'.', b'e', b'4', b' ', b' ', b' ', b' ', 0x00, 0x00];
    assert!(recorded.contains(&hex(&first_move)), "1.e4 was shown: {}", hall.log());
    // The game is played ten times as fast as real play: most moves come
    // less than 2 s apart and are skipped; every text shown is followed by
    // END, the times back, and by END once more (in case one is lost).
    let end = format!("\"tx\":\"{}\"", hex(&[0x2B, 0x03, 0x03, 0x03, 0x00]));
    let shown: String = recorded
        .lines()
        .filter_map(|line| {
            if line.contains("\"tx\":\"2b0c030c") {
                Some('T')
            } else if line.contains(&end) {
                Some('E')
            } else {
                None
            }
        })
        .collect();
    let texts = shown.matches('T').count();
    assert!(texts >= 1, "no text shown: {shown}");
    // Each text is followed by an END before anything else is shown; the
    // second END may be cut off by the end of the game.
    assert!(!shown.contains("TT") && shown.ends_with('E'), "texts (T) and ENDs (E) in order: {shown}");
    assert!(shown.matches('E').count() >= 2 * texts - 1, "END goes twice after a text: {shown}");
    assert!(!hall.log().contains("did not acknowledge"), "{}", hall.log());
    // The game itself is not disturbed.
    assert_eq!(pgn_moves(&hall.pgn("b1"))[0], san_of(include_str!("../fixtures/dgt-real/1.uci")));
}
