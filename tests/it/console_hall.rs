//! The console's hall with a board plugged in but not configured (issue
//! 28, items 2, 3 and 6), against `boardcast run` with the managed
//! Mosquitto, a configured DGT board and an unconfigured Millennium board,
//! each simulated behind a pseudo-terminal speaking its protocol byte for
//! byte, in headless Chromium: the Millennium board appears as "not
//! assigned"; a `live` account's Assign is disabled and the daemon refuses
//! it anyway; an operator assigns it (number, name, players) and its game
//! reaches its PGN file and the live feed; after a restart (SIGTERM, start
//! again) the assignment and its players are still there, and `config
//! check` names the state file and the board it adds; public accounts and
//! anonymous clients never read the list of boards found. The DGT board's Sync
//! is the live one, not the public status's, 60 s late.

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    console::{cookie, login, request as http_request},
    displays::{Browser, console_logged_in},
    security::{GAMES, game_started, hall_with_broker, mosquitto_installed, runtime},
    support::{
        live::{Hall, game_san, pgn_moves, stop, synth_events, wait},
        mqtt::{Subscriber, free_port, wait_listening},
    },
};

/// The state file of the hall's configuration.
fn state_file(hall: &Hall) -> std::path::PathBuf {
    hall.dir.join("assigned-boards.json")
}

/// A hall with the console on a free port, board b1 (DGT) configured, the
/// link `mil` asked for boards every second, and the public tree 60 s late.
fn hall_with_an_unconfigured_board(name: &str) -> (Hall, u16, u16) {
    let (hall, mqtt, _) = hall_with_broker(name, "");
    let port = free_port();
    let config = hall.dir.join("boardcast.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[http]\nenabled = false\n", &format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"))
        .replace("probe_interval_s = 0\n", "probe_interval_s = 1\n")
        .replace("[mqtt]\nbridge_id = \"hall\"\n", "[mqtt]\nbridge_id = \"hall\"\npublic_delay_s = 60\n");
    let text = format!("{text}[discovery]\nextra_ports = [\"{}\"]\n", hall.link("mil").display());
    std::fs::write(&config, text).unwrap();
    (hall, port, mqtt)
}

/// Opens the console logged in as `account`.
fn console(browser: &Browser, site: &str, account: &str, password: &str) {
    console_logged_in(browser, site, account, password);
    browser.open(&format!("{site}/console.html"));
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
}

/// The "not assigned" row of the link `mil`, once the daemon offers it.
const UNASSIGNED: &str =
    "const r = [...document.querySelectorAll('#hall-unassigned tr')].find(r => r.dataset.port.endsWith('/mil.tty'));";

/// `boardcast config check` with the hall's configuration: what it said.
fn config_check(hall: &Hall) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["config", "check", "--config"])
        .arg(hall.dir.join("boardcast.toml"))
        .output()
        .unwrap();
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn post_assign(browser: &Browser, request: &Value) -> Value {
    browser.run(&format!(
        "return fetch('/api/assign', {{method: 'POST', credentials: 'same-origin', headers: {{'Content-Type': 'application/json'}}, \
           body: JSON.stringify({request})}}).then(async r => [r.status, (await r.json()).status])"
    ))
}

