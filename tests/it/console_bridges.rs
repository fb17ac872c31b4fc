//! One console for a hall of several bridges (issue 28, item 8), as
//! docs/service.md lays the hall out: two `boardcast run` daemons, `hall-a`
//! reading board b1 and serving the console, `hall-b` reading board b2 and
//! finding a Millennium board no configuration names, both publishing to
//! one Mosquitto started here (every board simulated behind a
//! pseudo-terminal, byte for byte). In headless Chromium, logged in on
//! `hall-a`'s console: the hall lists the boards of both bridges, each
//! labelled with its bridge; the result entered for b2 reaches `hall-b`
//! (done, in `hall-b`'s PGN file, never in `hall-a`'s); the Millennium
//! board `hall-b` found is assigned from `hall-a`'s console and kept in
//! `hall-b`'s state file, and its game is read there; then `hall-b` is
//! killed without a word and the console shows it gone, with since when,
//! while b1 goes on.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::{
    displays::{Browser, console_logged_in},
    support::{
        alias::Alias,
        live::{Hall, game_san, stop, synth_events},
        mqtt::{Mosquitto, free_port, wait_listening},
    },
};

const GAMES: &str = "livechess-vestland-round1.pgn";

/// The configuration of bridge `id` reading `board`, publishing to the
/// hall broker on `port`, with `extra` tables after it.
fn bridge_config(hall: &Hall, id: &str, board: &str, port: u16, extra: &str) -> PathBuf {
    let mqtt = format!(
        "[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nbridge_id = \"{id}\"\nkeep_alive_s = 2\n\
         [broadcast]\nevent = \"Hall Open\"\nround = \"1\"\n{extra}"
    );
    hall.config_with_mqtt(&[board], &mqtt)
}

/// Replaces `from` by `to` in the configuration file `config`.
fn edit(config: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(config).unwrap();
    assert!(text.contains(from), "{from:?} in {text}");
    std::fs::write(config, text.replace(from, to)).unwrap();
}

/// The text of cell `cell` of the hall's row of `board`, once it has one.
fn row(browser: &Browser, board: &str, what: &str) -> Value {
    browser.wait_for(
        Duration::from_secs(30),
        &format!(
            "const r = document.querySelector('#hall-boards tr[data-board=\"{board}\"]'); \
             const c = (n) => r.querySelector('.' + n).textContent; return r && ({what})"
        ),
    )
}

fn kill(child: &mut Child) {
    let _ = Command::new("kill").arg("-KILL").arg(child.id().to_string()).status();
    let _ = child.wait();
}

