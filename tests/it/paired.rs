//! Paired boards (Laws appendix D, rules.md I13) through the real daemon:
//! the game is played on the sighted player's DGT board while a second DGT
//! board, the visually impaired player's, copies each move a moment later
//! (D.2.1). Both are simulated boards behind pseudo-terminals; the feed
//! goes through the embedded broker. The game is published and written
//! once, from the game board; the mirror publishes only its board status;
//! when the mirror stops copying, `boards_diverge` (D.2.9) reaches the
//! arbiters once the oldest uncopied move has waited longer than the
//! tolerance, saying the mirror is behind and on which squares.

use std::time::Duration;

use crate::support::{
    live::{Hall, SPEED, game_san, pgn_moves, stop, synth_events, wait},
    mqtt::{Received, Subscriber, free_port, wait_listening},
};
use boardcast_core::{reconstruct::ReconstructorConfig, sensor::SensorEvent, time::Timestamp};

const GAMES: &str = "livechess-vestland-round1.pgn";
const INDEX: usize = 2;
/// Plies the mirror copies before it stops.
const COPIED: usize = 12;
/// How long after each change on the game board the mirror copies it
/// (game time): announced, repeated, executed (D.2.1).
const COPY_DELAY_MS: u64 = 1500;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// The reconstruction settings of a capture replayed at game time.
fn at_game_time() -> ReconstructorConfig {
    ReconstructorConfig::default()
}