#[test]
fn an_unconfigured_board_is_assigned_in_the_console_and_stays_assigned_after_a_restart() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, mqtt) = hall_with_an_unconfigured_board("console-assign");
    let Some(browser) = Browser::start(&hall.dir.join("chromium")) else { return };
    let op = hall.account("op", "operator");
    let arbiter = hall.account("arbiter", "live");
    let tv = hall.account("tv", "public");
    // The Millennium board: game 5 of the file, its first move two minutes
    // of the game's time after the start position (12 s read at the test's
    // speed): the daemon's probes read it for moments before it is
    // assigned, and must not see it play.
    let file = "livechess-vestland-round1.pgn";
    let (header, mut events) = synth_events(file, 5, "mil");
    for (t, _) in events.iter_mut().skip(1) {
        *t = *t + Duration::from_secs(120);
    }
    let capture = hall.write_capture("mil", &header, &events);
    let mut mil = hall.simulate(&capture, "mil", &["--protocol", "millennium", "--pause-while-unread"]);
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let b1_capture = hall.synth_capture(GAMES, 0, "b1");
    let mut b1 = hall.simulate(&b1_capture, "b1", &[]);
    game_started(&hall);
    let site = format!("http://127.0.0.1:{port}");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    // An arbiter: the board is offered, with what it told, but Assign is
    // disabled; sent anyway (a script, not the button), the daemon refuses.
    console(&browser, &site, "arbiter", &arbiter);
    let row = browser.wait_for(
        Duration::from_secs(30),
        &format!(
            "{UNASSIGNED} const c = (n) => r.querySelector('.' + n).textContent; \
             return r && [c('label'), c('family'), c('serial'), c('firmware'), r.querySelector('button.assign').disabled, c('actions')]"
        ),
    );
    assert_eq!(row[0], "not assigned", "{row}");
    assert_eq!(row[1], "millennium", "{row}");
    assert_eq!(row[3].as_str().map(|f| f != "–"), Some(true), "its firmware version: {row}");
    assert_eq!(row[4], true, "{row}");
    assert!(row[5].as_str().unwrap().contains("only an operator account may"), "{row}");
    // The list is on the live tree: an arbiter's account reads it, a public
    // account and an anonymous client do not.
    let runtime = runtime();
    let filter = "boardcast/v1/live/unassigned/#";
    let live = Subscriber::start_as(&runtime, mqtt, filter, "t-live", "arbiter", &arbiter);
    let public = Subscriber::start_as(&runtime, mqtt, filter, "t-public", "tv", &tv);
    let anonymous = Subscriber::start(&runtime, mqtt, filter, "t-anonymous");
    assert!(
        live.wait_for(Duration::from_secs(10), |r| r.iter().any(|m| m.json["boards"][0]["family"] == "millennium")),
        "{:?}",
        live.received().iter().map(|m| m.json.clone()).collect::<Vec<_>>()
    );
    for (who, subscriber) in [("public", &public), ("anonymous", &anonymous)] {
        assert!(subscriber.wait_subscribed(Duration::from_secs(10)), "{who} subscribed");
        // A retained message comes right after the subscription, if at all.
        std::thread::sleep(Duration::from_millis(500));
        assert!(subscriber.received().is_empty(), "{who} read the list of boards not assigned");
    }
    // b1's Sync is the live one: in sync since its first move, while the
    // public status still says awaiting the start for a minute.
    let sync = browser.wait_for(
        Duration::from_secs(20),
        "const r = document.querySelector('#hall-boards tr[data-board=\"b1\"]'); return r && r.querySelector('.sync').textContent == 'in sync' && 'in sync'",
    );
    assert_eq!(sync, "in sync");
    let link = hall.link("mil").display().to_string();
    let request = json!({"family": "millennium", "port": link, "board": "7", "name": "mil7"});
    let refused = post_assign(&browser, &request);
    assert_eq!((refused[0].clone(), refused[1].clone()), (json!(403), json!("refused")), "{refused}");
    assert!(!state_file(&hall).exists(), "nothing written for a live account");

    // The operator assigns it: number 7, named mil7, with its players.
    browser.run("document.getElementById('logout').click()");
    console(&browser, &site, "op", &op);
    browser.wait_for(
        Duration::from_secs(30),
        &format!("{UNASSIGNED} return r && !r.querySelector('button.assign').disabled"),
    );
    // A name another board has: refused with the reason, nothing kept.
    let clash = post_assign(&browser, &json!({"family": "millennium", "port": link, "board": "9", "name": "b1"}));
    assert_eq!((clash[0].clone(), clash[1].clone()), (json!(409), json!("refused")), "{clash}");
    assert!(!state_file(&hall).exists(), "nothing written for a refused board");
    // Without the page's Origin (another site's page, a script): refused
    // before anything else, as every change.
    let session = cookie(&login(port, "op", &op));
    let body = json!({"family": "millennium", "port": link, "board": "7"}).to_string();
    let foreign = http_request(
        port,
        "POST",
        "/api/assign",
        &[("Cookie", session.as_str()), ("Origin", "http://evil.example")],
        &body,
    );
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert!(!state_file(&hall).exists(), "nothing written for another site's page");
    // A device the daemon found no board on: refused.
    let elsewhere = post_assign(&browser, &json!({"family": "millennium", "port": "/dev/null", "board": "9"}));
    assert_eq!((elsewhere[0].clone(), elsewhere[1].clone()), (json!(409), json!("refused")), "{elsewhere}");
    browser.run(&format!("{UNASSIGNED} r.querySelector('button.assign').click()"));
    browser.run(
        "const f = document.getElementById('assign-form'); f.board.value = '7'; f.name.value = 'mil7'; \
         f.white.value = 'Carlsen, Magnus'; f.black.value = 'Caruana, Fabiano';",
    );
    browser.viewport(1280, 800);
    browser.screenshot(&shots.join("console-assign.png"));
    browser.viewport(768, 1024);
    let wide = browser.wait_for(
        Duration::from_secs(5),
        "return document.documentElement.scrollWidth <= window.innerWidth ? [window.innerWidth] : null",
    );
    assert_eq!(wide[0], 768, "{wide}");
    browser.screenshot(&shots.join("console-assign-tablet.png"));
    browser.viewport(1280, 800);
    browser.run("document.getElementById('assign-form').requestSubmit()");
    let said = browser.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('assign-form'); return f.dataset.status && [f.dataset.status, f.querySelector('.why').textContent, document.querySelector('#replies li')?.textContent]",
    );
    assert_eq!(said[0], "done", "{said}\n{}", hall.log());
    assert!(said[2].as_str().unwrap().contains("board mil7 (millennium at"), "{said}");
    let state = std::fs::read_to_string(state_file(&hall)).unwrap();
    assert!(state.contains("\"Carlsen, Magnus\"") && state.contains("\"mil7\""), "{state}");

    // Its game starts without a restart: its row in the hall, with its
    // last move from the live feed, and its PGN file.
    let moved = browser.wait_for(
        Duration::from_secs(60),
        "const r = document.querySelector('#hall-boards tr[data-board=\"mil7\"]'); \
         return r && r.querySelector('.last').textContent != '–' && [r.querySelector('.label').textContent, r.querySelector('.family').textContent]",
    );
    assert_eq!(moved[1], "millennium", "{moved}");
    assert!(moved[0].as_str().unwrap().starts_with('7'), "{moved}");
    assert_eq!(
        browser.run(&format!("{UNASSIGNED} return !r")),
        true,
        "no longer offered once assigned: {}",
        hall.log()
    );
    let end = Instant::now() + Duration::from_secs(30);
    while !hall.pgn("7").contains("1. ") {
        assert!(Instant::now() < end, "the assigned board's PGN: {}", hall.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(hall.pgn("7").contains("[White \"Carlsen, Magnus\"]"), "{}", hall.pgn("7"));

    // A restart: SIGTERM, start again. The board is read again from its
    // assignment, with its players; its game goes on to the end.
    stop(&mut daemon);
    let check = config_check(&hall);
    assert!(check.contains(&state_file(&hall).display().to_string()), "{check}");
    assert!(check.contains("adds board(s) mil7"), "{check}");
    assert!(check.contains("board mil7: millennium at") && check.contains("(assigned in the console)"), "{check}");
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    assert!(wait(&mut mil, Duration::from_secs(240)), "the Millennium game ended: {}", hall.simulate_log("mil"));
    console(&browser, &site, "op", &op);
    let row = browser.wait_for(
        Duration::from_secs(30),
        "const r = document.querySelector('#hall-boards tr[data-board=\"mil7\"]'); return r && r.querySelector('.label').textContent",
    );
    assert!(row.as_str().unwrap().starts_with('7'), "{row}");
    let pgn = hall.pgn("7");
    assert!(pgn.contains("[White \"Carlsen, Magnus\"]") && pgn.contains("[Black \"Caruana, Fabiano\"]"), "{pgn}");
    assert_eq!(pgn_moves(&pgn), [game_san(file, 5)], "{}", hall.log());
    let log = hall.log();
    assert!(log.contains("console: op assigned board mil7"), "{log}");
    let _ = b1.kill();
    let _ = b1.wait();
    stop(&mut daemon);
}
