//! The payload types are docs/mqtt.md's contract: every key a payload
//! publishes is named in the document (docs/alerts.md for an alert's own
//! fields, docs/operator.md for command replies), and the keys go out in
//! the order displays have always received them.

use boardcast_core::analysis::uci::Score;
use boardcast_core::publish::payload::{
    AcknowledgedPayload, AlertFields, AlertPayload, AnalysisPayload, BoardStatusPayload, BridgeStatusPayload, Clock,
    ClockPayload, CommandReply, Display, Envelope, EvidenceFields, LastMove, MovePayload, NoticePayload, PgnPayload,
    Place, Player, Players, Replaces, SCHEMA, StateGame, StatePayload, SummaryEntry, SummaryGame, SummaryPayload,
    to_value,
};
use serde::Serialize;
use serde_json::Value;

const MQTT: &str = include_str!("../../../../docs/mqtt.md");
const ALERTS: &str = include_str!("../../../../docs/alerts.md");
const OPERATOR: &str = include_str!("../../../../docs/operator.md");

const ENVELOPE: [&str; 5] = ["schema", "boot", "session", "ts_ms", "board"];

fn envelope() -> Envelope<'static> {
    Envelope { schema: SCHEMA, boot: "b00t", session: "board-3", ts_ms: 1_795_259_698_145, board: "board-3" }
}

fn place() -> Place<'static> {
    Place { event: "Open-A", round: "3" }
}

fn clock() -> Clock {
    Clock { white_ms: 60_000, black_ms: 59_000, running: Some("white"), read_at_ms: 1_795_259_698_000 }
}

fn players() -> Players<'static> {
    let unknown = Player { name: None, title: None, rating: None, fed: None, fide_id: None };
    Players {
        white: Player {
            name: Some("Navara, D."),
            title: Some("GM"),
            rating: Some(2699),
            fed: Some("CZE"),
            fide_id: Some(309095),
        },
        black: unknown,
    }
}

fn display() -> Display {
    Display(vec![("en", "Nf6".into()), ("de", "Sf6".into())])
}

/// The keys of `payload`, in order, each checked to be named in one of
/// `docs` (as `` `key` `` or `"key"`).
fn keys(payload: &impl Serialize, docs: &[&str]) -> Vec<String> {
    let Value::Object(map) = to_value(payload) else { panic!("a payload is an object") };
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in &keys {
        assert!(
            docs.iter().any(|doc| doc.contains(&format!("`{key}`")) || doc.contains(&format!("\"{key}\""))),
            "`{key}` is published but not documented"
        );
    }
    keys
}

fn with_envelope(rest: &[&str]) -> Vec<String> {
    ENVELOPE.iter().chain(rest).map(ToString::to_string).collect()
}

