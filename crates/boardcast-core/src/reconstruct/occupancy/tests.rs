//! Reading moves from occupancy alone, in virtual time: a board that
//! reports whole pictures of occupied squares, as a Sentio-format board
//! does, with the hands in every order.

use shakmaty::{Bitboard, CastlingMode, Chess, Color, Position, Square, fen::Fen};

use crate::{
    alert::AlertKind,
    event::{Event, EventKind},
    operator::{Command, CommandError},
    reconstruct::{GameSetup, Reconstructor, ReconstructorConfig},
    sensor::{Cell, ClockReading, Picture, SensorEvent},
    time::Timestamp,
};

/// A board that sees only occupancy, and the hands on it.
struct Hall {
    reconstructor: Reconstructor,
    occupied: Bitboard,
    /// Report every square turned 180°.
    turned: bool,
    ms: u64,
    events: Vec<Event>,
}

impl Hall {
    /// The standard start position.
    fn standard() -> Self {
        Self::new(Chess::default(), false, GameSetup::default())
    }

    /// A game starting from `fen` (configured, as a capture's `FEN` tag).
    fn from(fen: &str) -> Self {
        let pos: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let setup = GameSetup { start: Some(pos.clone()), ..GameSetup::default() };
        Self::new(pos, false, setup)
    }

    fn new(pos: Chess, turned: bool, setup: GameSetup) -> Self {
        let reconstructor = Reconstructor::new(ReconstructorConfig::default(), setup);
        let mut hall = Self { reconstructor, occupied: pos.board().occupied(), turned, ms: 0, events: Vec::new() };
        hall.report();
        hall.wait(1000);
        assert!(hall.reconstructor.game().is_some(), "the game starts");
        hall
    }

    fn square(&self, name: &str) -> Square {
        let sq: Square = name.parse().unwrap();
        if self.turned { sq.flip_vertical().flip_horizontal() } else { sq }
    }

    /// Fires every deadline up to now, as a session does before an input.
    fn catch_up(&mut self) {
        let now = Timestamp::from_millis(self.ms);
        while let Some(deadline) = self.reconstructor.poll_timeout().filter(|&d| d <= now) {
            self.reconstructor.handle_timeout(deadline);
        }
        self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
    }

    /// The board reports its squares.
    fn report(&mut self) {
        self.catch_up();
        let mut picture = Picture::empty();
        for sq in self.occupied {
            picture.set(sq, Cell::Occupied);
        }
        let now = Timestamp::from_millis(self.ms);
        self.reconstructor.handle_sensor(now, &SensorEvent::Board(Box::new(picture)));
        self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
    }

    /// A piece leaves `name`; the next report comes 100 ms later.
    fn lift(&mut self, name: &str) -> &mut Self {
        self.occupied.discard(self.square(name));
        self.report();
        self.wait(100)
    }

    /// A piece is put on `name`.
    fn place(&mut self, name: &str) -> &mut Self {
        self.occupied.add(self.square(name));
        self.report();
        self.wait(100)
    }

    /// A move the board shows as a lift and a placement.
    fn play(&mut self, from: &str, to: &str) -> &mut Self {
        self.lift(from).place(to).wait(1500)
    }

    fn wait(&mut self, ms: u64) -> &mut Self {
        self.ms += ms;
        self.catch_up();
        self
    }

    /// The clock beside the board shows `running`'s time running.
    fn clock(&mut self, running: Color) -> &mut Self {
        self.catch_up();
        let reading = ClockReading::ByColor { white_ms: 600_000, black_ms: 600_000, running: Some(running) };
        self.reconstructor.handle_sensor(Timestamp::from_millis(self.ms), &SensorEvent::Clock(reading));
        self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
        self.wait(100)
    }

    /// The operator's command.
    fn command(&mut self, command: &Command) -> Result<String, CommandError> {
        self.catch_up();
        let result = self.reconstructor.handle_command(Timestamp::from_millis(self.ms), command);
        self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
        result
    }

    /// The end of the stream.
    fn end(&mut self) -> &mut Self {
        self.reconstructor.handle_end(Timestamp::from_millis(self.ms));
        self.events.extend(std::iter::from_fn(|| self.reconstructor.poll_event()));
        self
    }

    fn moves(&self) -> Vec<String> {
        let game = self.reconstructor.game().unwrap();
        game.uci_moves()
    }

