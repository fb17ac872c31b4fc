//! A hall with mixed equipment: a DGT, a Millennium and a Certabo board,
//! each a simulated board speaking its own protocol byte for byte behind a
//! pseudo-terminal, read by one `boardcast run`. Every game must come out
//! exact, and no board's family may disturb another's.

use std::time::Duration;

use crate::support::live::{Hall, game_san, pgn_moves, stop, wait};

#[test]
fn a_dgt_a_millennium_and_a_certabo_board_in_one_daemon_all_come_out_exact() {
    let hall = Hall::new("mixed");
    let file = "livechess-vestland-round1.pgn";
    let boards = [("dgt1", "dgt", 4), ("mil1", "millennium", 5), ("cert1", "certabo", 6)];
    let mut simulated: Vec<_> = boards
        .iter()
        .map(|&(name, protocol, index)| {
            let capture = hall.synth_capture(file, index, name);
            hall.simulate(&capture, name, &["--protocol", protocol])
        })
        .collect();
    let config: Vec<(&str, &str)> = boards.iter().map(|&(name, protocol, _)| (name, protocol)).collect();
    let mut daemon = hall.run(&hall.config_mixed(&config));
    for board in &mut simulated {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    stop(&mut daemon);
    let log = hall.log();
    for &(name, protocol, index) in &boards {
        assert_eq!(
            pgn_moves(&hall.pgn(name)),
            [game_san(file, index)],
            "the {protocol} board {name}: {log}\n{}",
            hall.simulate_log(name)
        );
    }
    assert!(!log.contains("ERROR"), "{log}");
}
