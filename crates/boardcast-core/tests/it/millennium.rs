//! Millennium ChessLink boards, end to end:
//!
//! 1. The bytes on the wire: the command vectors of the research notes and
//!    the start position's status.
//! 2. The corpus (real games, every way of handling the pieces, a turned
//!    board, no clock) as a board reporting on change would send it: every
//!    game comes back move for move, with its result when the board shows
//!    one, and without a false alert.
//! 3. A live session talking to the simulated board: start-up, moves,
//!    LEDs.
//! 4. Properties of the decoder: the items do not depend on how the bytes
//!    were split into reads; noise between replies costs none of them; any
//!    bytes are survived, and the next good reply after them comes through.

use crate::support::chunks::{config, split};
use boardcast_core::protocol::BoardDecoder;
use boardcast_sim::board::SimulatedBoard;

use crate::support::CorpusGame;
use boardcast_core::{
    event::EventKind,
    protocol::{
        DecodeProblem, Decoded, Protocol,
        link::LinkConfig,
        millennium::{
            MillenniumDecoder,
            command::Command,
            leds::{STEADY, corners},
            reply::Reply,
        },
    },
    reconstruct::{GameSetup, ReconstructorConfig},
    replay::replay,
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    session::{BoardSession, Output},
    time::Timestamp,
};
use boardcast_sim::board::MillenniumSim;
use boardcast_sim::synth::{MillenniumForm, Style, header, millennium_capture, play, rng_for};
use proptest::{
    collection::vec,
    prelude::*,
    sample::{Index, select},
    test_runner::TestCaseError,
};
use shakmaty::{Color, Piece, Role, Square};

// ---------------------------------------------------------------------------
// 1. Bytes on the wire
// ---------------------------------------------------------------------------

#[test]
fn host_commands_match_the_research_vectors() {
    assert_eq!(Command::SendVersion.encode(), [0xD6, 0xB5, 0xB6]);
    assert_eq!(Command::SendStatus.encode(), [0xD3, 0xB5, 0xB3]);
    assert_eq!(Command::PutOutLeds.encode(), [0x58, 0xB5, 0x38]);
    assert_eq!(Command::Reset.encode(), [0x54, 0xB5, 0x34]);
    assert_eq!(Command::ReadRegister { address: 0x02 }.encode(), [0x52, 0xB0, 0x32, 0xB5, 0xB0]);
    assert_eq!(
        Command::WriteRegister { address: 0x02, value: 0x03 }.encode(),
        [0x57, 0xB0, 0x32, 0xB0, 0xB3, 0xB5, 0xB6]
    );
}

#[test]
fn the_start_position_status_ends_in_73_and_reads_a8_first() {
    let start = Picture::from_board(&shakmaty::Board::new());
    let bytes = Reply::Status(Box::new(start.clone())).encode();
    assert_eq!(bytes.len(), 67);
    let text: String = bytes.iter().map(|&b| char::from(b & 0x7F)).collect();
    assert_eq!(text, "srnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR73");
    assert!(bytes.iter().all(|b| b.count_ones() % 2 == 1), "odd parity on every byte");
    let mut decoder = MillenniumDecoder::new();
    decoder.handle_bytes(&bytes);
    assert_eq!(decoder.poll_decoded(), Some(Decoded::Sensor(SensorEvent::Board(Box::new(start)))));
    assert_eq!(decoder.finish(), None);
}

// ---------------------------------------------------------------------------
// 2. The corpus
// ---------------------------------------------------------------------------

fn check(corpus: &CorpusGame, seed: u64) -> Result<(), String> {
    let (game, name) = (&corpus.game, corpus.name());
    let mut rng = rng_for(seed, corpus.index);
    let mut style = Style::varied(&mut rng);
    style.clock = None;
    let stream = play(game, &style, &mut rng);
    let form = MillenniumForm::varied(&mut rng);
    let capture = millennium_capture(&header(game, Protocol::MILLENNIUM, &name), &stream.events, form, &mut rng);
    let replayed = replay(&capture, &ReconstructorConfig::default()).map_err(|e| e.to_string())?;
    let context =
        || format!("{name} (millennium, seed {seed}, {form:?}, {style:?})\n{}", crate::support::trace(&replayed));
    crate::support::same_game(&replayed, &stream.expected).map_err(|e| format!("{e}: {}", context()))
}

