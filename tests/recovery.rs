//! Crash recovery through the real binary: a daemon killed outright
//! (SIGKILL, as a power cut or a crash does) at random moments of a
//! two-board game and started again carries every game on exactly where it
//! was, from its captures.

mod support;

use std::time::Duration;

use boardcast::synth::Rng;
use support::live::{Hall, stop, wait};

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
    for name in ["b1", "b2"] {
        let pgn = calm.pgn(name);
        assert!(pgn.contains("1-0") || pgn.contains("0-1") || pgn.contains("1/2-1/2"), "{pgn}");
        assert_eq!(killed.pgn(name), pgn, "{name}: {log}");
        assert_eq!(killed.captures(name).len(), 1, "{name}: one capture, resumed each time");
    }
    assert_eq!(killed.round_pgn("event", "1"), calm.round_pgn("event", "1"));
    assert!(!calm.round_pgn("event", "1").is_empty());
}
