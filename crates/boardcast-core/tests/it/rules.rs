//! One test (or a few) per row of the rules the daemon implements
//! (`docs/rules.md`, from the FIDE Laws): reconstruction R1–R13, end of the
//! game E1–E7, the clock C1–C3 and notation N1. Each writes what hands and a
//! clock do at the board, in virtual time, and checks what the daemon makes
//! of it. The irregularity alerts have their own file, `alerts.rs`.

use crate::support::script::Script;
use boardcast_core::{
    alert::AlertKind,
    event::{BoardStatus, EventKind},
    game::{Tempo, Termination, pgn::to_pgn},
    reconstruct::{GameSetup, ReconstructorConfig, RotatedBoard, UncertainOrder},
    sensor::Cell,
};
use shakmaty::{Board, Color};

fn tags(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

// R1 (3.1–3.9): only legal moves are accepted.

#[test]
fn r1_a_piece_moved_illegally_is_not_a_move() {
    let mut s = Script::new();
    s.mv("e1e3").wait(3000);
    let run = s.run();
    assert!(run.uci().is_empty(), "{}", run.trace());
    assert!(matches!(run.statuses().last(), Some(BoardStatus::OutOfSync { .. })), "{}", run.trace());
}

#[test]
fn r1_legal_moves_are_accepted_in_order() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5 g1f3 b8c6 f1b5 a7a6");
    let run = s.run();
    assert_eq!(run.san(), ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"]);
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

// R2 (3.1.1, 4.7.1): captures in any order.

fn capture_position() -> Script {
    let mut s = Script::new();
    s.moves("e2e4 d7d5");
    s
}

#[test]
fn r2_captured_piece_lifted_first() {
    let mut s = capture_position();
    s.lift("d5").wait(200).lift("e4").wait(200).place("d5", 'P').wait(800);
    assert_eq!(s.run().san(), ["e4", "d5", "exd5"]);
}

#[test]
fn r2_own_piece_lifted_first() {
    let mut s = capture_position();
    s.lift("e4").wait(200).lift("d5").wait(200).place("d5", 'P').wait(800);
    assert_eq!(s.run().san(), ["e4", "d5", "exd5"]);
}

#[test]
fn r2_both_pieces_in_the_air_at_once() {
    let mut s = capture_position();
    s.lift("e4").lift("d5").wait(700).place("d5", 'P').wait(800);
    let run = s.run();
    assert_eq!(run.san(), ["e4", "d5", "exd5"]);
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

#[test]
fn r2_capture_seen_only_as_the_square_changing() {
    let mut s = capture_position();
    s.lift("e4").wait(200).place("d5", 'P').wait(800);
    assert_eq!(s.run().san(), ["e4", "d5", "exd5"]);
}

// R3 (3.8.2, 4.7.2): castling in any order.

fn castle_position() -> Script {
    let mut s = Script::new();
    s.moves("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 d2d3 f8e7 c1e3 d7d6 b1c3 c8e6 d1d2 d8d7");
    s
}

#[test]
fn r3_castling_king_first_then_rook() {
    let mut s = castle_position();
    s.lift("e1").wait(150).place("g1", 'K').wait(500).lift("h1").wait(150).place("f1", 'R').wait(800);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "O-O");
    assert_eq!(run.uci().last().unwrap(), "e1g1");
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

#[test]
fn r3_castling_with_king_and_rook_in_the_air_together() {
    let mut s = castle_position();
    s.lift("e1").lift("a1").wait(400).place("c1", 'K').place("d1", 'R').wait(800);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "O-O-O");
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

#[test]
fn r3_castling_with_the_king_sliding_over_f1() {
    let mut s = castle_position();
    s.lift("e1").place("f1", 'K').wait(60).lift("f1").place("g1", 'K').wait(500);
    s.lift("h1").wait(100).place("f1", 'R').wait(800);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "O-O", "{}", run.trace());
    assert!(!run.move_events().iter().any(|e| e.contains("e1f1")), "{}", run.trace());
}

// R4 (3.7.4): en passant in any order.

fn en_passant_position() -> Script {
    let mut s = Script::new();
    s.moves("e2e4 a7a6 e4e5 d7d5");
    s
}

#[test]
fn r4_en_passant_captured_pawn_first() {
    let mut s = en_passant_position();
    s.lift("d5").wait(200).lift("e5").wait(150).place("d6", 'P').wait(800);
    assert_eq!(s.run().san().last().unwrap(), "exd6");
}

#[test]
fn r4_en_passant_captured_pawn_last() {
    let mut s = en_passant_position();
    s.lift("e5").wait(150).place("d6", 'P').wait(500).lift("d5").wait(800);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "exd6", "{}", run.trace());
    assert_eq!(run.move_events().iter().filter(|e| e.starts_with("made")).count(), 5, "no other move was made");
}

// R5 (3.7.5, 4.6): promotion.

fn promotion_position() -> Script {
    Script::from_placement("r3k3/1P6/8/8/8/8/8/4K3")
}

#[test]
fn r5_the_pawn_need_not_touch_the_promotion_square() {
    let mut s = promotion_position();
    s.lift("b7").wait(300).place("b8", 'Q').wait(800);
    let run = s.run_setup(GameSetup { start: Some(start("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1")), ..Default::default() });
    assert_eq!(run.san(), ["b8=Q+"]);
}

#[test]
fn r5_new_piece_placed_before_the_pawn_is_removed() {
    let mut s = promotion_position();
    s.place("b8", 'N').wait(400).lift("b7").wait(800);
    let run = s.run_setup(GameSetup { start: Some(start("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1")), ..Default::default() });
    assert_eq!(run.san(), ["b8=N"], "{}", run.trace());
}

#[test]
fn r5_pawn_on_the_last_rank_then_exchanged() {
    let mut s = promotion_position();
    s.lift("b7").wait(100).place("b8", 'P').wait(600).lift("b8").wait(300).place("b8", 'R').wait(800);
    let run = s.run_setup(GameSetup { start: Some(start("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1")), ..Default::default() });
    assert_eq!(run.san(), ["b8=R+"], "{}", run.trace());
}

#[test]
fn r5_capture_on_the_promotion_square_takes_the_piece_placed() {
    let mut s = promotion_position();
    s.lift("a8").wait(200).lift("b7").wait(200).place("a8", 'B').wait(800);
    let run = s.run_setup(GameSetup { start: Some(start("r3k3/1P6/8/8/8/8/8/4K3 w - - 0 1")), ..Default::default() });
    assert_eq!(run.san(), ["bxa8=B"]);
}

fn start(fen: &str) -> shakmaty::Chess {
    fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap()
}

// R6 (4.7): squares a sliding piece crosses are ignored.

#[test]
fn r6_a_queen_slid_across_squares_makes_one_move() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    s.lift("d1").place("e2", 'Q').wait(40).lift("e2").place("f3", 'Q').wait(40).lift("f3");
    s.place("g4", 'Q').wait(40).lift("g4").place("h5", 'Q').wait(800);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "Qh5");
    assert_eq!(run.move_events().iter().filter(|e| e.starts_with("made")).count(), 3, "{}", run.trace());
    assert!(!run.move_events().iter().any(|e| e.starts_with("amended")), "{}", run.trace());
}

