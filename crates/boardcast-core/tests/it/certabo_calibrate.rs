//! `calibrate` on a live Certabo session, in virtual time: the decoder
//! learns the pieces from the board's next reports (the start position),
//! the session says so in a notice, and the game is read with the new
//! calibration at once; reports that are not the start position, a board
//! that sends none, and a board of another family are refused.

use boardcast_core::{
    event::EventKind,
    operator::{Command, CommandError},
    protocol::{
        Protocol,
        certabo::{
            calibration::{EMPTY, Tags, index_of},
            line::encode_report,
        },
        link::LinkConfig,
    },
    reconstruct::{GameSetup, ReconstructorConfig},
    session::{BoardSession, NoticeKind, Output},
    time::Timestamp,
};
use shakmaty::Square;

/// The tags of this set in the start position.
fn start_tags() -> Tags {
    let mut tags = [EMPTY; 64];
    for index in (0..16).chain(48..64) {
        tags[index] = [index as u8 * 3 + 1, 68, 211, index as u8, 7];
    }
    tags
}

fn report(tags: &Tags) -> Vec<u8> {
    let mut line = Vec::new();
    encode_report(tags.iter().flatten().copied(), &mut line);
    line
}

fn at(ms: u64) -> Timestamp {
    Timestamp::from_millis(ms)
}

/// A live Certabo session whose calibration is another set's: none of
/// this set's tags is known.
fn session_with_another_sets_calibration() -> BoardSession {
    let mut session = BoardSession::live(
        Protocol::CERTABO,
        ReconstructorConfig::default(),
        GameSetup::default(),
        LinkConfig::default(),
    );
    let other: Vec<(String, char)> = vec![("9-9-9-9-1".into(), 'K'), ("9-9-9-9-2".into(), 'k')];
    session.set_calibration(&other).unwrap();
    session.handle_connected(at(0));
    session
}

/// Everything the session has said so far.
fn outputs(session: &mut BoardSession) -> Vec<Output> {
    std::iter::from_fn(|| session.poll_output()).collect()
}

/// What a calibration came to.
type Learnt = Result<Vec<(String, char)>, String>;

/// The one calibration said in `outputs`.
fn one(outputs: &[Output]) -> Learnt {
    let [learnt]: [Learnt; 1] =
        calibrated(outputs).try_into().unwrap_or_else(|_| panic!("one calibration: {outputs:?}"));
    learnt
}

fn calibrated(outputs: &[Output]) -> Vec<Learnt> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Notice(n) => match &n.kind {
                NoticeKind::Calibrated(learnt) => Some(learnt.clone()),
                _ => None,
            },
            Output::Event(_) => None,
        })
        .collect()
}

fn moves(outputs: &[Output]) -> Vec<String> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Event(e) => match &e.kind {
                EventKind::MoveMade(m) => Some(m.uci.clone()),
                _ => None,
            },
            Output::Notice(_) => None,
        })
        .collect()
}

/// Sends `tags` every 100 ms from `from` for `count` reports; returns the
/// time after the last.
fn stream(session: &mut BoardSession, tags: &Tags, from: u64, count: u64) -> u64 {
    for i in 0..count {
        let t = at(from + i * 100);
        session.advance_to(t);
        session.handle_bytes(t, &report(tags));
    }
    from + count * 100
}

#[test]
fn calibrate_learns_the_start_position_and_reads_the_game_with_it_at_once() {
    let mut session = session_with_another_sets_calibration();
    let start = start_tags();
    let mut t = stream(&mut session, &start, 100, 10);
    outputs(&mut session);
    let said = session.handle_command(at(t), &Command::Calibrate).unwrap();
    assert_eq!(said, "learning the pieces from the board's next 7 reports");
    t = stream(&mut session, &start, t + 100, 6);
    assert!(calibrated(&outputs(&mut session)).is_empty(), "six reports are not enough");
    t = stream(&mut session, &start, t, 1);
    let out = outputs(&mut session);
    let entries = one(&out).unwrap();
    assert_eq!(entries.len(), 32);
    assert!(entries.contains(&("13-68-211-4-7".into(), 'k')), "e8's tag is the black king: {entries:?}");
    // The game is read with it from the next report on.
    t = stream(&mut session, &start, t, 5);
    let mut e4 = start;
    e4[index_of(Square::E4)] = e4[index_of(Square::E2)];
    e4[index_of(Square::E2)] = EMPTY;
    stream(&mut session, &e4, t, 10);
    assert_eq!(moves(&outputs(&mut session)), ["e2e4"]);
}

#[test]
fn calibrate_refuses_a_board_not_in_the_start_position_and_keeps_the_calibration() {
    let mut session = session_with_another_sets_calibration();
    let mut moved = start_tags();
    moved[index_of(Square::E4)] = moved[index_of(Square::E2)];
    moved[index_of(Square::E2)] = EMPTY;
    session.handle_command(at(100), &Command::Calibrate).unwrap();
    stream(&mut session, &moved, 200, 7);
    let out = outputs(&mut session);
    let why = one(&out).unwrap_err();
    assert!(why.starts_with("e4 is not empty: the pieces must stand in the start position"), "{why}");
}

#[test]
fn calibrate_gives_up_when_the_board_sends_no_reports() {
    let mut session = session_with_another_sets_calibration();
    session.handle_command(at(100), &Command::Calibrate).unwrap();
    stream(&mut session, &start_tags(), 200, 3);
    session.advance_to(at(5_000));
    assert!(calibrated(&outputs(&mut session)).is_empty(), "still waiting");
    session.advance_to(at(5_200));
    let out = outputs(&mut session);
    let why = one(&out).unwrap_err();
    assert!(why.starts_with("too few reports from the board within 5 s"), "{why}");
    // Reports that come later learn nothing.
    stream(&mut session, &start_tags(), 5_300, 10);
    assert!(calibrated(&outputs(&mut session)).is_empty());
}

#[test]
fn only_a_certabo_board_is_calibrated() {
    for protocol in [Protocol::DGT, Protocol::MILLENNIUM] {
        let mut session =
            BoardSession::live(protocol, ReconstructorConfig::default(), GameSetup::default(), LinkConfig::default());
        let refused = session.handle_command(at(100), &Command::Calibrate).unwrap_err();
        assert_eq!(refused, CommandError::CannotCalibrate);
        assert!(refused.to_string().starts_with("only a Certabo board is calibrated"), "{refused}");
    }
}
