//! The operator console's log-in (issue 28, item 1), against the real
//! daemon with its managed Mosquitto and accounts made by `boardcast
//! accounts add` on free loopback ports: the session cookie's attributes,
//! changes refused without the page's Origin or a session, a `public`
//! account kept out, sessions ended by a reloaded accounts file, failed
//! log-ins slowed (429 with Retry-After); and in headless Chromium, a wrong
//! password refused on the page, an operator's result reaching the board's
//! PGN file through the console (signed on the server), and a `live`
//! account's change refused by the daemon, not only by a disabled button.
//! The hall view (issue 28, item 2): the simulated board's row, Identify
//! refused with its reason, the row at tablet and phone sizes, and an
//! unplugged board shown disconnected.

use std::{
    io::{Read, Write},
    net::TcpStream,
    path::Path,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    displays::Browser,
    security::{GAMES, game_started, hall_with_broker, mosquitto_installed},
    support::{
        alias::Alias,
        live::{Hall, stop},
        mqtt::{free_port, wait_listening},
    },
};

/// An answer: status, headers (lowercase names), body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Answer {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// One request to the daemon's HTTP server, as a browser (or a stranger's
/// script) would send it.
pub(crate) fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}

/// A hall with the managed Mosquitto (WebSocket listener for the pages),
/// board `b1` and the pages on a free port; with `[http]` lines `http`.
fn hall_with_console(name: &str, http: &str) -> (Hall, u16) {
    let (hall, _, _) = hall_with_broker(name, "");
    let port = free_port();
    let config = hall.dir.join("boardcast.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[http]\nenabled = false\n", &format!("[http]\nlisten = \"127.0.0.1:{port}\"\n{http}"));
    std::fs::write(&config, text).unwrap();
    (hall, port)
}

/// `POST /api/login` from the page's own origin.
pub(crate) fn login(port: u16, account: &str, password: &str) -> Answer {
    let origin = format!("http://127.0.0.1:{port}");
    let body = json!({"account": account, "password": password}).to_string();
    request(port, "POST", "/api/login", &[("Origin", &origin)], &body)
}