#[test]
fn r6_a_slide_that_stops_short_is_judged_once_the_board_settles() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    s.lift("f1").place("e2", 'B').wait(40).lift("e2").place("d3", 'B');
    let placed = s.now();
    s.wait(1000);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "Bd3");
    let made = run.events.iter().find_map(|e| match &e.kind {
        EventKind::MoveMade(m) if m.ply == 3 => Some(e.t),
        _ => None,
    });
    let settle = ReconstructorConfig::default().settle;
    assert_eq!(made, Some(placed + settle), "the bishop could still be on its way to c4: judged once settled");
}

// R7 (6.2.1): made and completed; amended and retracted explicitly.

#[test]
fn r7_a_move_is_made_at_once_and_completed_by_the_press() {
    let mut s = Script::new();
    s.start_clock(300_000).mv("e2e4").press(Color::White, 2000).wait(1000);
    let run = s.run();
    assert_eq!(run.move_events(), ["made e2e4", "completed 1"]);
    let made = run.events.iter().position(|e| matches!(e.kind, EventKind::MoveMade(_))).unwrap();
    let completed = run.events.iter().position(|e| matches!(e.kind, EventKind::MoveCompleted { .. })).unwrap();
    assert!(run.events[made].t < run.events[completed].t);
    let seqs: Vec<u64> = run.events.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1), "one sequence, no gaps: {seqs:?}");
}

