//! A game as DGT LiveChess's API shows it: a session's outputs through a
//! board watch into the hall (REST) and a WebSocket connection (the
//! `eboardevent` feed), and the delivered round as LiveChess Cloud's JSON.
//! The keys are checked against the ones LiveChess's clients read
//! (docs/livechess.md, "Shapes").

use boardcast_core::{
    deliver::RoundPgn,
    livechess::{
        board::{BoardWatch, Identity},
        cloud::CloudTree,
        hall::{Hall, Rest},
        ids,
        socket::{Connection, Step, WRITES_REFUSED},
    },
    operator::Command,
    protocol::Protocol,
    reconstruct::{GameSetup, ReconstructorConfig},
    session::BoardSession,
    sink::Sink,
    time::Timestamp,
};
use serde_json::{Value, json};

use crate::support::script::Script;

const EPOCH_MS: i64 = 1_795_000_000_000;

fn identity() -> Identity {
    Identity {
        name: "board-3".into(),
        serialnr: "board-3".into(),
        source: Some("ttyACM0".into()),
        label: "3".into(),
        event: "Open A".into(),
        round: "1".into(),
    }
}

fn setup() -> GameSetup {
    let tags = [
        ("Event", "Open A"),
        ("Round", "1"),
        ("White", "Muzychuk, Anna"),
        ("Black", "Hou, Yifan"),
        ("WhiteTitle", "GM"),
    ];
    GameSetup { tags: tags.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(), ..Default::default() }
}

/// Plays `script` through a session, a watch, the hall and one WebSocket
/// subscriber (subscribed before the first event); returns the hall, the
/// session and every feed message.
fn play(script: &Script) -> (Hall, BoardSession, Vec<Value>) {
    let mut session = BoardSession::new(Protocol::EVENTS, ReconstructorConfig::default(), setup());
    let mut watch = BoardWatch::new(identity(), EPOCH_MS);
    let mut hall = Hall::new(Some("Ålesund".into()));
    let mut connection = Connection::new(false);
    watch.flush(session.games());
    hall.update(watch.poll_item().expect("the first snapshot"));
    let mut feed = Vec::new();
    let subscribe =
        r#"{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":7,"param":{"serialnr":"board-3"}}}"#;
    for step in connection.handle_text(1, subscribe, &hall) {
        let Step::Send(text) = step else { panic!("a subscription writes nothing") };
        feed.push(serde_json::from_str(&text).unwrap());
    }
    for (t, event) in script.stream() {
        session.advance_to(*t);
        session.handle_sensor(*t, event);
        while let Some(output) = session.poll_output() {
            watch.handle_output(&output, session.games());
        }
        watch.flush(session.games());
        while let Some(snapshot) = watch.poll_item() {
            hall.update(snapshot);
            for text in connection.handle_changed(2, &hall) {
                feed.push(serde_json::from_str(&text).unwrap());
            }
        }
    }
    (hall, session, feed)
}

fn rest(hall: &Hall, path: &str) -> Value {
    match hall.rest(path) {
        Rest::Json(body) => serde_json::from_str(&body).unwrap(),
        Rest::NotFound(why) => panic!("{path}: {why}"),
    }
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().unwrap_or_else(|| panic!("an object: {value}")).keys().map(String::as_str).collect()
}

