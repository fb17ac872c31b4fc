//! A DGT 3000 as a display, end to end: a live session talking to the
//! simulated DGT board byte for byte shows each completed move on the clock
//! for two seconds and then puts the times back; it shows nothing on a DGT
//! XL, nothing when a player is short of time, and leaves the clock alone
//! when the board is not configured to show moves.

use boardcast_sim::board::SimulatedBoard;
use std::time::Duration;

use boardcast_core::{
    protocol::{
        Protocol,
        dgt::{
            clock::ClockTimes,
            command::{ClockText, Command},
            display::{ClockDisplayMode, ClockDisplaySettings},
        },
        link::LinkConfig,
    },
    reconstruct::{GameSetup, ReconstructorConfig, WhiteClock},
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    session::{BoardSession, Output},
    time::Timestamp,
};
use boardcast_sim::board::DgtSim;
use shakmaty::{Color, Piece, Role, Square};

/// A live session wired to a simulated DGT board with a clock, in virtual
/// time, keeping every byte the host sent.
struct Bench {
    session: BoardSession,
    board: DgtSim,
    now: Timestamp,
    sent: Vec<u8>,
    outputs: Vec<Output>,
}

impl Bench {
    /// White on the left display; both players with `white_ms`/`black_ms`,
    /// White's clock running.
    fn new(mode: ClockDisplayMode, clock_version: u8, white_ms: u64, black_ms: u64) -> Self {
        let config = ReconstructorConfig { white_clock: WhiteClock::Left, ..ReconstructorConfig::default() };
        let mut session = BoardSession::live(Protocol::DGT, config, GameSetup::default(), LinkConfig::default());
        session.set_clock_display(ClockDisplaySettings { mode, ..ClockDisplaySettings::default() });
        let mut board = DgtSim::new("03921", ClockSide::Left);
        board.set_clock_version(clock_version);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&shakmaty::Board::new()))));
        let mut bench = Self { session, board, now: Timestamp::ZERO, sent: Vec::new(), outputs: Vec::new() };
        bench.clock(white_ms, black_ms, ClockSide::Left);
        bench.session.handle_connected(bench.now);
        bench.run(1000);
        // White's clock ticks: the board, now in update mode, sends the
        // times.
        bench.clock(white_ms - 1000, black_ms, ClockSide::Left);
        bench.run(20);
        bench
    }

    /// Lets `ms` milliseconds pass, bytes crossing both ways every 10 ms.
    fn run(&mut self, ms: u64) {
        for _ in 0..ms / 10 {
            self.now = self.now + Duration::from_millis(10);
            self.session.advance_to(self.now);
            while let Some(bytes) = self.session.poll_transmit(self.now) {
                self.board.handle_host_bytes(&bytes);
                self.sent.extend_from_slice(&bytes);
            }
            if let Some(bytes) = self.board.poll_transmit() {
                self.session.handle_bytes(self.now, &bytes);
            }
            self.outputs.extend(std::iter::from_fn(|| self.session.poll_output()));
        }
    }

    fn clock(&mut self, left_ms: u64, right_ms: u64, running: ClockSide) {
        let times = ClockTimes::from_reading(left_ms, right_ms, Some(running));
        self.board.handle_script_event(&SensorEvent::Clock(times.reading()));
    }

    /// White plays 1.e4 and presses the clock (Black's, on the right,
    /// starts).
    fn play_e4(&mut self, white_ms: u64, black_ms: u64) {
        self.board.handle_script_event(&SensorEvent::Square { square: Square::E2, cell: Cell::Empty });
        self.run(300);
        let pawn = Cell::Piece(Piece { color: Color::White, role: Role::Pawn });
        self.board.handle_script_event(&SensorEvent::Square { square: Square::E4, cell: pawn });
        self.run(500);
        self.clock(white_ms, black_ms, ClockSide::Right);
        self.run(20);
    }

    /// Whether the host sent these bytes, in a row.
    fn sent_bytes(&self, bytes: &[u8]) -> bool {
        self.sent.windows(bytes.len()).any(|w| w == bytes)
    }

    fn notices(&self) -> Vec<String> {
        self.outputs
            .iter()
            .filter_map(|o| match o {
                Output::Notice(n) => Some(n.kind.to_string()),
                Output::Event(_) => None,
            })
            .collect()
    }
}