#[test]
fn r7_a_changed_move_is_amended_never_emitted_twice() {
    let mut s = Script::new();
    s.start_clock(300_000).mv("g1f3").wait(500).mv("f3h3").press(Color::White, 0).wait(1000);
    let run = s.run();
    assert_eq!(run.move_events(), ["made g1f3", "amended g1f3>g1h3", "completed 1"], "{}", run.trace());
    assert_eq!(run.uci(), ["g1h3"]);
}

// R8 (4.7): taken back before completion: retracted; a different move made
// instead: amended and alerted.

#[test]
fn r8_a_move_taken_back_before_the_press_is_retracted() {
    let mut s = Script::new();
    s.start_clock(300_000).mv("e2e4").wait(500).mv("e4e2").wait(2000);
    let run = s.run();
    assert_eq!(run.move_events(), ["made e2e4", "retracted e2e4"]);
    assert!(run.uci().is_empty());
    assert!(run.alerts().is_empty(), "taking back is not alerted by itself: {}", run.trace());
}

#[test]
fn r8_a_different_move_after_a_take_back_is_amended_and_alerted() {
    let mut s = Script::new();
    s.start_clock(300_000).mv("e2e4").wait(500).mv("e4e2").wait(500).mv("d2d4").press(Color::White, 0).wait(1000);
    let run = s.run();
    assert_eq!(run.uci(), ["d2d4"], "{}", run.trace());
    assert_eq!(run.move_events(), ["made e2e4", "retracted e2e4", "made d2d4", "completed 1"]);
    // Two articles, one incident: the pawn on e2 was released on e4 (4.7)
    // and was the first piece touched (4.3.1).
    assert_eq!(run.alert_kinds(), [AlertKind::ReleasedPieceMoved, AlertKind::TouchedOwnPiece], "{}", run.trace());
    assert!(run.alerts().iter().all(|a| a.ply == 0));
}

// R9 (7.4–7.6): out of sync, with the squares, and back.

#[test]
fn r9_out_of_sync_with_the_squares_then_restored() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    s.lift("g1").wait(100).place("g3", 'N').wait(3000);
    s.lift("g3").wait(100).place("g1", 'N').wait(1000);
    s.mv("g1f3").wait(1000);
    let run = s.run();
    let statuses = run.statuses();
    let Some(BoardStatus::OutOfSync { squares }) = statuses.iter().find(|s| matches!(s, BoardStatus::OutOfSync { .. }))
    else {
        panic!("no out-of-sync status: {}", run.trace())
    };
    let names: Vec<String> = squares.iter().map(ToString::to_string).collect();
    assert_eq!(names, ["g1", "g3"]);
    assert_eq!(statuses.last(), Some(&BoardStatus::InSync));
    assert_eq!(run.san(), ["e4", "e5", "Nf3"]);
    let alert = run.alerts_of(AlertKind::OutOfSync);
    assert_eq!(alert.len(), 1);
    assert_eq!(alert[0].ply, 2);
}

// R10: several moves at once, filled in when exactly one sequence fits.

#[test]
fn r10_two_moves_seen_at_once_are_filled_in() {
    let mut s = Script::new();
    // A board dump two plies ahead, as after a reconnection.
    s.wait(500).dump("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR").wait(1500);
    let run = s.run();
    assert_eq!(run.san(), ["e4", "e5"], "{}", run.trace());
    let inferred = run.events.iter().filter(|e| matches!(&e.kind, EventKind::MoveMade(m) if m.inferred)).count();
    assert_eq!(inferred, 2);
}

