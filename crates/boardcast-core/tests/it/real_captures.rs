//! The real DGT recordings replay to exactly the moves the games had.

use boardcast_core::{event::EventKind, reconstruct::ReconstructorConfig, replay::replay, session::Output};

fn expected_moves(uci: &str) -> Vec<String> {
    uci.split_whitespace().filter(|t| !t.ends_with('.') && *t != "*").map(str::to_owned).collect()
}

fn check(capture: &str, uci: &str) {
    let replayed = replay(capture, &ReconstructorConfig::default()).unwrap();
    assert!(replayed.error.is_none(), "{:?}", replayed.error);
    assert_eq!(replayed.games.len(), 1, "one game");
    let game = &replayed.games[0];
    let moves: Vec<String> = game.plies.iter().map(|p| p.uci(game.castling_mode)).collect();
    assert_eq!(moves, expected_moves(uci));
    let alerts: Vec<String> = replayed
        .outputs
        .iter()
        .filter_map(|o| match o {
            Output::Event(e) => match &e.kind {
                EventKind::Alert(a) => Some(a.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(alerts.is_empty(), "no alerts expected: {alerts:#?}");
}

#[test]
fn real_game_1_replays_exactly() {
    check(
        include_str!("../../../../tests/fixtures/dgt-real/dgt-real-1.jsonl"),
        include_str!("../../../../tests/fixtures/dgt-real/1.uci"),
    );
}

#[test]
fn real_game_2_on_a_turned_board_replays_exactly() {
    check(
        include_str!("../../../../tests/fixtures/dgt-real/dgt-real-2.jsonl"),
        include_str!("../../../../tests/fixtures/dgt-real/2.uci"),
    );
}
