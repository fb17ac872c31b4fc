//! The hall's remaining actions (issue 28): a hall PC started with no board
//! configured at all, only looking for boards, against `boardcast run`
//! with the managed Mosquitto and the LiveChess API, and a Millennium
//! board simulated behind a pseudo-terminal; two operators' consoles in
//! two headless Chromiums. The first uploads a round's pairings and assigns
//! the board from them; Identify lights every LED of the board (the
//! simulated board says how many the host lit); the board's log lines and
//! its capture are one click away; Un-assign takes its row out of both
//! consoles and LiveChess's e-boards, keeps its PGN, offers it again as
//! not assigned, and stays done over a restart (`config check` agrees).

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    console::{cookie, login, request as http_request},
    displays::{Browser, console_logged_in},
    security::mosquitto_installed,
    support::{
        alias::Alias,
        live::{Hall, stop, synth_events},
        mqtt::{free_port, wait_listening},
    },
};

/// Answers every confirmation yes.
const CONFIRM_YES: &str = "window.confirm = () => true;";

/// The "not assigned" row of the board's device (`/tmp/boardcast-board-<n>`).
const UNASSIGNED: &str =
    "const r = [...document.querySelectorAll('#hall-unassigned tr')].find(r => r.dataset.port == window.milPort);";

/// The hall row of board mil7.
const ROW: &str = "const r = document.querySelector('#hall-boards tr[data-board=\"mil7\"]');";

/// A round's pairings, as a pairing program's CSV.
const PAIRINGS: &str =
    "board,white,black\n7,\"Carlsen, Magnus\",\"Caruana, Fabiano\"\n8,\"Ding, Liren\",\"Nepomniachtchi, Ian\"\n";

/// A hall with no `[[boards]]` table: the managed Mosquitto, the pages and
/// the LiveChess API on free ports, ports asked for boards every second
/// (the link `mil` among them, by a short name for the screenshots).
/// Returns the hall, the pages' port, the LiveChess API's and the name.
fn empty_hall() -> (Hall, u16, u16, Alias) {
    let hall = Hall::new("console-hall-ops");
    let alias = Alias::to(&hall.link("mil"));
    let (mqtt, ws, http, livechess) = (free_port(), free_port(), free_port(), free_port());
    let config = hall.config_with_mqtt(
        &[],
        &format!(
            "[mqtt]\nbridge_id = \"hall\"\n[mqtt.embedded]\nlisten = \"127.0.0.1:{mqtt}\"\nws_listen = \"127.0.0.1:{ws}\"\n"
        ),
    );
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[http]\nenabled = false\n", &format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"))
        .replace("probe_interval_s = 0\n", "probe_interval_s = 1\n");
    let text = format!(
        "{text}[discovery]\nextra_ports = [\"{}\"]\n[livechess]\nenabled = true\nlisten = \"127.0.0.1:{livechess}\"\n",
        alias.path().display()
    );
    std::fs::write(&config, text).unwrap();
    (hall, http, livechess, alias)
}

/// `boardcast config check` with the hall's configuration: whether it
/// passed, and what it said.
fn config_check(hall: &Hall) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["config", "check", "--config"])
        .arg(hall.dir.join("boardcast.toml"))
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

/// Opens the console logged in as `account`, connected to the feed; the
/// page knows the board's device as `window.milPort`.
fn console(browser: &Browser, site: &str, account: &str, password: &str, port: &Path) {
    console_logged_in(browser, site, account, password);
    browser.open(&format!("{site}/console.html"));
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    browser.run(&format!("{CONFIRM_YES} window.milPort = {};", json!(port.display().to_string())));
}

/// The LiveChess API's e-boards (its REST answer).
fn eboards(port: u16) -> String {
    http_request(port, "GET", "/api/v1.0/eboards", &[], "").body
}

/// The newest answer under Answers once it is one of done or refused.
fn answer(browser: &Browser, what: &str) -> Value {
    browser.wait_for(
        Duration::from_secs(30),
        &format!(
            "const li = [...document.querySelectorAll('#replies li')].find(l => l.textContent.includes({what}) && l.dataset.status != 'sent'); \
             return li && [li.dataset.status, li.textContent]",
            what = json!(what)
        ),
    )
}