#[test]
fn r10_a_board_that_several_orders_of_the_same_moves_explain_is_alerted_and_waits() {
    let mut s = Script::new();
    // 1.Nf3 e5 2.Nc3 and 1.Nc3 e5 2.Nf3 leave the same board.
    s.wait(500).dump("rnbqkbnr/pppp1ppp/8/4p3/8/2N2N2/PPPPPPPP/R1BQKB1R").wait(3000);
    let run = s.run();
    assert!(run.uci().is_empty(), "{}", run.trace());
    let alerts = run.alerts_of(AlertKind::AmbiguousMoves);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert!(alerts[0].message.contains("Nc3 e5 Nf3 or Nf3 e5 Nc3"), "{}", alerts[0].message);
    assert!(alerts[0].message.contains("the position is the same either way; waiting"), "{}", alerts[0].message);
}

#[test]
fn r10_with_uncertain_order_record_the_game_goes_on_with_the_order_marked() {
    let mut s = Script::new();
    s.wait(500).dump("rnbqkbnr/pppp1ppp/8/4p3/8/2N2N2/PPPPPPPP/R1BQKB1R").wait(3000);
    s.mv("e5e4").wait(1500);
    let config = ReconstructorConfig { uncertain_order: UncertainOrder::Record, ..Default::default() };
    let run = s.run_with(config, GameSetup::default());
    assert_eq!(run.san(), ["Nc3", "e5", "Nf3", "e4"], "{}", run.trace());
    let game = run.game();
    assert!(game.plies[..3].iter().all(|p| p.inferred && p.order_uncertain), "{}", run.trace());
    assert!(!game.plies[3].inferred && !game.plies[3].order_uncertain);
    let alerts = run.alerts_of(AlertKind::AmbiguousMoves);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert!(
        alerts[0].message.contains("recorded as Nc3 e5 Nf3, with the order marked uncertain"),
        "{}",
        alerts[0].message
    );
    let pgn = to_pgn(game);
    assert!(pgn.contains("1. Nc3 {inferred, order uncertain}"), "{pgn}");
}

#[test]
fn r10_a_board_that_orders_of_different_consequence_explain_is_alerted_and_waits() {
    // After 1.Nf3 … d4 the last move was a double step Black may take en
    // passant; after 1.d4 … Nf3 it was not. Same board, different
    // positions: the daemon cannot choose, so it waits.
    let fen = "rnbqkbnr/pppp1ppp/8/8/4p3/8/PPPPPPPP/RNBQKBNR w KQkq - 0 3";
    let mut s = Script::from_placement("rnbqkbnr/pppp1ppp/8/8/4p3/8/PPPPPPPP/RNBQKBNR");
    s.wait(500).dump("r1bqkbnr/pppp1ppp/2n5/8/3Pp3/5N2/PPP1PPPP/RNBQKB1R").wait(3000);
    let run = s.run_setup(GameSetup { start: Some(start(fen)), ..Default::default() });
    assert!(run.uci().is_empty(), "{}", run.trace());
    let alerts = run.alerts_of(AlertKind::AmbiguousMoves);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert!(alerts[0].message.contains("waiting for the board or the operator"), "{}", alerts[0].message);
}

// R11: the result gesture is a result, never a move.

#[test]
fn r11_kings_on_light_centre_squares_mean_white_won() {
    let mut s = Script::new();
    s.start_clock(300_000).pressed_moves("e2e4 e7e5 d1h5 b8c6 f1c4 g8f6");
    s.wait(2000).clock_set(280_000, 280_000, None);
    s.lift("e1").wait(100).place("e4", 'K').wait(200).lift("e8").wait(100).place("d5", 'k').wait(3000);
    let run = s.run();
    assert_eq!(run.result(), "1-0", "{}", run.trace());
    assert_eq!(run.game().result.unwrap().termination, Termination::ResultGesture);
    assert_eq!(run.uci().len(), 6);
}

#[test]
fn r11_a_king_step_into_the_centre_that_starts_the_gesture_is_taken_back() {
    // White's king on e3 could step to e4: with a clock, an unpressed king
    // move into the centre followed by the other king is the gesture.
    let mut s = Script::from_placement("4k3/8/8/8/8/4K3/8/7R");
    s.start_clock(60_000).wait(500);
    s.lift("e3").wait(100).place("d4", 'K').wait(900).lift("e8").wait(100).place("e5", 'k').wait(3000);
    let run = s.run_setup(GameSetup { start: Some(start("4k3/8/8/8/8/4K3/8/7R w - - 0 1")), ..Default::default() });
    assert_eq!(run.result(), "0-1", "{}", run.trace());
    assert!(run.uci().is_empty(), "{}", run.trace());
    assert!(run.move_events().contains(&"retracted e3d4".to_string()), "{}", run.trace());
}