/// Every game of the corpus, as a Millennium board without a clock sends
/// it. `BOARDCAST_CORPUS_ONLY=twic0920-sample.pgn#7` runs (and fully
/// reports) one game.
#[test]
fn every_game_comes_back_from_millennium_bytes() {
    let corpus = crate::support::corpus();
    assert!(corpus.len() >= 400, "the corpus has {} games", corpus.len());
    let only = std::env::var("BOARDCAST_CORPUS_ONLY").ok();
    let mut failures = Vec::new();
    for game in corpus.iter().filter(|g| only.as_ref().is_none_or(|o| *o == g.name())) {
        if let Err(e) = check(game, crate::support::corpus_seed()) {
            failures.push(e);
        }
    }
    if let Some(first) = failures.first() {
        if only.is_some() {
            panic!("{first}");
        }
        let shown: Vec<&str> = failures.iter().take(3).map(|f| f.lines().next().unwrap_or_default()).collect();
        panic!("{} of {} games failed; first ones:\n{}", failures.len(), corpus.len(), shown.join("\n"));
    }
}

// ---------------------------------------------------------------------------
// 3. A live session and the simulated board
// ---------------------------------------------------------------------------

/// A live session wired to a simulated board, in virtual time.
struct Bench {
    session: BoardSession,
    board: MillenniumSim,
    now: Timestamp,
    outputs: Vec<Output>,
}

impl Bench {
    fn new() -> Self {
        let session = BoardSession::live(
            Protocol::MILLENNIUM,
            ReconstructorConfig::default(),
            GameSetup::default(),
            LinkConfig::default(),
        );
        let mut board = MillenniumSim::new("", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&shakmaty::Board::new()))));
        Self { session, board, now: Timestamp::ZERO, outputs: Vec::new() }
    }

    /// Lets `ms` milliseconds pass, bytes crossing both ways every 10 ms.
    fn run(&mut self, ms: u64) {
        for _ in 0..ms / 10 {
            self.now = self.now + std::time::Duration::from_millis(10);
            self.session.advance_to(self.now);
            self.board.handle_timeout(self.now);
            while let Some(bytes) = self.session.poll_transmit(self.now) {
                self.board.handle_host_bytes(&bytes);
            }
            if let Some(bytes) = self.board.poll_transmit() {
                self.session.handle_bytes(self.now, &bytes);
            }
            self.outputs.extend(std::iter::from_fn(|| self.session.poll_output()));
        }
    }

    fn set(&mut self, square: Square, cell: Cell) {
        self.board.handle_script_event(&SensorEvent::Square { square, cell });
    }

    fn moves(&self) -> Vec<String> {
        self.outputs
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
}

#[test]
fn a_live_session_starts_the_board_reads_moves_and_lights_them() {
    let mut bench = Bench::new();
    bench.session.handle_connected(bench.now);
    bench.run(500);
    assert!(bench.board.sends_updates());
    assert_eq!(bench.board.register(2), 4, "report on change, two-scan debounce");
    let identified = bench
        .outputs
        .iter()
        .any(|o| matches!(o, Output::Notice(n) if n.kind.to_string() == "board identified: firmware 1.8"));
    assert!(identified, "{:?}", bench.outputs);
    let pawn = |color: Color| Cell::Piece(Piece { color, role: Role::Pawn });
    bench.set(Square::E2, Cell::Empty);
    bench.run(200);
    bench.set(Square::E4, pawn(Color::White));
    bench.run(1000);
    bench.set(Square::E7, Cell::Empty);
    bench.run(150);
    bench.set(Square::E5, pawn(Color::Black));
    bench.run(1000);
    assert_eq!(bench.moves(), ["e2e4", "e7e5"]);
    let leds = bench.board.leds();
    for led in corners(Square::E7).into_iter().chain(corners(Square::E5)) {
        assert_eq!(leds.codes[led], STEADY, "the last move's squares are lit");
    }
    assert_eq!(leds.codes[corners(Square::E2)[1]], 0, "the move before is not");
    // A board left alone for a minute stays connected: the keep-alive
    // status requests are answered.
    bench.run(60_000);
    let silent = bench.outputs.iter().any(|o| matches!(o, Output::Notice(n) if n.kind.to_string().contains("silent")));
    assert!(!silent);
}

