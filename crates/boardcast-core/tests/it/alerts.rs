//! Every irregularity the daemon alerts arbiters to (rules.md I1–I11): each
//! is raised with the right article, side and ply (half-moves completed when
//! the irregular action began), carries its sensor evidence, and leaves the
//! game record right.

use crate::support::script::Script;
use boardcast_core::{alert::AlertKind, game::Tempo, reconstruct::GameSetup, sensor::Cell};
use shakmaty::Color;

fn blitz() -> GameSetup {
    GameSetup { tempo: Some(Tempo::Blitz), ..Default::default() }
}

fn standard() -> GameSetup {
    GameSetup { tempo: Some(Tempo::Standard), ..Default::default() }
}

// I1 (7.5.1): an illegal move completed.

#[test]
fn i1_an_illegal_move_completed_is_alerted_with_the_count() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    // The king jumps two squares and White presses.
    s.mv("e1e3").press(Color::White, 0).wait(2500);
    let run = s.run_setup(standard());
    let alert = run.alerts_of(AlertKind::IllegalMove);
    assert_eq!(alert.len(), 1, "{}", run.trace());
    let a = alert[0];
    assert_eq!((a.kind.article(), a.side, a.ply), ("7.5.1", Some(Color::White), 2));
    assert!(a.message.contains("first completed illegal move by White: two minutes extra for Black"), "{}", a.message);
    assert!(
        a.evidence.iter().any(
            |e| matches!(&e.seen, boardcast_core::alert::Seen::Square { square, .. } if square.to_string() == "e3")
        )
    );
    assert_eq!(run.uci(), ["e2e4", "e7e5"], "the illegal move is not recorded");
    // The arbiter restores the position; the game goes on.
    let mut s2 = s;
    s2.mv("e3e1").wait(500).clock_set(600_000, 720_000, Some(Color::White)).wait(500).pressed_moves("g1f3");
    let run = s2.run_setup(standard());
    assert_eq!(run.uci(), ["e2e4", "e7e5", "g1f3"], "{}", run.trace());
}

#[test]
fn i1_the_second_illegal_move_says_the_game_is_lost() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(2500).mv("e3e1").wait(500).clock_set(600_000, 600_000, Some(Color::White));
    s.wait(500).mv("e1e3").press(Color::White, 0).wait(2500);
    let run = s.run_setup(standard());
    let alerts = run.alerts_of(AlertKind::IllegalMove);
    assert_eq!(alerts.len(), 2, "{}", run.trace());
    assert!(
        alerts[1].message.contains("illegal move number 2 by White: the game is lost for White"),
        "{}",
        alerts[1].message
    );
}

#[test]
fn i1_pressing_again_on_a_board_not_yet_put_right_is_not_a_second_illegal_move() {
    // An illegal move, pressed; the opponent presses back without the
    // position being restored, and the player presses again. Only the
    // first press completed an illegal move: the rest is the same incident,
    // and counting it would declare the game lost (7.5.5) on no evidence.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(2500);
    s.press(Color::Black, 0).wait(1500).press(Color::White, 0).wait(2500);
    let run = s.run_setup(standard());
    let alerts = run.alerts_of(AlertKind::IllegalMove);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert!(alerts[0].message.contains("first completed illegal move"), "{}", alerts[0].message);
}

// I2 (A.5.2): in rapid or blitz the opponent's answer makes it stand.

#[test]
fn i2_an_illegal_move_answered_in_blitz_stands() {
    let mut s = Script::new();
    s.start_clock(180_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(1500);
    s.mv("d7d5").press(Color::Black, 0).wait(1500);
    let run = s.run_setup(blitz());
    assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove, AlertKind::IllegalMoveStands], "{}", run.trace());
    assert!(run.alerts()[0].message.contains("one minute (A.3)"), "{}", run.alerts()[0].message);
    assert_eq!(run.san(), ["e4", "e5", "Ke3", "d5"], "{}", run.trace());
    assert!(run.game().plies[2].is_illegal());
    let pgn = boardcast_core::game::pgn::to_pgn(run.game());
    assert!(pgn.contains("2. Ke3") && pgn.contains("illegal move, stands under A.5.2"), "{pgn}");
    // Play goes on from the board.
    s.pressed_moves("e3d3");
    assert_eq!(s.run_setup(blitz()).san().last().unwrap(), "Kd3");
}