#[test]
fn an_operator_assigns_from_the_pairings_identifies_reads_the_log_and_capture_and_unassigns() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port, livechess, alias) = empty_hall();
    let device = alias.path().to_owned();
    // A hall PC with no board yet: the configuration passes, and says how
    // its boards will come.
    let (passed, check) = config_check(&hall);
    assert!(passed, "{check}");
    assert!(check.contains("no board configured or assigned yet"), "{check}");
    let Some(first) = Browser::start(&hall.dir.join("chromium-1")) else { return };
    let Some(second) = Browser::start(&hall.dir.join("chromium-2")) else { return };
    let op = hall.account("op", "operator");
    let op2 = hall.account("op2", "operator");
    // The Millennium board: game 5 of the file, its first move a minute of
    // the game's time after the start position (the probes read it for
    // moments before it is assigned, and must not see it play).
    let (header, mut events) = synth_events("livechess-vestland-round1.pgn", 5, "mil");
    for (t, _) in events.iter_mut().skip(1) {
        *t = *t + Duration::from_secs(60);
    }
    let capture = hall.write_capture("mil", &header, &events);
    let mut mil = hall.simulate(&capture, "mil", &["--protocol", "millennium", "--pause-while-unread"]);
    let config = hall.dir.join("boardcast.toml");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let site = format!("http://127.0.0.1:{port}");
    console(&first, &site, "op", &op, &device);
    console(&second, &site, "op2", &op2, &device);
    for browser in [&first, &second] {
        browser.wait_for(Duration::from_secs(30), &format!("{UNASSIGNED} return !!r"));
    }

    // The round's pairings, uploaded in the tournament panel: Assign offers
    // them, and choosing board 7 fills in its number, name and players.
    first.run(&format!(
        "const input = document.querySelector('#pairings-form input[type=file]'); const dt = new DataTransfer(); \
         dt.items.add(new File([{}], 'round.csv', {{type: 'text/plain'}})); input.files = dt.files; \
         input.dispatchEvent(new Event('change'));",
        json!(PAIRINGS)
    ));
    first.wait_for(Duration::from_secs(20), "return !document.getElementById('preview').hidden");
    first.run(&format!("{UNASSIGNED} r.querySelector('button.assign').click()"));
    let offered = first.wait_for(
        Duration::from_secs(5),
        "const f = document.getElementById('assign-form'); const o = [...f.pairing.options].map(o => o.textContent); \
         return !f.querySelector('.from-pairings').hidden && o.length == 3 && o",
    );
    assert!(offered[1].as_str().unwrap().contains("7: Carlsen, Magnus – Caruana, Fabiano"), "{offered}");
    let filled = first.run(
        "const f = document.getElementById('assign-form'); f.pairing.value = '7'; f.pairing.dispatchEvent(new Event('change')); \
         return [f.board.value, f.name.value, f.white.value, f.black.value]",
    );
    assert_eq!(filled, json!(["7", "board-7", "Carlsen, Magnus", "Caruana, Fabiano"]));
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");
    first.viewport(1280, 800);
    first.screenshot(&shots.join("console-assign-pairings.png"));
    first.run("const f = document.getElementById('assign-form'); f.name.value = 'mil7'; f.requestSubmit();");
    let said = first.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('assign-form'); return f.dataset.status && [f.dataset.status, f.querySelector('.why').textContent]",
    );
    assert_eq!(said[0], "done", "{said}\n{}", hall.log());
    let state_file = hall.dir.join("assigned-boards.json");
    assert!(std::fs::read_to_string(&state_file).unwrap().contains("\"Carlsen, Magnus\""));

    // Both consoles show the board read, connected.
    for browser in [&first, &second] {
        browser.wait_for(
            Duration::from_secs(30),
            &format!("{ROW} return r && r.dataset.connection == 'connected' && r.querySelector('.family').textContent == 'millennium'"),
        );
    }
    assert!(eboards(livechess).contains("mil7"), "LiveChess lists the board: {}", eboards(livechess));

    // Identify: every LED of the board lit for 5 s, then the game's again.
    let identify = first.wait_for(
        Duration::from_secs(10),
        &format!("{ROW} const b = r.querySelector('button.identify'); return !b.disabled && b.title"),
    );
    assert!(identify.as_str().unwrap().contains("LED"), "{identify}");
    first.run(&format!("{ROW} r.querySelector('button.identify').click()"));
    let done = answer(&first, "mil7: identify");
    assert_eq!(done[0], "done", "{done}");
    assert!(done[1].as_str().unwrap().contains("every LED of the board lit for 5 s"), "{done}");
    let end = Instant::now() + Duration::from_secs(10);
    while !hall.simulate_log("mil").contains("the host lit 81 LED(s)") {
        assert!(Instant::now() < end, "the board's LEDs: {}", hall.simulate_log("mil"));
        std::thread::sleep(Duration::from_millis(100));
    }
    let end = Instant::now() + Duration::from_secs(15);
    loop {
        let log = hall.simulate_log("mil");
        let after = &log[log.find("the host lit 81 LED(s)").unwrap()..];
        if after.lines().skip(1).any(|l| l.contains("the host lit") && !l.contains(" 81 ")) {
            break;
        }
        assert!(Instant::now() < end, "the LEDs went back to the game's: {log}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // The board's log lines, one click away.
    first.run(&format!("{ROW} r.querySelector('button.log').click()"));
    let lines = first.wait_for(
        Duration::from_secs(10),
        "const p = document.getElementById('board-log'); return !p.hidden && p.dataset.lines && p.querySelector('pre').textContent",
    );
    assert!(lines.as_str().unwrap().contains("recording to"), "{lines}");
    // The capture, a download for a logged-in console; nobody else's.
    let capture_link = first
        .run(&format!("{ROW} const a = r.querySelector('a.capture'); return a.hasAttribute('download') && a.href"));
    assert!(capture_link.as_str().unwrap().ends_with("/api/board/capture?board=mil7"), "{capture_link}");
    let session = cookie(&login(port, "op2", &op2));
    let download = http_request(port, "GET", "/api/board/capture?board=mil7", &[("Cookie", session.as_str())], "");
    assert_eq!(download.status, 200, "{}", download.body);
    assert!(download.header("content-disposition").is_some_and(|d| d.starts_with("attachment; filename=\"mil7-")));
    assert!(download.body.lines().next().unwrap().contains("millennium"), "the capture's header: {}", download.body);
    let stranger = http_request(port, "GET", "/api/board/capture?board=mil7", &[], "");
    assert_eq!(stranger.status, 401, "{}", stranger.body);

    // The hall with the board's actions and its log shown, on a desk and a
    // tablet (nothing wider than the screen).
    first.viewport(1280, 800);
    first.screenshot(&shots.join("console-hall-ops.png"));
    first.viewport(768, 1024);
    let wide = first.wait_for(
        Duration::from_secs(5),
        "return document.documentElement.scrollWidth <= window.innerWidth ? [window.innerWidth] : null",
    );
    assert_eq!(wide[0], 768, "{wide}");
    first.screenshot(&shots.join("console-hall-ops-tablet.png"));
    first.viewport(1280, 800);

    // Its game goes on into its PGN file.
    let end = Instant::now() + Duration::from_secs(60);
    while !hall.pgn("7").contains("1. ") {
        assert!(Instant::now() < end, "the assigned board's PGN: {}", hall.log());
        std::thread::sleep(Duration::from_millis(200));
    }

    // Un-assign, by the first operator: the row leaves both consoles, the
    // board is offered again as not assigned, LiveChess lists it no more,
    // its PGN is kept.
    first.run(&format!("{ROW} r.querySelector('button.unassign').click()"));
    let done = answer(&first, "mil7: unassign");
    assert_eq!(done[0], "done", "{done}\n{}", hall.log());
    for browser in [&first, &second] {
        browser.wait_for(Duration::from_secs(20), &format!("{ROW} return !r"));
        browser.wait_for(Duration::from_secs(30), &format!("{UNASSIGNED} return !!r"));
    }
    let pgn = hall.pgn("7");
    assert!(pgn.contains("[White \"Carlsen, Magnus\"]") && pgn.contains("1. "), "{pgn}");
    assert!(!std::fs::read_to_string(&state_file).unwrap().contains("mil7"), "the state file keeps it no more");
    assert!(!eboards(livechess).contains("mil7"), "LiveChess lists it no more: {}", eboards(livechess));
    // Asked again (a script): refused, with the reason.
    let again = first.run(
        "return fetch('/api/unassign', {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json'}, \
           body: JSON.stringify({board: 'mil7'})}).then(async r => [r.status, (await r.json()).reason])",
    );
    assert_eq!(again[0], 409, "{again}");
    assert!(again[1].as_str().unwrap().contains("no board called \"mil7\" is assigned here"), "{again}");
    // `ctl` says so too: nothing of that name is assigned now.
    let password_file = hall.dir.join("op.password");
    std::fs::write(&password_file, format!("{op}\n")).unwrap();
    let password_file = password_file.display().to_string();
    let ctl = |args: &[&str]| {
        let mut all = vec!["--user", "op", "--password-file", password_file.as_str()];
        all.extend_from_slice(args);
        hall.ctl(&all)
    };
    let (status, said) = ctl(&["mil7", "unassign"]);
    assert_eq!(status, 1, "{said}");
    assert!(said.contains("no board called \"mil7\" is assigned here"), "{said}");

    // From the command line: assigned again, identified, un-assigned; the
    // consoles follow.
    let device_text = device.display().to_string();
    let (status, said) =
        ctl(&["mil7", "assign-board", "--family", "millennium", "--port", &device_text, "--label", "7"]);
    assert_eq!(status, 0, "{said}\n{}", hall.log());
    assert!(said.contains("board mil7 (millennium at"), "{said}");
    second.wait_for(Duration::from_secs(30), &format!("{ROW} return r && r.dataset.connection == 'connected'"));
    let (status, said) = ctl(&["mil7", "identify"]);
    assert_eq!((status, said.trim()), (0, "every LED of the board lit for 5 s"), "{said}");
    let (status, said) = ctl(&["mil7", "unassign"]);
    assert_eq!(status, 0, "{said}");
    assert!(said.contains("un-assigned: no longer read"), "{said}");
    second.wait_for(Duration::from_secs(20), &format!("{ROW} return !r"));
    let pgn = hall.pgn("7");

    // A restart: the board is still not assigned.
    stop(&mut daemon);
    let (passed, check) = config_check(&hall);
    assert!(passed && check.contains("no board configured or assigned yet"), "{check}");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    console(&second, &site, "op2", &op2, &device);
    second.wait_for(Duration::from_secs(30), &format!("{UNASSIGNED} return !!r"));
    assert_eq!(second.run(&format!("{ROW} return !r")), true);
    assert_eq!(hall.pgn("7"), pgn, "the PGN is left as it was");
    let _ = mil.kill();
    let _ = mil.wait();
    stop(&mut daemon);
}