#[test]
fn a_mirror_board_copies_the_game_unpublished_and_falling_behind_raises_boards_diverge() {
    let hall = Hall::new("paired");
    let runtime = runtime();
    let expected = game_san(GAMES, INDEX);
    assert!(expected.len() > COPIED + 20, "a game long enough to fall behind in");

    // The game board plays the game with a clock.
    let (header, events) = synth_events(GAMES, INDEX, "game");
    let game_capture = hall.write_capture("game", &header, &events);
    // When the mirror stops copying: a second after the last copied ply
    // was made on the game board (the next is 2 s or more later).
    let text = std::fs::read_to_string(&game_capture).unwrap();
    let replayed = boardcast_core::replay::replay(&text, &at_game_time()).unwrap();
    let stop_at = replayed.games[0].plies[COPIED - 1].made_at + Duration::from_secs(1);
    // The mirror: the same pieces moved COPY_DELAY_MS later, no clock, and
    // nothing after `stop_at`.
    let (mirror_header, _) = synth_events(GAMES, INDEX, "mirror");
    let mirror_events: Vec<(Timestamp, SensorEvent)> = events
        .iter()
        .filter(|(t, e)| !matches!(e, SensorEvent::Clock(_)) && *t <= stop_at)
        .map(|(t, e)| {
            let t = if *t == Timestamp::ZERO { *t } else { *t + Duration::from_millis(COPY_DELAY_MS) };
            (t, e.clone())
        })
        .collect();
    let mirror_capture = hall.write_capture("mirror", &mirror_header, &mirror_events);

    let (port, ws) = (free_port(), free_port());
    let mqtt = format!(
        "[mqtt]\nbridge_id = \"test-bridge\"\npublic_delay_s = 0\nkeep_alive_s = 2\n\
         [mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"127.0.0.1:{ws}\"\nanonymous = \"live\"\n\
         [broadcast]\nevent = \"Test Open\"\nround = \"3\"\n"
    );
    let config = hall.config_with_mqtt(&["game", "mirror"], &mqtt);
    // The mirror is the last board table: it names the game board, and
    // the tolerance is scaled to the simulators' speed (20 s of game time).
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("mirror_of = \"game\"\ndiverge_after_ms = {}\n", 20_000 / SPEED));
    std::fs::write(&config, text).unwrap();

    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(10)), "the embedded broker listens: {}", hall.log());
    let subscriber = Subscriber::start(&runtime, port, "boardcast/v1/#", "arbiter");
    assert!(subscriber.wait_subscribed(Duration::from_secs(5)));
    let mut boards = [hall.simulate(&game_capture, "game", &[]), hall.simulate(&mirror_capture, "mirror", &[])];
    for board in &mut boards {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    let finished = |r: &[Received]| {
        r.iter().any(|m| m.topic.ends_with("/game/state") && m.json["result"].as_str().is_some_and(|x| x != "*"))
    };
    assert!(subscriber.wait_for(Duration::from_secs(10), finished), "the game's result: {}", hall.log());
    stop(&mut daemon);
    let log = hall.log();
    let received = subscriber.received();

    // The game, once: its PGN file is the game move for move, and the
    // mirror has none.
    assert_eq!(pgn_moves(&hall.pgn("game")), std::slice::from_ref(&expected), "{log}");
    assert!(hall.pgn("mirror").is_empty(), "the mirror writes no PGN: {}", hall.pgn("mirror"));

    // The mirror publishes no game: nothing under its board label, no line
    // in the summary; only its board status, which names the game board.
    let of_mirror: Vec<&Received> = received
        .iter()
        .filter(|m| !m.topic.starts_with("boardcast/v1/bridges/") && m.topic.contains("/mirror/"))
        .collect();
    assert!(of_mirror.is_empty(), "{:?}", of_mirror.iter().map(|m| &m.topic).collect::<Vec<_>>());
    assert!(
        received
            .iter()
            .filter(|m| m.topic.contains("/summary/"))
            .all(|m| m.json["boards"].as_array().is_some_and(|b| b.iter().all(|entry| entry["board"] != "mirror"))),
        "the summary lists the game board only"
    );
    let mirror_status = received.iter().find(|m| {
        m.topic.starts_with("boardcast/v1/bridges/test-bridge/boards/")
            && m.json["board"] == "mirror"
            && m.json["connection"] == "connected"
    });
    let mirror_status = mirror_status.unwrap_or_else(|| panic!("the mirror's board status: {log}"));
    assert_eq!(mirror_status.json["mirror_of"], "game");

    // Copying within the tolerance raised nothing; falling behind raised
    // one boards_diverge, on the game board's alerts, at the last ply the
    // boards agreed on, saying the mirror is behind and where they differ.
    let alerts: Vec<&Received> = received
        .iter()
        .filter(|m| m.topic == "boardcast/v1/live/Test-Open/3/game/alerts" && m.json["kind"] != "acknowledged")
        .collect();
    let pair_alerts: Vec<&&Received> =
        alerts.iter().filter(|m| m.json["kind"].as_str().is_some_and(|k| k.starts_with("boards_"))).collect();
    assert_eq!(
        pair_alerts.len(),
        1,
        "{:?}\n{log}",
        pair_alerts.iter().map(|m| m.json["message"].to_string()).collect::<Vec<_>>()
    );
    let alert = &pair_alerts[0].json;
    assert_eq!(alert["kind"], "boards_diverge");
    assert_eq!(alert["article"], "D.2.9");
    assert_eq!(alert["board"], "game");
    assert_eq!(alert["ply"], COPIED, "{alert}");
    let message = alert["message"].as_str().unwrap();
    assert!(
        message.starts_with("the mirror board mirror is ") && message.contains("behind the game board game"),
        "{message}"
    );
    let squares = alert["squares"].as_array().unwrap();
    assert!(!squares.is_empty(), "{alert}");
    let evidence = alert["evidence"].as_array().unwrap();
    assert_eq!(evidence.len(), squares.len(), "what each board has on each square: {alert}");
    assert!(evidence.iter().all(|e| e["game_board"] != e["mirror"]), "{alert}");
    assert!(!received.iter().any(|m| m.topic.starts_with("boardcast/v1/public/") && m.topic.ends_with("/alerts")));

    // The mirror's capture alone replays to the moves it copied.
    let captures = hall.captures("mirror");
    assert_eq!(captures.len(), 1, "the mirror is recorded as evidence");
    let replayed = boardcast_core::replay::replay(
        &std::fs::read_to_string(&captures[0]).unwrap(),
        &crate::support::live::scaled(),
    )
    .unwrap();
    let mut pgn = String::new();
    boardcast_core::game::pgn::write_pgn(&replayed.games[0], &mut pgn);
    assert_eq!(pgn_moves(&pgn)[0], expected[..COPIED], "{pgn}");
}