/// The `boardcast-session=…` pair of a log-in's Set-Cookie.
pub(crate) fn cookie(answer: &Answer) -> String {
    answer
        .header("set-cookie")
        .unwrap_or_else(|| panic!("no cookie: {}", answer.body))
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

#[test]
fn the_session_cookie_is_strict_and_changes_need_the_pages_origin_and_a_live_session() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port) = hall_with_console("console-http", "");
    let op = hall.account("op", "operator");
    let tv = hall.account("tv", "public");
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let origin = format!("http://127.0.0.1:{port}");

    // The cookie: only for this site's requests, never for scripts, for the
    // session's absolute lifetime (12 h by default); not Secure over http.
    let answer = login(port, "op", &op);
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!((answer.json()["account"].clone(), answer.json()["role"].clone()), (json!("op"), json!("operator")));
    let set = answer.header("set-cookie").unwrap().to_owned();
    let attributes: Vec<&str> = set.split(';').map(str::trim).collect();
    assert!(attributes[0].starts_with("boardcast-session=") && attributes[0].len() == 18 + 64, "{set}");
    for wanted in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(attributes.contains(&wanted), "{wanted} in {set}");
    }
    assert!(!attributes.contains(&"Secure"), "{set}");
    // Reached through a TLS proxy (the page's origin is https): Secure.
    let https = format!("https://127.0.0.1:{port}");
    let body = json!({"account": "op", "password": op}).to_string();
    let proxied = request(port, "POST", "/api/login", &[("Origin", &https)], &body);
    assert!(proxied.header("set-cookie").unwrap().split(';').any(|a| a.trim() == "Secure"), "{:?}", proxied.headers);
    let session = cookie(&answer);
    let who = request(port, "GET", "/api/session", &[("Cookie", &session)], "");
    assert_eq!(
        (who.status, who.json()["role"].clone(), who.json()["may_change"].clone()),
        (200, json!("operator"), json!(true))
    );

    // A change from another site's page, or with no Origin at all (a
    // script outside a browser): refused before anything else, with words.
    let command = json!({"board": "b1", "command": "set_result", "result": "1-0", "reason": "resignation"}).to_string();
    for headers in [vec![("Cookie", session.as_str())], vec![("Cookie", &session), ("Origin", "http://evil.example")]] {
        let refused = request(port, "POST", "/api/command", &headers, &command);
        assert_eq!(refused.status, 403, "{headers:?}: {}", refused.body);
        assert!(refused.body.contains("Origin"), "{}", refused.body);
    }
    // The page's origin but no session: not logged in.
    let anonymous = request(port, "POST", "/api/command", &[("Origin", &origin)], &command);
    assert_eq!((anonymous.status, anonymous.json()["error"].clone()), (401, json!("not logged in")));
    let forged =
        request(port, "POST", "/api/command", &[("Origin", &origin), ("Cookie", "boardcast-session=00")], &command);
    assert_eq!(forged.status, 401);

    // A bridge id that would take the command to another topic.
    let elsewhere = json!({"bridge": "hall/boards/b1", "board": "b1", "command": "flip"}).to_string();
    let refused = request(port, "POST", "/api/command", &[("Origin", &origin), ("Cookie", &session)], &elsewhere);
    assert_eq!(refused.status, 400, "{}", refused.body);

    // A public (display) account, right password: no console, no cookie.
    let public = login(port, "tv", &tv);
    assert_eq!(public.status, 403, "{}", public.body);
    assert!(public.header("set-cookie").is_none() && public.body.contains("public"), "{}", public.body);
    // A wrong password and an unknown account: the same words.
    let wrong = login(port, "op", "not-the-password");
    let unknown = login(port, "nobody", "whatever");
    assert_eq!((wrong.status, unknown.status), (401, 401));
    assert_eq!(wrong.body, unknown.body);

    // Log out: the session is gone, the cookie cleared.
    let out = request(port, "POST", "/api/logout", &[("Origin", &origin), ("Cookie", &session)], "{}");
    assert!(out.header("set-cookie").unwrap().contains("Max-Age=0"), "{:?}", out.headers);
    assert_eq!(request(port, "GET", "/api/session", &[("Cookie", &session)], "").status, 401);

    // The account removed and the daemon reloaded (SIGHUP): its other
    // session ends.
    let again = cookie(&login(port, "op", &op));
    assert_eq!(request(port, "GET", "/api/session", &[("Cookie", &again)], "").status, 200);
    let removed = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["accounts", "--config"])
        .arg(hall.dir.join("boardcast.toml"))
        .args(["remove", "op"])
        .output()
        .unwrap();
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(daemon.id() as i32), nix::sys::signal::Signal::SIGHUP).unwrap();
    let end = Instant::now() + Duration::from_secs(10);
    while request(port, "GET", "/api/session", &[("Cookie", &again)], "").status != 401 {
        assert!(Instant::now() < end, "the removed account's session ended: {}", hall.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(login(port, "op", &op).status, 401, "the removed account cannot log in");

    // Passwords never reach the log.
    let log = hall.log();
    for password in [&op, &tv] {
        assert!(!log.contains(password.as_str()), "a password in the log:\n{log}");
    }
    assert!(log.contains("console: op (operator) logged in from 127.0.0.1"), "{log}");
    stop(&mut daemon);
}

#[test]
fn repeated_wrong_passwords_are_answered_429_with_retry_after_and_not_even_checked() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port) = hall_with_console("console-guessing", "");
    let op = hall.account("op", "operator");
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    // A few mistakes are free; then each attempt waits, longer and longer.
    let statuses: Vec<u16> = (0..8).map(|n| login(port, "op", &format!("guess-{n}")).status).collect();
    assert_eq!(statuses[..5], [401; 5], "{statuses:?}");
    assert!(statuses.contains(&429), "guessing is slowed: {statuses:?}");
    // While waiting, even the right password is not checked.
    let waiting = login(port, "op", &op);
    assert_eq!(waiting.status, 429, "{}", waiting.body);
    let seconds: u64 = waiting.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=30).contains(&seconds), "{seconds}");
    assert!(waiting.body.contains("too many failed log-ins"), "{}", waiting.body);
    // Once the wait is over, the right password lets the operator in.
    std::thread::sleep(Duration::from_millis(seconds * 1000 + 200));
    let answer = login(port, "op", &op);
    assert_eq!(answer.status, 200, "{}", answer.body);
    stop(&mut daemon);
}

