//! PGN as the core writes it: the seven-tag roster, clocks, results and
//! terminations, made moves and Chess960 starts; and, read back with a real
//! PGN reader, exactly the games written: no tag value can forge a second
//! game, and every termination keeps the file readable.

use boardcast_core::{
    game::{
        GameRecord, GameResult, Termination,
        pgn::{Plies, to_pgn, write_pgn_with},
    },
    time::Timestamp,
};
use boardcast_sim::synth::read_games;
use shakmaty::{CastlingMode, Chess, EnPassantMode, KnownOutcome, san::San};

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

#[test]
fn writes_the_seven_tag_roster_clocks_and_result() {
    let mut record = game("e4 e5 Nf3 Nc6 Bb5");
    record.tags = vec![
        ("White".into(), "Anna \"A\"".into()),
        ("Round".into(), "3".into()),
        ("TimeControl".into(), "180+2".into()),
    ];
    record.result = Some(GameResult { outcome: KnownOutcome::Draw, termination: Termination::Operator });
    let pgn = to_pgn(&record);
    assert_eq!(
        pgn,
        "[Event \"?\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"3\"]\n[White \"Anna \\\"A\\\"\"]\n[Black \"?\"]\n\
         [Result \"1/2-1/2\"]\n[TimeControl \"180+2\"]\n[Termination \"adjudication\"]\n\n\
         1. e4 {[%clk 0:03:00]} 1... e5 {[%clk 0:02:58]} 2. Nf3 {[%clk 0:02:57]}\n\
         2... Nc6 {[%clk 0:02:55]} 3. Bb5 {[%clk 0:02:54]} {entered by the operator}\n\
         1/2-1/2\n\n"
    );
}

#[test]
fn writes_a_made_move_without_a_clock_and_an_open_result() {
    let mut record = game("d4");
    let m = "d5".parse::<San>().unwrap().to_move(record.position()).unwrap();
    record.push(m, Timestamp::ZERO, false);
    let pgn = to_pgn(&record);
    assert!(pgn.ends_with("\n\n1. d4 {[%clk 0:03:00]} 1... d5 *\n\n"), "{pgn}");
    // Delivered to a broadcast site, the made move waits for its
    // completion.
    let mut delivered = String::new();
    write_pgn_with(&record, Plies::Completed, &mut delivered);
    assert!(delivered.ends_with("\n\n1. d4 {[%clk 0:03:00]} *\n\n"), "{delivered}");
    record.complete_last(Timestamp::ZERO);
    delivered.clear();
    write_pgn_with(&record, Plies::Completed, &mut delivered);
    assert!(delivered.ends_with("\n\n1. d4 {[%clk 0:03:00]} 1... d5 *\n\n"), "{delivered}");
}

#[test]
fn writes_chess960_start_positions() {
    let start: Chess = shakmaty::fen::Fen::from_position(&Chess::default(), EnPassantMode::Legal)
        .into_position(CastlingMode::Chess960)
        .unwrap();
    let record = GameRecord::new(1, start, CastlingMode::Chess960, true, Timestamp::ZERO);
    let pgn = to_pgn(&record);
    assert!(pgn.contains("[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\"]\n"), "{pgn}");
}
