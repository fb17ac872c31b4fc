//! What everyone may read shows a game no earlier than the public delay
//! (issue 29, item 4): a board's status topic, which anonymous clients
//! read, through the same feed and hub the daemon and `replay --mqtt` run,
//! in the capture's virtual time.

use crate::support::script::Script;
use boardcast_core::{
    game::Tempo,
    publish::{
        board::FeedSettings,
        topics::{BoardPath, Topics},
    },
    reconstruct::{GameSetup, ReconstructorConfig},
    replay::{Published, publications},
};
use shakmaty::Color;

const DELAY_MS: u64 = 10_000;

/// The times (ms into the capture) at which `field` of the messages on the
/// topics `pick` chooses took a new value, with the value.
fn changes(published: &[Published], pick: impl Fn(&str) -> bool, field: &str) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = Vec::new();
    for p in published.iter().filter(|p| pick(&p.publication.topic)) {
        let Some(value) = p.publication.payload.as_ref().and_then(|v| v[field].as_str()) else { continue };
        if out.last().is_none_or(|(_, last)| last != value) {
            out.push((p.t_ms, value.to_owned()));
        }
    }
    out
}

#[test]
fn a_board_status_shows_an_illegal_move_and_a_game_s_end_only_after_the_public_delay_and_a_cable_at_once() {
    // A standard game: an illegal move completed (the board out of sync
    // until the arbiter restores it), a cable pulled and put back, and a
    // result.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(2500);
    s.mv("e3e1")
        .wait(500)
        .clock_set(600_000, 720_000, Some(Color::White))
        .wait(500)
        .pressed_moves("f1c4 b8c6 d1h5 g8f6");
    s.wait(1000).unplug().wait(3000).replug().wait(1000);
    s.pressed_moves("h5f7").wait(3000);
    let setup = GameSetup { tempo: Some(Tempo::Standard), ..Default::default() };
    let settings = FeedSettings { topics: Topics::new("bc", "pc1"), boot: "boot".into(), languages: Vec::new() };
    let published = publications(
        &s.capture("b", &setup),
        &ReconstructorConfig::default(),
        settings,
        BoardPath::new("e", "1", "b"),
        DELAY_MS,
    );
    let live_state = |t: &str| t == "bc/v1/live/e/1/b/state";
    let board_status = |t: &str| t.starts_with("bc/v1/bridges/pc1/boards/") && t.ends_with("/status");

    let live = changes(&published, live_state, "status");
    let names: Vec<&str> = live.iter().map(|(_, v)| v.as_str()).collect();
    assert_eq!(names, ["awaiting_start", "in_sync", "out_of_sync", "in_sync", "awaiting_start"], "{live:?}");
    let shown = changes(&published, board_status, "sync");
    // Each change of sync, one by one, the delay after the live state's.
    let delayed: Vec<(u64, String)> = live.iter().skip(1).map(|(t, v)| (t + DELAY_MS, v.clone())).collect();
    assert_eq!(shown[0].1, "awaiting_start");
    assert_eq!(shown[1..], delayed[..], "the board status's sync against the live state's {live:?}");

    // The cable: the board status says it at once, as the live state does.
    let cable = |pick: &dyn Fn(&str) -> bool| {
        changes(&published, pick, "connection").into_iter().find(|(_, c)| c == "disconnected").map(|(t, _)| t)
    };
    let live_cable = cable(&live_state).expect("the live state says the board is disconnected");
    assert_eq!(cable(&board_status), Some(live_cable), "the board status says it at the same time");
    // And no message on the status topic gives away a change of sync by its
    // time alone: each is a change of what it shows.
    let messages: Vec<&Published> = published.iter().filter(|p| board_status(&p.publication.topic)).collect();
    for pair in messages.windows(2) {
        let [a, b] = pair else { unreachable!() };
        let strip = |p: &Published| {
            let mut v = p.publication.payload.clone().unwrap();
            v.as_object_mut().unwrap().remove("ts_ms");
            (p.publication.topic.clone(), v)
        };
        assert_ne!(strip(a), strip(b), "a status message at {} ms that says nothing new", b.t_ms);
    }
}