#[test]
fn r11_without_a_clock_a_king_move_onto_the_centre_stays_before_a_quick_gesture() {
    // Kd4 was a real move (the last of the game), and the players showed
    // the result a moment later with the other king. Without a clock the
    // board cannot tell this from the gesture's first king: the move seen
    // stays (the operator can take it back).
    let mut s = Script::from_placement("4k3/8/8/8/8/4K3/8/7R");
    s.wait(500);
    s.lift("e3").wait(100).place("d4", 'K').wait(1500).lift("e8").wait(100).place("e5", 'k').wait(3000);
    let run = s.run_setup(GameSetup { start: Some(start("4k3/8/8/8/8/4K3/8/7R w - - 0 1")), ..Default::default() });
    assert_eq!(run.result(), "0-1", "{}", run.trace());
    assert_eq!(run.uci(), ["e3d4"], "{}", run.trace());
}

#[test]
fn r11_the_gesture_must_be_held() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    s.lift("e1").place("e4", 'K').lift("e8").place("d5", 'k').wait(800);
    s.lift("e4").place("e1", 'K').lift("d5").place("e8", 'k').wait(2000);
    assert_eq!(s.run().result(), "*");
}

#[test]
fn r11_a_move_read_in_the_same_instant_as_the_gesture_is_kept() {
    // A daemon that reads the board late (a machine under load, a hub
    // that holds the bytes back) gets the last move and the kings at
    // once: the board was never seen still with the move on it. Black's
    // bishop could still have been sliding when Black's own king was
    // lifted (without a clock the players start the gesture with the king
    // of the side that moved last), so the move was never made. It was
    // made all the same, before the kings went to the centre.
    let mut s = Script::new();
    s.moves("e2e4 e7e5 g1f3");
    s.lift("f8").place("c5", 'b').lift("e8").place("d5", 'k').lift("e1").place("d4", 'K').wait(3000);
    let run = s.run();
    assert_eq!(run.result(), "1/2-1/2", "{}", run.trace());
    assert_eq!(run.uci(), ["e2e4", "e7e5", "g1f3", "f8c5"], "{}", run.trace());
}

// R12 (7.2.2): a board turned 180°.

#[test]
fn r12_a_turned_board_is_flipped() {
    let mut s = Script::rotated();
    s.moves("e2e4 e7e5 g1f3");
    let run = s.run();
    assert_eq!(run.san(), ["e4", "e5", "Nf3"], "{}", run.trace());
    assert!(run.events.iter().any(|e| matches!(e.kind, EventKind::GameStarted { rotated: true, .. })));
}

#[test]
fn r12_a_turned_board_is_alerted_when_so_configured() {
    let mut s = Script::rotated();
    s.moves("e2e4 e7e5");
    let config = ReconstructorConfig { rotated_board: RotatedBoard::Alert, ..Default::default() };
    let run = s.run_with(config, GameSetup::default());
    assert!(run.games.is_empty(), "no game starts on a turned board: {}", run.trace());
    assert_eq!(run.alert_kinds(), [AlertKind::RotatedBoard]);
}

// R13 (Chess960): any start position, four castling methods.

fn chess960(n: u32) -> (Script, GameSetup) {
    (Script::from_board(&Board::chess960(n)), GameSetup { chess960: true, ..Default::default() })
}

#[test]
fn r13_castling_where_king_and_rook_both_move() {
    // 518 is the standard arrangement.
    let (mut s, setup) = chess960(518);
    s.moves("g1f3 g8f6 e2e3 e7e6 f1e2 f8e7");
    s.lift("e1").wait(100).place("g1", 'K').wait(400).lift("h1").wait(100).place("f1", 'R').wait(800);
    let run = s.run_setup(setup);
    assert_eq!(run.san().last().unwrap(), "O-O", "{}", run.trace());
    assert_eq!(run.uci().last().unwrap(), "e1h1", "Chess960 UCI: king takes rook");
    assert!(to_pgn(run.game()).contains("[Variant \"Chess960\"]"));
}

