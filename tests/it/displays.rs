//! The display pages in a real browser: `boardcast demo` replaying real
//! games at speed, Debian's headless Chromium driven through chromedriver
//! (WebDriver JSON over HTTP), and the rendered pages checked: the board,
//! its moves and running clock, the overview's boards, and the console's
//! command, signed by the daemon (its MAC checked here with the `hmac`
//! crate and the daemon's key); then, against a Mosquitto the test
//! starts and publishes to (the feed `replay --mqtt` makes of a real
//! recording), a made move shown provisional, its amendment replacing it and
//! its completion making it final, on the board page, the overview and the
//! console, and an operator's take-back removing it; last, a daemon playing
//! a game with irregularities on a simulated board and pushing to a lichess
//! that refuses its token: the console shows the alerts and the notice as
//! published, and replays an alert's evidence. Without Chromium the tests
//! say so and pass; under CI (CI=true) they fail.

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::support::{
    live::stop,
    mqtt::{Subscriber, free_port, wait_listening},
};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};

/// A WebDriver session on a headless Chromium.
pub(crate) struct Browser {
    driver: Child,
    port: u16,
    session: String,
}

impl Browser {
    /// Starts chromedriver and a headless Chromium with a fresh profile;
    /// `None` (having said why) when they are not installed and CI is not set.
    pub(crate) fn start(profile: &Path) -> Option<Self> {
        Self::launch(profile, None)
    }

    /// Like [`Browser::start`], with Chromium run in `home`: on Linux it
    /// takes the authorities a user trusts from `home/.pki/nssdb` (the NSS
    /// database `certutil` writes), as on a display PC where the hall's CA
    /// was installed. The browser also keeps its network log
    /// ([`Browser::network_log`]).
    pub(crate) fn start_at_home(profile: &Path, home: &Path) -> Option<Self> {
        Self::launch(profile, Some(home))
    }

