//! Crash recovery through the real binary: a daemon killed outright
//! (SIGKILL, as a power cut or a crash does) at random moments of a
//! two-board game and started again carries every game on exactly where it
//! was, from its captures.

use std::time::Duration;

use crate::support::live::{Hall, stop, wait};
use boardcast_sim::synth::Rng;

/// Both boards of a hall, simulated with the game waiting while no daemon
/// reads it (so that the killed run sees exactly what the calm one sees).
fn boards(hall: &Hall) -> Vec<std::process::Child> {
    [("b1", 7), ("b2", 8)]
        .into_iter()
        .map(|(name, game)| {
            let capture = hall.synth_capture("livechess-vestland-round1.pgn", game, name);
            hall.simulate(&capture, name, &["--pause-while-unread"])
        })
        .collect()
}

#[test]
fn a_daemon_killed_at_random_moments_and_restarted_writes_the_same_games_as_one_left_alone() {
    let calm = Hall::new("recovery-calm");
    let killed = Hall::new("recovery-killed");
    let (calm_config, killed_config) = (calm.config(&["b1", "b2"]), killed.config(&["b1", "b2"]));
    let mut calm_boards = boards(&calm);
    let mut killed_boards = boards(&killed);
    let mut calm_daemon = calm.run(&calm_config);
    let mut daemon = killed.run(&killed_config);
    // Three kills at moments drawn from a fixed seed, each followed by a
    // restart a moment later.
    let mut rng = Rng::new(2026);
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(rng.range(1500, 4000)));
        daemon.kill().unwrap();
        daemon.wait().unwrap();
        std::thread::sleep(Duration::from_millis(rng.range(100, 800)));
        daemon = killed.run(&killed_config);
    }
    for board in calm_boards.iter_mut().chain(&mut killed_boards) {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    stop(&mut calm_daemon);
    stop(&mut daemon);
    let log = killed.log();
    assert_eq!(log.matches("resuming game").count(), 6, "each board resumed after each kill: {log}");
    assert!(!log.contains("before-restart"), "a restart with whole captures keeps no file aside: {log}");
    for name in ["b1", "b2"] {
        let pgn = calm.pgn(name);
        assert!(pgn.contains("1-0") || pgn.contains("0-1") || pgn.contains("1/2-1/2"), "{pgn}");
        assert_eq!(killed.pgn(name), pgn, "{name}: {log}");
        assert_eq!(killed.captures(name).len(), 1, "{name}: one capture, resumed each time");
    }
    assert_eq!(killed.round_pgn("event", "1"), calm.round_pgn("event", "1"));
    assert!(!calm.round_pgn("event", "1").is_empty());
}

