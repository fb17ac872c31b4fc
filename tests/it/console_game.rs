//! The operator console's game and alert views (issue 28, items 4, 5 and
//! 7), in headless Chromium against `boardcast run` with its managed
//! Mosquitto and a simulated board: the board plays ten plies and the
//! player then puts the tenth back, so the board is out of sync and an
//! alert comes. The operator sees the banner and the alert (its tone
//! started, the kind filter, the evidence stepped through), opens the
//! board's game from the hall, takes the move back with a confirmation,
//! acknowledges the alert, enters the move again by dragging it on the
//! board (legal squares from the daemon's `/api/legal`), sets a result,
//! has a bad FEN refused, sets a position, drags a promotion (choosing its
//! piece) and corrects its piece with Promote; each change is checked in
//! the PGN file or on the feed. Screenshots at desktop, tablet and phone sizes.

use std::{
    path::Path,
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use shakmaty::{Chess, Position, san::SanPlus};

use crate::{
    displays::{Browser, console_logged_in},
    operator::ten_plies_then_one_taken_back,
    security::{hall_with_broker, mosquitto_installed, runtime},
    support::{
        live::{Hall, pgn_moves, stop},
        mqtt::{Received, Subscriber, free_port, wait_listening},
    },
};

/// A hall with the managed Mosquitto (its MQTT port returned) and the
/// pages on a free port (returned second).
fn hall_with_console(name: &str) -> (Hall, u16, u16) {
    let (hall, mqtt, _) = hall_with_broker(name, "");
    let http = free_port();
    let config = hall.dir.join("boardcast.toml");
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace("[http]\nenabled = false\n", &format!("[http]\nlisten = \"127.0.0.1:{http}\"\n"));
    std::fs::write(&config, text).unwrap();
    (hall, mqtt, http)
}

/// The latest live state of b1 on the feed.
fn state(received: &[Received]) -> Value {
    received.iter().rfind(|r| r.topic.ends_with("/b1/state")).map(|r| r.json.clone()).unwrap_or_default()
}

/// Waits until the PGN file of b1 satisfies `done`.
fn pgn_until(hall: &Hall, what: &str, done: impl Fn(&str) -> bool) -> String {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let pgn = hall.pgn("b1");
        if done(&pgn) {
            return pgn;
        }
        assert!(Instant::now() < end, "the PGN file {what}:\n{pgn}\n{}", hall.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Clicks the confirmation's Yes and waits for the daemon's answer shown
/// in the game view: [status, words].
fn confirm_and_answer(browser: &Browser) -> Value {
    browser.run("document.querySelector('#game-confirm .yes').click()");
    browser.wait_for(
        Duration::from_secs(20),
        "const p = document.getElementById('game-answer'); \
         return p.dataset.status && p.dataset.status != 'sent' && [p.dataset.status, p.textContent]",
    )
}

/// The confirmation the page asks, once it asks it.
fn question(browser: &Browser) -> String {
    let asked = browser.wait_for(
        Duration::from_secs(5),
        "const c = document.getElementById('game-confirm'); return !c.hidden && c.querySelector('.question').textContent",
    );
    asked.as_str().unwrap().to_owned()
}

/// Whether nothing on the page is wider than the screen.
fn fits(browser: &Browser, width: u32) {
    let wide = browser.wait_for(
        Duration::from_secs(5),
        "return document.documentElement.scrollWidth <= window.innerWidth ? [window.innerWidth] : null",
    );
    assert_eq!(wide[0], width, "{wide}");
}

#[test]
fn an_operator_corrects_a_game_by_clicking_and_deals_with_its_alert_in_the_browser() {
    if !mosquitto_installed() {
        return;
    }
    let (hall, mqtt, http) = hall_with_console("console-game");
    let Some(browser) = Browser::start(&hall.dir.join("chromium")) else { return };
    let op = hall.account("op", "operator");
    let arbiter = hall.account("arbiter", "live");
    // The board keeps standing as the player left it for two minutes.
    let (capture, san) = ten_plies_then_one_taken_back(&hall, Duration::from_secs(1200));
    let mut daemon = hall.run(&hall.dir.join("boardcast.toml"));
    assert!(wait_listening(http, Duration::from_secs(20)), "{}", hall.log());
    let runtime = runtime();
    let feed = Subscriber::start_as(&runtime, mqtt, "boardcast/v1/live/#", "test-console-game", "op", &op);
    let site = format!("http://127.0.0.1:{http}");
    console_logged_in(&browser, &site, "op", &op);
    browser.open(&format!("{site}/console.html"));
    browser.viewport(1280, 800);
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");

    // The tenth move put back: the board is out of sync, an alert comes,
    // with a banner and a tone (the tone as far as a headless browser
    // tells: the page started it; no one hears it here).
    assert!(
        feed.wait_for(Duration::from_secs(60), |r| state(r)["status"] == "out_of_sync" && state(r)["ply"] == 10),
        "{}",
        hall.log()
    );
    let noticed = browser.wait_for(
        Duration::from_secs(20),
        "const li = document.querySelector('#alerts .alert[data-kind=\"out_of_sync\"]'); \
         const newest = document.querySelector('#alerts .alert'); const b = document.getElementById('alert-banner'); \
         return li && !b.hidden && [b.dataset.kind == newest.dataset.kind, b.querySelector('.text').textContent, \
           Number(b.dataset.tones || 0), li.querySelector('.severity').textContent, li.dataset.board]",
    );
    assert_eq!(noticed[0], true, "the banner tells the newest alert: {noticed}");
    assert!(noticed[1].as_str().unwrap().starts_with("New alert on board b1: "), "{noticed}");
    assert!(noticed[2].as_u64().unwrap() >= 1, "a tone was started: {noticed}");
    assert_eq!((noticed[3].clone(), noticed[4].clone()), (json!("irregularity"), json!("b1")), "{noticed}");

    // The kind filter: the out-of-sync alert under its kind, and hidden
    // under a kind no alert of this game has.
    let filtered = browser.run(
        "const s = document.getElementById('kind-filter'); const shown = () => [...document.querySelectorAll('#alerts .alert')] \
           .filter(li => getComputedStyle(li).display != 'none').map(li => li.dataset.kind); \
         const pick = (v) => { s.value = v; s.dispatchEvent(new Event('change')); return shown(); }; \
         const kinds = [...s.options].map(o => o.value).filter(Boolean); \
         const own = pick('out_of_sync'); s.add(new Option('touched own piece', 'touched_own_piece')); \
         const other = pick('touched_own_piece'); const all = pick(''); return [kinds, own, other, all.length]",
    );
    assert!(filtered[0].as_array().unwrap().contains(&json!("out_of_sync")), "{filtered}");
    let own = filtered[1].as_array().unwrap();
    assert!(!own.is_empty() && own.iter().all(|k| k == "out_of_sync"), "{filtered}");
    assert_eq!(filtered[2], json!([]), "{filtered}");
    assert!(filtered[3].as_u64().unwrap() >= 1, "{filtered}");

    // The alert on the small evidence board: the position when it came,
    // its squares marked (this alert, about the position as a whole, has no
    // sensor observations to step through: displays.rs steps through some).
    let out_of_sync: Value = feed
        .received()
        .into_iter()
        .find(|r| r.topic.ends_with("/b1/alerts") && r.json["kind"] == "out_of_sync")
        .map(|r| r.json)
        .unwrap();
    let shown = browser.run(
        "const li = document.querySelector('#alerts .alert[data-kind=\"out_of_sync\"]'); li.querySelector('.step-evidence').click(); \
         const e = document.getElementById('evidence'); \
         return [e.hidden, e.dataset.step, e.querySelector('.what').textContent, e.querySelector('.next').disabled]",
    );
    assert_eq!(shown, json!([false, "0", "Board b1, out of sync: the position when the alert came", true]));
    let marked = browser.wait_for(
        Duration::from_secs(5),
        "const n = document.querySelectorAll('#evidence-board svg circle').length; return n > 0 && n",
    );
    assert_eq!(marked.as_u64().unwrap() as usize, out_of_sync["squares"].as_array().unwrap().len(), "{out_of_sync}");

    // Mute (remembered: see the reload at the end).
    browser.run("document.getElementById('alert-mute').click()");
    assert_eq!(browser.run("return localStorage.getItem('boardcast-alert-mute')"), "1");
    browser.run("document.querySelector('#evidence .close').click()");
    browser.screenshot(&shots.join("console-alert-banner.png"));

    // The game, opened from the hall: the position with its last move,
    // ten plies, the players.
    browser.wait_for(
        Duration::from_secs(20),
        "return document.querySelector('#hall-boards tr[data-board=\"b1\"] td.label')",
    );
    browser.run("document.querySelector('#hall-boards tr[data-board=\"b1\"] td.label').click()");
    let game = browser.wait_for(
        Duration::from_secs(20),
        "const g = document.getElementById('game'); const m = [...document.querySelectorAll('#game-moves li')]; \
         return !g.hidden && m.length == 10 && !m[0].textContent.includes('…') && [g.dataset.board, m[9].textContent, \
           document.querySelectorAll('#game-board square.last-move').length, document.getElementById('game-title').textContent, \
           document.querySelector('#game-players .player[data-color=\"white\"] .name').textContent, m[0].textContent]",
    );
    assert_eq!(game[0], "b1");
    assert!(game[1].as_str().unwrap().ends_with(&san[9]), "{game} {san:?}");
    assert_eq!(game[2], 2, "the last move's squares are highlighted: {game}");
    assert_eq!(game[3], "Board b1");
    assert_eq!(game[5], format!("1. {}", san[0]), "the moves from the board's PGN topic: {game}");
    assert!(!game[4].as_str().unwrap().is_empty(), "White's name: {game}");

    // Take back, confirmed: the game at nine plies, on the page, the feed
    // and in the PGN file.
    browser.run("document.getElementById('game-take-back').click()");
    let asked = question(&browser);
    assert!(asked.contains(&san[9]) && asked.contains("board b1"), "{asked}");
    let answer = confirm_and_answer(&browser);
    assert_eq!(answer[0], "done", "{answer}\n{}", hall.log());
    pgn_until(&hall, "has nine plies", |pgn| pgn_moves(pgn).first().is_some_and(|m| m[..] == san[..9]));
    assert!(feed.wait_for(Duration::from_secs(10), |r| {
        r.iter().any(|m| m.topic.ends_with("/b1/moves") && m.json["kind"] == "retracted" && m.json["san"] == san[9])
    }));
    browser.wait_for(Duration::from_secs(10), "return document.querySelectorAll('#game-moves li').length == 9");

    // The alert acknowledged: on the feed, and shown so in the list.
    browser.run("document.querySelector('#alerts .alert[data-kind=\"out_of_sync\"] .ack').click()");
    browser.wait_for(
        Duration::from_secs(20),
        "return document.querySelector('#alerts .alert[data-kind=\"out_of_sync\"]').classList.contains('acknowledged')",
    );
    assert!(feed.wait_for(Duration::from_secs(5), |r| {
        r.iter().any(|m| m.topic.ends_with("/b1/alerts") && m.json["kind"] == "acknowledged")
    }));

    // The tenth move, which the board no longer shows, entered by dragging
    // it on the board: its squares from shakmaty here, the page's legal
    // squares from the daemon.
    let mut position = Chess::default();
    for words in &san[..9] {
        let m = words.parse::<SanPlus>().unwrap().san.to_move(&position).unwrap();
        position.play_unchecked(m);
    }
    let tenth = san[9].parse::<SanPlus>().unwrap().san.to_move(&position).unwrap();
    let (from, to) = (tenth.from().unwrap().to_string(), tenth.to().to_string());
    browser.wait_for(Duration::from_secs(10), "return document.getElementById('game').dataset.movable == 'yes'");
    let points = browser.run(&format!(
        "document.getElementById('game-board').scrollIntoView(); const r = document.querySelector('#game-board cg-board').getBoundingClientRect(); \
         const s = r.width / 8; const at = (sq) => [Math.round(r.left + ('abcdefgh'.indexOf(sq[0]) + 0.5) * s), \
           Math.round(r.top + (8 - Number(sq[1]) + 0.5) * s)]; return [at({from:?}), at({to:?})]"
    ));
    let point = |i: usize| (points[i][0].as_i64().unwrap(), points[i][1].as_i64().unwrap());
    browser.drag(point(0), point(1));
    let asked = question(&browser);
    assert!(asked.contains(&format!(" {} on board b1", san[9])), "{asked}");
    let answer = confirm_and_answer(&browser);
    assert_eq!(answer[0], "done", "{answer}\n{}", hall.log());
    let pgn = pgn_until(&hall, "has the entered move", |pgn| pgn_moves(pgn).first().is_some_and(|m| m[..] == san[..]));
    assert!(pgn.contains("{entered by the operator}"), "{pgn}");
    assert!(feed.wait_for(Duration::from_secs(10), |r| state(r)["ply"] == 10), "{:?}", state(&feed.received()));
    browser.wait_for(Duration::from_secs(10), "return document.querySelectorAll('#game-moves li').length == 10");
    browser.run("document.getElementById('game').scrollIntoView()");
    browser.screenshot(&shots.join("console-game.png"));

    // A FEN no game can go on from: refused by the daemon before any
    // confirmation is asked.
    browser.run(
        "document.getElementById('game-fen').value = 'not a position'; document.getElementById('game-set-position').click()",
    );
    let refused = browser.wait_for(
        Duration::from_secs(10),
        "const p = document.getElementById('game-answer'); return p.dataset.status == 'refused' && p.textContent",
    );
    assert!(refused.as_str().unwrap().contains("is not a FEN"), "{refused}");
    assert_eq!(browser.run("return document.getElementById('game-confirm').hidden"), true);

    // The result, with its reason, confirmed: in the PGN file and on the
    // feed.
    browser.run(
        "document.getElementById('game-reason').value = 'resignation'; document.querySelector('#game-actions .result[data-result=\"1-0\"]').click()",
    );
    let asked = question(&browser);
    assert!(asked.contains("1-0 (resignation)"), "{asked}");
    let answer = confirm_and_answer(&browser);
    assert_eq!(answer[0], "done", "{answer}\n{}", hall.log());
    let pgn = pgn_until(&hall, "has the result", |pgn| pgn.contains("[Result \"1-0\"]"));
    assert!(pgn.contains("{resignation} 1-0"), "{pgn}");
    assert!(feed.wait_for(Duration::from_secs(10), |r| state(r)["result"] == "1-0"));
    let over = browser.wait_for(
        Duration::from_secs(10),
        "const s = document.getElementById('game-status').textContent; return s.includes('result 1-0') && \
           [s, document.getElementById('game').dataset.movable]",
    );
    assert_eq!(over[1], "no", "nothing to drag once the game is over: {over}");

    // A set position with a pawn about to promote (confirmed, done), its
    // promotion dragged: the page asks for the piece; then the piece
    // corrected with Promote, as for an occupancy-only board's promotion.
    let fen = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 40";
    browser.run(&format!(
        "document.getElementById('game-fen').value = {}; document.getElementById('game-set-position').click()",
        json!(fen)
    ));
    assert!(question(&browser).contains(fen));
    let answer = confirm_and_answer(&browser);
    assert_eq!(answer[0], "done", "{answer}\n{}", hall.log());
    assert!(feed.wait_for(Duration::from_secs(10), |r| state(r)["fen"] == fen), "{:?}", state(&feed.received()));
    browser.wait_for(
        Duration::from_secs(10),
        "return document.getElementById('game').dataset.movable == 'yes' && document.getElementById('game-promote').disabled \
           && document.querySelector('#game-board cg-board piece.pawn.white') != null"
    );
    let points = browser.run(
        "document.getElementById('game-board').scrollIntoView(); const r = document.querySelector('#game-board cg-board').getBoundingClientRect(); \
         const s = r.width / 8; return [[r.left + 1.5 * s, r.top + 1.5 * s], [r.left + 1.5 * s, r.top + 0.5 * s]].map(p => p.map(Math.round))",
    );
    let point = |i: usize| (points[i][0].as_i64().unwrap(), points[i][1].as_i64().unwrap());
    browser.drag(point(0), point(1));
    browser.wait_for(Duration::from_secs(5), "return !document.getElementById('game-promotion').hidden");
    browser.run("document.querySelector('#game-promotion button[data-piece=\"n\"]').click()");
    let asked = question(&browser);
    assert!(asked.contains("40. b8=N on board b1"), "{asked}");
    let answer = confirm_and_answer(&browser);
    assert_eq!(answer[0], "done", "{answer}\n{}", hall.log());
    pgn_until(&hall, "has the promotion to a knight", |pgn| pgn.contains("b8=N"));
    browser.wait_for(Duration::from_secs(10), "return !document.getElementById('game-promote').disabled");
    browser
        .run("document.getElementById('game-piece').value = 'rook'; document.getElementById('game-promote').click()");
    assert!(question(&browser).contains("made a rook"));
    let answer = confirm_and_answer(&browser);
    assert_eq!(answer[0], "done", "{answer}\n{}", hall.log());
    pgn_until(&hall, "has the promotion corrected to a rook", |pgn| pgn.contains("b8=R") && !pgn.contains("b8=N"));
    // Numbered from the set position's move 40.
    let shown = browser.wait_for(
        Duration::from_secs(10),
        "const m = document.querySelectorAll('#game-moves li'); return m.length == 1 && m[0].textContent.includes('=R') && m[0].textContent",
    );
    assert_eq!(shown, "40. b8=R+");

    // Tablet and phone: the game and the alerts, nothing wider than the
    // screen.
    for (width, height, name) in [(768, 1024, "tablet"), (390, 844, "phone")] {
        browser.viewport(width, height);
        fits(&browser, width);
        browser.run("document.getElementById('game').scrollIntoView()");
        browser.screenshot(&shots.join(format!("console-game-{name}.png")));
        browser.run("document.getElementById('alert-tools').scrollIntoView()");
        fits(&browser, width);
        browser.screenshot(&shots.join(format!("console-alerts-{name}.png")));
    }
    // The mute switch is remembered by the browser.
    browser.viewport(1280, 800);
    browser.run("location.reload()");
    browser.wait_for(Duration::from_secs(20), "return document.getElementById('link').dataset.state == 'connected'");
    assert_eq!(browser.run("return document.getElementById('alert-mute').checked"), true);

    // An arbiter (a live account) sees the game but changes nothing from
    // it: no button, nothing to drag, and the view says why.
    browser.run("document.getElementById('logout').click()");
    console_logged_in(&browser, &site, "arbiter", &arbiter);
    browser.open(&format!("{site}/console.html"));
    browser.wait_for(
        Duration::from_secs(20),
        "return document.querySelector('#hall-boards tr[data-board=\"b1\"] td.label')",
    );
    browser.run("document.querySelector('#hall-boards tr[data-board=\"b1\"] td.label').click()");
    let arbiter_view = browser.wait_for(
        Duration::from_secs(20),
        "const g = document.getElementById('game'); return !g.hidden && document.querySelectorAll('#game-moves li').length > 0 \
           && [[...document.querySelectorAll('#game-actions button')].every(b => b.disabled), g.dataset.movable, \
               document.getElementById('game-hint').textContent]",
    );
    assert_eq!(arbiter_view[0], true, "{arbiter_view}");
    assert_eq!(arbiter_view[1], "no", "{arbiter_view}");
    assert!(
        arbiter_view[2].as_str().unwrap().contains("live account sees the game but may not change it"),
        "{arbiter_view}"
    );
    hall.unplug(&mut board, "b1");
    stop(&mut daemon);
}