    fn launch(profile: &Path, home: Option<&Path>) -> Option<Self> {
        let found = |name: &str| Command::new(name).arg("--version").stdout(Stdio::null()).status().is_ok();
        if !found("chromium") || !found("chromedriver") {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "chromium and chromedriver are needed under CI (apt-get install chromium chromium-driver)"
            );
            eprintln!(
                "skipped: chromium and chromedriver are not installed (apt-get install chromium chromium-driver)"
            );
            return None;
        }
        let port = free_port();
        let mut driver = Command::new("chromedriver");
        if let Some(home) = home {
            driver.env("HOME", home);
        }
        let driver = driver.arg(format!("--port={port}")).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        assert!(wait_listening(port, Duration::from_secs(10)), "chromedriver listens");
        let mut browser = Self { driver, port, session: String::new() };
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,720",
        ];
        let mut args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        args.push(format!("--user-data-dir={}", profile.display()));
        let mut always = json!({"goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}});
        if home.is_some() {
            always["goog:loggingPrefs"] = json!({"performance": "ALL"});
        }
        let caps = json!({"capabilities": {"alwaysMatch": always}});
        let answer = browser.call("POST", "/session", &caps);
        browser.session = answer["sessionId"].as_str().unwrap_or_else(|| panic!("a session: {answer}")).to_owned();
        Some(browser)
    }

    /// One WebDriver request; its `value`.
    fn call(&self, method: &str, path: &str, body: &Value) -> Value {
        let body = body.to_string();
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        // chromedriver answers with Content-Length (never chunked) and may
        // keep the connection open whatever the request said: read the
        // headers, then exactly the body.
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&head).to_string();
        let length = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap())
            })
            .unwrap_or_else(|| panic!("no Content-Length: {head}"));
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).unwrap();
        let value: Value =
            serde_json::from_slice(&body).unwrap_or_else(|e| panic!("{e}: {head}{}", String::from_utf8_lossy(&body)));
        value["value"].clone()
    }

    pub(crate) fn open(&self, url: &str) {
        self.call("POST", &format!("/session/{}/url", self.session), &json!({"url": url}));
    }

    /// Runs `script` (a function body) in the page; its result.
    pub(crate) fn run(&self, script: &str) -> Value {
        self.call("POST", &format!("/session/{}/execute/sync", self.session), &json!({"script": script, "args": []}))
    }

    /// Waits until `script` returns something truthy; that value.
    pub(crate) fn wait_for(&self, limit: Duration, script: &str) -> Value {
        self.wait_until(limit, script).unwrap_or_else(|| panic!("the page never showed: {script}"))
    }

    /// Waits until `script` returns something truthy; that value, or
    /// `None` once `limit` has passed (for a caller that wants to say more
    /// than [`Browser::wait_for`] about what the page shows instead).
    pub(crate) fn wait_until(&self, limit: Duration, script: &str) -> Option<Value> {
        let end = Instant::now() + limit;
        loop {
            let value = self.run(script);
            if !(value.is_null() || value == false || value == 0) {
                return Some(value);
            }
            if Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The DevTools network events the browser logged since the last call
    /// (only with [`Browser::start_at_home`]): each `{"method", "params"}`,
    /// e.g. `Network.webSocketCreated` with the URL a page opened.
    pub(crate) fn network_log(&self) -> Vec<Value> {
        let entries = self.call("POST", &format!("/session/{}/se/log", self.session), &json!({"type": "performance"}));
        entries
            .as_array()
            .unwrap_or_else(|| panic!("the performance log: {entries}"))
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(e["message"].as_str()?).ok())
            .map(|m| m["message"].clone())
            .filter(|m| m["method"].as_str().is_some_and(|name| name.starts_with("Network.")))
            .collect()
    }

    /// Makes the page's viewport `width` × `height` CSS pixels, as on a
    /// phone, a tablet or a TV (DevTools' device emulation).
    pub(crate) fn viewport(&self, width: u32, height: u32) {
        let params = json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600});
        self.call(
            "POST",
            &format!("/session/{}/goog/cdp/execute", self.session),
            &json!({"cmd": "Emulation.setDeviceMetricsOverride", "params": params}),
        );
    }

    /// Drags with the mouse from one point of the viewport to another (CSS
    /// pixels), as a hand does: WebDriver's input actions, which the page
    /// sees as trusted events (chessground ignores synthetic ones).
    pub(crate) fn drag(&self, from: (i64, i64), to: (i64, i64)) {
        let moves = json!([
            {"type": "pointerMove", "duration": 0, "x": from.0, "y": from.1, "origin": "viewport"},
            {"type": "pointerDown", "button": 0},
            {"type": "pointerMove", "duration": 150, "x": (from.0 + to.0) / 2, "y": (from.1 + to.1) / 2, "origin": "viewport"},
            {"type": "pointerMove", "duration": 150, "x": to.0, "y": to.1, "origin": "viewport"},
            {"type": "pointerUp", "button": 0}
        ]);
        let actions = json!({"actions": [{"type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"}, "actions": moves}]});
        self.call("POST", &format!("/session/{}/actions", self.session), &actions);
        self.call("DELETE", &format!("/session/{}/actions", self.session), &json!({}));
    }

    pub(crate) fn screenshot(&self, file: &Path) {
        let png = self.call("GET", &format!("/session/{}/screenshot", self.session), &json!({}));
        let bytes = base64(png.as_str().unwrap());
        std::fs::write(file, bytes).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            self.call("DELETE", &format!("/session/{}", self.session), &json!({}));
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Standard base64 to bytes (screenshots).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).map(value).collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &d)| n | (u32::from(d) << (18 - 6 * i)));
        out.extend(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[test]
fn the_board_overview_and_console_pages_show_the_feed_in_a_real_browser() {
    let dir = std::env::temp_dir().join(format!("boardcast-displays-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let Some(browser) = Browser::start(&dir.join("chromium")) else { return };
    let (mqtt, ws, http) = (free_port(), free_port(), free_port());
    let mut demo = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["demo", "--boards", "2", "--speed", "10"])
        .args(["--port", &mqtt.to_string(), "--ws-port", &ws.to_string(), "--http-port", &http.to_string()])
        .arg("--dir")
        .arg(&dir)
        .stdout(std::fs::File::create(dir.join("demo.log")).unwrap())
        // Its log (ports opened late, the broker) for whoever reads a failure.
        .stderr(std::fs::File::create(dir.join("demo.err")).unwrap())
        .spawn()
        .map(KillOnDrop)
        .unwrap();
    assert!(wait_listening(http, Duration::from_secs(20)), "the pages are served");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    // The demo's broker (Mosquitto) lets only its operator account read and
    // write commands; the console logs in with it.
    let password = std::fs::read_to_string(dir.join("operator.password")).unwrap_or_default().trim().to_owned();
    let commands = Subscriber::start_as(
        &runtime,
        mqtt,
        "boardcast/v1/bridges/demo/commands",
        "test-commands",
        "operator",
        &password,
    );
    let site = format!("http://127.0.0.1:{http}");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    // The demonstration board: the position drawn by chessground, the
    // moves, a running clock.
    browser.open(&format!("{site}/board.html?event=demo&round=1&board=2&lang=de"));
    browser.wait_for(Duration::from_secs(60), "return document.querySelectorAll('#moves li').length >= 6");
    let pieces = browser.run("return document.querySelectorAll('#board cg-board piece').length");
    assert!((2..=32).contains(&pieces.as_u64().unwrap()), "pieces on the board: {pieces}");
    assert_eq!(
        browser.run("return document.querySelectorAll('#board cg-board square.last-move').length"),
        2,
        "the last move is marked"
    );
    assert_eq!(browser.run("return document.getElementById('link').dataset.state"), "connected");
    running_clock_counts_down(&browser);
    let moves = browser.run("return [...document.querySelectorAll('#moves .san')].map(m => m.textContent).join(' ')");
    assert!(!moves.as_str().unwrap().contains('N'), "German piece letters: {moves}");
    browser.screenshot(&shots.join("board.png"));

    // The overview: both boards, with their last moves. Waited for as
    // long as the board page above (the machine may be loaded): the page
    // shows what the summaries say once its first one has come.
    browser.open(&format!("{site}/overview.html"));
    let cards = "return document.querySelectorAll('.card .last:not(:empty)').length == 2";
    if browser.wait_until(Duration::from_secs(60), cards).is_none() {
        let page = browser.run("return document.getElementById('rounds').innerHTML");
        panic!("the overview shows two boards' last moves: {page}");
    }
    let boards = browser.run("return [...document.querySelectorAll('.card')].map(c => c.dataset.board).join(',')");
    assert_eq!(boards, "1,2");
    browser.screenshot(&shots.join("overview-demo.png"));

    // The console: the demo's one-click link (a one-time token in the
    // address's fragment, no password) opens it logged in as the demo's
    // operator, and the token leaves the address at once.
    let link = printed_console_link(&dir.join("demo.log"));
    assert!(link.starts_with(&format!("{site}/console.html#login=")), "{link}");
    assert!(!link.contains(&password), "no password in the link: {link}");
    browser.open(&link);
    let who = browser.wait_for(
        Duration::from_secs(20),
        "return !document.getElementById('console').hidden && [document.getElementById('who').textContent, location.href]",
    );
    assert_eq!(who, json!(["operator (operator)", format!("{site}/console.html")]), "logged in by the link");
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    // A command from the hall (Flip board-1, confirmed) is signed by the
    // daemon with its operator key (the browser never has it), as
    // `boardcast ctl` signs.
    browser.run("window.confirm = () => true;");
    browser.wait_for(
        Duration::from_secs(30),
        "const b = document.querySelector('#hall-boards tr[data-board=\"board-1\"] button.flip'); \
         if (!b || b.disabled) return false; b.click(); return true",
    );
    assert!(commands.wait_for(Duration::from_secs(10), |r| !r.is_empty()), "the console's command was published");
    let envelope = &commands.received()[0].json;
    let signed = envelope["signed"].as_str().unwrap();
    let key = std::fs::read_to_string(dir.join("operator.key")).unwrap();
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&hex(key.trim())).unwrap();
    mac.update(signed.as_bytes());
    mac.verify_slice(&hex(envelope["mac"].as_str().unwrap()))
        .expect("the MAC is HMAC-SHA256 of `signed` with the daemon's operator key");
    let request: Value = serde_json::from_str(signed).unwrap();
    assert_eq!(request["board"], "board-1");
    assert_eq!(request["command"], "flip");
    assert!(request["id"].as_str().unwrap().starts_with("console-operator-") && request["ts_ms"].is_u64(), "{request}");
    let reply = browser.wait_for(
        Duration::from_secs(20),
        "const li = document.querySelector('#replies li:not([data-status=\"sent\"])'); return li && li.dataset.status",
    );
    assert!(reply == "done" || reply == "refused", "the daemon's answer is shown: {reply}");
    assert_eq!(
        browser.run("return sessionStorage.getItem('boardcast-operator-key')"),
        Value::Null,
        "no key in the browser"
    );
    // The same link again, logged out: spent, it logs nobody in, and the
    // log-in form says why.
    browser.run("sessionStorage.clear(); return fetch('/api/logout', {method: 'POST', credentials: 'same-origin'}).then(r => r.status)");
    browser.open(&format!("{site}/overview.html"));
    browser.open(&link);
    let refused = browser.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('console-login'); return !f.hidden && [f.querySelector('.why').textContent, document.getElementById('console').hidden]",
    );
    assert!(refused[0].as_str().unwrap().contains("used already or has expired"), "{refused}");
    assert_eq!(refused[1], true, "no console: {refused}");
    stop(&mut demo.0);
    drop(browser);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The console's one-click link the demo printed (its log on stdout).
fn printed_console_link(log: &Path) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(link) = text.split_whitespace().find(|w| w.contains("/console.html#login=")) {
            return link.to_owned();
        }
        assert!(Instant::now() < end, "the demo prints a console link:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A child process killed when the test ends, also by a failed assertion:
/// a demo left behind keeps its boards, broker and engine running (and the
/// machine loaded) for the tests after it.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            // SIGTERM first: the demo stops its own Mosquitto, which a
            // SIGKILL would leave running.
            let _ = Command::new("kill").arg("-TERM").arg(self.0.id().to_string()).status();
            if !crate::support::live::wait(&mut self.0, Duration::from_secs(10)) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
    }
}