#[test]
fn i2_in_standard_play_an_answered_illegal_move_does_not_stand() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(1500).mv("d7d5").press(Color::Black, 0).wait(3000);
    let run = s.run_setup(standard());
    assert_eq!(run.uci(), ["e2e4", "e7e5"], "the record stays at the position before the illegal move (7.5.1)");
    assert!(
        matches!(run.statuses().last(), Some(boardcast_core::event::BoardStatus::OutOfSync { .. })),
        "{}",
        run.trace()
    );
    assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove], "one incident, one alert: {}", run.trace());
}

// I3 (7.5.2): pawn left on the last rank.

#[test]
fn i3_a_pawn_left_on_the_last_rank_is_recorded_as_a_queen() {
    let mut s = Script::from_placement("4k3/1P6/8/8/8/8/8/4K3");
    s.start_clock(600_000).mv("b7b8").press(Color::White, 0).wait(2000);
    let setup = GameSetup { start: Some(start("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")), ..standard() };
    let run = s.run_setup(setup);
    let alerts = run.alerts_of(AlertKind::PawnNotReplaced);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("7.5.2", Some(Color::White), 0));
    assert_eq!(run.san(), ["b8=Q+"]);
}

// I4 (7.5.3): pressing without moving.

#[test]
fn i4_pressing_the_clock_without_a_move_is_alerted() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4");
    s.wait(2000).press(Color::Black, 0).wait(2000);
    let run = s.run();
    let alerts = run.alerts_of(AlertKind::ClockWithoutMove);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("7.5.3", Some(Color::Black), 1));
    assert_eq!(run.uci(), ["e2e4"]);
}

#[test]
fn a_press_that_arrives_before_the_board_shows_the_move_is_no_irregularity() {
    let mut s = Script::new();
    s.start_clock(600_000).wait(1000);
    // The clock message comes 300 ms before the board reports the move.
    s.lift("e2").wait(100).press(Color::White, 0);
    s.place("e4", 'P').wait(1000);
    let run = s.run();
    assert_eq!(run.uci(), ["e2e4"]);
    assert!(run.alerts().is_empty(), "{}", run.trace());
    assert!(run.game().plies[0].clock_ms.is_some());
}

// I5 (4.3.1): own piece touched first.

#[test]
fn i5_an_own_piece_touched_first_then_another_moved() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.lift("g1").wait(900).place("g1", 'N').wait(500).mv("f1c4").press(Color::White, 0);
    let run = s.run();
    let alerts = run.alerts_of(AlertKind::TouchedOwnPiece);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("4.3.1", Some(Color::White), 2));
    assert_eq!(alerts[0].squares.iter().map(ToString::to_string).collect::<Vec<_>>(), ["g1"]);
    assert_eq!(run.uci().last().unwrap(), "f1c4", "the move stands; the arbiter decides");
}

// I6 (4.3.2): opponent's piece touched first and not captured.

#[test]
fn i6_an_opponents_piece_touched_first_then_not_captured() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 d7d5");
    s.lift("d5").wait(900).place("d5", 'p').wait(500).mv("g1f3").press(Color::White, 0);
    let run = s.run();
    let alerts = run.alerts_of(AlertKind::TouchedOpponentPiece);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("4.3.2", Some(Color::White), 2));
}

// I7 (4.4.2): rook before king.

#[test]
fn i7_castling_after_touching_the_rook_first() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6");
    s.lift("h1")
        .wait(200)
        .place("f1", 'R')
        .wait(900)
        .lift("e1")
        .wait(200)
        .place("g1", 'K')
        .wait(300)
        .press(Color::White, 0);
    let run = s.run();
    assert_eq!(run.san().last().unwrap(), "O-O", "{}", run.trace());
    assert_eq!(run.alert_kinds(), [AlertKind::RookBeforeKing], "{}", run.trace());
    let a = run.alerts()[0];
    assert_eq!((a.kind.article(), a.side, a.ply), ("4.4.2", Some(Color::White), 6));
}

