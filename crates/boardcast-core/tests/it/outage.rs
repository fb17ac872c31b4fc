//! A board that loses its connection mid-game and comes back: the moves
//! made meanwhile are filled in when the daemon can infer them, and when it
//! cannot, the arbiter is told at once that moves are missing (`board_gap`)
//! while the record keeps every move up to the loss. The port's changes are
//! capture records of their own, so a replay judges the outage as the live
//! daemon did.

use boardcast_core::{
    alert::AlertKind,
    capture::{CaptureHeader, CaptureReader, LinkChange, Record, RecordBody, format_header, format_record},
    protocol::Protocol,
    time::Timestamp,
};

use crate::support::script::Script;

#[test]
fn moves_the_daemon_cannot_infer_after_an_outage_are_told_as_a_gap_and_the_record_keeps_the_rest() {
    let mut script = Script::new();
    script.moves("e2e4 e7e5 g1f3 b8c6").unplug().wait(300);
    // Six plies while the cable is out: more than the three the daemon
    // fills in.
    script.moves("f1b5 a7a6 b5a4 g8f6 e1g1 f8e7").wait(1000).replug().wait(6000);
    let run = script.run();
    let gaps = run.alerts_of(AlertKind::BoardGap);
    assert_eq!(gaps.len(), 1, "{}", run.trace());
    let gap = gaps[0];
    // Without a clock the last move before the loss (Nc6) is made, not yet
    // completed: the alert counts completed plies.
    assert_eq!(gap.ply, 3, "the gap comes after the moves the record has");
    assert!(!gap.squares.is_empty());
    assert!(gap.message.contains("disconnected for") && gap.message.contains("`moves`"), "{}", gap.message);
    assert_eq!(run.san(), ["e4", "e5", "Nf3", "Nc6"], "every move up to the loss is kept");
}

#[test]
fn a_move_made_while_the_cable_was_out_is_filled_in_without_a_gap() {
    let mut script = Script::new();
    script.moves("e2e4 e7e5").unplug().wait(300).moves("g1f3").wait(500).replug().wait(6000);
    let run = script.run();
    assert!(run.alerts_of(AlertKind::BoardGap).is_empty(), "{}", run.trace());
    assert_eq!(run.san(), ["e4", "e5", "Nf3"]);
}

#[test]
fn a_board_knocked_about_long_after_the_outage_is_not_blamed_on_it() {
    let mut script = Script::new();
    script.moves("e2e4 e7e5").unplug().wait(300).replug().wait(15_000);
    // A quarter of a minute later a pawn is knocked onto another square.
    script.lift("a2").wait(100).place("a5", 'P').wait(6000);
    let run = script.run();
    assert_eq!(run.alerts_of(AlertKind::OutOfSync).len(), 1, "{}", run.trace());
    assert!(run.alerts_of(AlertKind::BoardGap).is_empty(), "{}", run.trace());
}

#[test]
fn the_port_opening_and_closing_is_recorded_and_read_back() {
    let header = CaptureHeader::new(Protocol::DGT, "b1".to_owned());
    let records = [
        Record { t: Timestamp::from_millis(5), body: RecordBody::Link(LinkChange::Connected) },
        Record { t: Timestamp::from_millis(9000), body: RecordBody::Link(LinkChange::Disconnected) },
    ];
    let lines: Vec<String> = records.iter().map(format_record).collect();
    assert_eq!(lines, [r#"{"t_us":5000,"link":"connected"}"#, r#"{"t_us":9000000,"link":"disconnected"}"#]);
    let text = format!("{}\n{}\n", format_header(&header), lines.join("\n"));
    let read: Vec<Record> = CaptureReader::new(&text).unwrap().map(Result::unwrap).collect();
    assert_eq!(read, records);
    let bad = format!("{}\n{{\"t_us\":1,\"link\":\"unplugged\"}}\n", format_header(&header));
    let error = CaptureReader::new(&bad).unwrap().next().unwrap().unwrap_err().to_string();
    assert!(error.contains("line 2") && error.contains("\"unplugged\""), "{error}");
}