#[test]
fn board_payloads_publish_the_documented_keys_in_order() {
    let made = MovePayload {
        envelope: envelope(),
        place: place(),
        game: 1,
        seq: 42,
        kind: "amended",
        ply: 16,
        color: "black",
        san: "Nf6".into(),
        uci: "g8f6",
        illegal: false,
        inferred: false,
        order_uncertain: false,
        fen: "8/8/8/8/8/8/8/8 w - - 0 1".into(),
        display: display(),
        spoken: "Springer f6".into(),
        replaces: Some(Replaces { san: "Nd7".into(), uci: "b8d7".into() }),
        clock_ms: Some(None),
    };
    assert_eq!(
        keys(&made, &[MQTT]),
        with_envelope(&[
            "event",
            "round",
            "game",
            "seq",
            "kind",
            "ply",
            "color",
            "san",
            "uci",
            "illegal",
            "inferred",
            "order_uncertain",
            "fen",
            "display",
            "spoken",
            "replaces",
            "clock_ms",
        ])
    );
    let value = to_value(&made);
    assert_eq!(value["clock_ms"], Value::Null, "completed without a clock reading says null");
    assert_eq!(value["display"], serde_json::json!({"en": "Nf6", "de": "Sf6"}));
    let plain = MovePayload { replaces: None, clock_ms: None, ..made };
    assert!(!keys(&plain, &[MQTT]).iter().any(|k| k == "replaces" || k == "clock_ms"), "only where they apply");

    let last_move = LastMove {
        ply: 16,
        color: "black",
        san: "Nf6".into(),
        uci: "g8f6".into(),
        status: "made",
        illegal: false,
        inferred: false,
        display: display(),
        spoken: String::new(),
        clock_ms: None,
        spent_ms: Some(12_000),
    };
    assert_eq!(
        keys(&last_move, &[MQTT]),
        ["ply", "color", "san", "uci", "status", "illegal", "inferred", "display", "spoken", "clock_ms", "spent_ms"]
    );
    assert_eq!(keys(&players(), &[MQTT]), ["white", "black"]);
    assert_eq!(keys(&players().white, &[MQTT]), ["name", "title", "rating", "fed", "fide_id"]);
    assert_eq!(to_value(&players().black)["title"], Value::Null, "unknown is null");
    let state = StatePayload {
        envelope: envelope(),
        place: place(),
        game: Some(1),
        seq: Some(42),
        connection: "connected",
        status: "out_of_sync",
        out_of_sync_squares: vec!["e4".into()],
        clock: Some(clock()),
        fen: Some("8/8/8/8/8/8/8/8 w - - 0 1".into()),
        record: Some(StateGame {
            turn: "white",
            ply: 16,
            completed_plies: 15,
            white: Some("Navara, D."),
            black: None,
            last_move: Some(last_move),
            players: players(),
            clocks_ms: vec![Some(59_000), None],
            spent_ms: vec![None, Some(12_000)],
        }),
        result: "*",
        termination: Some(None),
        next_players: None,
    };
    assert_eq!(
        keys(&state, &[MQTT]),
        with_envelope(&[
            "event",
            "round",
            "game",
            "seq",
            "connection",
            "status",
            "out_of_sync_squares",
            "clock",
            "fen",
            "turn",
            "ply",
            "completed_plies",
            "white",
            "black",
            "last_move",
            "players",
            "clocks_ms",
            "spent_ms",
            "result",
            "termination",
        ])
    );
    let before_any_game = StatePayload { game: None, seq: None, fen: None, record: None, termination: None, ..state };
    assert_eq!(
        keys(&before_any_game, &[MQTT]),
        with_envelope(&["event", "round", "connection", "status", "out_of_sync_squares", "clock", "fen", "result"])
    );
    assert_eq!(to_value(&before_any_game)["fen"], Value::Null);
    // A round started, its game not begun: the players it will have.
    let waiting = StatePayload { next_players: Some(players()), ..before_any_game };
    assert_eq!(
        keys(&waiting, &[MQTT]),
        with_envelope(&[
            "event",
            "round",
            "connection",
            "status",
            "out_of_sync_squares",
            "clock",
            "fen",
            "result",
            "next_players"
        ])
    );

    assert_eq!(keys(&clock(), &[MQTT]), ["white_ms", "black_ms", "running", "read_at_ms"]);
    let reading = ClockPayload { envelope: envelope(), game: 1, seq: 43, clock: Some(clock()) };
    assert_eq!(keys(&reading, &[MQTT]), with_envelope(&["game", "seq", "clock"]));
    let pgn = PgnPayload { envelope: envelope(), place: place(), game: 1, pgn: "[Event \"?\"]\n".into() };
    assert_eq!(keys(&pgn, &[MQTT]), with_envelope(&["event", "round", "game", "pgn"]));
    let ack = AcknowledgedPayload {
        envelope: envelope(),
        game: 1,
        seq: 50,
        kind: "acknowledged",
        alert_game: 1,
        alert_seq: 17,
    };
    assert_eq!(keys(&ack, &[MQTT]), with_envelope(&["game", "seq", "kind", "alert_game", "alert_seq"]));
    let status = BoardStatusPayload {
        envelope: envelope(),
        serial: Some("24919"),
        connection: "connected",
        sync: "in_sync",
        firmware: None,
        battery_percent: Some(80),
        mirror_of: None,
        label: "3",
        family: Some("dgt"),
        port: Some("/dev/ttyACM0"),
        connected_since_ms: Some(1_795_259_600_000),
        clock: Some("dgt3000"),
        assigned: false,
    };
    assert_eq!(
        keys(&status, &[MQTT]),
        with_envelope(&[
            "serial",
            "connection",
            "sync",
            "firmware",
            "battery_percent",
            "mirror_of",
            "label",
            "family",
            "port",
            "connected_since_ms",
            "clock",
            "assigned"
        ])
    );
}