#[test]
fn player_cards_from_pairings_move_times_the_engine_s_evaluation_and_the_tv_wall() {
    use crate::support::live::Hall;
    let hall = Hall::new("displays-cards");
    let dir = hall.dir.clone();
    let Some(browser) = Browser::start(&dir.join("chromium")) else { return };
    let Some(broker) = crate::support::mqtt::Mosquitto::start_with_websockets(&dir.join("mosquitto")) else { return };
    let ws = broker.ws_port.unwrap();
    // Round 10 of the Women's Grand Prix, Kazan 2012: board 1 is Muzychuk
    // (GM, 2598, SLO) against Hou Yifan (GM, 2623, CHN).
    let pairings = dir.join("round10.csv");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pairings/wgp-kazan-2012-round10.csv"),
        &pairings,
    )
    .unwrap();
    let capture = hall.synth_capture("twic0920-sample.pgn", 1, "b1");
    let http = free_port();
    let mqtt = format!(
        "[mqtt]\nurl = \"mqtt://127.0.0.1:{}\"\nbridge_id = \"hall-pc\"\n\
         [broadcast]\nevent = \"WGP Kazan\"\nround = \"10\"\npairings = \"{}\"\n",
        broker.port,
        pairings.display()
    );
    let config = hall.config_with_mqtt(&["b1", "b2"], &mqtt);
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "[http]\nenabled = false\n",
        &format!("[http]\nlisten = \"127.0.0.1:{http}\"\nbroker_ws_url = \"ws://127.0.0.1:{ws}/mqtt\"\n"),
    );
    std::fs::write(&config, text).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let subscriber = Subscriber::start(&runtime, broker.port, "boardcast/v1/public/#", "test-cards-feed");
    assert!(subscriber.wait_subscribed(Duration::from_secs(10)));
    let mut daemon = hall.run(&config);
    assert!(wait_listening(http, Duration::from_secs(20)), "the pages are served: {}", hall.log());
    // A dozen plies with the clock, then the board goes quiet: the
    // position stays, for the engine's analysis below.
    let mut board = hall.simulate(&capture, "b1", &[]);
    let states = |r: &[crate::support::mqtt::Received]| -> Vec<Value> {
        r.iter().filter(|m| m.topic.ends_with("/state") && m.json["board"] == "b1").map(|m| m.json.clone()).collect()
    };
    assert!(
        subscriber
            .wait_for(Duration::from_secs(90), |r| states(r).iter().any(|s| s["completed_plies"].as_u64() >= Some(12))),
        "board b1 played twelve plies: {}",
        hall.log()
    );
    hall.unplug(&mut board, "b1");
    std::thread::sleep(Duration::from_millis(1500));
    let received = subscriber.received();
    let state = states(&received).last().cloned().unwrap();
    let topic =
        received.iter().rev().find(|m| m.topic.ends_with("/state") && m.json["board"] == "b1").unwrap().topic.clone();
    let levels: Vec<&str> = topic.split('/').collect();
    let (event, round, label) = (levels[3], levels[4], levels[5]);
    assert_eq!(state["players"]["white"]["title"], "GM", "the pairings file's players are in the feed: {state}");
    let site = format!("http://127.0.0.1:{http}");
    let board_page = format!("{site}/board.html?event={event}&round={round}&board={label}");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    // The players' cards: flag, title, name and rating from the pairings
    // file, White at the bottom.
    browser.viewport(1920, 1080);
    browser.open(&board_page);
    let card = |id: &str| {
        browser.wait_for(
            Duration::from_secs(20),
            &format!(
                "const c = document.getElementById('{id}'); const f = c.querySelector('img.flag'); \
                 return c.querySelector('.name')?.textContent && f && f.complete && f.naturalWidth > 0 && \
                 [c.querySelector('.title')?.textContent, c.querySelector('.name').textContent, \
                  c.querySelector('.rating')?.textContent, new URL(f.src).pathname]"
            ),
        )
    };
    assert_eq!(card("bottom"), json!(["GM", "Muzychuk, Anna", "2598", "/flags/SLO.svg"]), "White's card");
    assert_eq!(card("top"), json!(["GM", "Hou, Yifan", "2623", "/flags/CHN.svg"]), "Black's card");
    // The move times: each move's clock in the list, the time the last
    // move of each side took on the cards.
    let plies = state["ply"].as_u64().unwrap();
    let clocks = browser.wait_for(
        Duration::from_secs(20),
        &format!(
            "const c = [...document.querySelectorAll('#moves li .clk')].map(c => c.textContent); \
             return c.length == {plies} && c"
        ),
    );
    let clocks: Vec<&str> = clocks.as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let read = state["clocks_ms"].as_array().unwrap().iter().filter(|c| c.is_u64()).count();
    assert!(read >= 6, "the feed has the clock after most moves: {}", state["clocks_ms"]);
    // Each clock the page shows is the feed's for that ply (the last
    // move's may come after the page drew it).
    let shown: Vec<(usize, &str)> = clocks.iter().copied().enumerate().filter(|(_, c)| c.contains(':')).collect();
    assert!(shown.len() + 1 >= read, "each read clock is shown: {clocks:?} for {}", state["clocks_ms"]);
    for (i, text) in shown {
        let ms = state["clocks_ms"][i].as_u64().unwrap_or_else(|| panic!("ply {} has no clock in the feed", i + 1));
        let s = ms / 1000;
        let expected = if s >= 3600 {
            format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
        } else {
            format!("{}:{:02}", s / 60, s % 60)
        };
        assert_eq!(text, expected, "ply {}'s clock", i + 1);
    }
    let spent = browser.run("return [...document.querySelectorAll('.player .spent')].map(s => s.textContent)");
    assert!(
        spent.as_array().unwrap().iter().all(|s| s.as_str().is_some_and(|s| s.ends_with('s') || s.contains(':'))),
        "each card shows the time its side's last move took: {spent}"
    );
    assert_eq!(browser.run("return document.getElementById('evalbar').hidden"), true, "no analysis, no bar");
    browser.screenshot(&shots.join("board-cards.png"));

    // The engine's analysis of the position, as the daemon publishes it
    // on the public tree: the bar, the best line and the arrow appear.
    let fen = state["fen"].as_str().unwrap();
    let position: shakmaty::Chess =
        fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap();
    use shakmaty::Position as _;
    let best = position.legal_moves()[0];
    let best_uci = best.to_uci(shakmaty::CastlingMode::Standard).to_string();
    let best_san = shakmaty::san::San::from_move(&position, best).to_string();
    let analysis = json!({"game": state["game"], "ply": plies, "fen": fen, "score": {"cp": 135}, "depth": 18,
        "nodes": 1_000_000, "pv": [best_san], "best_uci": best_uci, "engine": "Stockfish 16", "ts_ms": state["ts_ms"]});
    let client = publisher(&runtime, broker.port);
    let analysis_topic = format!("boardcast/v1/public/{event}/{round}/{label}/analysis");
    runtime.block_on(client.publish(&analysis_topic, rumqttc::QoS::AtLeastOnce, true, analysis.to_string())).unwrap();
    let shown = browser.wait_for(
        Duration::from_secs(20),
        "const e = document.getElementById('evalbar'); \
         const arrow = document.querySelectorAll('#board svg.cg-shapes line').length > 0; \
         return !e.hidden && arrow && [e.dataset.score, document.querySelector('#analysis .line').textContent, arrow]",
    );
    let number = state["fen"].as_str().unwrap().split(' ').nth(5).unwrap().to_owned();
    let dots = if fen.split(' ').nth(1) == Some("w") { "." } else { "…" };
    assert_eq!(shown, json!(["+1.35", format!("{number}{dots} {best_san}"), true]), "the bar, the line, the arrow");
    let white_share = browser.run("return parseFloat(document.querySelector('#evalbar .white').style.height)");
    assert!(white_share.as_f64().unwrap() > 50.0, "White's side of the bar is the larger: {white_share}");
    browser.screenshot(&shots.join("board-analysis.png"));
    for (width, height, name) in [(1024, 768, "board-1024.png"), (390, 844, "board-phone.png")] {
        browser.viewport(width, height);
        browser.open(&board_page);
        browser.wait_for(Duration::from_secs(20), "return !document.getElementById('evalbar').hidden");
        let fits = browser.run(
            "const b = document.querySelector('#board').getBoundingClientRect(); \
             return b.width > 200 && b.left >= 0 && b.right <= window.innerWidth + 0.5",
        );
        assert_eq!(fits, true, "the whole board is on a {width}×{height} screen");
        std::thread::sleep(Duration::from_millis(300));
        browser.screenshot(&shots.join(name));
    }
    // The arbiters' live tree never shows the engine.
    browser.viewport(1280, 720);
    browser.run("sessionStorage.setItem('boardcast-login', JSON.stringify({username: 'arbiter', password: 'x'}));");
    browser.open(&format!("{board_page}&tree=live"));
    browser
        .wait_for(Duration::from_secs(20), &format!("return document.querySelectorAll('#moves li').length == {plies}"));
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(browser.run("return document.getElementById('evalbar').hidden"), true, "no evaluation on the live tree");

    // The overview: the thin bar on the board's card, the round's results.
    for (width, height, name) in [(1920, 1080, "overview.png"), (390, 844, "overview-phone.png")] {
        browser.viewport(width, height);
        browser.open(&format!("{site}/overview.html"));
        let row = browser.wait_for(
            Duration::from_secs(20),
            &format!(
                "const bar = document.querySelector('.card[data-board=\"{label}\"] .eval'); \
                 const row = document.querySelector('table.results tr[data-board=\"{label}\"]'); \
                 return bar && !bar.hidden && row && [...row.querySelectorAll('td')].map(td => td.textContent.trim())"
            ),
        );
        assert_eq!(row, json!([label, "GMMuzychuk, Anna2598", "*", "GMHou, Yifan2623"]), "the results table");
        browser.screenshot(&shots.join(name));
    }

    // The TV wall: one board a screen, the page turned every two seconds.
    browser.viewport(1920, 1080);
    browser.open(&format!("{site}/tv.html?per_page=1&interval_s=2"));
    let pages = browser.wait_for(
        Duration::from_secs(20),
        "return document.querySelectorAll('#wall .card').length == 1 && document.body.dataset.pages",
    );
    assert_eq!(pages, "2", "two boards, one a page");
    let first = browser.run("return document.querySelector('#wall .card').dataset.board");
    browser.wait_for(Duration::from_secs(10), "return document.body.dataset.page == '2'");
    let second = browser.run("return document.querySelector('#wall .card').dataset.board");
    assert_ne!(first, second, "the next page shows the other board");
    browser.wait_for(Duration::from_secs(10), &format!("return document.body.dataset.page == '1' && document.querySelector('#wall .card[data-board=\"{label}\"] cg-board piece')"));
    browser.screenshot(&shots.join("tv.png"));
    stop(&mut daemon);
    drop(browser);
}