// I8 (4.7): a released piece moved on.

#[test]
fn i8_a_released_piece_moved_on_to_another_square() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("g1f3").wait(800).mv("f3h3").press(Color::White, 0);
    let run = s.run();
    assert_eq!(run.uci().last().unwrap(), "g1h3", "{}", run.trace());
    let alerts = run.alerts_of(AlertKind::ReleasedPieceMoved);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("4.7", Some(Color::White), 2));
}

#[test]
fn i8_a_piece_sliding_on_along_its_line_is_not_alerted() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    // The bishop rests on d3 long enough to be made, then slides on to c4.
    s.lift("f1").wait(100).place("e2", 'B').wait(50).lift("e2").place("d3", 'B').wait(600);
    s.lift("d3").place("c4", 'B').wait(300).press(Color::White, 0);
    let run = s.run();
    assert_eq!(run.uci().last().unwrap(), "f1c4", "{}", run.trace());
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

// I9 (7.4.1): the side not to move moves a piece.

#[test]
fn i9_a_piece_of_the_side_not_to_move_displaced() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4");
    // White knocks the g1 knight to h3 while Black is to move.
    s.lift("g1").wait(50).place("h3", 'N').wait(3000);
    let run = s.run();
    let alerts = run.alerts_of(AlertKind::DisplacedPiece);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("7.4.1", Some(Color::White), 1));
    assert!(alerts[0].message.contains("white knight on h3"), "{}", alerts[0].message);
}

// I10 (7.2.1): a wrong initial position.

#[test]
fn i10_king_and_queen_swapped_at_the_start() {
    let mut s = Script::from_placement("rnbkqbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBKQBNR");
    s.wait(3000).moves("e2e4 e7e5");
    let run = s.run();
    let alerts = run.alerts_of(AlertKind::WrongInitialPosition);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!(alerts[0].kind.article(), "7.2.1");
    let squares: Vec<String> = alerts[0].squares.iter().map(ToString::to_string).collect();
    assert_eq!(squares, ["d1", "e1", "d8", "e8"]);
    // The game is still recorded, from the position as set up.
    assert_eq!(run.uci(), ["e2e4", "e7e5"]);
    assert!(run.game().set_up);
    // Setting up the right position then starts a new game.
    s.dump("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR").wait(1000).moves("d2d4");
    let run = s.run();
    assert_eq!(run.games.len(), 2, "{}", run.trace());
    assert_eq!(run.games[1].plies.len(), 1);
}

// I11 (A.5.4): both kings in check, or a pawn on its last rank, after a
// completed move in rapid or blitz.

#[test]
fn i11_a_pawn_left_on_the_last_rank_in_blitz() {
    let mut s = Script::from_placement("4k3/1P6/8/8/8/8/8/4K3");
    s.start_clock(180_000).mv("b7b8").press(Color::White, 0).wait(2000);
    let setup = GameSetup { start: Some(start("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")), ..blitz() };
    let run = s.run_setup(setup);
    let kinds = run.alert_kinds();
    assert!(kinds.contains(&AlertKind::PawnNotReplaced), "{}", run.trace());
    let irregular = run.alerts_of(AlertKind::IrregularPosition);
    assert_eq!(irregular.len(), 1, "{}", run.trace());
    assert_eq!((irregular[0].kind.article(), irregular[0].side), ("A.5.4", Some(Color::White)));
    assert!(irregular[0].message.contains("a pawn on its last rank"));
}

