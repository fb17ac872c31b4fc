//! Games reaching broadcast sites through the real daemon: simulated boards
//! play, `boardcast run` pushes the round to a local server speaking the
//! lichess broadcast push API (as lichess documents it: POST
//! `/api/broadcast/round/<id>/push`, a bearer token, the PGN as text, an
//! answer per game), and serves the PGN over HTTP with validators.

use std::{
    collections::VecDeque,
    io::{Read as _, Write as _},
    net::{SocketAddr, TcpStream},
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crate::support::{
    live::{Hall, game_san, pgn_moves, stop, wait},
    mqtt::{Subscriber, free_port, wait_listening},
};
use http_body_util::{BodyExt as _, Full};
use hyper::{Request, Response, body::Bytes, server::conn::http1, service::service_fn};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const GAMES: &str = "livechess-vestland-round1.pgn";
const TOKEN: &str = "lip_Secret4Tests0nly";
const ROUND_ID: &str = "abcdEF12";

/// One push as the server saw it.
#[derive(Clone, Debug)]
struct Push {
    path: String,
    authorization: String,
    content_type: String,
    body: String,
    status: u16,
    at: Instant,
}

/// What the server answers next, on command.
#[derive(Clone, Copy, Debug)]
enum Scripted {
    Unauthorized,
    TooManyRequests,
    ServerError,
}

#[derive(Default)]
struct State {
    pushes: Vec<Push>,
    script: VecDeque<Scripted>,
    /// Games of this board are refused.
    refuse_board: Option<String>,
    under_way: u32,
    most_under_way: u32,
}

/// A local server speaking lichess's broadcast push API.
struct FakeLichess {
    state: Arc<Mutex<State>>,
    address: SocketAddr,
}

impl FakeLichess {
    fn start(runtime: &tokio::runtime::Runtime, script: &[Scripted], refuse_board: Option<&str>) -> Self {
        let state = Arc::new(Mutex::new(State {
            script: script.iter().copied().collect(),
            refuse_board: refuse_board.map(str::to_owned),
            ..State::default()
        }));
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let address = listener.local_addr().unwrap();
        let shared = state.clone();
        runtime.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| answer(state.clone(), request));
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        Self { state, address }
    }

    fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    fn pushes(&self) -> Vec<Push> {
        self.state.lock().unwrap().pushes.clone()
    }

    fn most_under_way(&self) -> u32 {
        self.state.lock().unwrap().most_under_way
    }
}

