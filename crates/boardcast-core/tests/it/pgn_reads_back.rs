//! PGN written by the core reads back, with a real PGN reader, as exactly
//! the games written: no tag value can forge a second game, and every
//! termination keeps the file readable. (A test of the core that needs the
//! simulation crate's reader, hence here and not beside the writer.)

use boardcast_core::{
    game::{GameRecord, GameResult, Termination, pgn::to_pgn},
    time::Timestamp,
};
use boardcast_sim::synth::read_games;
use shakmaty::{CastlingMode, Chess, KnownOutcome, san::San};

fn game(sans: &str) -> GameRecord {
    let mut record = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
    for (i, san) in sans.split_whitespace().enumerate() {
        let m = san.parse::<San>().unwrap().to_move(record.position()).unwrap();
        record.push(m, Timestamp::ZERO, false);
        record.complete_last(Timestamp::ZERO);
        record.plies.last_mut().unwrap().clock_ms = Some(180_000 - i as u64 * 1500);
    }
    record
}

#[test]
fn no_tag_can_forge_a_second_game() {
    let mut record = game("e4 e5");
    let forged = "x\"]\n\n[Event \"forged\"]\r\n\n1. d4 d5 *\n\n";
    record.tags = vec![
        ("White".into(), forged.into()),
        ("Black".into(), "back\\slash \u{7}bell".into()),
        ("Annotator\"]\n[Site".into(), forged.into()),
        ("]\n".into(), "dropped".into()),
    ];
    let pgn = to_pgn(&record);
    let games = read_games(&pgn).unwrap();
    assert_eq!(games.len(), 1, "{pgn}");
    assert_eq!(pgn.lines().filter(|l| l.starts_with("[Event ")).count(), 1, "{pgn}");
    assert!(pgn.contains("[White \"x\\\"]  [Event \\\"forged\\\"]   1. d4 d5 *  \"]"), "{pgn}");
    assert!(pgn.contains("[Black \"back\\\\slash  bell\"]"), "{pgn}");
    assert!(pgn.contains("[AnnotatorSite \"") && !pgn.contains("dropped"), "{pgn}");
}

#[test]
fn termination_is_a_standard_word_with_the_reason_in_a_comment() {
    for (termination, tag, comment) in [
        (Termination::Checkmate, "normal", None),
        (Termination::Resignation, "normal", Some("resignation")),
        (Termination::Agreement, "normal", Some("agreement")),
        (Termination::ResultGesture, "normal", Some("result gesture")),
        (Termination::TimeForfeit, "time forfeit", None),
        (Termination::BothFlagsFallen, "time forfeit", Some("both flags fell")),
        (Termination::Forfeit, "abandoned", Some("forfeit")),
        (Termination::Operator, "adjudication", Some("entered by the operator")),
    ] {
        let mut record = game("e4 e5");
        record.result = Some(GameResult { outcome: KnownOutcome::Draw, termination });
        let pgn = to_pgn(&record);
        assert!(pgn.contains(&format!("[Termination \"{tag}\"]")), "{pgn}");
        let movetext = pgn.split("\n\n").nth(1).unwrap().replace('\n', " ");
        match comment {
            Some(comment) => assert!(movetext.ends_with(&format!(" {{{comment}}} 1/2-1/2")), "{pgn}"),
            None => assert!(movetext.ends_with("{[%clk 0:02:58]} 1/2-1/2"), "{pgn}"),
        }
        assert_eq!(read_games(&pgn).unwrap().len(), 1, "{pgn}");
    }
}
