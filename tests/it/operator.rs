//! Operator commands through the real binary: `boardcast ctl` asks a
//! running `boardcast run` over its MQTT broker, and every command shows in
//! the PGN files and in the feed, as explicit events. Commands are recorded
//! in the board's capture: a daemon killed afterwards resumes with them.

use std::time::Duration;

use crate::support::{
    live::{Hall, stop, wait},
    mqtt::{Received, Subscriber, free_port, wait_listening},
};
use boardcast_core::sensor::{Cell, SensorEvent};
use boardcast_sim::synth::{Style, header, play, read_games, rng_for};
use shakmaty::{Move, Position};

const GAMES: &str = "livechess-vestland-round1.pgn";

/// A game's first ten plies on the board, the tenth a quiet move; then the
/// player puts that move back, as when the arbiter annuls it, and the board
/// stays as it is for `hold` (capture time). Returns the capture and the
/// SAN of the ten plies.
pub(crate) fn ten_plies_then_one_taken_back(hall: &Hall, hold: Duration) -> (std::path::PathBuf, Vec<String>) {
    let text = std::fs::read_to_string(format!("{}/tests/fixtures/games/{GAMES}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let games = read_games(&text).unwrap();
    let (index, mut game) = games
        .into_iter()
        .enumerate()
        .find(|(_, g)| matches!(g.moves[9], Move::Normal { capture: None, promotion: None, .. }))
        .unwrap();
    game.moves.truncate(10);
    game.result = None;
    let mut style = Style::calm();
    style.think_ms = (2000, 2500);
    let mut events = play(&game, &style, &mut rng_for(3, index)).events;
    let Move::Normal { role, from, to, .. } = game.moves[9] else { unreachable!() };
    let mut pos = game.start.clone();
    let mut san = Vec::new();
    for &m in &game.moves {
        san.push(shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
    }
    let piece = Cell::Piece(shakmaty::Piece { color: pos.turn().other(), role });
    let end = events.last().unwrap().0;
    events.push((end + Duration::from_secs(3), SensorEvent::Square { square: to, cell: Cell::Empty }));
    events.push((end + Duration::from_millis(3300), SensorEvent::Square { square: from, cell: piece }));
    events.push((end + hold, SensorEvent::Square { square: from, cell: piece }));
    let capture = hall.write_capture("b1", &header(&game, boardcast_core::protocol::Protocol::EVENTS, "b1"), &events);
    (capture, san)
}

fn state(received: &[Received]) -> serde_json::Value {
    received
        .iter()
        .rfind(|r| r.topic == "boardcast/v1/live/event/1/b1/state")
        .map(|r| r.json.clone())
        .unwrap_or_default()
}

#[test]
fn every_operator_command_shows_in_the_pgn_and_the_feed_and_survives_a_restart() {
    let hall = Hall::new("operator");
    let port = free_port();
    // ctl logs in as the operator with the configuration's user name and
    // password file; the arbiter's console reads with a `live` account.
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"hall\"\nusername = \"op\"\npassword_file = \"{}/op.password\"\n\
         [mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"\"\n",
        hall.dir.display()
    );
    let config = hall.config_with_mqtt(&["b1"], &mqtt);
    let operator = hall.account("op", "operator");
    std::fs::write(hall.dir.join("op.password"), format!("{operator}\n")).unwrap();
    let arbiter = hall.account("arbiter", "live");
    let (capture, san) = ten_plies_then_one_taken_back(&hall, Duration::from_secs(60));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)));
    let subscriber = Subscriber::start_as(&runtime, port, "boardcast/v1/#", "arbiter", "arbiter", &arbiter);
    let mut board = hall.simulate(&capture, "b1", &[]);
    // The tenth move, put back after it was completed, leaves the board out
    // of sync with the game.
    let out_of_sync = |r: &[Received]| state(r)["status"] == "out_of_sync";
    assert!(subscriber.wait_for(Duration::from_secs(60), out_of_sync), "{}", hall.log());
    let alert = subscriber
        .received()
        .iter()
        .rfind(|r| r.topic.ends_with("/alerts") && r.json["kind"] == "out_of_sync")
        .map(|r| r.json.clone())
        .unwrap();

    // The arbiter annuls the move: taken back, and the board agrees again.
    let (code, said) = hall.ctl(&["b1", "take-back"]);
    assert_eq!(code, 0, "{said}");
    assert!(
        said.contains(&format!("took back 5... {}", san[9])) || said.contains(&format!("took back 6. {}", san[9])),
        "{said}"
    );
    assert!(subscriber.wait_for(Duration::from_secs(5), |r| state(r)["status"] == "in_sync" && state(r)["ply"] == 9));
    let retracted =
        subscriber.received().into_iter().rfind(|r| r.topic.ends_with("/moves") && r.json["kind"] == "retracted");
    assert_eq!(retracted.map(|r| r.json["san"].clone()), Some(serde_json::json!(san[9])));
    assert_eq!(crate::support::live::pgn_moves(&hall.pgn("b1"))[0], san[..9]);
    let (code, said) = hall.ctl(&["b1", "ack", &alert["game"].to_string(), &alert["seq"].to_string()]);
    assert_eq!(code, 0, "{said}");

    // Players, a tag, a move from the scoresheet, a refused move.
    assert_eq!(hall.ctl(&["b1", "players", "Carlsen, Magnus", "Caruana, Fabiano"]).0, 0);
    assert_eq!(hall.ctl(&["b1", "tag", "Annotator", "boardcast"]).0, 0);
    let (code, said) = hall.ctl(&["b1", "moves", "Qxh7"]);
    assert_eq!(code, 1, "an illegal move is refused: {said}");
    assert!(said.contains("is not a legal move in"), "{said}");
    let (code, said) = hall.ctl(&["b1", "moves", &san[9]]);
    assert_eq!(code, 0, "{said}");
    // Results: a resignation, then corrected to an agreed draw.
    assert_eq!(hall.ctl(&["b1", "result", "1-0", "--reason", "resignation"]).0, 0);
    let (code, said) = hall.ctl(&["b1", "result", "1/2-1/2", "--reason", "agreement"]);
    assert_eq!(code, 0, "{said}");
    // ctl answers once the PGN files hold what it did: read them at once.
    let pgn = hall.pgn("b1");
    for expected in [
        "[White \"Carlsen, Magnus\"]",
        "[Black \"Caruana, Fabiano\"]",
        "[Annotator \"boardcast\"]",
        "[Result \"1/2-1/2\"]",
        "[Termination \"normal\"]",
        "{agreement} 1/2-1/2",
        "{entered by the operator}",
    ] {
        assert!(pgn.contains(expected), "{expected} in {pgn}");
    }
    assert!(subscriber.wait_for(Duration::from_secs(5), |r| state(r)["result"] == "1/2-1/2"));
    let ended: Vec<String> = subscriber
        .received()
        .iter()
        .filter(|r| r.topic.ends_with("/state"))
        .filter_map(|r| r.json["result"].as_str().map(String::from))
        .collect();
    assert!(ended.contains(&"1-0".to_owned()), "the first result was published before its correction");
    let acknowledged =
        subscriber.received().into_iter().any(|r| r.topic.ends_with("/alerts") && r.json["kind"] == "acknowledged");
    assert!(acknowledged);

    // The next round, from a set position.
    assert_eq!(hall.ctl(&["b1", "next-round", "2"]).0, 0);
    let fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 40";
    let (code, said) = hall.ctl(&["b1", "position", fen]);
    assert_eq!(code, 0, "{said}");
    let round_2 = std::fs::read_to_string(hall.dir.join("pgn/event/round-2/game-b1.pgn")).unwrap_or_default();
    assert!(round_2.contains(&format!("[FEN \"{fen}\"]")) && round_2.contains("[Round \"2\"]"), "{round_2}");
    let state_2 = |r: &[Received]| {
        r.iter().rfind(|m| m.topic == "boardcast/v1/live/event/2/b1/state").is_some_and(|m| m.json["fen"] == fen)
    };
    assert!(subscriber.wait_for(Duration::from_secs(5), state_2), "the feed moved to round 2");
    let (code, said) = hall.ctl(&["nowhere", "flip"]);
    assert_eq!(code, 1);
    assert!(said.contains("no board called \"nowhere\""), "{said}");

    // Killed outright and started again: the commands are in the capture.
    let before = (hall.pgn("b1"), std::fs::read_to_string(hall.dir.join("pgn/event/round-1/games.pgn")).unwrap());
    daemon.kill().unwrap();
    daemon.wait().unwrap();
    let mut daemon = hall.run(&config);
    std::thread::sleep(Duration::from_secs(2));
    stop(&mut daemon);
    let _ = wait(&mut board, Duration::from_secs(60));
    let after = (hall.pgn("b1"), std::fs::read_to_string(hall.dir.join("pgn/event/round-1/games.pgn")).unwrap());
    assert_eq!(after, before, "{}", hall.log());
}