/// Asserts that the page's running clock counts down. The clock that
/// runs changes at every press, and a reading can arrive between two looks:
/// a clock counts down when some look shows a running clock with another
/// text than the first look did, within a few seconds.
fn running_clock_counts_down(browser: &Browser) {
    let running = "return document.querySelector('.clock.running')?.textContent";
    let first = browser.wait_for(Duration::from_secs(30), running);
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = browser.run(running);
        if now.is_string() && now != first {
            return;
        }
        assert!(Instant::now() < end, "a running clock counts down: it showed {first} for 5 s");
    }
}

/// The pieces chessground drew on `board` (a CSS selector), each as
/// `"e4 white pawn"`: its square worked out from where the piece stands
/// (its transform within the board), not from what chessground says it is,
/// sorted.
fn drawn_pieces(browser: &Browser, board: &str) -> Vec<String> {
    let script = format!(
        "const b = document.querySelector('{board} cg-board'); const r = b.getBoundingClientRect(); \
         const white = !b.closest('.orientation-black'); \
         return [...b.querySelectorAll('piece')].filter(p => !p.classList.contains('ghost') && !p.classList.contains('fading')).map(p => {{ \
           const m = new DOMMatrix(getComputedStyle(p).transform); \
           let file = Math.round(m.m41 / (r.width / 8)), rank = 7 - Math.round(m.m42 / (r.height / 8)); \
           if (!white) {{ file = 7 - file; rank = 7 - rank; }} \
           const color = p.classList.contains('white') ? 'white' : 'black'; \
           const role = ['king', 'queen', 'rook', 'bishop', 'knight', 'pawn'].find(x => p.classList.contains(x)); \
           return `${{'abcdefgh'[file]}}${{rank + 1}} ${{color}} ${{role}}`; }}).sort()"
    );
    let value = browser.run(&script);
    value
        .as_array()
        .unwrap_or_else(|| panic!("pieces: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// The pieces of a FEN's placement as [`drawn_pieces`] gives them.
fn fen_pieces(fen: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (row, rank) in fen.split(' ').next().unwrap().split('/').enumerate() {
        let mut file = 0;
        for c in rank.chars() {
            if let Some(skip) = c.to_digit(10) {
                file += skip as usize;
                continue;
            }
            let role = match c.to_ascii_lowercase() {
                'k' => "king",
                'q' => "queen",
                'r' => "rook",
                'b' => "bishop",
                'n' => "knight",
                _ => "pawn",
            };
            let color = if c.is_ascii_uppercase() { "white" } else { "black" };
            out.push(format!("{}{} {color} {role}", &"abcdefgh"[file..=file], 8 - row));
            file += 1;
        }
    }
    out.sort();
    out
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// Logs the console in at the daemon serving `site` (an account of its
/// accounts file) and keeps the account for the console's MQTT connection,
/// as the console's log-in form does; then the console page opens logged in.
pub(crate) fn console_logged_in(browser: &Browser, site: &str, account: &str, password: &str) {
    browser.open(&format!("{site}/console.html"));
    let status = browser.run(&format!(
        "return fetch('/api/login', {{method: 'POST', credentials: 'same-origin', headers: {{'Content-Type': 'application/json'}}, \
           body: JSON.stringify({{account: {account}, password: {password}}})}}) \
         .then(r => {{ if (r.ok) sessionStorage.setItem('boardcast-login', JSON.stringify({{username: {account}, password: {password}}})); return r.status; }})",
        account = json!(account),
        password = json!(password)
    ));
    assert_eq!(status, 200, "the console logged in as {account}");
}

/// Publishes to a broker as the test's stand-in for the daemon's feed.
fn publisher(runtime: &tokio::runtime::Runtime, port: u16) -> rumqttc::AsyncClient {
    let mut options = rumqttc::MqttOptions::new("test-feed", "127.0.0.1", port);
    options.set_max_packet_size(2 << 20, 2 << 20);
    let (client, mut events) = rumqttc::AsyncClient::new(options, 1000);
    runtime.spawn(async move {
        loop {
            if events.poll().await.is_err() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    });
    client
}

#[test]
fn made_moves_are_provisional_amended_moves_replace_and_the_console_shows_alerts_and_notices() {
    let hall = crate::support::live::Hall::new("displays-feed");
    let config = hall.config(&["idle"]);
    let dir = config.parent().unwrap().to_path_buf();
    let Some(browser) = Browser::start(&dir.join("chromium")) else { return };
    let Some(mut broker) = crate::support::mqtt::Mosquitto::start_with_websockets(&dir.join("mosquitto")) else {
        return;
    };
    let ws = broker.ws_port.unwrap();
    // What the daemon publishes for a real board recording with an amended
    // move (1. … 18. Re1 made, then Raf1 instead), from `replay --mqtt`;
    // at its end the operator takes the last move back (a capture records
    // operator commands), and the board, still showing it, has it made again.
    let capture = dir.join("dgt-real-1.jsonl");
    let recording =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dgt-real/dgt-real-1.jsonl"))
            .unwrap();
    let end_us =
        recording.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()?["t_us"].as_u64()).max().unwrap();
    let take_back = json!({"t_us": end_us + 1_000_000, "command": {"command": "take_back"}});
    std::fs::write(&capture, format!("{recording}{take_back}\n")).unwrap();
    let feed_file = dir.join("feed.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .arg("replay")
        .arg(&capture)
        .arg("--mqtt")
        .arg(&feed_file)
        .arg("--pgn")
        .arg(dir.join("replay.pgn"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let feed: Vec<Value> = std::fs::read_to_string(&feed_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["topic"].as_str().unwrap().contains("/v1/live/"))
        .collect();
    let is_state = |l: &Value| l["topic"].as_str().unwrap().ends_with("/state");
    let amended =
        feed.iter().position(|l| l["payload"]["kind"] == "amended").expect("the recording has an amended move");
    let ply = feed[amended]["payload"]["ply"].as_u64().unwrap();
    let old = feed[amended]["payload"]["replaces"]["san"].as_str().unwrap().to_owned();
    let new = feed[amended]["payload"]["san"].as_str().unwrap().to_owned();
    // Three moments: the move made, the move amended, the move completed.
    let made = (0..amended).rev().find(|&i| is_state(&feed[i])).unwrap();
    assert_eq!(feed[made]["payload"]["last_move"]["san"], old.as_str());
    assert_eq!(feed[made]["payload"]["last_move"]["status"], "made");
    let amended_state = (amended..feed.len()).find(|&i| is_state(&feed[i])).unwrap();
    assert_eq!(feed[amended_state]["payload"]["last_move"]["san"], new.as_str());
    let completed = (amended_state..feed.len())
        .find(|&i| is_state(&feed[i]) && feed[i]["payload"]["completed_plies"].as_u64().unwrap() >= ply)
        .unwrap();
    // The round summary after the amendment (the overview's source), the
    // move still made; and the first one after its completion.
    let summary_ply = |i: usize| {
        let b = &feed[i]["payload"]["boards"][0];
        feed[i]["topic"].as_str().unwrap().contains("/summary/").then(|| {
            (
                b["ply"].as_u64().unwrap(),
                b["completed_plies"].as_u64().unwrap(),
                b["last_san"].as_str().unwrap().to_owned(),
            )
        })
    };
    let summary_made =
        (amended_state..completed).find(|&i| summary_ply(i) == Some((ply, ply - 1, new.clone()))).unwrap();
    let summary_completed = (completed..feed.len()).find(|&i| summary_ply(i).is_some_and(|(p, c, _)| p == c)).unwrap();
    // The take-back: the move retracted, then made again from the board.
    let retracted = feed.iter().position(|l| l["payload"]["kind"] == "retracted").expect("the take-back is published");
    let taken = feed[retracted]["payload"]["ply"].as_u64().unwrap();
    let retracted_state = (retracted..feed.len()).find(|&i| is_state(&feed[i])).unwrap();
    assert_eq!(feed[retracted_state]["payload"]["ply"], taken - 1);
    let remade_state = (retracted_state + 1..feed.len())
        .find(|&i| is_state(&feed[i]) && feed[i]["payload"]["ply"] == taken)
        .expect("the board, still showing the move, has it made again");

    // The daemon serves the pages and tells them the test's broker.
    let http = free_port();
    let mqtt = format!("[mqtt]\nurl = \"mqtt://127.0.0.1:{}\"\nbridge_id = \"hall-pc\"\n", broker.port);
    let config = hall.config_with_mqtt(&["idle"], &mqtt);
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "[http]\nenabled = false\n",
        &format!("[http]\nlisten = \"127.0.0.1:{http}\"\nbroker_ws_url = \"ws://127.0.0.1:{ws}/mqtt\"\n"),
    );
    std::fs::write(&config, text).unwrap();
    let arbiter = hall.account("arbiter", "live");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(http, Duration::from_secs(20)), "the pages are served: {}", hall.log());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let client = publisher(&runtime, broker.port);
    let mut sent = 0;
    let mut publish_to = |end: usize| {
        for l in &feed[sent..=end] {
            let qos = if l["qos"] == 1 { rumqttc::QoS::AtLeastOnce } else { rumqttc::QoS::AtMostOnce };
            let payload = l["payload"].to_string();
            runtime.block_on(client.publish(l["topic"].as_str().unwrap(), qos, l["retain"] == true, payload)).unwrap();
        }
        sent = end + 1;
    };
    let site = format!("http://127.0.0.1:{http}");
    let board_page = format!("{site}/board.html?tree=live&event=replay&round=1&board=dgt-real-1");
    console_logged_in(&browser, &site, "arbiter", &arbiter);
    // The board page's move `ply` and the console's last move, once the
    // page shows `san`: [provisional, its title, how many moves of that ply,
    // the last ply listed].
    let board_move = |san: &str| {
        browser.open(&board_page);
        browser.wait_for(
            Duration::from_secs(20),
            &format!(
                "const li = document.querySelector('#moves li[data-ply=\"{ply}\"]'); \
                 return li && li.querySelector('.san').textContent == '{san}' && \
                 [li.classList.contains('provisional'), li.title, document.querySelectorAll('#moves li[data-ply=\"{ply}\"]').length, \
                  Number(document.querySelector('#moves li:last-child').dataset.ply)]"
            ),
        )
    };
    let console_move = |san: &str| {
        browser.open(&format!("{site}/console.html"));
        browser.wait_for(
            Duration::from_secs(20),
            &format!(
                "const li = document.querySelector('#last-moves li[data-board=\"dgt-real-1\"]'); \
                 return li && li.querySelector('.san').textContent.endsWith(' {san}') && \
                 [li.classList.contains('provisional'), li.dataset.status, li.dataset.ply, \
                  document.querySelectorAll('#last-moves li[data-board=\"dgt-real-1\"]').length]"
            ),
        )
    };
    let why = "made, not yet completed: the clock has not been pressed (article 6.12)";

    // Made: provisional on both pages.
    publish_to(made);
    assert_eq!(board_move(&old), json!([true, why, 1, ply]), "a made move is provisional on the board page");
    // Chessground draws each piece of the position on its square, White
    // at the bottom, and turned round with `flip=1`.
    let position = fen_pieces(feed[made]["payload"]["fen"].as_str().unwrap());
    assert!(position.len() > 20, "{position:?}");
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(drawn_pieces(&browser, "#board"), position, "chessground draws the position");
    browser.open(&format!("{board_page}&flip=1"));
    browser.wait_for(
        Duration::from_secs(20),
        &format!("return document.querySelectorAll('#moves li[data-ply=\"{ply}\"]').length"),
    );
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        browser.run("return document.getElementById('board').classList.contains('orientation-black')"),
        true,
        "flip=1 puts White at the top"
    );
    assert_eq!(drawn_pieces(&browser, "#board"), position, "turned round, each piece is still on its square");
    assert_eq!(console_move(&old), json!([true, "made", ply.to_string(), 1]), "and on the console");
    // Amended: the move shown is replaced, not added to; still provisional,
    // on the overview as well.
    publish_to(amended_state);
    assert_eq!(board_move(&new), json!([true, why, 1, ply]), "the amended move replaces the made one, none is added");
    assert_eq!(console_move(&new), json!([true, "made", ply.to_string(), 1]));
    let overview_last = || {
        browser.open(&format!("{site}/overview.html?tree=live"));
        browser.wait_for(
            Duration::from_secs(20),
            "const l = document.querySelector('.card[data-board=\"dgt-real-1\"] .last'); \
             return l && l.textContent && [l.textContent, l.classList.contains('provisional'), l.title]",
        )
    };
    publish_to(summary_made);
    let number = format!("{}.", ply.div_ceil(2));
    assert_eq!(overview_last(), json!([format!("{number} {new}"), true, why]), "the overview marks a made move");
    // Completed: the same move, no longer provisional.
    publish_to(completed);
    let shown = board_move(&new);
    assert_eq!(shown.as_array().unwrap()[..3], [json!(false), json!(""), json!(1)], "a completed move is shown final");
    publish_to(summary_completed.max(completed));
    assert_eq!(overview_last().as_array().unwrap()[1], false, "the overview shows a completed move final");
    // Completed by the clock (not by the next move made): the console's
    // last move is the same one, final.
    if feed[completed]["payload"]["last_move"]["ply"] == ply {
        assert_eq!(console_move(&new), json!([false, "completed", ply.to_string(), 1]));
    }

    // Retracted (the operator's take-back): the move leaves both pages.
    publish_to(retracted_state);
    browser.open(&board_page);
    let gone = browser.wait_for(
        Duration::from_secs(20),
        &format!(
            "const last = document.querySelector('#moves li:last-child'); \
             return last && last.dataset.ply == '{}' && !document.querySelector('#moves li[data-ply=\"{taken}\"]')",
            taken - 1
        ),
    );
    assert_eq!(gone, true, "the retracted move is gone from the board page, the one before it is last");
    browser.open(&format!("{site}/console.html"));
    let last = browser.wait_for(
        Duration::from_secs(20),
        &format!("const li = document.querySelector('#last-moves li[data-board=\"dgt-real-1\"]'); return li && li.dataset.ply == '{}' && li.dataset.status", taken - 1),
    );
    assert_eq!(last, "completed", "the console's last move is the one before the retracted move");
    // Made again from the board: back (completed at once here: the
    // capture ends, which completes a made move).
    publish_to(remade_state);
    let remade = feed[remade_state]["payload"]["last_move"]["san"].as_str().unwrap().to_owned();
    browser.open(&board_page);
    let shown = browser.wait_for(
        Duration::from_secs(20),
        &format!(
            "const li = document.querySelector('#moves li[data-ply=\"{taken}\"]'); \
             return li && [li.querySelector('.san').textContent, li.classList.contains('provisional')]"
        ),
    );
    let remade_made = feed[remade_state]["payload"]["last_move"]["status"] == "made";
    assert_eq!(shown, json!([remade, remade_made]));

    // A late duplicate (an older state of the same daemon run) is dropped;
    // a state from a restarted daemon (a new `boot`) replaces what is shown
    // even with a lower `seq`; after the broker restarts the page
    // reconnects and follows the feed again.
    let state_topic = feed[remade_state]["topic"].as_str().unwrap().to_owned();
    let send = |payload: &Value| {
        runtime.block_on(client.publish(&state_topic, rumqttc::QoS::AtLeastOnce, true, payload.to_string())).unwrap();
    };
    let last_ply = "return document.querySelector('#moves li:last-child')?.dataset.ply";
    send(&feed[made]["payload"]);
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(browser.run(last_ply), taken.to_string(), "an older state of the same run is not shown");
    let mut restarted = feed[made]["payload"].clone();
    restarted["boot"] = json!("replay-restarted");
    send(&restarted);
    browser.wait_for(Duration::from_secs(10), &format!("{} == '{ply}'", last_ply.trim_end_matches(';')));
    broker.restart();
    let mut later = feed[remade_state]["payload"].clone();
    later["boot"] = json!("replay-restarted");
    later["seq"] = json!(restarted["seq"].as_u64().unwrap() + 1);
    // The publisher reconnects in the background; send until it has.
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        send(&later);
        let shown = browser.run(&format!(
            "return document.getElementById('link').dataset.state == 'connected' && {} == '{taken}'",
            last_ply.trim_start_matches("return ")
        ));
        if shown == true {
            break;
        }
        assert!(Instant::now() < end, "the page came back after the broker restarted");
        std::thread::sleep(Duration::from_millis(500));
    }

    // The console: an alert with its article and board, and a notice of
    // the bridge (the daemon's words when lichess refused a game).
    browser.open(&format!("{site}/console.html"));
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    let state = &feed[completed]["payload"];
    let alert = json!({"schema": 1, "boot": state["boot"], "session": state["session"], "ts_ms": state["ts_ms"],
        "board": "dgt-real-1", "game": state["game"], "seq": state["seq"].as_u64().unwrap() + 1000,
        "article": "4.3.1", "kind": "touched_own_piece", "severity": "irregularity", "ply": ply, "side": "white",
        "t_us": 1, "message": "White lifted the rook on a1 first and put it back: possible touch-move breach",
        "squares": ["a1"], "evidence": [{"t_us": 1, "square": "a1", "piece": null}]});
    let notice = json!({"schema": 1, "ts_ms": 1_795_259_698_145u64, "kind": "lichess", "severity": "error",
        "message": "lichess refused the token of broadcast round abc12345 (401): make a new token with the study:write scope and set lichess.token_file"});
    for (topic, payload) in
        [("boardcast/v1/live/replay/1/dgt-real-1/alerts", &alert), ("boardcast/v1/bridges/hall-pc/notices", &notice)]
    {
        runtime.block_on(client.publish(topic, rumqttc::QoS::AtLeastOnce, false, payload.to_string())).unwrap();
    }
    let shown = browser.wait_for(
        Duration::from_secs(20),
        "const a = document.querySelector('.alert'); const n = document.querySelector('.notice'); \
         return a && n && [a.dataset.board, a.querySelector('.kind').textContent, a.querySelector('.message').textContent, \
                           n.dataset.kind, n.dataset.severity, n.querySelector('.message').textContent]",
    );
    assert_eq!(
        shown,
        json!([
            "dgt-real-1",
            "touched_own_piece (article 4.3.1)",
            alert["message"],
            "lichess",
            "error",
            notice["message"]
        ])
    );
    assert!(
        browser.run("return document.querySelector('.alert').textContent").as_str().unwrap().contains("dgt-real-1"),
        "the alert names its board"
    );
    stop(&mut daemon);
    drop(browser);
}

/// A stand-in for lichess that refuses every push's token (401), as lichess
/// does for a token without the study:write scope; its address.
fn refusing_lichess() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream);
            let mut length = 0;
            loop {
                let mut line = String::new();
                if std::io::BufRead::read_line(&mut reader, &mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap_or(0);
                }
                if line == "\r\n" {
                    let mut body = vec![0; length];
                    let _ = reader.read_exact(&mut body);
                    let body = "{\"error\":\"No such token\"}";
                    let answer = format!(
                        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = reader.get_mut().write_all(answer.as_bytes());
                    break;
                }
            }
        }
    });
    format!("http://{address}")
}