#[test]
fn identify_lights_every_led_for_five_seconds_then_the_games_lights_again() {
    let mut bench = Bench::new();
    bench.session.handle_connected(bench.now);
    bench.run(500);
    let identify = boardcast_core::operator::Command::Identify { text: Some("7".into()) };
    let said = bench.session.handle_command(bench.now, &identify).unwrap();
    assert_eq!(said, "every LED of the board lit for 5 s");
    bench.run(300);
    assert!(bench.board.leds().codes.iter().all(|&code| code == STEADY), "{:?}", bench.board.leds());
    bench.run(4_500);
    assert!(bench.board.leds().codes.iter().all(|&code| code == STEADY), "still within the 5 s");
    bench.run(500);
    assert!(bench.board.leds().codes.iter().all(|&code| code == 0), "no move yet: the game lights nothing");
    // A DGT board without a DGT 3000 showing text has nothing to show.
    let mut dgt =
        BoardSession::live(Protocol::DGT, ReconstructorConfig::default(), GameSetup::default(), LinkConfig::default());
    let refused = dgt.handle_command(bench.now, &identify).unwrap_err().to_string();
    assert!(refused.starts_with("this board cannot show itself"), "{refused}");
}

// ---------------------------------------------------------------------------
// 4. Decoder properties
// ---------------------------------------------------------------------------

fn any_cell() -> impl Strategy<Value = Cell> {
    let piece = (any::<bool>(), select(Role::ALL.to_vec()))
        .prop_map(|(white, role)| Cell::Piece(Piece { color: Color::from_white(white), role }));
    prop_oneof![2 => Just(Cell::Empty), 1 => piece]
}

fn any_reply() -> impl Strategy<Value = Reply> {
    let status = vec(any_cell(), 64).prop_map(|cells| {
        let mut picture = Picture::empty();
        for (square, cell) in Square::ALL.into_iter().zip(cells) {
            picture.set(square, cell);
        }
        Reply::Status(Box::new(picture))
    });
    prop_oneof![
        4 => status,
        1 => (any::<u8>(), any::<u8>()).prop_map(|(major, minor)| Reply::Version { major, minor }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(address, value)| Reply::RegisterWritten { address, value }),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(address, value)| Reply::RegisterRead { address, value }),
        1 => Just(Reply::LedsSet),
        1 => Just(Reply::LedsOut),
    ]
}

/// Bytes biased towards what a Millennium board sends (reply letters,
/// hex digits, piece letters, with or without the right parity), so that
/// random input often looks like the start of a reply.
fn millennium_like_byte() -> impl Strategy<Value = u8> {
    let chars: Vec<u8> = b"svwrlx0123456789ABCDEF.KQRBNPkqrbnp".to_vec();
    let parity = |c: u8| if c.count_ones() % 2 == 1 { c } else { c | 0x80 };
    prop_oneof![
        3 => select(chars.clone()).prop_map(parity),
        1 => select(chars),
        1 => any::<u8>(),
    ]
}

/// A stretch of a byte stream: a reply, or bytes of any value.
#[derive(Clone, Debug)]
enum Part {
    Reply(Reply),
    Bytes(Vec<u8>),
}

fn any_part() -> impl Strategy<Value = Part> {
    prop_oneof![
        4 => any_reply().prop_map(Part::Reply),
        1 => vec(millennium_like_byte(), 0..12).prop_map(Part::Bytes),
    ]
}