#[test]
fn clean_games_raise_no_alert_at_all() {
    let mut s = Script::new();
    s.start_clock(300_000).pressed_moves("e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3 a7a6");
    s.set("h2", Cell::Empty).wait(40).set("h2", Cell::Piece(shakmaty::Color::White.pawn())).wait(500);
    let run = s.run();
    assert_eq!(run.uci().len(), 10);
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

fn start(fen: &str) -> shakmaty::Chess {
    fen.parse::<shakmaty::fen::Fen>().unwrap().into_position(shakmaty::CastlingMode::Standard).unwrap()
}

// The six cases of issue 12, each in virtual time.

#[test]
fn a_slow_result_gesture_raises_no_alert_but_a_real_displaced_king_does() {
    // The game is over in the players' eyes; they take the pieces off the
    // centre and put the kings there slowly (over 2 s between the kings).
    let mut s = Script::from_placement("4k3/8/8/8/8/8/8/4K2R");
    s.start_clock(600_000).mv("h1h7").press(Color::White, 0).wait(3000);
    // The players stop the clock, then show the result.
    s.clock_set(590_000, 590_000, None).wait(500);
    s.lift("e1").wait(300).place("d5", 'K').wait(3500).lift("e8").wait(300).place("e4", 'k').wait(3000);
    let setup = GameSetup { start: Some(start("4k3/8/8/8/8/8/8/4K2R w - - 0 1")), ..standard() };
    let run = s.run_setup(setup.clone());
    assert_eq!(run.result(), "1-0", "{}", run.trace());
    assert!(run.alerts().is_empty(), "{}", run.trace());
    // The white king alone on d5, for good: alerted once the hold is over.
    let mut s = Script::from_placement("4k3/8/8/8/8/8/8/4K2R");
    s.start_clock(600_000).mv("h1h7").press(Color::White, 0).wait(1000);
    s.lift("e1").wait(300).place("d5", 'K').wait(6000);
    let run = s.run_setup(setup);
    assert_eq!(run.alerts_of(AlertKind::DisplacedPiece).len(), 1, "{}", run.trace());
}

#[test]
fn the_press_that_restores_the_clock_after_an_illegal_move_is_not_7_5_3() {
    // White's king jumps two squares and White presses (7.5.1). The
    // position is put back and the clock is pressed back, so that White's
    // time runs again; White then moves the king (4.3 applies to the move
    // replacing the illegal one, and it is the king: no touch alert).
    for press_first in [false, true] {
        let mut s = Script::new();
        s.start_clock(600_000).pressed_moves("e2e4 e7e5");
        s.mv("e1e3").press(Color::White, 0).wait(1500);
        if press_first {
            s.press(Color::Black, 0).wait(400).mv("e3e1").wait(1500);
        } else {
            s.mv("e3e1").wait(800).press(Color::Black, 0).wait(1500);
        }
        s.pressed_moves("e1e2");
        let run = s.run_setup(standard());
        assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove], "{}", run.trace());
        assert_eq!(run.uci(), ["e2e4", "e7e5", "e1e2"]);
        // Once the game goes on, a press without a move is alerted again.
        s.wait(1000).press(Color::Black, 0).wait(2000);
        let run = s.run_setup(standard());
        assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove, AlertKind::ClockWithoutMove], "{}", run.trace());
    }
    // The position is put back and White's replacing move is already on
    // the board when the clock is pressed back for White: that press is
    // the correction, not Black pressing without a move.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(1500).mv("e3e1").wait(300).mv("e1e2").wait(300);
    s.press(Color::Black, 0).wait(800).press(Color::White, 0).wait(2000);
    let run = s.run_setup(standard());
    assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove], "{}", run.trace());
    assert_eq!(run.uci(), ["e2e4", "e7e5", "e1e2"]);
    // The replacing move is another piece: 4.3.1 for the king touched
    // (this alert is right and stays).
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(1500).mv("e3e1").wait(800).press(Color::Black, 0).wait(1500);
    s.pressed_moves("g1f3");
    let run = s.run_setup(standard());
    assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove, AlertKind::TouchedOwnPiece], "{}", run.trace());
}