#[test]
fn the_console_shows_the_alerts_and_notices_the_daemon_publishes_and_replays_their_evidence() {
    use crate::support::live::Hall;
    let hall = Hall::new("displays-console");
    let dir = hall.dir.clone();
    let Some(browser) = Browser::start(&dir.join("chromium")) else { return };
    let Some(broker) = crate::support::mqtt::Mosquitto::start_with_websockets(&dir.join("mosquitto")) else { return };
    let ws = broker.ws_port.unwrap();
    // A real game with irregularities made in it (touch-move, illegal
    // moves, …), played on a simulated DGT board.
    let capture = hall.synth_irregular("twic0920-sample.pgn", 1, 5);
    // The daemon on the test's broker, pushing to a lichess that refuses
    // its token: the operator's notice.
    let token_file = dir.join("lichess.token");
    std::fs::write(&token_file, "lip_wrong\n").unwrap();
    let http = free_port();
    let mqtt = format!(
        "[mqtt]\nurl = \"mqtt://127.0.0.1:{}\"\nbridge_id = \"hall-pc\"\n\
         [lichess]\nurl = \"{}\"\ntoken_file = \"{}\"\ninterval_ms = 200\n[lichess.rounds]\n\"1\" = \"abc12345\"\n",
        broker.port,
        refusing_lichess(),
        token_file.display()
    );
    let config = hall.config_with_mqtt(&["b1"], &mqtt);
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "[http]\nenabled = false\n",
        &format!("[http]\nlisten = \"127.0.0.1:{http}\"\nbroker_ws_url = \"ws://127.0.0.1:{ws}/mqtt\"\n"),
    );
    std::fs::write(&config, text).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let subscriber = Subscriber::start(&runtime, broker.port, "boardcast/v1/#", "test-console-feed");
    assert!(subscriber.wait_subscribed(Duration::from_secs(10)));
    let arbiter = hall.account("arbiter", "live");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(http, Duration::from_secs(20)), "the pages are served: {}", hall.log());
    let site = format!("http://127.0.0.1:{http}");
    console_logged_in(&browser, &site, "arbiter", &arbiter);
    browser.open(&format!("{site}/console.html"));
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let alerts = |r: &[crate::support::mqtt::Received]| {
        r.iter().filter(|m| m.topic.ends_with("/b1/alerts") && m.json["kind"] != "acknowledged").count()
    };
    let notices = |r: &[crate::support::mqtt::Received]| r.iter().any(|m| m.topic.ends_with("/hall-pc/notices"));
    assert!(
        subscriber.wait_for(Duration::from_secs(120), |r| alerts(r) >= 2 && notices(r)),
        "the daemon published two alerts and a notice: {}",
        hall.log()
    );
    hall.unplug(&mut board, "b1");
    let received = subscriber.received();
    let published: Vec<&Value> = received
        .iter()
        .filter(|m| {
            m.topic.contains("/v1/live/") && m.topic.ends_with("/b1/alerts") && m.json["kind"] != "acknowledged"
        })
        .map(|m| &m.json)
        .collect();
    let notice = &received.iter().find(|m| m.topic.ends_with("/hall-pc/notices")).unwrap().json;

    // Each alert as the daemon published it, newest first: its board, kind
    // and article, words and squares.
    let shown = browser.wait_for(
        Duration::from_secs(20),
        &format!(
            "const a = [...document.querySelectorAll('.alert')]; return a.length >= {} && \
             a.map(li => [li.dataset.board, li.querySelector('.kind').textContent, li.querySelector('.message').textContent, \
                          li.querySelector('.squares').textContent])",
            published.len()
        ),
    );
    let expected: Vec<Value> = published
        .iter()
        .rev()
        .map(|a| {
            let squares: Vec<&str> = a["squares"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
            json!([
                a["board"],
                format!("{} (article {})", a["kind"].as_str().unwrap(), a["article"].as_str().unwrap()),
                a["message"],
                squares.join(" ")
            ])
        })
        .collect();
    assert_eq!(shown.as_array().unwrap()[..expected.len()], expected[..], "the console shows each alert as published");
    // The notice: the daemon's words for the refused token.
    let told = browser.wait_for(
        Duration::from_secs(20),
        "const n = document.querySelector('.notice'); return n && [n.dataset.kind, n.dataset.severity, n.querySelector('.message').textContent]",
    );
    assert_eq!(told, json!([notice["kind"], notice["severity"], notice["message"]]));
    assert!(notice["message"].as_str().unwrap().contains("study:write"), "{notice}");
    // Its evidence replayed on the alert's small board: each sensor
    // observation marked in turn.
    let with_evidence = published
        .iter()
        .rev()
        .position(|a| a["evidence"].as_array().is_some_and(|e| e.iter().any(|o| o["square"].is_string())));
    let index = with_evidence.expect("an alert of these irregularities carries the sensor observations");
    {
        browser.run(&format!("document.querySelectorAll('.alert')[{index}].querySelector('.replay').click()"));
        let marked = browser.wait_for(
            Duration::from_secs(10),
            &format!(
                "return document.querySelectorAll('.alert')[{index}].querySelector('.board .sq.last')?.dataset.square"
            ),
        );
        let squares: Vec<&Value> = published[published.len() - 1 - index]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| &o["square"])
            .collect();
        assert!(squares.contains(&&marked), "a square of the evidence is marked: {marked} in {squares:?}");
        // Stepped through on the evidence board (console-alerts.js): the
        // first observation, then the last, each with its square marked.
        let records: Vec<&Value> = published[published.len() - 1 - index]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["square"].is_string() && o.get("piece").is_some())
            .collect();
        // Chessground draws at the next animation frame: wait for the mark.
        let step = |button: &str| {
            browser.run(&format!("document.getElementById('evidence').querySelector('{button}').click()"));
            browser.wait_for(
                Duration::from_secs(5),
                "const e = document.getElementById('evidence'); \
                 return document.querySelector('#evidence-board square.last-move') \
                   && [e.dataset.step, e.querySelector('.what').textContent, true]",
            )
        };
        browser.run(&format!("document.querySelectorAll('.alert')[{index}].querySelector('.step-evidence').click()"));
        let first = step(".next");
        assert_eq!(first[0], "1", "{first}");
        assert!(first[1].as_str().unwrap().contains(records[0]["square"].as_str().unwrap()), "{first} {records:?}");
        assert_eq!(first[2], true, "{first}");
        for _ in 1..records.len() {
            step(".next");
        }
        let last = step(".next");
        assert_eq!(last[0], records.len().to_string(), "no step beyond the last: {last}");
        assert!(last[1].as_str().unwrap().contains(records[records.len() - 1]["square"].as_str().unwrap()), "{last}");
    }
    browser.run("document.getElementById('alert-tools').scrollIntoView()");
    browser.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays/console-alerts.png"));
    stop(&mut daemon);
    drop(browser);
}