fn encode(parts: &[Part]) -> Vec<u8> {
    parts
        .iter()
        .flat_map(|part| match part {
            Part::Reply(reply) => reply.encode(),
            Part::Bytes(bytes) => bytes.clone(),
        })
        .collect()
}

/// Everything the decoder makes of `chunks`, ending the stream after them.
fn decode<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Decoded> {
    let mut decoder = MillenniumDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.handle_bytes(chunk);
        out.extend(std::iter::from_fn(|| decoder.poll_decoded()));
    }
    out.extend(decoder.finish());
    out
}

fn without_problems(items: Vec<Decoded>) -> Vec<Decoded> {
    items.into_iter().filter(|d| !matches!(d, Decoded::Problem(_))).collect()
}

proptest! {
    #![proptest_config(config(500))]

    /// The decoded items, problems included, do not depend on where the
    /// serial port cut the reads.
    #[test]
    fn decoding_does_not_depend_on_chunking(parts in vec(any_part(), 0..30), cuts in vec(any::<Index>(), 0..20)) {
        let bytes = encode(&parts);
        let whole = decode([bytes.as_slice()]);
        prop_assert_eq!(decode(split(&bytes, &cuts)), whole);
    }

    /// Line noise between replies is dropped and reported, byte for byte,
    /// but never costs a reply.
    #[test]
    fn noise_between_replies_hides_nothing(
        replies in vec(any_reply(), 1..20),
        noise in vec(vec(0u8..0x80, 0..8), 21),
        cuts in vec(any::<Index>(), 0..10),
    ) {
        let mut clean = Vec::new();
        let mut noisy = noise[0].clone();
        for (reply, gap) in replies.iter().zip(&noise[1..]) {
            clean.extend(reply.encode());
            noisy.extend(reply.encode());
            noisy.extend_from_slice(gap);
        }
        let noise_len: usize = noise[..=replies.len()].iter().map(Vec::len).sum();
        let expected = decode([clean.as_slice()]);
        prop_assert!(!expected.iter().any(|d| matches!(d, Decoded::Problem(_))), "valid replies: {:?}", expected);
        let got = decode(split(&noisy, &cuts));
        let mut dropped = 0;
        for item in &got {
            match item {
                Decoded::Problem(DecodeProblem::Garbage { len, .. }) => dropped += len,
                Decoded::Problem(problem) => {
                    return Err(TestCaseError::fail(format!("noise taken for a bad reply: {problem:?}")));
                }
                _ => {}
            }
        }
        prop_assert_eq!(without_problems(got), expected);
        prop_assert_eq!(dropped, noise_len);
    }

    /// Whatever a broken cable sends, the decoder does not panic, the
    /// replies after it come through, and a whole session survives it.
    #[test]
    fn garbage_never_panics_and_the_next_reply_comes_through(
        garbage in vec(millennium_like_byte(), 0..600),
        replies in vec(any_reply(), 1..5),
        cuts in vec(any::<Index>(), 0..10),
    ) {
        let mut bytes = garbage.clone();
        let mut clean = Vec::new();
        for reply in &replies {
            bytes.extend(reply.encode());
            clean.extend(reply.encode());
        }
        let expected = decode([clean.as_slice()]);
        let got = without_problems(decode(split(&bytes, &cuts)));
        // Random bytes may hold a valid reply by chance: only the end is
        // certain.
        prop_assert!(got.ends_with(&expected), "got {:?}, expected to end with {:?}", got, expected);
        let mut session =
            BoardSession::new(Protocol::MILLENNIUM, ReconstructorConfig::default(), GameSetup::default());
        for (i, chunk) in split(&garbage, &cuts).into_iter().enumerate() {
            let t = Timestamp::from_millis(i as u64 * 700);
            session.advance_to(t);
            session.handle_bytes(t, chunk);
            while session.poll_output().is_some() {}
        }
        session.handle_end(Timestamp::from_millis(cuts.len() as u64 * 700));
    }
}