#[test]
fn r13_castling_where_king_and_rook_swap() {
    // King f1, rook g1: O-O puts the king on g1 and the rook on f1.
    let (mut s, setup) = chess960_from("rbbnqkrn/pppppppp/8/8/8/8/PPPPPPPP/RBBNQKRN");
    s.lift("f1").lift("g1").wait(300).place("g1", 'K').place("f1", 'R').wait(800);
    let run = s.run_setup(setup);
    assert_eq!(run.san(), ["O-O"], "{}", run.trace());
    assert_eq!(run.uci(), ["f1g1"]);
}

fn chess960_from(placement: &str) -> (Script, GameSetup) {
    (Script::from_placement(placement), GameSetup { chess960: true, ..Default::default() })
}

#[test]
fn r13_castling_where_only_the_rook_moves() {
    // King already on g1: O-O moves only the rook h1-f1.
    let (mut s, setup) = chess960_from("bqnrnbkr/pppppppp/8/8/8/8/PPPPPPPP/BQNRNBKR");
    s.moves("e2e4 e7e5 f1e2 f8e7");
    s.lift("h1").wait(100).place("f1", 'R').wait(800);
    let run = s.run_setup(setup);
    assert_eq!(run.san().last().unwrap(), "O-O", "{}", run.trace());
    assert_eq!(run.uci().last().unwrap(), "g1h1");
}

#[test]
fn r13_castling_where_only_the_king_moves() {
    // Rook already on f1: O-O moves only the king e1-g1.
    let (mut s, setup) = chess960_from("rnbqkrnb/pppppppp/8/8/8/8/PPPPPPPP/RNBQKRNB");
    s.moves("g1f3 g8f6");
    s.lift("e1").wait(100).place("g1", 'K').wait(800);
    let run = s.run_setup(setup);
    assert_eq!(run.san().last().unwrap(), "O-O", "{}", run.trace());
    assert_eq!(run.uci().last().unwrap(), "e1f1");
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

#[test]
fn r13_any_chess960_start_position_starts_a_game() {
    for n in [0, 123, 517, 959] {
        let (mut s, setup) =
            (Script::from_board(&Board::chess960(n)), GameSetup { chess960: true, ..Default::default() });
        s.moves("a2a3 a7a6");
        let run = s.run_setup(setup);
        assert_eq!(run.uci(), ["a2a3", "a7a6"], "position {n}");
        let pgn = to_pgn(run.game());
        assert!(pgn.contains("[Variant \"Chess960\"]") && pgn.contains("[SetUp \"1\"]"), "{pgn}");
    }
}

// E1–E5: the end of the game.

#[test]
fn e1_checkmate_ends_the_game_and_completes_the_move() {
    let mut s = Script::new();
    s.start_clock(300_000).pressed_moves("f2f3 e7e5 g2g4").mv("d8h4").wait(2000);
    let run = s.run();
    assert_eq!(run.result(), "0-1");
    assert_eq!(run.game().result.unwrap().termination, Termination::Checkmate);
    assert_eq!(run.san().last().unwrap(), "Qh4#");
    assert!(run.move_events().ends_with(&["made d8h4".to_string(), "completed 4".to_string()]), "{}", run.trace());
}

#[test]
fn e2_stalemate_is_a_draw() {
    let mut s = Script::from_placement("7k/8/6K1/8/8/8/8/5Q2");
    s.mv("f1f7").wait(1000);
    let run = s.run_setup(GameSetup { start: Some(start("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1")), ..Default::default() });
    assert_eq!(run.result(), "1/2-1/2");
    assert_eq!(run.game().result.unwrap().termination, Termination::Stalemate);
}

#[test]
fn e3_a_dead_position_is_a_draw() {
    let mut s = Script::from_placement("7k/8/8/8/8/8/8/N5Kb");
    s.mv("g1h1").wait(1000);
    let run = s.run_setup(GameSetup { start: Some(start("7k/8/8/8/8/8/8/N5Kb w - - 0 1")), ..Default::default() });
    assert_eq!(run.result(), "1/2-1/2");
    assert_eq!(run.game().result.unwrap().termination, Termination::DeadPosition);
}

#[test]
fn e3_a_locked_blockade_is_a_dead_position() {
    // d3-d4 closes the pawn chain across the board: neither king can ever
    // get past it, no capture is ever possible, nobody can ever mate.
    let placement = "4k3/8/8/1p1p1p1p/1P3P1P/3P4/8/4K3";
    let mut s = Script::from_placement(placement);
    s.mv("d3d4").wait(1000);
    let run = s.run_setup(GameSetup { start: Some(start(&format!("{placement} w - - 0 1"))), ..Default::default() });
    assert_eq!(run.result(), "1/2-1/2", "{}", run.trace());
    assert_eq!(run.game().result.unwrap().termination, Termination::DeadPosition);
}

#[test]
fn e3_a_blockade_that_a_capture_can_break_goes_on() {
    // Every pawn is blocked, but d4xe5 is possible: not dead.
    let placement = "4k3/8/8/3pp3/3P4/4P3/8/4K3";
    let mut s = Script::from_placement(placement);
    s.mv("e3e4").wait(1000);
    let run = s.run_setup(GameSetup { start: Some(start(&format!("{placement} w - - 0 1"))), ..Default::default() });
    assert_eq!(run.san(), ["e4"]);
    assert!(run.game().result.is_none(), "{}", run.trace());
}

#[test]
fn e4_fivefold_repetition_ends_the_game_and_threefold_is_announced() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    for _ in 0..4 {
        s.moves("g1f3 g8f6 f3g1 f6g8");
    }
    s.moves("g1f3");
    let run = s.run();
    assert_eq!(run.result(), "1/2-1/2", "{}", run.trace());
    assert_eq!(run.game().result.unwrap().termination, Termination::FivefoldRepetition);
    assert_eq!(run.uci().len(), 18, "the move after the fifth repetition is not played");
    let threefold = run.alerts_of(AlertKind::ThreefoldRepetition);
    assert!(!threefold.is_empty());
    assert_eq!(threefold[0].ply, 9, "announced after the third occurrence (ply 10 made, 9 completed)");
}