#[test]
fn an_alert_is_the_documented_alert_inside_the_envelope() {
    let fields = AlertFields {
        article: "4.3.1",
        kind: "touched_own_piece",
        severity: "irregularity",
        board: None,
        game: 1,
        seq: 101,
        ply: 18,
        side: Some("white"),
        t_us: 38_872_000,
        message: "White lifted the pawn on a2 first",
        squares: vec!["a2".into()],
        evidence: vec![EvidenceFields::Square { t_us: 38_872_000, square: "a2".into(), piece: None }],
    };
    let alert_keys =
        ["article", "kind", "severity", "game", "seq", "ply", "side", "t_us", "message", "squares", "evidence"];
    let payload = AlertPayload { envelope: envelope(), alert: fields.clone() };
    assert_eq!(keys(&payload, &[MQTT, ALERTS]), with_envelope(&alert_keys), "the board once, in the envelope");
    let line = AlertFields { board: Some("board-3"), ..fields };
    let mut line_keys = alert_keys.map(String::from).to_vec();
    line_keys.insert(3, "board".into());
    assert_eq!(keys(&line, &[ALERTS]), line_keys, "a line of the alerts file names its board");
}

#[test]
fn round_and_bridge_payloads_publish_the_documented_keys_in_order() {
    let entry = SummaryEntry {
        board: "board-3",
        label: "3",
        ts_ms: 1,
        connection: "connected",
        status: "in_sync",
        clock: None,
        record: Some(SummaryGame {
            game: 1,
            white: None,
            black: None,
            fen: "8/8/8/8/8/8/8/8 w - - 0 1".into(),
            ply: 3,
            completed_plies: 2,
            last_san: Some("Nf3".into()),
            result: "*",
            termination: None,
            players: players(),
        }),
    };
    assert_eq!(
        keys(&entry, &[MQTT]),
        [
            "board",
            "label",
            "ts_ms",
            "connection",
            "status",
            "clock",
            "game",
            "white",
            "black",
            "fen",
            "ply",
            "completed_plies",
            "last_san",
            "result",
            "termination",
            "players",
        ]
    );
    let entry = to_value(&entry);
    let summary = SummaryPayload {
        schema: SCHEMA,
        boot: "b00t",
        ts_ms: Some(1),
        event: "Open-A",
        round: "3",
        delay_ms: Some(900_000),
        boards: vec![&entry],
    };
    assert_eq!(keys(&summary, &[MQTT]), ["schema", "boot", "ts_ms", "event", "round", "delay_ms", "boards"]);

    let boards = ["board-3".to_owned()];
    let bridge = BridgeStatusPayload {
        schema: SCHEMA,
        boot: "b00t",
        ts_ms: 1,
        bridge: "hall-1",
        status: "offline",
        reason: Some("connection lost"),
        version: "0.1.0",
        boards: &boards,
    };
    assert_eq!(keys(&bridge, &[MQTT]), ["schema", "boot", "ts_ms", "bridge", "status", "reason", "version", "boards"]);
    let notice =
        NoticePayload { schema: SCHEMA, ts_ms: 1, kind: "lichess", severity: "error", message: "token refused" };
    assert_eq!(keys(&notice, &[MQTT]), ["schema", "ts_ms", "kind", "severity", "message"]);
    let reply = CommandReply { schema: SCHEMA, ts_ms: 1, id: "c-17", board: "board-3", ok: true, message: "done" };
    assert_eq!(keys(&reply, &[OPERATOR]), ["schema", "ts_ms", "id", "board", "ok", "message"]);
}

#[test]
fn the_analysis_publishes_the_documented_keys_in_order() {
    let pv = vec!["e5".to_owned(), "Nf3".to_owned()];
    let analysis = AnalysisPayload {
        schema: SCHEMA,
        ts_ms: 1_795_259_698_145,
        board: "board-3",
        event: "Open-A",
        round: "3",
        game: 1,
        ply: 1,
        fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
        score: Score::Cp(31),
        depth: 18,
        nodes: 1_000_000,
        pv: &pv,
        best_uci: Some("e7e5"),
        engine: "Stockfish 15.1",
    };
    assert_eq!(
        keys(&analysis, &[MQTT]),
        [
            "schema", "ts_ms", "board", "event", "round", "game", "ply", "fen", "score", "depth", "nodes", "pv",
            "best_uci", "engine"
        ]
    );
    assert_eq!(to_value(&analysis)["score"], serde_json::json!({"cp": 31}));
    for key in ["cp", "mate"] {
        assert!(MQTT.contains(&format!("\"{key}\"")), "`{key}` is documented");
    }
}