    fn alerts(&self) -> Vec<AlertKind> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Alert(a) => Some(a.kind),
                _ => None,
            })
            .collect()
    }

    fn alert_text(&self, kind: AlertKind) -> String {
        self.events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::Alert(a) if a.kind == kind => Some(a.message.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// White's bishop on d3 can take a knight on a6 or one on h7: on an
/// occupancy board both captures leave the same final picture (d3 empty).
const TWO_VICTIMS: &str = "4k3/7n/n7/8/8/3B4/8/4K3 w - - 0 1";

#[test]
fn a_capture_with_the_captured_piece_lifted_first() {
    let mut hall = Hall::from(TWO_VICTIMS);
    hall.lift("h7").lift("d3").place("h7").wait(1500);
    assert_eq!(hall.moves(), ["d3h7"]);
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
}

#[test]
fn a_capture_with_the_capturing_piece_lifted_first() {
    let mut hall = Hall::from(TWO_VICTIMS);
    hall.lift("d3").lift("a6").place("a6").wait(1500);
    assert_eq!(hall.moves(), ["d3a6"]);
    // The game goes on from the right position: the knight left is on h7.
    hall.play("h7", "f6").end();
    assert_eq!(hall.moves(), ["d3a6", "h7f6"]);
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
}

#[test]
fn a_capture_the_board_did_not_see_is_decided_by_the_next_moves() {
    // The bishop knocks the knight off its square: only d3 changes.
    let mut hall = Hall::from(TWO_VICTIMS);
    hall.lift("d3").wait(1500);
    assert!(hall.moves().is_empty(), "not decided yet");
    // The knight on a6 moves: so the bishop took on h7.
    hall.play("a6", "c5");
    assert_eq!(hall.moves(), ["d3h7", "a6c5"]);
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
}

#[test]
fn a_capture_nothing_decides_is_alerted_not_guessed() {
    let mut hall = Hall::from(TWO_VICTIMS);
    // Knocked off, then moves that fit either capture.
    hall.lift("d3").wait(1500).play("e8", "d8").play("e1", "e2").end();
    assert!(hall.moves().is_empty(), "nothing is recorded: {:?}", hall.moves());
    assert_eq!(hall.alerts(), [AlertKind::AmbiguousMoves]);
    let text = hall.alert_text(AlertKind::AmbiguousMoves);
    assert!(text.contains("Bxa6 Kd8 Ke2") && text.contains("Bxh7 Kd8 Ke2"), "{text}");
}

#[test]
fn the_operator_names_the_capture_and_the_moves_after_it_follow() {
    let mut hall = Hall::from(TWO_VICTIMS);
    hall.lift("d3").wait(1500).play("e8", "d8").play("e1", "e2").wait(1500);
    assert!(hall.moves().is_empty());
    // The arbiter looks at the board: the bishop stands on h7.
    let reply = hall.command(&Command::Moves { san: vec!["Bxh7".into()] }).unwrap();
    assert_eq!(reply, "entered Bxh7; then, as the board showed: Kd8 Ke2");
    assert_eq!(hall.moves(), ["d3h7", "e8d8", "e1e2"]);
    let game = hall.reconstructor.game().unwrap();
    assert!(game.plies[0].entered && !game.plies[1].entered, "only the capture was entered");
    // The game goes on from the board.
    hall.play("a6", "c5");
    assert_eq!(hall.moves(), ["d3h7", "e8d8", "e1e2", "a6c5"]);
    // A move no reading begins with is entered as before: the lines go.
    let mut hall = Hall::from(TWO_VICTIMS);
    hall.lift("d3").wait(1500);
    let reply = hall.command(&Command::Moves { san: vec!["Kd2".into()] }).unwrap();
    assert_eq!(reply, "entered Kd2");
    assert_eq!(hall.moves(), ["e1d2"]);
}

#[test]
fn a_quick_reply_in_the_report_after_a_lost_one() {
    // 1.e4 e5, Black's pawn lifted as White's lands: the report between
    // was lost, so one report shows e4 filled and e7 emptied.
    let mut hall = Hall::standard();
    hall.lift("e2");
    hall.occupied.add(hall.square("e4"));
    hall.occupied.discard(hall.square("e7"));
    hall.report();
    hall.wait(100).place("e5").wait(1000);
    assert!(
        hall.moves().is_empty(),
        "not read at once: while the hands move, a half-made picture must not start a reading"
    );
    // Once the board has stood unexplained for `out_of_sync_after`, the
    // quick reply is accepted rather than the board published out of sync.
    hall.wait(1500);
    assert_eq!(hall.moves(), ["e2e4", "e7e5"]);
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
    hall.play("g1", "f3");
    assert_eq!(hall.moves(), ["e2e4", "e7e5", "g1f3"]);
}

#[test]
fn castling_then_the_king_on_is_not_taken_for_one_king_move() {
    // Black castles, White replies at once, the king goes on to h8: the
    // board ends as after Kf8 Be3 would (f8, h8 and e3 occupied), but
    // with White to move. The next move tells.
    let mut hall = Hall::from("4k2r/8/8/8/8/8/8/2B1K3 b k - 0 1");
    hall.lift("e8").lift("h8").place("g8").place("f8");
    hall.lift("c1").place("e3");
    hall.lift("g8").place("h8").wait(1500);
    assert!(hall.moves().is_empty(), "not the shortest reading at once: {:?}", hall.moves());
    hall.play("e1", "d2");
    assert_eq!(hall.moves(), ["e8g8", "c1e3", "g8h8", "e1d2"]);
}

#[test]
fn a_lifted_piece_still_in_the_hand_is_not_a_capture() {
    let mut hall = Hall::from(TWO_VICTIMS);
    // Held over a second, then put down on a quiet square.
    hall.lift("d3").wait(1200).place("e4").wait(1500);
    assert_eq!(hall.moves(), ["d3e4"]);
    assert!(!hall.reconstructor.game().unwrap().plies[0].inferred, "seen on the board");
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
}

#[test]
fn the_only_capture_is_made_once_no_hand_can_still_hold_the_piece() {
    // Mate by a capture the board did not see: nothing follows it, and
    // after `quiet_completion` the piece cannot still be in the hand.
    // Black's rook takes on f1 (the bishop guards it): mate.
    let mut hall = Hall::from("6k1/5ppp/b7/8/8/8/5PPP/3r1RK1 b - - 0 1");
    hall.lift("d1").wait(3000);
    assert!(hall.moves().is_empty(), "the rook may still be in the hand");
    hall.wait(9000).end();
    assert_eq!(hall.moves(), ["d1f1"]);
    let game = hall.reconstructor.game().unwrap();
    assert!(game.result.is_some(), "mate ends the game");
}

#[test]
fn a_clock_press_says_the_piece_is_not_in_the_hand() {
    // The only capture, knocked off and pressed for at once.
    let mut hall = Hall::from("4k3/p7/n7/8/8/3B4/P7/4K3 w - - 0 1");
    hall.clock(Color::White).wait(500).lift("d3").clock(Color::Black).wait(1500);
    assert_eq!(hall.moves(), ["d3a6"]);
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
    let ply = &hall.reconstructor.game().unwrap().plies[0];
    assert!(ply.pressed_at.is_some(), "the press completed it");
    // Two captures alike: the press is no illegal move; the board decides.
    let mut hall = Hall::from(TWO_VICTIMS);
    hall.clock(Color::White).wait(500).lift("d3").clock(Color::Black).wait(2500);
    assert!(hall.moves().is_empty());
    assert!(hall.alerts().is_empty(), "{:?}", hall.alerts());
    hall.play("h7", "f6");
    assert_eq!(hall.moves(), ["d3a6", "h7f6"]);
}

#[test]
fn en_passant_in_either_order() {
    let fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1";
    let mut hall = Hall::from(fen);
    hall.lift("e5").place("d6").lift("d5").wait(1500);
    assert_eq!(hall.moves(), ["e5d6"]);
    let mut hall = Hall::from(fen);
    hall.lift("d5").lift("e5").place("d6").wait(1500);
    assert_eq!(hall.moves(), ["e5d6"]);
}

#[test]
fn castling_king_first_or_rook_first() {
    let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    let mut hall = Hall::from(fen);
    hall.lift("e1").place("g1").lift("h1").place("f1").wait(1500);
    assert_eq!(hall.moves(), ["e1g1"]);
    let mut hall = Hall::from(fen);
    hall.lift("a1").place("d1").lift("e1").place("c1").wait(1500);
    assert_eq!(hall.moves(), ["e1c1"]);
    // The rook put down and left a while first: Rf1 is made, then amended.
    let mut hall = Hall::from(fen);
    hall.lift("h1").place("f1").wait(1200).lift("e1").place("g1").wait(1500);
    assert_eq!(hall.moves(), ["e1g1"]);
}

#[test]
fn a_promotion_with_capture_is_recorded_as_a_queen_and_alerted() {
    // The pawn on b7 can take on a8 or c8: the captured rook is lifted.
    let fen = "r1r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1";
    let mut hall = Hall::from(fen);
    hall.lift("c8").lift("b7").place("c8").wait(1500);
    assert_eq!(hall.moves(), ["b7c8q"]);
    assert_eq!(hall.alerts(), [AlertKind::PromotionUnknown]);
    // The new piece put down first, the pawn taken off after (4.6.2).
    let mut hall = Hall::from("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
    hall.place("b8").lift("b7").wait(1500);
    assert_eq!(hall.moves(), ["b7b8q"]);
    assert_eq!(hall.alerts(), [AlertKind::PromotionUnknown]);
}

#[test]
fn the_operator_names_the_promoted_piece() {
    let mut hall = Hall::from("r1r1k3/1P6/8/8/8/8/8/4K3 w - - 0 1");
    hall.lift("c8").lift("b7").place("c8").wait(1500).play("e8", "f7");
    assert_eq!(hall.moves(), ["b7c8q", "e8f7"]);
    // The pawn became a knight: the record is amended (Kf7 stays legal).
    let answer = hall.command(&Command::Promote { piece: "knight".into() }).unwrap();
    assert!(answer.contains("bxc8=N"), "{answer}");
    assert_eq!(hall.moves(), ["b7c8n", "e8f7"]);
    let amended: Vec<String> = hall
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::MoveAmended { now, .. } => Some(now.uci.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(amended[0], "b7c8n");
    // The knight moves as a knight: the board and the record agree.
    hall.play("c8", "d6");
    assert_eq!(hall.moves(), ["b7c8n", "e8f7", "c8d6"]);
    // A piece no pawn can become, and a game without a promotion.
    assert_eq!(
        hall.command(&Command::Promote { piece: "king".into() }),
        Err(CommandError::NotAPromotionPiece("king".into()))
    );
    let mut plain = Hall::standard();
    assert_eq!(plain.command(&Command::Promote { piece: "queen".into() }), Err(CommandError::NoPromotion));
}

#[test]
fn a_board_turned_round_is_read_from_the_first_move() {
    let mut hall = Hall::new(Chess::default(), true, GameSetup::default());
    hall.play("e2", "e4").play("e7", "e5").play("g1", "f3");
    assert_eq!(hall.moves(), ["e2e4", "e7e5", "g1f3"]);
    assert_eq!(hall.alerts(), [AlertKind::RotatedBoard]);
    assert!(hall.reconstructor.rotated());
}

#[test]
fn the_result_gesture_is_read_from_the_squares_alone() {
    // The kings are not identified, but the colours of the two centre
    // squares they end on tell the result: d5 and e4 are light, 1-0.
    let mut hall = Hall::from("4k3/8/8/8/8/8/8/R3K3 w - - 0 1");
    hall.play("a1", "a7");
    hall.wait(11_000);
    hall.lift("e1").place("d5").lift("e8").place("e4").wait(3000);
    let game = hall.reconstructor.game().unwrap();
    assert_eq!(game.result.map(|r| r.pgn()), Some("1-0"), "{:?}", hall.events);
    assert_eq!(hall.moves(), ["a1a7"]);
    assert!(!hall.alerts().contains(&AlertKind::OutOfSync), "{:?}", hall.alerts());
}

#[test]
fn the_gesture_ends_the_game_before_the_pieces_are_cleared() {
    // White's king already stands on e4; Black's king comes to d4 and
    // White's steps to e5: 0-1. Clearing the board afterwards passes
    // through pictures that look like moves (the king back on e4 alone
    // would be Kxe4-like steps); none of them is recorded.
    let mut hall = Hall::from("8/8/8/8/4K3/8/8/R6k b - - 0 1");
    hall.play("h1", "h2");
    hall.wait(11_000);
    hall.lift("h2").place("d4").lift("e4").place("e5").wait(3000);
    hall.lift("d4").wait(500).lift("e5").place("e4").wait(3000);
    let game = hall.reconstructor.game().unwrap();
    assert_eq!(game.result.map(|r| r.pgn()), Some("0-1"), "{:?}", hall.events);
    assert_eq!(hall.moves(), ["h1h2"]);
}