#[test]
fn a_dgt_3000_shows_the_completed_move_for_two_seconds_then_the_times() {
    let mut bench = Bench::new(ClockDisplayMode::Moves, 0x21, 600_000, 600_000);
    assert!(bench.sent_bytes(&[0x2B, 0x03, 0x03, 0x09, 0x00]), "the clock was asked what it is");
    bench.play_e4(598_000, 600_000);
    assert_eq!(bench.board.displayed_text(), Some("1.e4    "), "shown once the clock was pressed");
    let text = [0x2B, 0x0C, 0x03, 0x0C, b'1', b'.', b'e', b'4', b' ', b' ', b' ', b' ', 0x00, 0x00];
    assert!(bench.sent_bytes(&text), "the DGT 3000 ASCII command, no beep");
    assert!(!bench.sent_bytes(&Command::ClockEnd.bytes()));
    bench.run(1900);
    assert_eq!(bench.board.displayed_text(), Some("1.e4    "), "still shown before two seconds");
    bench.run(200);
    assert_eq!(bench.board.displayed_text(), None, "the times are back");
    assert!(bench.sent_bytes(&[0x2B, 0x03, 0x03, 0x03, 0x00]));
    // Black thinks for a while; the reply is shown the same way. (A reply
    // completed within 2 s of the times coming back is skipped: the times
    // stay at least as long as a move did.)
    bench.run(2000);
    bench.board.handle_script_event(&SensorEvent::Square { square: Square::E7, cell: Cell::Empty });
    bench.run(300);
    let pawn = Cell::Piece(Piece { color: Color::Black, role: Role::Pawn });
    bench.board.handle_script_event(&SensorEvent::Square { square: Square::E5, cell: pawn });
    bench.run(500);
    assert_eq!(bench.board.displayed_text(), None, "a move is not shown before it is completed");
    bench.clock(598_000, 597_000, ClockSide::Left);
    bench.run(20);
    assert_eq!(bench.board.displayed_text(), Some("1...e5  "));
    bench.run(2100);
    assert_eq!(bench.board.displayed_text(), None);
    // White answers at once: skipped, the times stay on the display.
    bench.board.handle_script_event(&SensorEvent::Square { square: Square::G1, cell: Cell::Empty });
    bench.run(100);
    let knight = Cell::Piece(Piece { color: Color::White, role: Role::Knight });
    bench.board.handle_script_event(&SensorEvent::Square { square: Square::F3, cell: knight });
    bench.run(400);
    bench.clock(597_000, 597_000, ClockSide::Right);
    bench.run(20);
    let game = bench.session.reconstructor().game().unwrap();
    assert_eq!(game.plies.len(), 3);
    assert_eq!(game.plies[2].status, boardcast_core::game::MoveStatus::Completed);
    assert_eq!(bench.board.displayed_text(), None, "2.Nf3 came less than 2 s after the times were back");
    let dropped: Vec<_> = bench.notices().into_iter().filter(|n| n.contains("did not acknowledge")).collect();
    assert!(dropped.is_empty(), "every clock command was acknowledged: {dropped:?}");
}

#[test]
fn nothing_is_shown_when_a_player_is_short_of_time() {
    // Black, to move after 1.e4, has 59 s left.
    let mut bench = Bench::new(ClockDisplayMode::Moves, 0x21, 600_000, 59_000);
    bench.play_e4(598_000, 59_000);
    bench.run(3000);
    assert_eq!(bench.board.displayed_text(), None);
    assert!(!bench.sent_bytes(&[0x2B, 0x0C, 0x03, 0x0C]), "no text was even sent");
}

#[test]
fn a_dgt_xl_shows_nothing_and_the_log_says_why() {
    let mut bench = Bench::new(ClockDisplayMode::Moves, 0x11, 600_000, 600_000);
    bench.play_e4(598_000, 600_000);
    bench.run(3000);
    assert!(!bench.sent_bytes(&[0x2B, 0x0C, 0x03, 0x0C]), "no text is sent to an XL");
    assert!(bench.notices().iter().any(|n| n.contains("not a DGT 3000")), "{:?}", bench.notices());
}

#[test]
fn with_the_display_off_the_clock_is_left_alone() {
    let mut bench = Bench::new(ClockDisplayMode::Off, 0x21, 600_000, 600_000);
    bench.play_e4(598_000, 600_000);
    bench.run(3000);
    assert_eq!(bench.board.displayed_text(), None);
    assert!(!bench.sent.contains(&0x2B), "no clock command at all");
}

#[test]
fn an_operator_message_is_shown_under_the_same_rule() {
    let mut bench = Bench::new(ClockDisplayMode::Moves, 0x21, 600_000, 600_000);
    let command = boardcast_core::operator::Command::ClockText { text: "Rd 3 ok".into() };
    assert!(bench.session.handle_command(bench.now, &command).is_ok());
    bench.run(20);
    assert_eq!(bench.board.displayed_text(), Some(ClockText::new("Rd 3 ok").as_str()));
    bench.run(2100);
    assert_eq!(bench.board.displayed_text(), None);
    let mut short = Bench::new(ClockDisplayMode::Moves, 0x21, 600_000, 30_000);
    let refused = short.session.handle_command(short.now, &command).unwrap_err();
    assert!(refused.to_string().contains("a minute or less"), "{refused}");
    short.run(100);
    assert_eq!(short.board.displayed_text(), None);
}
