//! The console's tournament panel (issue 28, item 3), in headless Chromium
//! against the real daemon with its managed Mosquitto and a simulated
//! board: a bad pairings file shows its line and problem and sends
//! nothing; a good TRF16 report gives a preview, from which the round
//! starts on the board with its players; a board's players are edited in
//! its row; Next round takes the next round of the same file; a restart of
//! the daemon keeps the round and the players; a `live` account's start of
//! a round is refused by the daemon itself. Screenshots of the panel at
//! desk and tablet sizes go to docs/displays/.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use boardcast_core::pairings::Pairings;
use serde_json::{Value, json};

use crate::{
    displays::{Browser, console_logged_in},
    security::{GAMES, hall_with_broker, mosquitto_installed},
    support::{
        alias::Alias,
        live::{Hall, stop},
        mqtt::{free_port, wait_listening},
    },
};

/// The report: 32 players, rounds 1 to 4 (tests/fixtures/pairings/SOURCE.md).
const TRF: &str = include_str!("../fixtures/pairings/ch-rus-hl-w-2012-round4.trf");

/// A CSV whose third line has an Elo that is not a number.
const BAD_CSV: &str = "board,white,black,white_elo\n1,\"Aa, Bb\",\"Cc, Dd\",2400\n2,\"Ee, Ff\",\"Gg, Hh\",strong\n";

/// A hall with the managed Mosquitto, board `b1` (board number 1) and the
/// pages on a free port; no public delay, so that the PGN is served at once.
/// The tournament's site and time control are `[broadcast]`'s; b1 has a
/// time control of its own.
pub(crate) fn hall_with_console(name: &str) -> (Hall, u16) {
    let (hall, _, _) = hall_with_broker(name, "");
    let port = free_port();
    let config = hall.dir.join("boardcast.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[mqtt]\nbridge_id = \"hall\"\n", "[mqtt]\nbridge_id = \"hall\"\npublic_delay_s = 0\n")
        .replace("[http]\nenabled = false\n", &format!("[http]\nlisten = \"127.0.0.1:{port}\"\n"));
    let text = format!("[broadcast]\nsite = \"Hall A\"\ntime_control = \"5400+30\"\n{text}time_control = \"5400\"\n");
    std::fs::write(&config, text).unwrap();
    (hall, port)
}

/// Gives the panel's file input a file with `text`, as a person picking it.
fn upload(browser: &Browser, name: &str, text: &str) {
    browser.run(&format!(
        "const input = document.querySelector('#pairings-form input[type=file]'); const dt = new DataTransfer(); \
         dt.items.add(new File([{}], {}, {{type: 'text/plain'}})); input.files = dt.files; \
         input.dispatchEvent(new Event('change'));",
        json!(text),
        json!(name)
    ));
}

/// Answers every confirmation yes, and keeps the questions asked.
const CONFIRM_YES: &str = "window.asked = []; window.confirm = (q) => { window.asked.push(q); return true; };";

/// The newest answer in the panel's replies once the daemon gave it:
/// `[status, text]`.
fn reply(browser: &Browser, count: usize) -> Value {
    browser.wait_for(
        Duration::from_secs(30),
        &format!(
            "const all = document.querySelectorAll('#round-replies > li'); \
             const li = all[0]; return all.length == {count} && li.dataset.status != 'sent' && [li.dataset.status, li.textContent]"
        ),
    )
}

/// Board b1's row in the panel: `[round, white, black]` once `check` (JS
/// over `r`, the row's cells) holds.
fn row_when(browser: &Browser, check: &str) -> Value {
    browser.wait_for(
        Duration::from_secs(30),
        &format!(
            "const tr = document.querySelector('#round-boards tr[data-board=\"b1\"]'); if (!tr) return null; \
             const r = ['round', 'white', 'black'].map((c) => tr.querySelector('.' + c)?.textContent); \
             return ({check}) && r"
        ),
    )
}

