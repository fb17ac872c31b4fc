//! DGT LiveChess's clients against `boardcast run` (docs/livechess.md): a
//! DGT and a Millennium board, each simulated byte for byte behind a
//! pseudo-terminal, read as LiveChess e-boards.
//!
//! - The REST client is the operators' helper `livechess` from PyPI
//!   (pinned in `.ci/livechess-clients.txt`, installed by `.ci/run`), run
//!   as its users run it: its tables must show the boards, the tournament,
//!   each game's players, last move, clock and result. It hard-codes
//!   LiveChess's port 1982, so it and the daemon run in a network namespace
//!   of their own, where that port is free whatever this machine runs.
//! - No WebSocket client of LiveChess's is published in a registry CI can
//!   install from (docs/livechess.md, "Clients tried"): the WebSocket is
//!   driven here as the recorded sessions and the published client
//!   libraries drive it, from another origin as a browser connector does.
//! - The LiveChess Cloud JSON is served from the delayed tree only.

use std::{
    fs,
    io::{Read, Write},
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use boardcast_core::livechess::ids;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{self, Message, client::IntoClientRequest};

use crate::support::{
    live::{Hall, game_san, stop, wait},
    mqtt::{free_port, wait_listening},
};

const FILE: &str = "livechess-vestland-round1.pgn";
/// Games of the file: a short one on the DGT board (0-1 in 34 plies), a
/// long one on the Millennium board (1-0 in 102).
const SHORT: usize = 4;
const LONG: usize = 5;
const EVENT: &str = "Vestland Open";

/// A hall with the DGT board `dgt1` (board 1) and the Millennium board
/// `mil1` (board 2) playing, and the LiveChess API on `listen`; `extra` is
/// added to the configuration (whole tables).
fn two_families(hall: &Hall, listen: &str, extra: &str) -> (PathBuf, Vec<Child>) {
    let boards = [
        ("dgt1", "dgt", SHORT, "1", "Torsvik, M", "Opheim, F"),
        ("mil1", "millennium", LONG, "2", "Hansen, O", "Skagen, D"),
    ];
    let path = hall.config_mixed(&boards.iter().map(|b| (b.0, b.1)).collect::<Vec<_>>());
    let mut text = fs::read_to_string(&path).unwrap();
    for (name, _, _, board, white, black) in &boards {
        text = text.replace(
            &format!("name = \"{name}\"\n"),
            &format!("name = \"{name}\"\nboard = \"{board}\"\nwhite = \"{white}\"\nblack = \"{black}\"\n"),
        );
    }
    let head = format!(
        "[broadcast]\nevent = \"{EVENT}\"\nround = \"1\"\n[livechess]\nenabled = true\nlisten = \"{listen}\"\n{extra}\n[[boards]]"
    );
    text = text.replacen("[[boards]]", &head, 1);
    fs::write(&path, text).unwrap();
    let simulated = boards
        .iter()
        .map(|&(name, protocol, index, ..)| {
            let capture = hall.synth_capture(FILE, index, name);
            hall.simulate(&capture, name, &["--protocol", protocol])
        })
        .collect();
    (path, simulated)
}

/// Skips (says why) or, under CI, fails.
fn missing(what: &str) {
    assert!(std::env::var("CI").is_err(), "{what} (CI installs it: .ci/run)");
    eprintln!("skipped: {what} (.ci/run installs it)");
}

/// The PyPI `livechess` helper's command, if installed.
fn rest_client() -> Option<PathBuf> {
    let installed = std::env::var_os("BOARDCAST_LIVECHESS_CLIENT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/livechess-clients/bin/livechess"));
    installed.is_file().then_some(installed)
}

/// A network namespace of the test's own, with its loopback up: held by a
/// sleeping process, entered with `nsenter`.
struct Netns {
    holder: Child,
}