/// Waits until `board`'s PGN file in `hall` satisfies `done`.
fn pgn_until(hall: &Hall, board: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let pgn = hall.pgn(board);
        if done(&pgn) {
            return pgn;
        }
        assert!(Instant::now() < end, "{board}'s PGN file {what}:\n{pgn}\n{}", hall.log());
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn one_console_shows_every_bridge_of_the_hall_and_its_changes_reach_the_bridge_that_reads_the_board() {
    let brokers = Hall::new("console-bridges-broker");
    let Some(broker) = Mosquitto::start_with_websockets(&brokers.dir) else { return };
    let Some(browser) = Browser::start(&brokers.dir.join("chromium")) else { return };
    let (a, b) = (Hall::new("console-bridges-a"), Hall::new("console-bridges-b"));

    // hall-a serves the console, its pages reading the hall broker over
    // WebSocket; hall-b serves no page and looks for boards every second.
    let http = free_port();
    let config_a = bridge_config(&a, "hall-a", "b1", broker.port, "");
    edit(
        &config_a,
        "[http]\nenabled = false\n",
        &format!(
            "[http]\nlisten = \"127.0.0.1:{http}\"\nbroker_ws_url = \"ws://127.0.0.1:{}/mqtt\"\n",
            broker.ws_port.unwrap()
        ),
    );
    // Short device names, so that the screenshots' Port column shows what
    // a reader recognises rather than the test's scratch folders.
    let (b1_port, b2_port, mil_port) = (Alias::to(&a.link("b1")), Alias::to(&b.link("b2")), Alias::to(&b.link("mil")));
    let config_b = bridge_config(
        &b,
        "hall-b",
        "b2",
        broker.port,
        &format!("[discovery]\nextra_ports = [\"{}\"]\n", mil_port.path().display()),
    );
    for (config, alias) in [(&config_a, &b1_port), (&config_b, &b2_port)] {
        std::fs::write(config, alias.in_config(&std::fs::read_to_string(config).unwrap())).unwrap();
    }
    edit(&config_b, "probe_interval_s = 0\n", "probe_interval_s = 1\n");
    let op = a.account("op", "operator");
    let mut daemon_a = a.run(&config_a);
    assert!(wait_listening(http, Duration::from_secs(20)), "{}", a.log());
    // Every bridge of the hall applies commands signed with one operator
    // key: hall-b gets a copy of the one hall-a made.
    let end = Instant::now() + Duration::from_secs(10);
    while !a.dir.join("operator.key").exists() {
        assert!(Instant::now() < end, "hall-a made its operator key: {}", a.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::copy(a.dir.join("operator.key"), b.dir.join("operator.key")).unwrap();
    let mut daemon_b = b.run(&config_b);

    // b1 plays the shortest game, b2 the longest (still playing when its
    // result is entered); the Millennium board on hall-b waits, unread,
    // until it is assigned.
    let mut by_length: Vec<usize> = (0..4).collect();
    by_length.sort_by_key(|&i| game_san(GAMES, i).len());
    let mut b1 = a.simulate(&a.synth_capture(GAMES, by_length[0], "b1"), "b1", &[]);
    let mut b2 = b.simulate(&b.synth_capture(GAMES, by_length[3], "b2"), "b2", &[]);
    let (header, mut events) = synth_events(GAMES, 5, "mil");
    for (t, _) in events.iter_mut().skip(1) {
        *t = *t + Duration::from_secs(120);
    }
    let mut mil = b.simulate(
        &b.write_capture("mil", &header, &events),
        "mil",
        &["--protocol", "millennium", "--pause-while-unread"],
    );

    // The console on hall-a: both bridges' boards, each with its bridge.
    let site = format!("http://127.0.0.1:{http}");
    console_logged_in(&browser, &site, "op", &op);
    browser.open(&format!("{site}/console.html"));
    browser.viewport(1280, 900);
    let b1_row = row(&browser, "b1", "c('last') != '–' && [r.dataset.bridge, c('label'), c('connection')]");
    let b2_row = row(&browser, "b2", "c('last') != '–' && [r.dataset.bridge, c('label'), c('connection')]");
    assert_eq!(b1_row[0], "hall-a", "{b1_row}");
    assert_eq!(b2_row[0], "hall-b", "{b2_row}");
    assert!(b2_row[1].as_str().unwrap().contains("hall-b"), "the row names its bridge: {b2_row}");
    assert!(b2_row[2].as_str().unwrap().starts_with("connectedsince"), "{b2_row}");
    let bridges = browser.wait_for(
        Duration::from_secs(10),
        "const l = [...document.querySelectorAll('#hall-bridges li')]; \
         return l.length == 2 && l.map(li => [li.dataset.bridge, li.querySelector('.state').textContent])",
    );
    assert_eq!(bridges, serde_json::json!([["hall-a", "online"], ["hall-b", "online"]]));

    // The Millennium board hall-b found, assigned from hall-a's console:
    // hall-b checks it, keeps it in its own state file and reads it.
    let unassigned = format!(
        "const r = [...document.querySelectorAll('#hall-unassigned tr')].find(r => r.dataset.port == '{}');",
        mil_port.path().display()
    );
    let found = browser.wait_for(
        Duration::from_secs(30),
        &format!("{unassigned} return r && !r.querySelector('button.assign').disabled && [r.dataset.bridge, r.querySelector('.label').textContent]"),
    );
    assert_eq!(found[0], "hall-b", "{found}");
    browser.run(&format!("{unassigned} r.querySelector('button.assign').click()"));
    browser.run(
        "const f = document.getElementById('assign-form'); f.board.value = '7'; f.name.value = 'mil7'; \
         f.white.value = 'Carlsen, Magnus'; f.requestSubmit();",
    );
    let said = browser.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('assign-form'); return f.dataset.status && [f.dataset.status, f.querySelector('.why').textContent, document.querySelector('#replies li')?.textContent]",
    );
    assert_eq!(said[0], "done", "{said}\n{}", b.log());
    assert!(said[2].as_str().unwrap().contains("board mil7 (millennium at"), "{said}");
    let state = std::fs::read_to_string(b.dir.join("assigned-boards.json")).unwrap();
    assert!(state.contains("\"mil7\"") && state.contains("\"Carlsen, Magnus\""), "kept by hall-b: {state}");
    assert!(!a.dir.join("assigned-boards.json").exists(), "hall-a keeps no board of hall-b");
    let mil_row = row(&browser, "mil7", "c('last') != '–' && [r.dataset.bridge, c('family')]");
    assert_eq!(mil_row, serde_json::json!(["hall-b", "millennium"]), "its game read by hall-b");
    assert!(b.log().contains("op (a console of the hall) assigned board mil7"), "{}", b.log());

    // b2's result, entered in hall-a's console: done by hall-b, in its
    // PGN file.
    browser.run("document.querySelector('#hall-boards tr[data-board=\"b2\"] td.label').click()");
    browser.wait_for(
        Duration::from_secs(20),
        "return !document.getElementById('game').hidden && document.querySelectorAll('#game-moves li').length > 0",
    );
    browser.run(
        "document.getElementById('game-reason').value = 'resignation'; document.querySelector('#game-actions .result[data-result=\"1-0\"]').click()",
    );
    browser.wait_for(Duration::from_secs(5), "return !document.getElementById('game-confirm').hidden");
    browser.run("document.querySelector('#game-confirm .yes').click()");
    let answer = browser.wait_for(
        Duration::from_secs(20),
        "const p = document.getElementById('game-answer'); \
         return p.dataset.status && p.dataset.status != 'sent' && [p.dataset.status, p.textContent]",
    );
    assert_eq!(answer[0], "done", "{answer}\n{}", b.log());
    let pgn = pgn_until(&b, "b2", "has the result", |pgn| pgn.contains("[Result \"1-0\"]"));
    assert!(pgn.contains("{resignation} 1-0"), "{pgn}");
    assert!(a.pgn("b2").is_empty(), "hall-a reads no b2");
    browser.wait_for(
        Duration::from_secs(10),
        "return document.getElementById('game-status').textContent.includes('result 1-0')",
    );
    browser.run("document.getElementById('game-close').click(); window.scrollTo(0, 0)");
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays");
    browser.screenshot(&shots.join("console-bridges.png"));

    // hall-b dies without a word: its Last Will, and the console says it
    // is gone and since when; hall-a's board is untouched.
    kill(&mut daemon_b);
    let gone = row(&browser, "b2", "r.classList.contains('gone') && c('connection')");
    assert!(gone.as_str().unwrap().contains("hall-b gone since"), "{gone}");
    let listed = browser.wait_for(
        Duration::from_secs(10),
        "const li = document.querySelector('#hall-bridges li[data-bridge=\"hall-b\"]'); \
         return li && li.classList.contains('gone') && li.textContent",
    );
    assert!(listed.as_str().unwrap().contains("gone since"), "{listed}");
    let b1_still = row(&browser, "b1", "[r.classList.contains('gone'), c('connection')]");
    assert_eq!(b1_still[0], false, "hall-a's board goes on: {b1_still}");
    // (Its short game may be over and its simulator gone: connected or
    // not, it is not the bridge that is gone.)
    assert!(!b1_still[1].as_str().unwrap().contains("gone"), "{b1_still}");
    assert_eq!(
        browser.run("return document.querySelector('#hall-boards tr[data-board=\"b2\"] button.flip').disabled"),
        true,
        "no change is offered for a gone bridge's board"
    );
    browser.run("window.scrollTo(0, 0)");
    browser.screenshot(&shots.join("console-bridges-gone.png"));

    for board in [&mut b1, &mut b2, &mut mil] {
        kill(board);
    }
    stop(&mut daemon_a);
}