/// A disk that fills up mid-game (here: the kernel's file-size limit on the
/// daemon, which fails writes past it as a full disk does) pauses the
/// recording; once there is room again the capture catches up, and in the
/// end it replays to the same game as the PGN.
#[test]
fn a_full_disk_pauses_the_recording_and_the_capture_is_whole_once_there_is_room() {
    use std::{
        io::Read,
        process::{Command, Stdio},
        sync::{Arc, Mutex},
    };
    if Command::new("prlimit").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "prlimit (util-linux) is needed for this test");
        return;
    }
    let hall = Hall::new("disk-full");
    let config = hall.config(&["b1"]);
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 3, "b1");
    let mut board = hall.simulate(&capture, "b1", &["--pause-while-unread"]);
    // `trap ""` ignores SIGXFSZ (inherited through exec), so a write past
    // the limit fails with an error instead of killing the daemon, as a
    // full disk does. The limit lets the capture's first lines through.
    let mut daemon = Command::new("sh")
        .args(["-c", "trap '' XFSZ; exec prlimit --fsize=6000: \"$0\" run --config \"$1\""])
        .arg(env!("CARGO_BIN_EXE_boardcast"))
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The log goes through a pipe, which the limit does not touch.
    let log = Arc::new(Mutex::new(String::new()));
    let mut stderr = daemon.stderr.take().unwrap();
    let reader = {
        let log = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                log.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let said = |what: &str, limit: Duration| {
        let end = std::time::Instant::now() + limit;
        while std::time::Instant::now() < end {
            if log.lock().unwrap().contains(what) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    };
    assert!(said("recording paused", Duration::from_secs(60)), "{}", log.lock().unwrap());
    // Some moves are played while the disk is full.
    std::thread::sleep(Duration::from_secs(3));
    let room =
        Command::new("prlimit").args(["--pid", &daemon.id().to_string(), "--fsize=unlimited:"]).status().unwrap();
    assert!(room.success());
    assert!(said("recording resumed", Duration::from_secs(10)), "{}", log.lock().unwrap());
    assert!(wait(&mut board, Duration::from_secs(180)), "the simulated game ended");
    stop(&mut daemon);
    reader.join().unwrap();
    let pgn = hall.pgn("b1");
    let moves = crate::support::live::pgn_moves(&pgn);
    assert_eq!(moves.first(), Some(&crate::support::live::game_san("livechess-vestland-round1.pgn", 3)), "{pgn}");
    // The capture alone gives the whole game back.
    let captures = hall.captures("b1");
    assert_eq!(captures.len(), 1, "{captures:?}");
    let replayed = Command::new(env!("CARGO_BIN_EXE_boardcast")).arg("replay").arg(&captures[0]).output().unwrap();
    assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
    assert_eq!(crate::support::live::pgn_moves(&String::from_utf8_lossy(&replayed.stdout)), moves);
}

/// The capture is the record everything else is derived from: a daemon
/// killed right after a move reached the PGN file and the feed has that
/// move's input in its capture, every time (here ten times in one game),
/// and a restart never finds the PGN ahead of the captures.
#[test]
fn a_daemon_killed_right_after_a_move_never_published_more_than_its_capture_holds() {
    use crate::support::{
        live::pgn_moves,
        mqtt::{Subscriber, free_port, game_from_moves, wait_listening},
    };
    let hall = Hall::new("capture-first");
    let port = free_port();
    let config = hall.config_with_mqtt(
        &["b1"],
        &format!(
            "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"\"\nanonymous = \"live\"\n"
        ),
    );
    let capture = hall.synth_capture("livechess-vestland-round1.pgn", 3, "b1");
    let mut board = hall.simulate(&capture, "b1", &["--pause-while-unread"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "the broker listens: {}", hall.log());
    let feed = Subscriber::start(&runtime, port, "boardcast/v1/live/+/+/+/moves", "watcher");
    let pgn_path = hall.dir.join("pgn/event/round-1/game-b1.pgn");
    let plies = |text: &str| pgn_moves(text).last().map_or(0, Vec::len);
    let mut kills = 0;
    while kills < 10 {
        // A move reaches the PGN file: kill the daemon at once.
        let before = plies(&std::fs::read_to_string(&pgn_path).unwrap_or_default());
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let mut written = before;
        while written <= before && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
            written = plies(&std::fs::read_to_string(&pgn_path).unwrap_or_default());
        }
        if written <= before {
            break; // the game is over
        }
        daemon.kill().unwrap();
        daemon.wait().unwrap();
        kills += 1;
        let in_pgn = plies(&std::fs::read_to_string(&pgn_path).unwrap());
        let captures = hall.captures("b1");
        let replayed = hall.dir.join(format!("replayed-{kills}.pgn"));
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["replay", "--fast"])
            .args(&captures)
            .arg("--pgn")
            .arg(&replayed)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success() || status.code() == Some(1), "replay ran");
        let in_capture = plies(&std::fs::read_to_string(&replayed).unwrap());
        assert!(in_pgn <= in_capture, "kill {kills}: the PGN had {in_pgn} plies, the capture gives {in_capture}");
        let (published, _) = game_from_moves(&feed.received(), "boardcast/v1/live/event/1/b1/moves");
        assert!(
            published.len() <= in_capture,
            "kill {kills}: the feed had {} plies, the capture gives {in_capture}",
            published.len()
        );
        daemon = hall.run(&config);
    }
    assert!(kills >= 5, "killed after {kills} moves only: {}", hall.log());
    assert!(wait(&mut board, Duration::from_secs(180)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    assert!(!log.contains("was longer before this start"), "the PGN was never ahead of the captures: {log}");
    assert!(!log.contains("ERROR"), "an ordinary crash leaves nothing to report: {log}");
}
