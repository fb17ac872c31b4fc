//! Paired boards (appendix D, rules.md I13), in virtual time: a visually
//! impaired player's board copies the game board's moves and the daemon
//! says when the two show different positions for longer than copying a
//! move takes (D.2.9), which board is behind, and when they agree again.
//! Moves are announced and repeated before they are copied (D.2.1), so a
//! board a move behind for some seconds is normal play.

use std::time::Duration;

use boardcast_core::{
    alert::{Alert, AlertKind},
    game::{GameRecord, GameResult, Termination},
    pair::{Line, LineWatch, Pair, PairSettings},
    time::Timestamp,
};
use shakmaty::{CastlingMode, Chess, KnownOutcome, Position, Square, san::San};

const TOLERANCE: Duration = Duration::from_secs(20);

fn s(secs: u64) -> Timestamp {
    Timestamp::from_millis(secs * 1000)
}

/// Game `number` after `sans`, each made at the time given.
fn game(number: u32, moves: &[(&str, u64)]) -> GameRecord {
    let mut record = GameRecord::new(number, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
    for &(san, at) in moves {
        let m = san.parse::<San>().unwrap().to_move(record.position()).unwrap();
        record.push(m, s(at), false);
    }
    record
}

/// A pair driven in virtual time: deadlines fire at their own time before
/// each input, as the daemon's session does.
struct Hall {
    pair: Pair,
    alerts: Vec<Alert>,
}

impl Hall {
    fn new() -> Self {
        let settings =
            PairSettings { game_board: "board-7".into(), mirror_board: "board-7-vi".into(), diverge_after: TOLERANCE };
        Self { pair: Pair::new(settings), alerts: Vec::new() }
    }

    fn advance(&mut self, t: Timestamp) {
        while let Some(deadline) = self.pair.poll_timeout().filter(|&d| d <= t) {
            self.pair.handle_timeout(deadline);
        }
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(alert) = self.pair.poll_alert() {
            self.alerts.push(alert);
        }
    }

    fn game(&mut self, t: u64, record: &GameRecord) {
        self.advance(s(t));
        self.pair.handle_game(s(t), Some(record));
        self.drain();
    }

    fn mirror(&mut self, t: u64, record: &GameRecord) {
        self.advance(s(t));
        self.pair.handle_mirror(s(t), Line::of(Some(record)));
        self.drain();
    }

    fn kinds(&self) -> Vec<AlertKind> {
        self.alerts.iter().map(|a| a.kind).collect()
    }
}

/// The moves of a short game, White's and Black's turns alternating.
const MOVES: [&str; 8] = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"];

/// The game board's game after `n` plies, the k-th made at `times[k]`.
fn after(n: usize, times: &[u64]) -> GameRecord {
    let moves: Vec<(&str, u64)> = MOVES.iter().zip(times).take(n).map(|(m, t)| (*m, *t)).collect();
    game(1, &moves)
}

#[test]
fn a_mirror_that_copies_each_move_within_the_tolerance_is_never_accused() {
    let mut hall = Hall::new();
    let times = [10, 30, 50, 70, 90, 110, 130, 150];
    hall.game(0, &after(0, &times));
    hall.mirror(0, &after(0, &times));
    for n in 1..=8 {
        hall.game(times[n - 1], &after(n, &times));
        // Announced, repeated, found by touch and copied: 15 s later.
        hall.mirror(times[n - 1] + 15, &after(n, &times));
    }
    hall.advance(s(1000));
    assert!(hall.alerts.is_empty(), "{:?}", hall.alerts);
}

#[test]
fn fast_play_with_the_mirror_always_a_move_behind_is_no_divergence() {
    // Moves every 8 s, each copied 12 s after it was made: the boards never
    // agree for long, yet no move waits longer than the tolerance.
    let mut hall = Hall::new();
    let times = [8, 16, 24, 32, 40, 48, 56, 64];
    hall.game(0, &after(0, &times));
    hall.mirror(0, &after(0, &times));
    let mut events: Vec<(u64, bool, usize)> = Vec::new();
    for n in 1..=8 {
        events.push((times[n - 1], true, n));
        events.push((times[n - 1] + 12, false, n));
    }
    events.sort();
    for (t, on_game, n) in events {
        if on_game {
            hall.game(t, &after(n, &times));
        } else {
            hall.mirror(t, &after(n, &times));
        }
    }
    hall.advance(s(1000));
    assert!(hall.alerts.is_empty(), "{:?}", hall.alerts);
}

#[test]
fn a_mirror_left_behind_is_alerted_once_with_the_squares_then_the_agreement() {
    let mut hall = Hall::new();
    let times = [10, 20, 30, 40, 50, 60, 70, 80];
    hall.game(0, &after(0, &times));
    hall.mirror(0, &after(0, &times));
    hall.game(10, &after(1, &times));
    hall.mirror(15, &after(1, &times));
    hall.game(20, &after(2, &times));
    hall.mirror(25, &after(2, &times));
    // 2.Nf3 is never copied; the game goes on.
    hall.game(30, &after(3, &times));
    hall.game(40, &after(4, &times));
    hall.advance(s(49));
    assert!(hall.alerts.is_empty(), "not before 2.Nf3 waited 20 s: {:?}", hall.alerts);
    hall.advance(s(50));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge]);
    let alert = &hall.alerts[0];
    assert_eq!(alert.t, s(30), "counted from the move not copied");
    assert_eq!(alert.ply, 2, "the boards agree up to ply 2");
    assert_eq!(alert.kind.article(), "D.2.9");
    assert!(
        alert.message.contains("the mirror board board-7-vi is 2 plies behind the game board board-7"),
        "{}",
        alert.message
    );
    // 2.Nf3 Nc6: g1, f3, b8, c6 differ.
    let mut squares = alert.squares.clone();
    squares.sort();
    let mut expected = vec![Square::G1, Square::B8, Square::F3, Square::C6];
    expected.sort();
    assert_eq!(squares, expected);
    assert!(alert.message.contains("f3: game board white knight, mirror empty"), "{}", alert.message);
    let evidence = boardcast_core::publish::payload::alert_line(alert, "board-7", 1, 9)["evidence"].clone();
    assert!(
        evidence
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["square"] == "f3" && e["game_board"] == "N" && e["mirror"].is_null()),
        "{evidence}"
    );
    // More moves go uncopied: still one alert for the one divergence.
    hall.game(60, &after(5, &times));
    hall.advance(s(200));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge]);
    // The mirror is put right: the boards agree again, and the arbiter is told.
    hall.mirror(210, &after(5, &times));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge, AlertKind::BoardsAgree]);
    assert_eq!(hall.alerts[1].t, s(210));
    assert!(hall.alerts[1].message.contains("180 s after"), "{}", hall.alerts[1].message);
    // And a later lag is a new divergence.
    hall.game(220, &after(6, &times));
    hall.advance(s(241));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge, AlertKind::BoardsAgree, AlertKind::BoardsDiverge]);
    assert!(hall.alerts[2].message.contains("1 ply behind"), "{}", hall.alerts[2].message);
}