#[test]
fn e5_the_75_move_rule_ends_the_game_and_50_moves_are_announced() {
    let fen = "7k/8/8/8/8/8/R7/K7 w - - 98 80";
    let mut s = Script::from_placement("7k/8/8/8/8/8/R7/K7");
    s.moves("a2b2 h8g8");
    let run = s.run_setup(GameSetup { start: Some(start(fen)), ..Default::default() });
    assert_eq!(run.alert_kinds(), [AlertKind::FiftyMoves], "{}", run.trace());
    assert_eq!(run.result(), "*");
    let mut s = Script::from_placement("7k/8/8/8/8/8/R7/K7");
    s.moves("a2b2");
    let run = s.run_setup(GameSetup { start: Some(start("7k/8/8/8/8/8/R7/K7 w - - 149 100")), ..Default::default() });
    assert_eq!(run.game().result.unwrap().termination, Termination::SeventyFiveMoves);
}

// E7 (6.9, III.3): flags.

#[test]
fn e7_a_flag_falls_to_a_loss() {
    let mut s = Script::new();
    s.start_clock(10_000).pressed_moves("e2e4 e7e5").wait(12_000);
    let run = s.run_setup(GameSetup { tempo: Some(Tempo::Standard), ..Default::default() });
    assert_eq!(run.result(), "0-1", "{}", run.trace());
    assert_eq!(run.game().result.unwrap().termination, Termination::TimeForfeit);
    assert_eq!(run.alert_kinds(), [AlertKind::FlagFallen]);
}

#[test]
fn e7_a_flag_against_a_bare_king_is_a_draw() {
    let mut s = Script::from_placement("7k/8/8/8/8/8/8/R6K");
    s.start_clock(3_000).wait(4_000);
    let run = s.run_setup(GameSetup { start: Some(start("7k/8/8/8/8/8/8/R6K w - - 0 1")), ..Default::default() });
    assert_eq!(run.result(), "1/2-1/2", "{}", run.trace());
    assert_eq!(run.game().result.unwrap().termination, Termination::TimeForfeitDraw);
}