impl Netns {
    fn new() -> Option<Self> {
        let mut holder = Command::new("unshare")
            .args(["--net", "--", "sh", "-c", "ip link set lo up && echo up && exec sleep 900"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let mut said = [0u8; 3];
        let up = holder.stdout.as_mut().is_some_and(|out| out.read_exact(&mut said).is_ok() && &said == b"up\n");
        if !up {
            let _ = holder.kill();
            let _ = holder.wait();
            return None;
        }
        Some(Self { holder })
    }

    fn enter(&self) -> String {
        format!("--net=/proc/{}/ns/net", self.holder.id())
    }

    /// The PyPI client, run as an operator runs it, in the namespace:
    /// whether it succeeded, and its tables.
    fn client(&self, client: &Path, args: &[&str]) -> (bool, String) {
        let out = Command::new("nsenter")
            .arg(self.enter())
            .arg("--")
            .arg(client)
            .args(args)
            .env("LIVECHESS_HOST", "127.0.0.1")
            .env("COLUMNS", "200")
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// The table row of `table` whose cells include `cell`.
fn row<'a>(table: &'a str, cell: &str) -> Option<Vec<&'a str>> {
    table.lines().map(|line| line.split('│').map(str::trim).collect::<Vec<_>>()).find(|cells| cells.contains(&cell))
}

fn polled(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    false
}

#[test]
fn the_pypi_livechess_helper_shows_boards_of_two_families_their_moves_and_results() {
    let Some(client) = rest_client() else { return missing("the PyPI livechess client is not installed") };
    let Some(netns) = Netns::new() else { return missing("no network namespace (needs root, unshare and ip)") };
    let hall = Hall::new("livechess-rest");
    let (config, mut simulated) = two_families(&hall, "127.0.0.1:1982", "");
    let mut daemon = hall.run_in(&config, &["nsenter", &netns.enter(), "--"]);

    // `livechess eboards`: both boards, of both families, read.
    let mut eboards = String::new();
    let both = polled(Duration::from_secs(30), || {
        eboards = netns.client(&client, &["eboards"]).1;
        ["dgt1", "mil1"].iter().all(|b| row(&eboards, b).is_some_and(|r| r.contains(&"ACTIVE")))
    });
    assert!(both, "{eboards}\n{}", hall.log());
    assert_eq!(row(&eboards, "dgt1").unwrap()[2], "dgt1.tty", "{eboards}");
    let (ok, active) = netns.client(&client, &["eboards", "--state", "ACTIVE"]);
    assert!(ok && active.contains("mil1"), "{active}");

    // `livechess tournaments`: the event, with its stable id.
    let uuid = ids::tournament(EVENT);
    let (ok, tournaments) = netns.client(&client, &["tournaments"]);
    assert!(ok, "{tournaments}");
    let listed = row(&tournaments, &uuid).unwrap_or_else(|| panic!("{uuid} in {tournaments}"));
    assert_eq!(&listed[2..4], [EVENT, "1"], "{tournaments}");

    // The DGT board's game ends first (0-1, by the result gesture); while
    // the Millennium board still plays, `livechess tournament` shows both
    // games: the finished one with its result, last move and clock, the
    // live one with a move of its game so far.
    let short = game_san(FILE, SHORT);
    let long = game_san(FILE, LONG);
    assert!(polled(Duration::from_secs(90), || hall.pgn("1").contains("0-1")), "{}", hall.log());
    let (ok, table) = netns.client(&client, &["tournament", &uuid]);
    assert!(ok, "{table}");
    let finished = row(&table, "M Torsvik").unwrap_or_else(|| panic!("board 1 in {table}"));
    assert_eq!(finished[1..6], ["1", "1", "M Torsvik", "F Opheim", "0-1"], "{table}");
    assert_eq!(finished[7], format!("{}... {}", short.len() / 2, short.last().unwrap()), "{table}");
    let live = row(&table, "O Hansen").unwrap_or_else(|| panic!("board 2 in {table}"));
    assert_eq!(live[1..6], ["1", "2", "O Hansen", "D Skagen", ""], "{table}");
    // The DGT board's clock, stopped at the end (`‖`); a Millennium board
    // has no clock.
    assert!(finished[6].contains('‖') && finished[6].contains(":"), "a stopped clock: {table}");
    assert_eq!(live[6], "", "{table}");
    let (number, san) = live[7].split_once(' ').unwrap_or_else(|| panic!("a last move: {table}"));
    let moves: usize = number.trim_end_matches('.').parse().unwrap();
    let ply = if number.ends_with("...") { 2 * moves } else { 2 * moves - 1 };
    assert_eq!(long.get(ply - 1).map(String::as_str), Some(san), "ply {ply} of the Millennium board's game: {table}");

    // `livechess events` reads every record it needs without failing.
    let (ok, events) = netns.client(&client, &["events", &uuid]);
    assert!(ok, "{events}");

    for board in &mut simulated {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    assert!(polled(Duration::from_secs(30), || hall.pgn("2").contains("1-0")), "{}", hall.log());
    // Both games over: the round is no longer live, so the helper lists
    // no game; the records are still there for every other client.
    let (ok, table) = netns.client(&client, &["tournament", &uuid]);
    assert!(ok && row(&table, "O Hansen").is_none(), "{table}");
    stop(&mut daemon);
    assert!(!hall.log().contains("ERROR"), "{}", hall.log());
}

/// A WebSocket to `port`, opened from a chess site's page as a browser
/// connector opens it.
fn socket(port: u16) -> tungstenite::WebSocket<TcpStream> {
    let stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut request = format!("ws://127.0.0.1:{port}/api/v1.0").into_client_request().unwrap();
    request.headers_mut().insert("Origin", "https://www.chess.com".parse().unwrap());
    tungstenite::client(request, stream).unwrap().0
}

fn send(socket: &mut tungstenite::WebSocket<TcpStream>, call: &Value) {
    socket.send(Message::text(call.to_string())).unwrap();
}

fn next(socket: &mut tungstenite::WebSocket<TcpStream>) -> Value {
    loop {
        match socket.read().unwrap() {
            Message::Text(text) => return serde_json::from_str(text.as_str()).unwrap(),
            Message::Close(_) => panic!("closed"),
            _ => {}
        }
    }
}

#[test]
fn the_websocket_feeds_boards_of_two_families_to_a_browser_connector_and_refuses_writes() {
    let hall = Hall::new("livechess-socket");
    let port = free_port();
    let (config, mut simulated) = two_families(&hall, &format!("127.0.0.1:{port}"), "");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let mut ws = socket(port);
    send(&mut ws, &json!({"id": 1, "call": "eboards"}));
    let eboards = next(&mut ws);
    assert_eq!((&eboards["response"], &eboards["id"]), (&json!("call"), &json!(1)), "{eboards}");
    let serials: Vec<&str> =
        eboards["param"].as_array().unwrap().iter().map(|b| b["serialnr"].as_str().unwrap()).collect();
    assert_eq!(serials.len(), 2, "{eboards}");
    for (call, feed, serial) in [(2, 7, "dgt1"), (3, 8, "mil1")] {
        send(
            &mut ws,
            &json!({"id": call, "call": "subscribe", "param": {"feed": "eboardevent", "id": feed, "param": {"serialnr": serial}}}),
        );
    }
    // Each feed: the answer to its call, a full message, then changes, until
    // its game's moves are all in `san`.
    let expected = [(7, game_san(FILE, SHORT)), (8, game_san(FILE, LONG))];
    let mut first: Vec<i64> = Vec::new();
    let mut answered = Vec::new();
    let mut last_san: std::collections::BTreeMap<i64, Vec<String>> = Default::default();
    let mut refused = false;
    let until = Instant::now() + Duration::from_secs(180);
    while expected.iter().any(|(feed, san)| last_san.get(feed) != Some(san)) {
        assert!(Instant::now() < until, "{last_san:?}\n{}", hall.log());
        let message = next(&mut ws);
        match message["response"].as_str() {
            Some("call") => answered.push(message["id"].as_i64().unwrap()),
            Some("feed") => {
                let feed = message["id"].as_i64().unwrap();
                let param = &message["param"];
                if !first.contains(&feed) {
                    first.push(feed);
                    assert!(param.get("board").is_some() && param.get("clock").is_some(), "full first: {message}");
                    // A connector tries to restart the reconstruction: the
                    // operator has not allowed it.
                    send(
                        &mut ws,
                        &json!({"id": 40 + feed, "call": "call", "param": {"id": feed, "method": "setup", "param": {"fen": "8/8/8/8/8/8/8/K1k5 w - - 0 1"}}}),
                    );
                }
                if let Some(san) = param.get("san") {
                    last_san.insert(feed, serde_json::from_value(san.clone()).unwrap());
                }
            }
            Some("error") => {
                assert!(message["param"]["message"].as_str().unwrap().contains("allow_writes"), "{message}");
                refused = true;
            }
            _ => panic!("{message}"),
        }
    }
    assert_eq!(answered[..2], [2, 3]);
    assert!(refused, "setup was refused");
    for board in &mut simulated {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    stop(&mut daemon);
    let log = hall.log();
    assert!(!log.contains("ERROR") && !log.contains("setup on board"), "{log}");
}

/// One `GET` on `port`: the status and the body.
fn get(port: u16, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

#[test]
fn writes_go_to_the_board_when_the_operator_allows_them_on_loopback() {
    let hall = Hall::new("livechess-writes");
    let port = free_port();
    let (config, mut simulated) = two_families(&hall, &format!("127.0.0.1:{port}"), "allow_writes = true\n");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    for board in &mut simulated {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    let mut ws = socket(port);
    send(
        &mut ws,
        &json!({"id": 1, "call": "subscribe", "param": {"feed": "eboardevent", "id": 7, "param": {"serialnr": "dgt1"}}}),
    );
    assert_eq!(next(&mut ws)["response"], "call");
    assert_eq!(next(&mut ws)["param"]["flipped"], false);
    send(&mut ws, &json!({"id": 2, "call": "call", "param": {"id": 7, "method": "flip", "param": {"flip": true}}}));
    let mut done = false;
    let mut flipped = false;
    while !(done && flipped) {
        let message = next(&mut ws);
        match message["response"].as_str() {
            Some("call") => done = message["id"] == 2,
            Some("feed") => flipped |= message["param"]["flipped"] == true,
            _ => panic!("{message}"),
        }
    }
    let (status, body) = get(port, "/api/v1.0/eboards");
    assert_eq!(status, 200, "{body}");
    let eboards: Value = serde_json::from_str(&body).unwrap();
    let dgt = eboards.as_array().unwrap().iter().find(|b| b["serialnr"] == "dgt1").unwrap();
    assert_eq!(dgt["flipped"], true, "{eboards}");
    // A call far beyond any of LiveChess's closes the connection unread;
    // the API goes on for everyone else.
    let mut flood = socket(port);
    let _ = flood.send(Message::text(format!("{{\"id\":1,\"call\":\"{}\"}}", "x".repeat(100 * 1024))));
    assert!(!matches!(flood.read(), Ok(Message::Text(_))), "no answer to a 100 KiB call");
    assert_eq!(get(port, "/api/v1.0/eboards").0, 200);
    stop(&mut daemon);
    assert!(hall.log().contains("flip on board dgt1"), "the write is in the log: {}", hall.log());
}

#[test]
fn livechess_cloud_json_is_served_from_the_delayed_tree_only() {
    let mut delivered = Vec::new();
    for delay_s in [3600, 0] {
        let hall = Hall::new(&format!("livechess-cloud-{delay_s}"));
        let (http, api) = (free_port(), free_port());
        let extra = format!("[mqtt]\nenabled = false\npublic_delay_s = {delay_s}\n");
        let (config, mut simulated) = two_families(&hall, &format!("127.0.0.1:{api}"), "");
        let text = fs::read_to_string(&config)
            .unwrap()
            .replace("[http]\nenabled = false\n", &format!("[http]\nenabled = true\nlisten = \"127.0.0.1:{http}\"\n"))
            .replace("[mqtt]\nenabled = false\n", &extra);
        fs::write(&config, text).unwrap();
        let mut daemon = hall.run(&config);
        assert!(wait_listening(http, Duration::from_secs(20)), "{}", hall.log());
        for board in &mut simulated {
            assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
        }
        assert!(polled(Duration::from_secs(30), || hall.pgn("2").contains("1-0")), "{}", hall.log());
        let id = ids::tournament(EVENT);
        let paths = [
            format!("/lcc/{id}/tournament.json"),
            format!("/lcc/{id}/round-1/index.json"),
            format!("/lcc/{id}/round-1/game-1.json"),
            format!("/lcc/{id}/round-1/game-2.json"),
        ];
        // What is delivered comes a moment after the PGN files.
        std::thread::sleep(Duration::from_millis(1500));
        let answers: Vec<(u16, String)> = paths.iter().map(|p| get(http, p)).collect();
        // The live API is not delayed, whatever the public delay.
        assert_eq!(get(api, "/api/v1.0/eboards").0, 200);
        stop(&mut daemon);
        delivered.push(answers);
    }
    // 15 minutes' delay: nothing of the round is out yet.
    for (status, body) in &delivered[0] {
        assert_eq!(*status, 404, "{body}");
    }
    // No delay: the round as LiveChess Cloud serves it.
    let files: Vec<Value> = delivered[1]
        .iter()
        .map(|(status, body)| {
            assert_eq!(*status, 200, "{body}");
            serde_json::from_str(body).unwrap()
        })
        .collect();
    assert_eq!(files[0]["name"], EVENT);
    assert_eq!(files[0]["rounds"], json!([{"count": 2, "live": 0}]));
    assert_eq!(files[1]["pairings"][0]["result"], "0-1");
    assert_eq!(files[1]["pairings"][1]["white"]["lname"], "Hansen");
    for (game, index, result) in [(&files[2], SHORT, "BLACKWIN"), (&files[3], LONG, "WHITEWIN")] {
        let moves: Vec<String> = game["moves"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap().split(' ').next().unwrap().to_owned())
            .collect();
        assert_eq!(moves, game_san(FILE, index));
        assert_eq!(game["result"], result);
        assert_eq!(game["live"], false);
    }
}

#[test]
fn config_check_says_where_the_api_is_and_warns_beyond_loopback() {
    let hall = Hall::new("livechess-check");
    let config = hall.config(&["b1"]);
    let check = |extra: &str| {
        let text = fs::read_to_string(&config).unwrap();
        let file = hall.dir.join("check.toml");
        fs::write(&file, text.replacen("[[boards]]", &format!("[livechess]\nenabled = true\n{extra}[[boards]]"), 1))
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["config", "check", "--config"])
            .arg(&file)
            .output()
            .unwrap();
        (
            out.status.success(),
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
        )
    };
    let (ok, said) = check("");
    assert!(
        ok && said.contains("LiveChess API: http://127.0.0.1:1982/api/v1.0/ (this machine only), read-only"),
        "{said}"
    );
    let (ok, said) = check("listen = \"0.0.0.0:1982\"\n");
    assert!(!ok && said.contains("allow_remote"), "{said}");
    let (ok, said) = check("listen = \"0.0.0.0:1982\"\nallow_remote = true\nallow_writes = true\n");
    assert!(ok && said.contains("LiveChess API: WARNING"), "{said}");
    assert!(said.contains("writes are allowed on a loopback address only"), "{said}");
}