#[test]
fn a_piece_of_the_side_not_to_move_lifted_and_put_back_is_displaced() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    // White to move; Black's bishop on f8 is off its square for 1.2 s.
    s.wait(800).lift("f8").wait(1200).place("f8", 'b').wait(700).mv("g1f3").press(Color::White, 0).wait(500);
    let run = s.run();
    let alerts = run.alerts_of(AlertKind::DisplacedPiece);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    let a = alerts[0];
    assert_eq!((a.kind.article(), a.side, a.ply), ("7.4.1", Some(Color::Black), 2));
    assert_eq!(a.squares.iter().map(ToString::to_string).collect::<Vec<_>>(), ["f8"]);
    assert!(a.message.contains("black bishop") && a.message.contains("1.2 s"), "{}", a.message);
    assert_eq!(run.uci().last().unwrap(), "g1f3");
    // The mover adjusting its own just-made move before pressing is not.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("g1f3").wait(500).lift("f3").wait(700).place("f3", 'N').wait(300).press(Color::White, 0).wait(1000);
    assert!(s.run().alerts().is_empty(), "{}", s.run().trace());
}

#[test]
fn a_released_piece_moved_on_along_its_line_is_4_7() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5 d2d4");
    // The pawn b7-b6, left standing for 1.5 s, then pushed on to b5.
    s.lift("b7").wait(120).place("b6", 'p').wait(1500).lift("b6").wait(100).place("b5", 'p').wait(400);
    s.press(Color::Black, 0).wait(500);
    let run = s.run();
    assert_eq!(run.uci().last().unwrap(), "b7b5", "{}", run.trace());
    let alerts = run.alerts_of(AlertKind::ReleasedPieceMoved);
    assert_eq!(alerts.len(), 1, "{}", run.trace());
    assert_eq!((alerts[0].kind.article(), alerts[0].side, alerts[0].ply), ("4.7", Some(Color::Black), 3));
    assert!(alerts[0].message.contains("1.5 s"), "{}", alerts[0].message);
    // The bishop passes d3 on its way to c4 in 120 ms, and a rook rests on
    // d1 for 700 ms (a slow slide, below the 1 s a released piece stands):
    // no alert.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.lift("f1").wait(100).place("e2", 'B').wait(120).lift("e2").place("d3", 'B').wait(700);
    s.lift("d3").place("c4", 'B').wait(300).press(Color::White, 0);
    let run = s.run();
    assert_eq!(run.uci().last().unwrap(), "f1c4", "{}", run.trace());
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

#[test]
fn a_short_touch_is_caught_and_flicker_is_not() {
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.lift("g1").wait(350).place("g1", 'N').wait(400).mv("f1c4").press(Color::White, 0);
    let run = s.run();
    assert_eq!(run.alert_kinds(), [AlertKind::TouchedOwnPiece], "{}", run.trace());
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.lift("g1").wait(90).place("g1", 'N').wait(400).mv("f1c4").press(Color::White, 0);
    let run = s.run();
    assert!(run.alerts().is_empty(), "{}", run.trace());
}

#[test]
fn a_press_pressed_back_before_it_was_judged_is_still_alerted() {
    // White presses without a move and Black presses back at once (within
    // the second the daemon gives a board to show the move): the press is
    // 7.5.3 all the same, Black's press is the correction, and the game
    // goes on without a second alert.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.wait(1500).press(Color::White, 0).wait(300).press(Color::Black, 0).wait(1500);
    s.pressed_moves("g1f3 b8c6");
    let run = s.run_setup(standard());
    assert_eq!(run.alert_kinds(), [AlertKind::ClockWithoutMove], "{}", run.trace());
    let a = run.alerts()[0];
    assert_eq!((a.side, a.ply), (Some(Color::White), 2));
    assert_eq!(run.uci(), ["e2e4", "e7e5", "g1f3", "b8c6"], "{}", run.trace());
    // The same with an illegal move pressed, pressed back at once, then put
    // right.
    let mut s = Script::new();
    s.start_clock(600_000).pressed_moves("e2e4 e7e5");
    s.mv("e1e3").press(Color::White, 0).wait(200).press(Color::Black, 0).wait(1500).mv("e3e1").wait(1000);
    s.pressed_moves("e1e2 b8c6");
    let run = s.run_setup(standard());
    assert_eq!(run.alert_kinds(), [AlertKind::IllegalMove], "{}", run.trace());
    let a = run.alerts()[0];
    assert_eq!((a.side, a.ply), (Some(Color::White), 2));
    assert_eq!(run.uci(), ["e2e4", "e7e5", "e1e2", "b8c6"], "{}", run.trace());
}