/// Logs in on the console page's form; what the form then says (empty
/// once logged in).
fn log_in_on_the_page(browser: &Browser, site: &str, account: &str, password: &str) -> Value {
    browser.open(&format!("{site}/console.html"));
    browser.wait_for(Duration::from_secs(20), "return !document.getElementById('console-login').hidden");
    browser.run(&format!(
        "const f = document.getElementById('console-login'); f.account.value = {}; f.password.value = {}; f.requestSubmit();",
        json!(account),
        json!(password)
    ));
    browser.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('console-login'); \
         return f.hidden ? ' ' : (f.querySelector('.why').textContent || null)",
    )
}

#[test]
fn an_operator_sets_a_result_from_the_console_and_a_live_account_is_refused_by_the_daemon() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port) = hall_with_console("console-page", "");
    let _alias = Alias::for_board(&hall, "b1");
    let Some(browser) = Browser::start(&hall.dir.join("chromium")) else { return };
    let op = hall.account("op", "operator");
    let arbiter = hall.account("arbiter", "live");
    let tv = hall.account("tv", "public");
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    game_started(&hall);
    let site = format!("http://127.0.0.1:{port}");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    // A wrong password, then a public account: refused on the page, which
    // shows no console.
    let said = log_in_on_the_page(&browser, &site, "op", "wrong password");
    assert_eq!(said, "wrong account name or password");
    assert_eq!(browser.run("return document.getElementById('console').hidden"), true);
    browser.screenshot(&shots.join("console-login.png"));
    let said = log_in_on_the_page(&browser, &site, "tv", &tv);
    assert!(said.as_str().unwrap().contains("public (display) account"), "{said}");

    // The operator: logged in, the live tree read with the same account,
    // a result set in the board's game view (the command form is gone:
    // every command has its button); the daemon signs it and the board's
    // PGN has it.
    assert_eq!(log_in_on_the_page(&browser, &site, "op", &op), " ");
    assert_eq!(browser.run("return document.getElementById('who').textContent"), "op (operator)");
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    assert_eq!(
        browser.run("return [document.getElementById('commands'), document.getElementById('command-board')]"),
        json!([null, null]),
        "no command form with a free value field"
    );
    browser.wait_for(
        Duration::from_secs(20),
        "const td = document.querySelector('#hall-boards tr[data-board=\"b1\"] td.label'); if (td) td.click(); \
         return !document.getElementById('game').hidden",
    );
    browser.run(
        "document.getElementById('game-reason').value = 'resignation'; \
         document.querySelector('#game-actions .result[data-result=\"1-0\"]').click()",
    );
    browser.wait_for(
        Duration::from_secs(5),
        "const c = document.getElementById('game-confirm'); if (c.hidden) return false; c.querySelector('.yes').click(); return true",
    );
    let reply = browser.wait_for(
        Duration::from_secs(20),
        "const li = document.querySelector('#replies li:not([data-status=\"sent\"])'); return li && [li.dataset.status, li.textContent]",
    );
    assert_eq!(reply[0], "done", "{reply}\n{}", hall.log());
    let end = Instant::now() + Duration::from_secs(10);
    while !hall.pgn("b1").contains("[Result \"1-0\"]") {
        assert!(Instant::now() < end, "the PGN has the result: {}", hall.pgn("b1"));
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(hall.log().contains("console: op from 127.0.0.1: set_result on b1 (bridge hall): done"), "{}", hall.log());
    browser.screenshot(&shots.join("console.png"));

    // Log out, then an arbiter (live): the command controls disabled with
    // the reason, and a change sent anyway (a script, not the button) is
    // refused by the daemon; the PGN keeps the operator's result.
    browser.run("document.getElementById('logout').click()");
    assert_eq!(log_in_on_the_page(&browser, &site, "arbiter", &arbiter), " ");
    let controls = browser.wait_for(
        Duration::from_secs(20),
        "const flip = document.querySelector('#hall-boards tr[data-board=\"b1\"] button.flip'); \
         const why = document.getElementById('why-disabled'); return flip && [flip.disabled, !why.hidden && why.textContent]",
    );
    assert_eq!(controls[0], true);
    assert!(controls[1].as_str().unwrap().contains("live account"), "{controls}");
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    browser.screenshot(&shots.join("console-live.png"));
    let refused = browser.run(
        "return fetch('/api/command', {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json'}, \
           body: JSON.stringify({board: 'b1', command: 'set_result', result: '0-1', reason: 'arbiter'})}) \
         .then(async r => [r.status, (await r.json()).status])",
    );
    assert_eq!(refused, json!([403, "refused"]));
    // Acknowledging an alert is the arbiter's: it reaches the bridge, which
    // answers (done, or refused for an alert it does not know).
    let acknowledged = browser.run(
        "return fetch('/api/command', {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json'}, \
           body: JSON.stringify({board: 'b1', command: 'acknowledge_alert', game: 1, seq: 1})}) \
         .then(async r => [r.status, (await r.json()).status])",
    );
    assert_eq!(acknowledged[0], 200, "{acknowledged}");
    assert_ne!(acknowledged[1], "no_answer", "{acknowledged}");
    std::thread::sleep(Duration::from_secs(1));
    assert!(!hall.pgn("b1").contains("[Result \"0-1\"]"), "{}", hall.pgn("b1"));
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}