#[test]
fn a_game_comes_through_the_rest_api_in_livechess_shapes() {
    let mut script = Script::new();
    script.start_clock(300_000).pressed_moves("e2e4 e7e5 g1f3");
    let (hall, _, _) = play(&script);

    let eboards = rest(&hall, "eboards");
    let board = &eboards[0];
    assert_eq!(keys(board), ["serialnr", "source", "state", "battery", "comment", "board", "flipped", "clock"]);
    assert_eq!(board["serialnr"], "board-3");
    assert_eq!(board["source"], "ttyACM0");
    assert_eq!(board["board"], "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R");
    assert_eq!(keys(&board["clock"]), ["white", "black", "run", "time"]);
    assert_eq!(board["clock"]["run"], false, "Black's clock runs after Nf3: {board}");
    assert!(board["clock"]["time"].as_i64().unwrap() > EPOCH_MS);

    let tournaments = rest(&hall, "tournaments");
    let uuid = ids::tournament("Open A");
    assert_eq!(tournaments, json!([{"uuid": uuid, "description": "Open A", "rounds": 1}]));
    let tournament = rest(&hall, &format!("tournament/{uuid}"));
    assert_eq!(keys(&tournament), ["uuid", "name", "description", "location", "country", "rounds", "eboards"]);
    assert_eq!(tournament["location"], "Ålesund");
    assert_eq!(tournament["eboards"], json!(["", "", "board-3"]), "board 3 of the round is eboards[2]");

    // Round 1 asked as 0 (counted from 0) and as 1 (counted from 1).
    let round = rest(&hall, &format!("round/{uuid}/0"));
    assert_eq!(round, rest(&hall, &format!("round/{uuid}/1")));
    assert_eq!(keys(&round), ["nr", "date", "pairings"]);
    assert_eq!(round["nr"], 1);
    let pairing = &round["pairings"][0];
    assert_eq!(keys(pairing), ["nr", "uuid", "white", "black", "live", "result"]);
    assert_eq!((pairing["nr"].as_u64(), &pairing["live"], &pairing["result"]), (Some(3), &json!(true), &Value::Null));
    assert_eq!(keys(&pairing["white"]), ["fname", "mname", "lname", "title", "federation", "gender", "fideid"]);
    assert_eq!((&pairing["white"]["fname"], &pairing["white"]["lname"]), (&json!("Anna"), &json!("Muzychuk")));
    assert_eq!(pairing["white"]["title"], "GM");
    assert_eq!(pairing["uuid"], ids::game("Open A", "1", "3"));

    let game = rest(&hall, &format!("game/{}", pairing["uuid"].as_str().unwrap()));
    assert_eq!(keys(&game), ["chess960", "result", "comment", "clock", "moves"]);
    assert_eq!(game["chess960"], 518);
    let moves: Vec<&str> = game["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    assert_eq!(moves.len(), 3, "{game}");
    for (m, san) in moves.iter().zip(["e4", "e5", "Nf3"]) {
        let (played, seconds) = m.split_once(' ').unwrap_or_else(|| panic!("{m}: SAN and seconds"));
        assert_eq!(played, san);
        let seconds: u64 = seconds.parse().unwrap();
        assert!((295..=300).contains(&seconds), "{m}");
    }

    for path in ["round/x/1", "game/nope", "tournament/nope", "nothing", &format!("round/{uuid}/2")] {
        assert!(matches!(hall.rest(path), Rest::NotFound(_)), "{path}");
    }
}

#[test]
fn a_finished_game_has_livechess_result_and_is_no_longer_live() {
    let mut script = Script::new();
    script.pressed_moves("f2f3 e7e5 g2g4 d8h4").wait(3000);
    let (hall, _, _) = play(&script);
    let uuid = ids::tournament("Open A");
    let round = rest(&hall, &format!("round/{uuid}/1"));
    assert_eq!(round["pairings"][0]["result"], "BLACKWIN", "{round}");
    assert_eq!(round["pairings"][0]["live"], false);
    let game = rest(&hall, &format!("game/{}", round["pairings"][0]["uuid"].as_str().unwrap()));
    assert_eq!(game["result"], "BLACKWIN");
    assert_eq!(game["moves"].as_array().unwrap().last().unwrap().as_str().unwrap().split(' ').next(), Some("Qh4#"));
}

#[test]
fn the_feed_sends_the_full_board_first_then_each_change() {
    let mut script = Script::new();
    script.start_clock(300_000).pressed_moves("e2e4 e7e5");
    let (_, _, feed) = play(&script);
    assert_eq!(feed[0], json!({"response": "call", "id": 2, "param": null, "time": 1}));
    // Subscribed before the board was read: the full message has no game
    // yet, as in LiveChess's recorded first message.
    let first = &feed[1];
    assert_eq!((&first["response"], &first["id"]), (&json!("feed"), &json!(7)));
    assert_eq!(keys(&first["param"]), ["serialnr", "flipped", "board", "clock"]);
    assert_eq!(first["param"]["board"], "8/8/8/8/8/8/8/8");
    assert_eq!(first["param"]["clock"], Value::Null);
    let started = feed.iter().find(|m| m["param"].get("start").is_some()).unwrap();
    let started_keys = keys(&started["param"]);
    for key in ["serialnr", "flipped", "start", "san", "match"] {
        assert!(started_keys.contains(&key), "{started}");
    }
    assert!(
        started_keys.iter().all(|k| ["serialnr", "flipped", "board", "clock", "start", "san", "match"].contains(k))
    );
    // The board shows the start position from then on: a later message
    // with `board` has another one.
    let start_board = feed.iter().find_map(|m| m["param"].get("board").filter(|b| *b != "8/8/8/8/8/8/8/8")).unwrap();
    assert_eq!(start_board, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
    assert_eq!(started["param"]["start"], "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
    assert_eq!((&started["param"]["san"], &started["param"]["match"]), (&json!([]), &json!(true)));
    // Every later message says only what changed of the board and clock,
    // and the game's moves so far; the moves come in order.
    let mut sans: Vec<Vec<String>> = Vec::new();
    for message in feed[2..].iter().filter(|m| m["param"].get("san").is_some()) {
        let param = &message["param"];
        assert_eq!((&param["serialnr"], &param["flipped"]), (&json!("board-3"), &json!(false)));
        assert!(param.get("board").is_some() || param.get("clock").is_some() || param.get("san").is_some());
        let san: Vec<String> = serde_json::from_value(param["san"].clone()).unwrap();
        if sans.last() != Some(&san) {
            sans.push(san);
        }
    }
    assert_eq!(sans.last().unwrap(), &["e4", "e5"]);
    assert!(sans.iter().any(|s| s == &["e4"]), "{sans:?}");
    let last_board = feed.iter().rev().find_map(|m| m["param"].get("board")).unwrap();
    assert_eq!(last_board, "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR");
}

#[test]
fn calls_answer_in_livechess_envelopes_and_writes_are_refused_unless_allowed() {
    let mut script = Script::new();
    script.pressed_moves("e2e4");
    let (hall, _, _) = play(&script);
    let one = |connection: &mut Connection, text: &str| -> Value {
        match connection.handle_text(5, text, &hall).as_slice() {
            [Step::Send(text), ..] => serde_json::from_str(text).unwrap(),
            other => panic!("{text}: {other:?}"),
        }
    };
    let mut reader = Connection::new(false);
    let eboards = one(&mut reader, r#"{"id":1,"call":"eboards"}"#);
    assert_eq!((&eboards["response"], &eboards["id"], &eboards["time"]), (&json!("call"), &json!(1), &json!(5)));
    assert_eq!(eboards["param"][0]["serialnr"], "board-3");
    let sources = one(&mut reader, r#"{"id":9,"call":"sources"}"#);
    assert_eq!(keys(&sources["param"][0]), ["type", "device", "name", "present", "active", "status"]);
    one(
        &mut reader,
        r#"{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":7,"param":{"serialnr":"board-3"}}}"#,
    );
    let setup =
        r#"{"id":3,"call":"call","param":{"id":7,"method":"setup","param":{"fen":"8/8/8/8/8/8/8/K1k5 w - - 0 1"}}}"#;
    let refused = one(&mut reader, setup);
    assert_eq!(refused, json!({"response": "error", "id": 3, "param": {"message": WRITES_REFUSED}, "time": 5}));
    let flip = r#"{"id":4,"call":"call","param":{"id":7,"method":"flip","param":{"flip":true}}}"#;
    assert_eq!(one(&mut reader, flip)["response"], "error");
    for (call, message) in [
        (r#"{"id":5,"call":"launch"}"#, "unknown call"),
        (
            r#"{"id":6,"call":"subscribe","param":{"feed":"eboardevent","id":8,"param":{"serialnr":"999"}}}"#,
            "no e-board",
        ),
        (r#"{"id":7,"call":"call","param":{"id":70,"method":"setup","param":{"fen":"x"}}}"#, "no such feed"),
        ("not json", "not a call"),
    ] {
        let answer = one(&mut reader, call);
        assert_eq!(answer["response"], "error", "{call}");
        assert!(answer["param"]["message"].as_str().unwrap().contains(message), "{call}: {answer}");
    }
    assert_eq!(one(&mut reader, r#"{"id":8,"call":"unsubscribe","param":{"id":7}}"#)["response"], "call");
    assert_eq!(reader.handle_changed(6, &hall), Vec::<String>::new(), "nothing after unsubscribing");

    let mut writer = Connection::new(true);
    one(
        &mut writer,
        r#"{"id":2,"call":"subscribe","param":{"feed":"eboardevent","id":7,"param":{"serialnr":"board-3"}}}"#,
    );
    let write = |connection: &mut Connection, text: &str| match connection.handle_text(5, text, &hall).as_slice() {
        [Step::Write { call, board, command }] => (call.clone(), board.clone(), command.clone()),
        other => panic!("{text}: {other:?}"),
    };
    assert_eq!(
        write(&mut writer, setup),
        (json!(3), "board-3".to_owned(), Command::SetPosition { fen: "8/8/8/8/8/8/8/K1k5 w - - 0 1".into() })
    );
    assert_eq!(write(&mut writer, flip).2, Command::Flip);
    // One client library sends flip as `setup` with a flip parameter.
    let flip_as_setup = r#"{"id":5,"call":"call","param":{"id":7,"method":"setup","param":{"flip":true}}}"#;
    assert_eq!(write(&mut writer, flip_as_setup).2, Command::Flip);
    // Asking for the side the board already has changes nothing.
    let unflip = r#"{"id":6,"call":"call","param":{"id":7,"method":"flip","param":{"flip":false}}}"#;
    assert_eq!(one(&mut writer, unflip), json!({"response": "call", "id": 6, "param": null, "time": 5}));
    let answer: Value = serde_json::from_str(&writer.answer_write(&json!(3), Err("no".into()), 9)).unwrap();
    assert_eq!(answer, json!({"response": "error", "id": 3, "param": {"message": "no"}, "time": 9}));
}

#[test]
fn a_delivered_round_is_livechess_cloud_json_with_completed_moves_only() {
    let mut script = Script::new();
    script.start_clock(300_000).pressed_moves("e2e4 e7e5").mv("g1f3");
    let (_, session, _) = play(&script);
    let games: Vec<_> = session.reconstructor().games().collect();
    let round = RoundPgn::new("Open A", "1", &[("3", games)]);
    let mut tree = CloudTree::new([("3".to_owned(), "7425".to_owned())].into(), None);
    let files: std::collections::BTreeMap<String, Value> = tree
        .handle_round(&round.event, &round.round, round.cloud.clone())
        .into_iter()
        .map(|(path, text)| (path, serde_json::from_str(&text).unwrap()))
        .collect();
    let id = ids::tournament("Open A");
    let names: Vec<&str> = files.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [format!("{id}/round-1/game-1.json"), format!("{id}/round-1/index.json"), format!("{id}/tournament.json")]
    );
    let tournament = &files[&format!("{id}/tournament.json")];
    assert_eq!(
        keys(tournament),
        ["id", "name", "location", "country", "website", "rules", "chess960", "timecontrol", "rounds", "eboards"]
    );
    assert_eq!(tournament["rounds"], json!([{"count": 1, "live": 1}]));
    assert_eq!(tournament["eboards"], json!(["7425"]));
    let index = &files[&format!("{id}/round-1/index.json")];
    assert_eq!(keys(index), ["date", "pairings"]);
    assert_eq!(keys(&index["pairings"][0]), ["white", "black", "result", "live"]);
    assert_eq!(index["pairings"][0]["result"], "*");
    assert_eq!(index["pairings"][0]["white"]["lname"], "Muzychuk");
    let game = &files[&format!("{id}/round-1/game-1.json")];
    assert_eq!(keys(game), ["live", "serialNr", "firstMove", "chess960", "result", "comment", "clock", "moves"]);
    assert_eq!(game["serialNr"], "7425");
    let moves: Vec<&str> = game["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
    // Nf3 is made, not completed: not delivered.
    assert_eq!(moves.len(), 2, "{moves:?}");
    assert!(moves[0].starts_with("e4 ") && moves[1].starts_with("e5 "), "{moves:?}");
    // The second move has both times: seconds left, + seconds used.
    let (left, used) = moves[1].split_once(' ').unwrap().1.split_once('+').unwrap();
    assert!(left.parse::<u64>().unwrap() <= 300 && used.parse::<u64>().is_ok(), "{moves:?}");
    let _ = Timestamp::ZERO;
}
