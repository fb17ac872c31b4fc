//! The tournament panel in a hall of several bridges (issue 28): two
//! `boardcast run` daemons on one Mosquitto started here, `hall-a` reading
//! board b1 (number 1) and serving the console, `hall-b` reading board b2
//! (number 2); `hall-a` also finds a Millennium board no configuration
//! names. In headless Chromium on `hall-a`'s console: the panel lists both
//! bridges' boards, each with its bridge; a pairings file covering boards
//! 1 to 3 is previewed against the whole hall and its round started on
//! both bridges (each bridge's answer shown; hall-b's board gets its
//! pairing's players, in hall-b's own feed); the Millennium board,
//! assigned as board 3 during the round, joins that round with board 3's
//! players and appears in the panel; Next round reaches both bridges, and
//! the same round sent again changes nothing.

use std::{
    path::{Path, PathBuf},
    process::{Child, Command},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::{
    displays::{Browser, console_logged_in},
    support::{
        alias::Alias,
        live::{Hall, game_san, stop, synth_events},
        mqtt::{Mosquitto, free_port, wait_listening},
    },
};

const GAMES: &str = "livechess-vestland-round1.pgn";

/// Rounds 2 and 3 of a hall of three boards.
const PAIRINGS: &str = "round,board,white,black,white_elo,black_elo\n\
    2,1,\"Aasen, Anna\",\"Berg, Bjorn\",2210,2150\n\
    2,2,\"Dahl, Dina\",\"Eide, Erik\",2100,2090\n\
    2,3,\"Fossum, Frida\",\"Gran, Geir\",2010,1990\n\
    3,1,\"Berg, Bjorn\",\"Dahl, Dina\",2150,2100\n\
    3,2,\"Gran, Geir\",\"Aasen, Anna\",1990,2210\n\
    3,3,\"Eide, Erik\",\"Fossum, Frida\",2090,2010\n";

/// The configuration of bridge `id` reading `board`, publishing to the
/// hall broker on `port`, with `extra` tables after it.
fn bridge_config(hall: &Hall, id: &str, board: &str, port: u16, extra: &str) -> PathBuf {
    let mqtt = format!(
        "[mqtt]\nurl = \"mqtt://127.0.0.1:{port}\"\nbridge_id = \"{id}\"\nkeep_alive_s = 2\npublic_delay_s = 0\n\
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

fn kill(child: &mut Child) {
    let _ = Command::new("kill").arg("-KILL").arg(child.id().to_string()).status();
    let _ = child.wait();
}

/// The panel's row of `board` once `check` (JS over `r`: bridge, round,
/// white, black) holds.
fn panel_row(browser: &Browser, board: &str, check: &str) -> Value {
    browser.wait_for(
        Duration::from_secs(30),
        &format!(
            "const tr = document.querySelector('#round-boards tr[data-board=\"{board}\"]'); if (!tr) return null; \
             const r = [tr.dataset.bridge, ...['round', 'white', 'black'].map((c) => tr.querySelector('.' + c)?.textContent)]; \
             return ({check}) && r"
        ),
    )
}

/// The newest hall-wide answer once every bridge answered: its line and
/// each bridge's `[bridge, status, text]`.
fn hall_reply(browser: &Browser, count: usize) -> Value {
    browser.wait_for(
        Duration::from_secs(40),
        &format!(
            "const all = document.querySelectorAll('#round-replies > li'); const li = all[0]; \
             return all.length == {count} && li.dataset.status != 'sent' && [li.dataset.status, li.querySelector('strong').textContent, \
               [...li.querySelectorAll(':scope > ul > li')].map((b) => [b.dataset.bridge, b.dataset.status, b.textContent])]"
        ),
    )
}

#[test]
fn the_tournament_panel_starts_rounds_on_every_bridge_and_a_board_assigned_later_joins_the_round() {
    let brokers = Hall::new("console-bridges-round-broker");
    let Some(broker) = Mosquitto::start_with_websockets(&brokers.dir) else { return };
    let Some(browser) = Browser::start(&brokers.dir.join("chromium")) else { return };
    let (a, b) = (Hall::new("console-bridges-round-a"), Hall::new("console-bridges-round-b"));

    let http = free_port();
    let (b1_port, b2_port, mil_port) = (Alias::to(&a.link("b1")), Alias::to(&b.link("b2")), Alias::to(&a.link("mil")));
    let config_a = bridge_config(
        &a,
        "hall-a",
        "b1",
        broker.port,
        &format!("[discovery]\nextra_ports = [\"{}\"]\n", mil_port.path().display()),
    );
    edit(
        &config_a,
        "[http]\nenabled = false\n",
        &format!(
            "[http]\nlisten = \"127.0.0.1:{http}\"\nbroker_ws_url = \"ws://127.0.0.1:{}/mqtt\"\n",
            broker.ws_port.unwrap()
        ),
    );
    edit(&config_a, "probe_interval_s = 0\n", "probe_interval_s = 1\n");
    let config_b = bridge_config(&b, "hall-b", "b2", broker.port, "");
    for (config, alias) in [(&config_a, &b1_port), (&config_b, &b2_port)] {
        std::fs::write(config, alias.in_config(&std::fs::read_to_string(config).unwrap())).unwrap();
    }
    let op = a.account("op", "operator");
    let mut daemon_a = a.run(&config_a);
    assert!(wait_listening(http, Duration::from_secs(20)), "{}", a.log());
    // One operator key for the hall (docs/service.md): hall-b gets a copy.
    let end = Instant::now() + Duration::from_secs(10);
    while !a.dir.join("operator.key").exists() {
        assert!(Instant::now() < end, "hall-a made its operator key: {}", a.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::copy(a.dir.join("operator.key"), b.dir.join("operator.key")).unwrap();
    let mut daemon_b = b.run(&config_b);

    // Both boards play their longest games (still playing when the round
    // changes); the Millennium board waits, unread, until it is assigned.
    let mut by_length: Vec<usize> = (0..4).collect();
    by_length.sort_by_key(|&i| game_san(GAMES, i).len());
    let mut b1 = a.simulate(&a.synth_capture(GAMES, by_length[2], "b1"), "b1", &[]);
    let mut b2 = b.simulate(&b.synth_capture(GAMES, by_length[3], "b2"), "b2", &[]);
    let (header, events) = synth_events(GAMES, 5, "mil");
    let mut mil = a.simulate(
        &a.write_capture("mil", &header, &events),
        "mil",
        &["--protocol", "millennium", "--pause-while-unread"],
    );

    let site = format!("http://127.0.0.1:{http}");
    console_logged_in(&browser, &site, "op", &op);
    browser.open(&format!("{site}/console.html"));
    browser.viewport(1280, 1000);
    browser.run("window.confirm = () => true;");

    // The panel lists both bridges' boards, each with its bridge.
    let r1 = panel_row(&browser, "b1", "r[1] == '1'");
    let r2 = panel_row(&browser, "b2", "r[1] == '1'");
    assert_eq!(r1[0], "hall-a", "{r1}");
    assert_eq!(r2[0], "hall-b", "{r2}");
    browser.wait_for(Duration::from_secs(20), "return document.querySelectorAll('#hall-bridges li').length == 2");

    // The pairings, previewed against the whole hall: board 2 is hall-b's;
    // board 3 is no board yet.
    browser.run(&format!(
        "const input = document.querySelector('#pairings-form input[type=file]'); const dt = new DataTransfer(); \
         dt.items.add(new File([{}], 'hall.csv', {{type: 'text/csv'}})); input.files = dt.files; \
         input.dispatchEvent(new Event('change'));",
        json!(PAIRINGS)
    ));
    browser.wait_for(Duration::from_secs(10), "return !document.getElementById('preview').hidden");
    browser.run(
        "const r = document.querySelector('#pairings-form input[name=round]'); r.value = '2'; r.dispatchEvent(new Event('change'));",
    );
    let placed = browser.wait_for(
        Duration::from_secs(10),
        "const on = (n) => document.querySelector(`#preview-pairings tr[data-board=\"${n}\"] .on`)?.textContent; \
         return document.getElementById('start-round').textContent == 'Start round 2' && [on(1), on(2), on(3), \
           document.getElementById('preview-left-over').textContent]",
    );
    assert_eq!(placed[0], "b1 (hall-a)", "{placed}");
    assert_eq!(placed[1], "b2 (hall-b)", "{placed}");
    assert_eq!(placed[2], "no board here", "{placed}");
    assert!(placed[3].as_str().unwrap().contains("pairings of boards not here: 3"), "{placed}");

    // Round 2 started from hall-a's console: each bridge applies it to its
    // boards and says so.
    browser.run("document.getElementById('start-round').click()");
    let started = hall_reply(&browser, 1);
    assert_eq!(started[0], "done", "{started}\n{}\n{}", a.log(), b.log());
    assert_eq!(started[1], "round 2: applied by hall-a, hall-b", "{started}");
    let from_b = &started[2][1];
    assert_eq!(from_b[0], "hall-b", "{started}");
    assert!(
        from_b[2].as_str().unwrap().contains("b2: ")
            && from_b[2].as_str().unwrap().contains("round 2: Dahl, Dina - Eide, Erik"),
        "{started}"
    );
    // Each bridge has no board for the others' pairings, which is not
    // news; board 3's pairing has no board anywhere in the hall.
    assert_eq!(started[2][2][2], "no board in the hall for the pairings of board(s) 3", "{started}");
    assert!(!started[2].to_string().contains("no board here"), "{started}");
    // hall-b's own feed carries b2's new players (the panel reads b2's
    // live state, which hall-b publishes).
    let b2_round2 =
        panel_row(&browser, "b2", "r[1] == '2' && r[2].includes('Dahl, Dina') && r[3].includes('Eide, Erik')");
    assert_eq!(b2_round2[0], "hall-b", "{b2_round2}");
    panel_row(&browser, "b1", "r[1] == '2' && r[2].includes('Aasen, Anna')");
    assert!(b.log().contains("round 2: Dahl, Dina - Eide, Erik"), "{}", b.log());

    // The Millennium board, assigned as board 3 during round 2, joins the
    // round with board 3's players and appears in the panel.
    let unassigned = format!(
        "const r = [...document.querySelectorAll('#hall-unassigned tr')].find(r => r.dataset.port == '{}');",
        mil_port.path().display()
    );
    browser.wait_for(
        Duration::from_secs(30),
        &format!("{unassigned} return r && !r.querySelector('button.assign').disabled"),
    );
    browser.run(&format!("{unassigned} r.querySelector('button.assign').click()"));
    browser.run(
        "const f = document.getElementById('assign-form'); f.board.value = '3'; f.name.value = 'mil3'; f.requestSubmit();",
    );
    let said = browser.wait_for(
        Duration::from_secs(20),
        "const f = document.getElementById('assign-form'); return f.dataset.status && [f.dataset.status, document.querySelector('#replies li')?.textContent]",
    );
    assert_eq!(said[0], "done", "{said}\n{}", a.log());
    assert!(said[1].as_str().unwrap().contains("it plays round 2: Fossum, Frida - Gran, Geir"), "{said}");
    let mil3 =
        panel_row(&browser, "mil3", "r[1] == '2' && r[2].includes('Fossum, Frida') && r[3].includes('Gran, Geir')");
    assert_eq!(mil3[0], "hall-a", "{mil3}");
    let listed = browser.run(
        "return fetch('/api/tournament', {credentials: 'same-origin'}).then((r) => r.json()).then((t) => t.boards.map((b) => [b.name, b.number]))",
    );
    assert_eq!(listed, json!([["b1", 1], ["mil3", 3]]), "/api/tournament lists the board assigned today");

    // Next round: round 3 of the same file, on both bridges and all three
    // boards.
    browser.run("document.getElementById('next-round').click()");
    let next = hall_reply(&browser, 2);
    assert_eq!(next[0], "done", "{next}\n{}\n{}", a.log(), b.log());
    assert_eq!(next[1], "round 3: applied by hall-a, hall-b", "{next}");
    panel_row(&browser, "b1", "r[1] == '3' && r[2].includes('Berg, Bjorn')");
    panel_row(&browser, "b2", "r[1] == '3' && r[2].includes('Gran, Geir') && r[3].includes('Aasen, Anna')");
    panel_row(&browser, "mil3", "r[1] == '3' && r[2].includes('Eide, Erik')");
    browser.run("document.getElementById('tournament').scrollIntoView()");
    browser.screenshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/displays/console-round-bridges.png"));

    // The same round sent again (a bridge that missed it caught up this
    // way): the bridges already in it change nothing.
    browser.run(
        "const r = document.querySelector('#pairings-form input[name=round]'); r.value = '3'; \
         r.dispatchEvent(new Event('input')); document.getElementById('next-round').click()",
    );
    let again = hall_reply(&browser, 3);
    assert_eq!(again[0], "done", "{again}");
    let words = again[2].to_string();
    assert!(words.contains("already in round 3 with these pairings: nothing changed"), "{again}");

    for board in [&mut b1, &mut b2, &mut mil] {
        kill(board);
    }
    stop(&mut daemon_b);
    stop(&mut daemon_a);
}