async fn answer(
    state: Arc<Mutex<State>>,
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, std::convert::Infallible> {
    let header = |name: hyper::header::HeaderName| {
        request.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
    };
    let path = request.uri().path().to_owned();
    let (authorization, content_type) = (header(hyper::header::AUTHORIZATION), header(hyper::header::CONTENT_TYPE));
    let post = request.method() == hyper::Method::POST;
    {
        let mut s = state.lock().unwrap();
        s.under_way += 1;
        s.most_under_way = s.most_under_way.max(s.under_way);
    }
    let body = String::from_utf8(request.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    // A little time on the way, so that overlapping requests would show.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut s = state.lock().unwrap();
    s.under_way -= 1;
    let id = path.strip_prefix("/api/broadcast/round/").and_then(|p| p.strip_suffix("/push"));
    let (status, retry_after, json) = if !post || id.is_none() {
        (404, None, json!({"error": "Not found"}))
    } else if authorization != format!("Bearer {TOKEN}") {
        (401, None, json!({"error": "No such token"}))
    } else {
        match s.script.pop_front() {
            Some(Scripted::Unauthorized) => (401, None, json!({"error": "No such token"})),
            Some(Scripted::TooManyRequests) => (429, Some("1"), json!({"error": "Too many requests"})),
            Some(Scripted::ServerError) => (500, None, json!({"error": "Internal error"})),
            None => (200, None, per_game(&body, s.refuse_board.as_deref())),
        }
    };
    s.pushes.push(Push { path, authorization, content_type, body, status, at: Instant::now() });
    let mut response = Response::builder().status(status).header("content-type", "application/json");
    if let Some(wait) = retry_after {
        response = response.header("retry-after", wait);
    }
    Ok(response.body(Full::new(Bytes::from(json.to_string()))).unwrap())
}

/// lichess's answer: each game's tags, and its number of moves or why it
/// was refused.
fn per_game(body: &str, refuse_board: Option<&str>) -> Value {
    let mut games = Vec::new();
    for (block, moves) in body.split("\n\n[").zip(pgn_moves(body)) {
        let mut tags = serde_json::Map::new();
        for line in block.lines().filter_map(|l| l.trim_start_matches('[').strip_suffix("\"]")) {
            if let Some((name, value)) = line.split_once(" \"") {
                tags.insert(name.to_owned(), json!(value));
            }
        }
        if refuse_board.is_some_and(|b| tags.get("Board") == Some(&json!(b))) {
            games.push(json!({"tags": tags, "error": "Illegal move Ke9 at ply 3"}));
        } else {
            games.push(json!({"tags": tags, "moves": moves.len()}));
        }
    }
    json!({ "games": games })
}

/// The daemon's configuration: MQTT on `mqtt_port`, pushing round 1 to
/// `lichess`, each round at most every 200 ms (2 s at the boards' speed).
fn config(hall: &Hall, boards: &[&str], mqtt_port: u16, lichess: &FakeLichess) -> std::path::PathBuf {
    let token_file = hall.dir.join("lichess.token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let extra = format!(
        "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{mqtt_port}\"\nws_listen = \"\"\nanonymous = \"live\"\n\
         [lichess]\nurl = \"{}\"\ntoken_file = \"{}\"\ninterval_ms = 200\n[lichess.rounds]\n\"1\" = \"{ROUND_ID}\"\n",
        lichess.url(),
        token_file.display()
    );
    hall.config_with_mqtt(boards, &extra)
}

/// The game of board `label` in a pushed PGN.
fn board_game(pgn: &str, label: &str) -> Option<Vec<String>> {
    let blocks: Vec<&str> = pgn.split("\n\n[").collect();
    let index = blocks
        .iter()
        .position(|b| b.contains(&format!("[Board \"{label}\"]")) || b.starts_with(&format!("Board \"{label}\"]")))?;
    pgn_moves(pgn).get(index).cloned()
}

#[test]
fn games_played_on_boards_arrive_move_exact_on_lichess_and_refusals_reach_the_operator() {
    let hall = Hall::new("lichess-push");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    // The first pushes meet a server error and a request to slow down.
    let lichess = FakeLichess::start(&runtime, &[Scripted::ServerError, Scripted::TooManyRequests], Some("b2"));
    let mqtt_port = free_port();
    let config = config(&hall, &["b1", "b2"], mqtt_port, &lichess);
    let mut daemon = hall.run(&config);
    assert!(wait_listening(mqtt_port, Duration::from_secs(10)), "{}", hall.log());
    let subscriber = Subscriber::start(&runtime, mqtt_port, "boardcast/v1/#", "operator");
    let captures = [hall.synth_capture(GAMES, 0, "b1"), hall.synth_capture(GAMES, 1, "b2")];
    let mut boards: Vec<_> = ["b1", "b2"].iter().zip(&captures).map(|(name, c)| hall.simulate(c, name, &[])).collect();
    for board in &mut boards {
        assert!(wait(board, Duration::from_secs(180)), "the simulated game ended");
    }
    let expected = [game_san(GAMES, 0), game_san(GAMES, 1)];
    let arrived = |pushes: &[Push]| {
        pushes.iter().rev().find(|p| p.status == 200).is_some_and(|p| {
            board_game(&p.body, "b1").as_ref() == Some(&expected[0])
                && board_game(&p.body, "b2").as_ref() == Some(&expected[1])
        })
    };
    let end = Instant::now() + Duration::from_secs(20);
    while !arrived(&lichess.pushes()) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    // What the operator was told has had time to arrive.
    let refused = |r: &[crate::support::mqtt::Received]| {
        r.iter().any(|m| {
            m.topic == "boardcast/v1/bridges/hall/notices"
                && m.json["message"].as_str().unwrap_or("").contains("refused the game")
        })
    };
    subscriber.wait_for(Duration::from_secs(5), refused);
    stop(&mut daemon);
    let pushes = lichess.pushes();
    let log = hall.log();
    assert!(arrived(&pushes), "the last push has both games, move for move: {:#?}\n{log}", pushes.last());

    // Every push as lichess documents it, and one at a time.
    for push in &pushes {
        assert_eq!(push.path, format!("/api/broadcast/round/{ROUND_ID}/push"));
        assert_eq!(push.authorization, format!("Bearer {TOKEN}"));
        assert!(push.content_type.starts_with("text/plain"), "{}", push.content_type);
    }
    assert_eq!(lichess.most_under_way(), 1, "never two requests at once");
    // The scripted failures were retried, and said in the log.
    assert_eq!(pushes[0].status, 500);
    assert_eq!(pushes[1].status, 429);
    assert!(log.contains("lichess answered 500"), "{log}");

    // Fast play (two boards, a move every quarter of a second), bounded
    // pushes: at most one every 200 ms, fewer than the moves.
    let plies = expected[0].len() + expected[1].len();
    let done: Vec<&Push> = pushes.iter().filter(|p| p.status == 200).collect();
    let span = done.last().unwrap().at - done[0].at;
    let bound = (span.as_millis() / 200) as usize + 3;
    assert!(done.len() <= bound, "{} pushes in {span:?}", done.len());
    assert!(done.len() < plies, "{} pushes for {plies} plies", done.len());

    // The refused game reached the operator once, with lichess's reason.
    let notices: Vec<String> = subscriber
        .received()
        .iter()
        .filter(|m| m.topic == "boardcast/v1/bridges/hall/notices")
        .map(|m| m.json["message"].as_str().unwrap_or_default().to_owned())
        .collect();
    let refusals: Vec<&String> = notices.iter().filter(|n| n.contains("refused the game")).collect();
    assert_eq!(refusals.len(), 1, "told once: {notices:#?}");
    assert!(refusals[0].contains("(board b2)") && refusals[0].contains("Illegal move Ke9"), "{}", refusals[0]);
    assert!(log.contains("refused the game"), "{log}");

    // The token is never shown: not in the log, not on MQTT.
    assert!(!log.contains(TOKEN), "the token is in the log");
    for message in subscriber.received() {
        assert!(!message.json.to_string().contains(TOKEN), "the token is on {}", message.topic);
    }
}

#[test]
fn a_refused_token_is_said_with_what_to_do_and_never_shown() {
    let hall = Hall::new("lichess-token");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let lichess = FakeLichess::start(&runtime, &[Scripted::Unauthorized], None);
    let mqtt_port = free_port();
    let config = config(&hall, &["b1"], mqtt_port, &lichess);
    let mut daemon = hall.run(&config);
    assert!(wait_listening(mqtt_port, Duration::from_secs(10)), "{}", hall.log());
    let subscriber = Subscriber::start(&runtime, mqtt_port, "boardcast/v1/#", "operator");
    let capture = hall.synth_capture(GAMES, 2, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let told = |r: &[crate::support::mqtt::Received]| r.iter().any(|m| m.topic.ends_with("/notices"));
    assert!(subscriber.wait_for(Duration::from_secs(60), told), "{}", hall.log());
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
    let log = hall.log();
    let notice = subscriber.received().into_iter().find(|m| m.topic.ends_with("/notices")).unwrap();
    let message = notice.json["message"].as_str().unwrap().to_owned();
    assert!(message.contains("refused the token (401)") && message.contains("study:write"), "{message}");
    assert!(message.contains("/account/oauth/token"), "{message}");
    assert_eq!(notice.json["kind"], "lichess");
    assert!(log.contains("refused the token (401)"), "{log}");
    // One try, then a minute's wait: lichess is not hammered.
    assert_eq!(lichess.pushes().len(), 1, "{:#?}", lichess.pushes());
    assert!(!log.contains(TOKEN));
    assert!(subscriber.received().iter().all(|m| !m.json.to_string().contains(TOKEN)));
}

#[test]
fn a_missing_token_file_stops_the_daemon_and_config_check_with_what_to_do() {
    let hall = Hall::new("lichess-no-token");
    let mut text = std::fs::read_to_string(hall.config(&["b1"])).unwrap();
    let missing = hall.dir.join("nowhere/lichess.token");
    text.push_str(&format!(
        "[lichess]\ntoken_file = \"{}\"\n[lichess.rounds]\n\"1\" = \"{ROUND_ID}\"\n",
        missing.display()
    ));
    let config = hall.dir.join("boardcast.toml");
    std::fs::write(&config, text).unwrap();
    for command in ["check", "run"] {
        let out = if command == "check" {
            std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
                .args(["config", "check", "--config"])
                .arg(&config)
                .output()
        } else {
            std::process::Command::new(env!("CARGO_BIN_EXE_boardcast")).args(["run", "--config"]).arg(&config).output()
        }
        .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{command}: {said}");
        assert!(said.contains(&missing.display().to_string()) && said.contains("no such file"), "{command}: {said}");
        assert!(said.contains("study:write") && said.contains("/account/oauth/token"), "{command}: {said}");
    }
}

/// A GET of `path` on `address`: status, headers (lowercase names) and body.
fn get(address: &str, path: &str, if_none_match: Option<&str>) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    let extra = if_none_match.map_or_else(String::new, |tag| format!("If-None-Match: {tag}\r\n"));
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n{extra}\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers =
        lines.filter_map(|l| l.split_once(": ")).map(|(n, v)| (n.to_ascii_lowercase(), v.to_owned())).collect();
    (status, headers, body.to_owned())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
}

/// The address the daemon's HTTP server took, from its log.
fn http_address(log_file: &Path) -> Option<String> {
    let log = std::fs::read_to_string(log_file).ok()?;
    let rest = log.split("http: PGN on http://").nth(1)?;
    Some(rest.split('/').next()?.to_owned())
}

#[test]
fn pgn_is_served_over_http_as_the_files_have_it_with_etags() {
    let hall = Hall::new("pgn-http");
    let mut text = std::fs::read_to_string(hall.config(&["b1"])).unwrap();
    // An ephemeral port, never 8080.
    text = text.replace("[http]\nenabled = false\n", "[http]\nenabled = true\nlisten = \"127.0.0.1:0\"\n");
    let config = hall.dir.join("boardcast.toml");
    std::fs::write(&config, text).unwrap();
    let mut daemon = hall.run(&config);
    let capture = hall.synth_capture(GAMES, 3, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    assert!(wait(&mut board, Duration::from_secs(180)), "the simulated game ended");
    let address = http_address(&hall.dir.join("run.log")).unwrap_or_else(|| panic!("{}", hall.log()));
    let expected = game_san(GAMES, 3);
    let end = Instant::now() + Duration::from_secs(10);
    let mut served = get(&address, "/pgn/event/round-1/games.pgn", None);
    while pgn_moves(&served.2).first() != Some(&expected) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
        served = get(&address, "/pgn/event/round-1/games.pgn", None);
    }
    let (status, headers, body) = served;
    assert_eq!(status, 200, "{body}");
    assert_eq!(pgn_moves(&body), [expected]);
    // The game is over: every move is completed, and the URL gives what
    // the files have.
    assert_eq!(body, hall.round_pgn("event", "1"));
    let (status, _, board_body) = get(&address, "/pgn/event/round-1/game-b1.pgn", None);
    assert_eq!((status, board_body.as_str()), (200, hall.pgn("b1").as_str()));
    assert!(header(&headers, "content-type").starts_with("application/x-chess-pgn"));
    assert!(header(&headers, "last-modified").ends_with(" GMT"), "{headers:?}");
    let etag = header(&headers, "etag").to_owned();
    assert!(etag.starts_with('"'), "{headers:?}");
    let (status, _, body) = get(&address, "/pgn/event/round-1/games.pgn", Some(&etag));
    assert_eq!((status, body.as_str()), (304, ""));
    assert_eq!(get(&address, "/pgn/event/round-1/games.pgn", Some("\"other\"")).0, 200);
    assert_eq!(get(&address, "/pgn/event/round-2/games.pgn", None).0, 404);
    assert_eq!(get(&address, "/pgn/event/round-1/game-b9.pgn", None).0, 404);
    assert_eq!(get(&address, "/pgn/event/%2e%2e/%2e%2e/boardcast.toml", None).0, 400);
    assert_eq!(get(&address, "/pgn/../boardcast.toml", None).0, 400);
    stop(&mut daemon);
}

/// The second round's lichess id.
const ROUND_2_ID: &str = "ghijKL34";

/// The round's tournament report (tests/fixtures/pairings/SOURCE.md).
fn report() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pairings/ch-rus-hl-w-2012-round4.trf")
}

#[test]
fn next_round_with_pairings_names_the_players_moves_the_pushes_on_and_pushes_the_rest_at_the_stop() {
    let hall = Hall::new("lichess-pairings");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let lichess = FakeLichess::start(&runtime, &[], None);
    let mqtt_port = free_port();
    let token_file = hall.dir.join("lichess.token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    // A push a minute at most: what the game does after the first push of
    // round 2 only reaches lichess through the last push at the stop.
    let extra = format!(
        "[mqtt]\nbridge_id = \"hall\"\nusername = \"op\"\npassword_file = \"{dir}/op.password\"\n\
         [mqtt.embedded]\nlisten = \"127.0.0.1:{mqtt_port}\"\nws_listen = \"\"\nanonymous = \"live\"\n\
         [lichess]\nurl = \"{url}\"\ntoken_file = \"{token}\"\ninterval_ms = 60000\n\
         [lichess.rounds]\n\"1\" = \"{ROUND_ID}\"\n\"2\" = \"{ROUND_2_ID}\"\n",
        dir = hall.dir.display(),
        url = lichess.url(),
        token = token_file.display()
    );
    let config = hall.config_with_mqtt(&["board-1", "board-2"], &extra);
    let operator = hall.account("op", "operator");
    std::fs::write(hall.dir.join("op.password"), format!("{operator}\n")).unwrap();
    let mut daemon = hall.run(&config);
    assert!(wait_listening(mqtt_port, Duration::from_secs(10)), "{}", hall.log());
    let subscriber = Subscriber::start(&runtime, mqtt_port, "boardcast/v1/#", "watcher");
    assert!(subscriber.wait_subscribed(Duration::from_secs(30)));

    // Every board goes to round 2 with the report's pairings: board-1 and
    // board-2 get boards 1 and 2; the other 14 pairings have no board here.
    let (code, said) = hall.ctl(&["next-round", "2", "--pairings", report().to_str().unwrap()]);
    assert_eq!(code, 0, "{said}\n{}", hall.log());
    let text = std::fs::read_to_string(report()).unwrap();
    let round_2 = boardcast_core::pairings::Pairings::parse(&text).unwrap().round("2").unwrap();
    let (first, second) = (round_2[0].tags(), round_2[1].tags());
    assert!(said.contains("board-1: ") && said.contains(&format!("{} - {}", first["White"], first["Black"])), "{said}");
    assert!(said.contains(&format!("{} - {}", second["White"], second["Black"])), "{said}");
    assert!(said.contains("no board here for the pairings of board(s) 3, 4, 5"), "{said}");

    // A game on board-1, in round 2 with its players.
    let capture = hall.synth_capture(GAMES, 0, "board-1");
    let mut board = hall.simulate(&capture, "board-1", &[]);
    assert!(wait(&mut board, Duration::from_secs(180)), "the simulated game ended");
    let white_on_mqtt = |r: &[crate::support::mqtt::Received]| {
        r.iter()
            .rfind(|m| m.topic == "boardcast/v1/live/event/2/board-1/state")
            .is_some_and(|m| m.json["white"] == first["White"].as_str() && m.json["black"] == first["Black"].as_str())
    };
    assert!(subscriber.wait_for(Duration::from_secs(10), white_on_mqtt), "the players on MQTT, round 2");
    let pgn = std::fs::read_to_string(hall.dir.join("pgn/event/round-2/game-board-1.pgn")).unwrap();
    for (name, value) in &first {
        if value.is_empty() {
            assert!(!pgn.contains(&format!("[{name} ")), "{name} is not set: {pgn}");
        } else {
            assert!(pgn.contains(&format!("[{name} \"{value}\"]")), "[{name} \"{value}\"] in {pgn}");
        }
    }
    assert!(pgn.contains("[Round \"2\"]"), "{pgn}");

    // The stop pushes what the interval held back: the whole game.
    stop(&mut daemon);
    let pushes = lichess.pushes();
    let expected = game_san(GAMES, 0);
    let last = pushes.iter().rfind(|p| p.path == format!("/api/broadcast/round/{ROUND_2_ID}/push"));
    let last = last.unwrap_or_else(|| panic!("round 2 was pushed: {pushes:#?}\n{}", hall.log()));
    assert_eq!(board_game(&last.body, "board-1").as_ref(), Some(&expected), "{}", hall.log());
    let earlier: Vec<&Push> =
        pushes.iter().filter(|p| p.path == last.path && p.at < last.at && p.status == 200).collect();
    assert!(
        earlier.iter().all(|p| board_game(&p.body, "board-1").as_ref() != Some(&expected)),
        "before the stop the interval held the end of the game back: {earlier:#?}"
    );
    assert!(last.body.contains(&format!("[WhiteFideId \"{}\"]", first["WhiteFideId"])), "{}", last.body);
    // Nothing of round 2 went to round 1's id.
    for push in pushes.iter().filter(|p| p.path.contains(ROUND_ID)) {
        assert!(!push.body.contains("[Round \"2\"]") && !push.body.contains(first["White"].as_str()), "{push:#?}");
    }
}