#[test]
fn a_move_made_on_the_mirror_and_not_copied_to_the_game_board_says_the_game_board_is_behind() {
    // The visually impaired player has White and moves on their own board;
    // the sighted player must play it on the game board (D.2.1).
    let mut hall = Hall::new();
    let times = [10, 20, 30, 40, 50, 60, 70, 80];
    hall.game(0, &after(0, &times));
    hall.mirror(0, &after(0, &times));
    hall.mirror(10, &after(1, &times));
    hall.game(18, &after(1, &times));
    hall.game(20, &after(2, &times));
    hall.mirror(26, &after(2, &times));
    hall.mirror(30, &after(3, &times));
    hall.advance(s(49));
    assert!(hall.alerts.is_empty(), "{:?}", hall.alerts);
    hall.advance(s(50));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge]);
    let alert = &hall.alerts[0];
    assert!(
        alert.message.contains("the game board board-7 is 1 ply behind the mirror board board-7-vi"),
        "{}",
        alert.message
    );
    assert_eq!(alert.ply, 2);
    hall.game(55, &after(3, &times));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge, AlertKind::BoardsAgree]);
}

#[test]
fn a_move_copied_wrongly_is_a_disagreement_counted_from_the_wrong_copy() {
    let mut hall = Hall::new();
    hall.game(0, &game(1, &[]));
    hall.mirror(0, &game(1, &[]));
    hall.game(10, &game(1, &[("e4", 10)]));
    hall.mirror(14, &game(1, &[("e4", 14)]));
    hall.game(20, &game(1, &[("e4", 10), ("e5", 20)]));
    // 1...e6 rather than 1...e5 on the mirror: neither is behind.
    hall.mirror(26, &game(1, &[("e4", 14), ("e6", 26)]));
    hall.advance(s(45));
    assert!(hall.alerts.is_empty(), "{:?}", hall.alerts);
    hall.advance(s(46));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge]);
    let alert = &hall.alerts[0];
    assert!(alert.message.contains("show different positions"), "{}", alert.message);
    assert_eq!(alert.ply, 1, "the two records agree up to 1.e4");
    let mut squares = alert.squares.clone();
    squares.sort();
    assert_eq!(squares, [Square::E5, Square::E6]);
    assert!(alert.message.contains("e5: game board black pawn, mirror empty"), "{}", alert.message);
    assert!(alert.message.contains("e6: game board empty, mirror black pawn"), "{}", alert.message);
}