#[test]
fn e7_in_rapid_without_supervision_a_flag_is_alerted_and_play_goes_on() {
    let mut s = Script::new();
    s.start_clock(5_000).pressed_moves("e2e4").wait(6_000).mv("e7e5");
    let setup = GameSetup { tags: tags(&[("TimeControl", "900+10")]), ..Default::default() };
    let run = s.run_setup(setup);
    assert_eq!(run.result(), "*");
    assert_eq!(run.alert_kinds(), [AlertKind::FlagFallen]);
    assert_eq!(run.uci(), ["e2e4", "e7e5"]);
}

#[test]
fn e7_both_flags_down_at_once_in_the_last_period_is_a_draw() {
    let mut s = Script::new();
    s.start_clock(60_000).pressed_moves("e2e4 e7e5").clock_set(0, 0, None).wait(1000);
    let run = s.run();
    assert_eq!(run.result(), "1/2-1/2", "{}", run.trace());
    assert_eq!(run.game().result.unwrap().termination, Termination::BothFlagsFallen);
}

// C1–C3: the clock.

#[test]
fn c1_c2_the_press_completes_and_records_the_clock() {
    let mut s = Script::new();
    s.start_clock(180_000)
        .wait(2000)
        .mv("e2e4")
        .press(Color::White, 2000)
        .wait(3000)
        .mv("e7e5")
        .press(Color::Black, 2000);
    let run = s.run();
    let clocks: Vec<Option<u64>> = run.game().plies.iter().map(|p| p.clock_ms).collect();
    // White's clock ran 2.85 s before the press, Black's 3.85 s; +2 s each.
    assert_eq!(clocks, [Some(180_000 - 2_850 + 2_000), Some(180_000 - 3_850 + 2_000)], "{}", run.trace());
    let pgn = to_pgn(run.game());
    assert!(pgn.contains("1. e4 {[%clk 0:02:59]} 1... e5 {[%clk 0:02:58]}"), "{pgn}");
}

#[test]
fn c3_a_flag_after_the_moves_of_the_period_were_made_is_alerted_not_lost() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5 g1f3").clock_set(0, 500_000, Some(Color::Black)).wait(500);
    let setup = GameSetup { tags: tags(&[("TimeControl", "2/600:300")]), ..Default::default() };
    let run = s.run_setup(setup);
    assert_eq!(run.result(), "*", "{}", run.trace());
    assert_eq!(run.alert_kinds(), [AlertKind::FlagAfterQuota]);
}

// N1 (8.1, C): the PGN.

#[test]
fn n1_pgn_has_the_roster_san_clocks_and_result() {
    let mut s = Script::new();
    s.start_clock(300_000).pressed_moves("e2e4 e7e5 d1h5 b8c6 f1c4 g8f6").mv("h5f7").wait(1000);
    let setup = GameSetup {
        tags: tags(&[("Event", "Club"), ("Round", "1"), ("White", "A"), ("Black", "B"), ("Date", "2026.11.21")]),
        ..Default::default()
    };
    let run = s.run_setup(setup);
    let pgn = to_pgn(run.game());
    assert!(pgn.starts_with("[Event \"Club\"]\n[Site \"?\"]\n[Date \"2026.11.21\"]\n[Round \"1\"]\n[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n"), "{pgn}");
    assert!(pgn.contains("4. Qxf7# 1-0"), "{pgn}");
    assert!(pgn.contains("3... Nf6 {[%clk"), "{pgn}");
}

#[test]
fn a_piece_in_the_hand_for_a_long_time_is_not_out_of_sync() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    s.lift("g1").wait(20_000).place("f3", 'N').wait(1000);
    let run = s.run();
    assert_eq!(run.san(), ["e4", "e5", "Nf3"]);
    assert!(run.alerts().is_empty(), "{}", run.trace());
    assert!(run.statuses().is_empty(), "{:?}", run.statuses());
}

#[test]
fn flicker_shorter_than_the_settle_time_changes_nothing() {
    let mut s = Script::new();
    s.moves("e2e4 e7e5");
    s.lift("a1").wait(50).place("a1", 'R').wait(500).set("c3", Cell::Empty).wait(1000);
    s.moves("g1f3");
    let run = s.run();
    assert_eq!(run.san(), ["e4", "e5", "Nf3"]);
    assert!(run.alerts().is_empty(), "{}", run.trace());
}