/// The players of board 1 in round `round` of the report.
fn board_one(round: &str) -> (String, String) {
    let pairings = Pairings::parse(TRF).unwrap().round(round).unwrap();
    let one = pairings.iter().find(|p| p.board == 1).unwrap();
    (one.white.name.clone(), one.black.name.clone())
}

/// A board's PGN file of `round` once it holds a move.
fn round_pgn_with_a_move(hall: &Hall, round: &str) -> String {
    let file = hall.dir.join(format!("pgn/event/round-{round}/game-b1.pgn"));
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        if text.contains("1. ") {
            return text;
        }
        assert!(Instant::now() < end, "a game of round {round} on b1: {}", hall.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_operator_previews_pairings_starts_rounds_and_edits_players_which_survive_a_restart() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, port) = hall_with_console("console-round");
    let _alias = Alias::for_board(&hall, "b1");
    let Some(browser) = Browser::start(&hall.dir.join("chromium")) else { return };
    let op = hall.account("op", "operator");
    let arbiter = hall.account("arbiter", "live");
    let config = hall.dir.join("boardcast.toml");
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let site = format!("http://127.0.0.1:{port}");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    console_logged_in(&browser, &site, "op", &op);
    browser.open(&format!("{site}/console.html"));
    // The event as configured, round 1 before any other: the tournament's
    // site and time control, not the first board's.
    let facts = browser.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('tournament-facts'); \
         return f && f.querySelector('.round')?.textContent == '1' \
           && ['.event', '.site', '.time-control'].map((c) => f.querySelector(c).textContent)",
    );
    assert_eq!(facts, json!(["event", "Hall A", "5400+30"]));
    row_when(&browser, "true");
    browser.run(CONFIRM_YES);

    // A bad file: its line and problem on the page, nothing sent.
    upload(&browser, "bad.csv", BAD_CSV);
    let problem = browser.wait_for(
        Duration::from_secs(10),
        "const p = document.getElementById('pairings-problem'); return !p.hidden && [p.dataset.line, p.textContent]",
    );
    assert_eq!(problem[0], "3", "{problem}");
    assert!(problem[1].as_str().unwrap().contains("strong"), "{problem}");
    assert_eq!(browser.run("return document.getElementById('preview').hidden"), true);
    assert_eq!(browser.run("return document.querySelectorAll('#round-replies li').length"), 0);
    assert!(!hall.log().contains("next_round"), "nothing sent: {}", hall.log());

    // The report: its last round previewed, then round 3 chosen; board 1
    // is b1's, the other fifteen pairings have no board here.
    upload(&browser, "ch-rus-hl-w-2012.trf", TRF);
    let summary = browser.wait_for(
        Duration::from_secs(10),
        "return !document.getElementById('preview').hidden && document.getElementById('preview-summary').textContent",
    );
    assert!(summary.as_str().unwrap().contains("rounds 1, 2, 3, 4; round 4"), "{summary}");
    browser.run(
        "const r = document.querySelector('#pairings-form input[name=round]'); r.value = '3'; r.dispatchEvent(new Event('change'));",
    );
    let (white3, black3) = board_one("3");
    let first = browser.wait_for(
        Duration::from_secs(10),
        "const tr = document.querySelector('#preview-pairings tr[data-board=\"1\"]'); \
         return document.getElementById('start-round').textContent == 'Start round 3' && tr \
           && [tr.querySelector('.on').textContent, tr.querySelector('.white').textContent, tr.querySelector('.black').textContent, \
               document.getElementById('preview-left-over').textContent]",
    );
    assert_eq!(first[0], "b1", "{first}");
    assert!(first[1].as_str().unwrap().contains(&white3), "{first}");
    assert!(first[2].as_str().unwrap().contains(&black3), "{first}");
    assert!(first[3].as_str().unwrap().contains("pairings of boards not here: 2, 3"), "{first}");
    browser.viewport(1280, 900);
    browser.screenshot(&shots.join("console-round-preview.png"));
    assert_eq!(
        browser.run("return document.querySelectorAll('#round-replies li').length"),
        0,
        "a preview sends nothing"
    );

    // Start round 3, after a confirmation: the daemon's answer per board.
    browser.run("document.getElementById('start-round').click()");
    let done = reply(&browser, 1);
    assert_eq!(done[0], "done", "{done}\n{}", hall.log());
    let said = done[1].as_str().unwrap();
    assert!(said.contains(&format!("the board's next games are round 3: {white3} - {black3}")), "{done}");
    assert!(said.contains("no board here for the pairings of board(s) 2"), "{done}");
    assert_eq!(browser.run("return document.getElementById('preview').hidden"), true, "not to be started twice");
    let asked = browser.run("return window.asked");
    assert!(asked[0].as_str().unwrap().contains("Start round 3"), "{asked}");
    // Round 3's players on the board's line at once, before its game has
    // begun (in italics: the board waits for it); the delivery's address is
    // round 3's, not served before a game of it is public.
    let waiting = row_when(
        &browser,
        &format!(
            "r[0] == '3' && r[1].includes({}) && r[2].includes({}) && tr.classList.contains('next')",
            json!(white3),
            json!(black3)
        ),
    );
    assert!(waiting[1].as_str().unwrap().contains(&white3), "{waiting}");
    let current = browser.wait_for(
        Duration::from_secs(20),
        "const li = document.querySelector('#delivery li.current'); return li && li.textContent",
    );
    let current = current.as_str().unwrap();
    assert!(current.contains("/pgn/event/round-3/games.pgn") && current.contains("not served yet"), "{current}");

    // White's player changed in the row (set_tags, after a confirmation);
    // the fields left alone are not sent, so Black stays the pairing's.
    browser.run(
        "const tr = document.querySelector('#round-boards tr[data-board=\"b1\"]'); tr.querySelector('button.edit').click(); \
         const f = tr.querySelector('form.players'); f.White.value = 'Kosteniuk, Alexandra'; f.WhiteElo.value = '2525'; \
         f.WhiteTitle.value = 'GM'; tr.querySelector('button.save').click();",
    );
    let edited = reply(&browser, 2);
    assert_eq!(edited[0], "done", "{edited}\n{}", hall.log());

    // A game on the board: round 3, the edited White, the pairing's Black,
    // in its PGN file and in the panel (from the live state).
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let pgn = round_pgn_with_a_move(&hall, "3");
    for tag in [
        "[Round \"3\"]".to_owned(),
        "[White \"Kosteniuk, Alexandra\"]".into(),
        "[WhiteElo \"2525\"]".into(),
        "[WhiteTitle \"GM\"]".into(),
        format!("[Black \"{black3}\"]"),
    ] {
        assert!(pgn.contains(&tag), "{tag} in {pgn}");
    }
    let row = row_when(&browser, "r[0] == '3' && r[1].includes('Kosteniuk')");
    assert_eq!(row[1], "GM Kosteniuk, Alexandra (2525)", "{row}");
    assert!(row[2].as_str().unwrap().contains(&black3), "{row}");

    // The delivery: the round's PGN address, served, with a copy button.
    let address = browser.wait_for(
        Duration::from_secs(30),
        "const a = [...document.querySelectorAll('#delivery li.pgn a')].find((a) => a.href.endsWith('/pgn/event/round-3/games.pgn')); \
         return a && a.parentElement.querySelector('button.copy') && a.href",
    );
    let served = browser.run(&format!("return fetch({address}).then((r) => r.text())"));
    assert!(served.as_str().unwrap().contains("[White \"Kosteniuk, Alexandra\"]"), "{served}");

    // Next round: round 4 of the same file; then its Black edited.
    browser.run("document.getElementById('next-round').click()");
    let next = reply(&browser, 3);
    assert_eq!(next[0], "done", "{next}\n{}", hall.log());
    let (white4, black4) = board_one("4");
    assert!(next[1].as_str().unwrap().contains(&format!("round 4: {white4} - {black4}")), "{next}");
    row_when(&browser, &format!("r[0] == '4' && r[1].includes({}) && r[2].includes({})", json!(white4), json!(black4)));
    // The delivery switched to round 4; round 3's address is an earlier one.
    let switched = browser.wait_for(
        Duration::from_secs(20),
        "const now = document.querySelector('#delivery li.current a'); \
         const before = [...document.querySelectorAll('#delivery li.earlier a')].map((a) => a.href); \
         return now && now.href.endsWith('/pgn/event/round-4/games.pgn') && [now.href, before]",
    );
    assert!(
        switched[1].as_array().unwrap().iter().any(|a| a.as_str().unwrap().ends_with("/round-3/games.pgn")),
        "{switched}"
    );
    browser.run(
        "const tr = document.querySelector('#round-boards tr[data-board=\"b1\"]'); tr.querySelector('button.edit').click(); \
         const f = tr.querySelector('form.players'); f.Black.value = 'Gunina, Valentina'; tr.querySelector('button.save').click();",
    );
    assert_eq!(reply(&browser, 4)[0], "done");
    browser.run("document.getElementById('tournament').scrollIntoView()");
    browser.screenshot(&shots.join("console-round.png"));
    browser.viewport(768, 1024);
    let wide = browser.wait_for(
        Duration::from_secs(5),
        "return document.documentElement.scrollWidth <= window.innerWidth ? [window.innerWidth] : null",
    );
    assert_eq!(wide[0], 768, "{wide}");
    browser.run("document.getElementById('tournament').scrollIntoView()");
    browser.screenshot(&shots.join("console-round-tablet.png"));
    browser.viewport(1280, 900);

    // The daemon restarted, then a new game on the board: still round 4,
    // with round 4's White and the edited Black.
    hall.unplug(&mut board, "b1");
    stop(&mut daemon);
    let mut daemon = hall.run(&config);
    assert!(wait_listening(port, Duration::from_secs(20)), "{}", hall.log());
    let capture = hall.synth_capture(GAMES, 1, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let pgn = round_pgn_with_a_move(&hall, "4");
    for tag in ["[Round \"4\"]".to_owned(), format!("[White \"{white4}\"]"), "[Black \"Gunina, Valentina\"]".into()] {
        assert!(pgn.contains(&tag), "{tag} in {pgn}\n{}", hall.log());
    }
    console_logged_in(&browser, &site, "op", &op);
    browser.open(&format!("{site}/console.html"));
    let row = row_when(&browser, "r[0] == '4' && r[2].includes('Gunina')");
    assert!(row[1].as_str().unwrap().contains(&white4), "{row}");

    // A live account: the controls disabled with the reason, and a start
    // sent anyway (a script) refused by the daemon; no preview either.
    browser.run("document.getElementById('logout').click()");
    std::thread::sleep(Duration::from_millis(500));
    console_logged_in(&browser, &site, "arbiter", &arbiter);
    browser.open(&format!("{site}/console.html"));
    let why = browser.wait_for(
        Duration::from_secs(20),
        "const w = document.getElementById('why-no-round'); return w && !w.hidden && [w.textContent, document.getElementById('next-round').disabled]",
    );
    assert!(why[0].as_str().unwrap().contains("live account"), "{why}");
    assert_eq!(why[1], true, "{why}");
    let refused = browser.run(
        "return fetch('/api/command', {method: 'POST', credentials: 'same-origin', headers: {'Content-Type': 'application/json'}, \
           body: JSON.stringify({board: '*', command: 'next_round', round: '5'})}).then(async r => [r.status, (await r.json()).status])",
    );
    assert_eq!(refused, json!([403, "refused"]));
    let preview = browser.run(&format!(
        "return fetch('/api/pairings', {{method: 'POST', credentials: 'same-origin', headers: {{'Content-Type': 'application/json'}}, \
           body: JSON.stringify({{text: {}}})}}).then(r => r.status)",
        json!(TRF)
    ));
    assert_eq!(preview, 403);
    assert!(
        hall.log().contains("console: arbiter (live) from 127.0.0.1 was refused next_round on *"),
        "{}",
        hall.log()
    );
    let _ = board.kill();
    let _ = board.wait();
    stop(&mut daemon);
}