#[test]
fn each_board_a_move_ahead_of_the_other_is_a_disagreement() {
    // Both boards made a different Black reply; neither equals an earlier
    // position of the other.
    let mut hall = Hall::new();
    hall.game(0, &game(1, &[]));
    hall.mirror(0, &game(1, &[]));
    hall.game(5, &game(1, &[("d4", 5)]));
    hall.mirror(5, &game(1, &[("e4", 5)]));
    hall.advance(s(25));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge]);
    assert!(hall.alerts[0].message.contains("show different positions"), "{}", hall.alerts[0].message);
    assert_eq!(hall.alerts[0].ply, 0);
}

#[test]
fn only_the_game_in_progress_is_compared_and_a_mirror_being_set_up_is_left_alone() {
    let mut hall = Hall::new();
    let times = [10, 20, 30, 40, 50, 60, 70, 80];
    hall.game(0, &after(0, &times));
    hall.mirror(0, &after(0, &times));
    hall.game(10, &after(1, &times));
    hall.mirror(12, &after(1, &times));
    // The game ends on the game board (a result the mirror cannot see).
    let mut ended = after(2, &times);
    ended.result = Some(GameResult { outcome: KnownOutcome::Draw, termination: Termination::Agreement });
    hall.game(20, &ended);
    hall.advance(s(100));
    assert!(hall.alerts.is_empty(), "after the result nothing is compared: {:?}", hall.alerts);
    // The next game is set up on the game board first; the mirror still
    // holds the previous game's moves for minutes.
    hall.game(200, &game(2, &[]));
    hall.advance(s(400));
    assert!(hall.alerts.is_empty(), "being set up: {:?}", hall.alerts);
    // The game starts without the mirror: from the first move it counts.
    hall.game(400, &game(2, &[("d4", 400)]));
    hall.advance(s(419));
    assert!(hall.alerts.is_empty(), "{:?}", hall.alerts);
    hall.advance(s(420));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge]);
    // A mirror set up for the new game is followed at once.
    hall.mirror(430, &game(2, &[]));
    hall.mirror(431, &game(2, &[("d4", 431)]));
    assert_eq!(hall.kinds(), [AlertKind::BoardsDiverge, AlertKind::BoardsAgree]);
}

#[test]
fn a_line_changes_only_when_the_game_does() {
    let mut watch = LineWatch::default();
    let start = game(1, &[]);
    assert!(watch.poll(None).is_some(), "the first look says what there is");
    assert!(watch.poll(None).is_none());
    assert!(watch.poll(Some(&start)).is_some());
    assert!(watch.poll(Some(&start)).is_none(), "a clock reading changes nothing");
    let one = game(1, &[("e4", 1)]);
    assert!(watch.poll(Some(&one)).is_some());
    assert!(Line::of(Some(&one)).is_of(Some(&one)));
    assert!(!Line::of(Some(&one)).is_of(Some(&game(2, &[("e4", 1)]))), "another game");
    assert_eq!(one.position().board().piece_at(Square::E4).map(|p| p.role), Some(shakmaty::Role::Pawn));
}