#[test]
fn the_hall_view_lists_the_boards_and_shows_one_unplugged() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port) = hall_with_console("console-hall", "");
    let alias = Alias::for_board(&hall, "b1");
    let Some(browser) = Browser::start(&hall.dir.join("chromium")) else { return };
    let op = hall.account("op", "operator");
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    game_started(&hall);
    let site = format!("http://127.0.0.1:{port}");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    assert_eq!(log_in_on_the_page(&browser, &site, "op", &op), " ");
    // b1's row: what the board is, where it is read from, connected since
    // when, and its last move from the live state.
    let row = "const r = document.querySelector('#hall-boards tr[data-board=\"b1\"]'); \
               const c = (n) => r.querySelector('.' + n).textContent;";
    let cells = browser.wait_for(
        Duration::from_secs(20),
        &format!(
            "{row} return r && r.dataset.connection == 'connected' && c('serial') != '–' && c('last') != '–' \
             && [c('label'), c('family'), c('serial'), c('port'), c('connection'), c('sync'), c('battery'), c('clock')]"
        ),
    );
    // The port as configured (here a short name for the test's
    // pseudo-terminal, so that the screenshot shows no scratch folder).
    let link = alias.path().display().to_string();
    assert!(link.starts_with("/tmp/boardcast-board-"), "{link}");
    assert_eq!(cells[0], "b1 ", "{cells}");
    assert_eq!(cells[1], "dgt", "{cells}");
    assert_eq!(cells[3], link.as_str(), "{cells}");
    assert!(cells[4].as_str().unwrap().starts_with("connectedsince "), "{cells}");
    // Sync as the public sees it (public_delay_s late).
    assert!(["in sync", "awaiting start"].contains(&cells[5].as_str().unwrap()), "{cells}");
    assert_eq!(cells[6], "cable", "{cells}");
    assert_eq!(cells[7], "attached", "a clock, its model not asked: {cells}");
    // The simulated board's clock is no DGT 3000 known to the daemon (no
    // clock_display): Identify is disabled and the row says why.
    let identify = browser.run(&format!(
        "{row} const b = r.querySelector('button.identify'); return [b.disabled, c('actions'), r.querySelector('button.flip').disabled]"
    ));
    assert_eq!(identify[0], true, "{identify}");
    assert!(identify[1].as_str().unwrap().contains("no DGT 3000 clock known on this board"), "{identify}");
    assert_eq!(identify[2], false, "an operator may flip: {identify}");
    let unassign = browser.run(&format!("{row} return !!r.querySelector('button.unassign')"));
    assert_eq!(unassign, false, "a board of the configuration file is not un-assigned in the console");
    browser.viewport(1280, 800);
    browser.screenshot(&shots.join("console-hall.png"));
    // Tablet and phone: the row becomes a card, nothing wider than the
    // screen.
    for (width, height) in [(768, 1024), (390, 844)] {
        browser.viewport(width, height);
        let wide = browser.wait_for(
            Duration::from_secs(5),
            "return document.documentElement.scrollWidth <= window.innerWidth ? [window.innerWidth] : null",
        );
        assert_eq!(wide[0], width, "{wide}");
        if width == 768 {
            browser.screenshot(&shots.join("console-hall-tablet.png"));
        }
    }
    browser.viewport(1280, 800);

    // Unplugged: the row says disconnected, since the moment it was.
    hall.unplug(&mut board, "b1");
    let gone = browser.wait_for(
        Duration::from_secs(30),
        &format!("{row} return r && r.dataset.connection == 'disconnected' && c('connection')"),
    );
    assert!(gone.as_str().unwrap().starts_with("disconnectedsince "), "{gone}\n{}", hall.log());
    stop(&mut daemon);
}
