//! Property tests: guarantees that must hold for *every* input, checked on
//! thousands of random ones rather than on the hand-picked examples of the
//! unit tests and the corpus.
//!
//! 1. Any legal game, standard or Chess960, made on the board by the
//!    simulated hands in any style and read back from an `events` or a `dgt`
//!    capture, comes back move for move, with its result, and without a
//!    false irregularity alert.
//! 2. The DGT decoder gives the same items however the bytes are split into
//!    read chunks.
//! 3. The DGT decoder survives any bytes, and line noise between messages
//!    hides none of them.
//! 4. The capture reader survives any text, and a capture cut off anywhere
//!    (a daemon killed mid-write) gives everything before the cut and names
//!    the line where it was cut.
//! 5. The reconstructor survives any sensor stream; its events can be
//!    followed in `seq` order, every move it records is legal and agrees
//!    with what it published, and it never asks to be woken in the past.
//!
//! These matter because the daemon runs unattended on whatever a board
//! sends: a tournament cannot afford a crash on a noisy cable, a move lost
//! to an unlucky read boundary, or a feed that disagrees with the PGN.
//!
//! The whole file runs in about a second; `PROPTEST_CASES=30000 cargo test
//! --release -p boardcast-core --test it properties::` hunts longer. A failing case is shrunk and
//! printed by proptest. No regression file is written
//! (`failure_persistence: None`): a case worth keeping becomes an ordinary
//! test.

use crate::support::chunks::{config, split};
use boardcast_core::protocol::BoardDecoder;

use std::collections::{BTreeMap, HashMap};

use boardcast_core::{
    capture::{CaptureHeader, CaptureReader, Record, RecordBody, format_header, format_record},
    event::{Event, EventKind, MoveInfo},
    game::{GameRecord, PlyMove, Tempo},
    protocol::{
        DecodeProblem, Decoded, Protocol,
        dgt::{
            DgtDecoder,
            clock::{BwTime, ClockAck, ClockTimes},
            frame,
            message::{Message, id},
        },
    },
    reconstruct::{GameSetup, ReconstructorConfig},
    replay::replay,
    sensor::{Cell, ClockDisplay, ClockReading, ClockSide, Picture, SensorEvent},
    session::{BoardSession, Output},
    time::Timestamp,
};
use boardcast_sim::synth::{
    DgtForm, Rng, SourceGame, Style, decided_on_the_board, dgt_capture, events_capture, header, play,
};
use proptest::{
    collection::{btree_map, vec},
    option,
    prelude::*,
    sample::{Index, select},
    test_runner::TestCaseError,
};
use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, FromSetup, Move, Piece, Position, Rank, Role, Setup, Square,
    uci::UciMove,
};

// ---------------------------------------------------------------------------
// Shared strategies
// ---------------------------------------------------------------------------

fn any_piece() -> impl Strategy<Value = Piece> {
    (any::<bool>(), select(Role::ALL.to_vec()))
        .prop_map(|(white, role)| Piece { color: Color::from_white(white), role })
}

/// What a square may hold, including "occupied by something unknown".
fn any_cell() -> impl Strategy<Value = Cell> {
    prop_oneof![4 => Just(Cell::Empty), 1 => Just(Cell::Occupied), 3 => any_piece().prop_map(Cell::Piece)]
}

fn any_square() -> impl Strategy<Value = Square> {
    (0u32..64).prop_map(Square::new)
}

fn any_picture() -> impl Strategy<Value = Picture> {
    vec(any_cell(), 64).prop_map(|cells| {
        let mut picture = Picture::empty();
        for (sq, cell) in Square::ALL.into_iter().zip(cells) {
            picture.set(sq, cell);
        }
        picture
    })
}

// ---------------------------------------------------------------------------
// 1. Random legal games reconstruct exactly
// ---------------------------------------------------------------------------

/// Up to `picks.len()` random legal plies from `start`, fewer if the game
/// ends on the board. A `greedy` player mates when it can and otherwise
/// captures when it can, so that games also reach mates and bare kings.
fn random_game(start: &Chess, picks: &[Index], greedy: bool) -> Vec<Move> {
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(picks.len());
    let mut before: Option<Chess> = None;
    for pick in picks {
        if decided_on_the_board(before.as_ref(), &pos).is_some() {
            break;
        }
        let mut legal = pos.legal_moves();
        if greedy {
            let mates = legal.iter().copied().filter(|&m| pos.clone().play(m).is_ok_and(|p| p.is_checkmate()));
            let mates: Vec<Move> = mates.collect();
            if !mates.is_empty() {
                legal.retain(|m| mates.contains(m));
            } else if legal.iter().any(|m| m.is_capture()) {
                legal.retain(|m| m.is_capture());
            }
        }
        let m = legal[pick.index(legal.len())];
        before = Some(pos.clone());
        pos.play_unchecked(m);
        moves.push(m);
    }
    moves
}

/// Chess960 start position `n` with all four castlings, as the reconstructor
/// builds it when it recognises the set-up.
fn chess960_start(n: u32) -> Chess {
    let board = Board::chess960(n);
    let mut setup = Setup::empty();
    setup.castling_rights = board.rooks() & (Bitboard::from_rank(Rank::First) | Bitboard::from_rank(Rank::Eighth));
    setup.board = board;
    Chess::from_setup(setup, CastlingMode::Chess960).expect("every Chess960 start position is a position")
}

/// Plays `game` with the style of `seed`, replays it as an `events` and as a
/// `dgt` capture, and checks both against what the generator expects.
fn check_game_comes_back(game: &SourceGame, seed: u64) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed);
    let style = Style::varied(&mut rng);
    let stream = play(game, &style, &mut rng);
    let form = DgtForm::varied(&mut rng);
    let mode = if game.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
    let uci: Vec<String> = game.moves.iter().map(|&m| UciMove::from_move(m, mode).to_string()).collect();
    let events = events_capture(&header(game, Protocol::EVENTS, "prop"), &stream.events);
    let dgt = dgt_capture(&header(game, Protocol::DGT, "prop"), &stream.events, form, &mut rng);
    for (name, capture) in [("events", events), ("dgt", dgt)] {
        let replayed = replay(&capture, &ReconstructorConfig::default())
            .map_err(|e| TestCaseError::fail(format!("{name} capture does not read: {e}")))?;
        let context = || {
            format!(
                "{name} capture of {} {uci:?} with seed {seed}, style {style:?}, dgt form {form:?}\n{}",
                if game.chess960 { "Chess960 game" } else { "game" },
                crate::support::trace(&replayed)
            )
        };
        prop_assert!(replayed.error.is_none(), "capture error {:?}: {}", replayed.error, context());
        prop_assert_eq!(replayed.games.len(), 1, "{}", context());
        let got = &replayed.games[0];
        prop_assert_eq!(&crate::support::uci(got), &stream.expected.uci, "{}", context());
        prop_assert_eq!(got.result.map(|r| r.outcome), stream.expected.result, "{}", context());
        let irregular: Vec<String> =
            crate::support::irregularities(&replayed).iter().map(ToString::to_string).collect();
        prop_assert!(irregular.is_empty(), "false alerts: {}: {}", irregular.join(" | "), context());
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1000))]

    /// Whatever legal game is played, and however the players handle the
    /// pieces (slides, swapped scans, flicker, quick replies, a turned
    /// board, with or without a clock), the feed shows exactly the moves
    /// played and the result the board shows, and the arbiter gets no
    /// false alarm.
    #[test]
    fn random_legal_games_come_back_exactly(
        seed in any::<u64>(),
        picks in vec(any::<Index>(), 1..=60),
        greedy in any::<bool>(),
    ) {
        let start = Chess::default();
        let moves = random_game(&start, &picks, greedy);
        let game = SourceGame { tags: vec![], start, chess960: false, moves, result: None };
        check_game_comes_back(&game, seed)?;
    }

    /// The same for Chess960 games from any of the 960 start positions,
    /// where castling moves the king onto its own rook.
    #[test]
    fn random_chess960_games_come_back_exactly(
        seed in any::<u64>(),
        n in 0u32..960,
        picks in vec(any::<Index>(), 1..=60),
        greedy in any::<bool>(),
    ) {
        let start = chess960_start(n);
        let moves = random_game(&start, &picks, greedy);
        let game = SourceGame { tags: vec![], start, chess960: true, moves, result: None };
        check_game_comes_back(&game, seed)?;
    }
}

// ---------------------------------------------------------------------------
// 2 and 3. The DGT decoder
// ---------------------------------------------------------------------------

/// A message a DGT board sends, with the content drawn at random.
#[derive(Clone, Debug)]
enum Msg {
    /// A field update with a raw square index and piece code.
    Field {
        index: u8,
        code: u8,
    },
    Dump(Box<Picture>),
    Clock {
        left_ms: u64,
        right_ms: u64,
        running: Option<ClockSide>,
    },
    ClockAck([u8; 4]),
    Version {
        major: u8,
        minor: u8,
    },
    Serial(String),
    Battery(u8),
}

impl Msg {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            &Self::Field { index, code } => frame::encode(id::FIELD_UPDATE, &[index, code], out),
            Self::Dump(picture) => Message::BoardDump(picture.clone()).encode(out),
            &Self::Clock { left_ms, right_ms, running } => {
                Message::Clock(BwTime::Times(ClockTimes::from_reading(left_ms, right_ms, running))).encode(out);
            }
            &Self::ClockAck(ack) => Message::Clock(BwTime::Ack(ClockAck(ack))).encode(out),
            &Self::Version { major, minor } => Message::Version { major, minor }.encode(out),
            Self::Serial(serial) => Message::SerialNumber(serial.clone()).encode(out),
            &Self::Battery(percent) => Message::Battery { percent }.encode(out),
        }
    }
}

fn any_msg() -> impl Strategy<Value = Msg> {
    let side = option::of(prop_oneof![Just(ClockSide::Left), Just(ClockSide::Right)]);
    prop_oneof![
        6 => (0u8..64, 0u8..=12).prop_map(|(index, code)| Msg::Field { index, code }),
        1 => any_picture().prop_map(|p| Msg::Dump(Box::new(p))),
        3 => (0u64..40_000_000, 0u64..40_000_000, side)
            .prop_map(|(left_ms, right_ms, running)| Msg::Clock { left_ms, right_ms, running }),
        1 => any::<[u8; 4]>().prop_map(Msg::ClockAck),
        1 => (0u8..0x80, 0u8..0x80).prop_map(|(major, minor)| Msg::Version { major, minor }),
        1 => "[0-9]{5,10}".prop_map(Msg::Serial),
        1 => (0u8..=100).prop_map(Msg::Battery),
    ]
}

/// A stretch of a byte stream: a message, or bytes of any value.
#[derive(Clone, Debug)]
enum Part {
    Msg(Msg),
    Bytes(Vec<u8>),
}

fn any_part() -> impl Strategy<Value = Part> {
    prop_oneof![4 => any_msg().prop_map(Part::Msg), 1 => vec(any::<u8>(), 0..8).prop_map(Part::Bytes)]
}

fn encode_parts(parts: &[Part]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for part in parts {
        match part {
            Part::Msg(msg) => msg.encode(&mut bytes),
            Part::Bytes(b) => bytes.extend_from_slice(b),
        }
    }
    bytes
}

/// Everything a decoder makes of `chunks`, ending the stream after them.
fn decode<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Decoded> {
    let mut decoder = DgtDecoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.handle_bytes(chunk);
        while let Some(item) = decoder.poll_decoded() {
            out.push(item);
        }
    }
    out.extend(decoder.finish());
    out
}

/// Bytes biased towards DGT message IDs and small lengths, so that random
/// input often looks like the start of a message.
fn dgt_like_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        4 => any::<u8>(),
        1 => select(vec![0x86, 0x8D, 0x8E, 0x8F, 0x90, 0x91, 0x92, 0x93, 0xA0, 0xA2]),
        1 => 0u8..16,
    ]
}

proptest! {
    #![proptest_config(config(1000))]

    /// A board's bytes arrive in whatever pieces the serial port or
    /// Bluetooth stack delivers: the decoded events (and the problems
    /// reported) must not depend on where the reads were cut.
    #[test]
    fn decoding_does_not_depend_on_chunking(parts in vec(any_part(), 0..40), cuts in vec(any::<Index>(), 0..20)) {
        let bytes = encode_parts(&parts);
        let whole = decode([bytes.as_slice()]);
        let chunked = decode(split(&bytes, &cuts));
        prop_assert_eq!(chunked, whole);
    }

    /// Whatever a broken cable or a confused board sends, the decoder does
    /// not panic, and at the end of the stream nothing is left pending.
    #[test]
    fn garbage_never_panics(bytes in vec(dgt_like_byte(), 0..600), cuts in vec(any::<Index>(), 0..10)) {
        let mut decoder = DgtDecoder::new();
        for chunk in split(&bytes, &cuts) {
            decoder.handle_bytes(chunk);
            while decoder.poll_decoded().is_some() {}
        }
        decoder.finish();
        prop_assert_eq!(decoder.poll_decoded(), None);
        prop_assert_eq!(decoder.finish(), None);
        // The same bytes through a whole session, so that whatever decodes
        // reaches the reconstructor (clock readings by side included).
        let mut session = BoardSession::new(Protocol::DGT, ReconstructorConfig::default(), GameSetup::default());
        for (i, chunk) in split(&bytes, &cuts).into_iter().enumerate() {
            let t = Timestamp::from_millis(i as u64 * 700);
            session.advance_to(t);
            session.handle_bytes(t, chunk);
            while session.poll_output().is_some() {}
        }
        session.handle_end(Timestamp::from_millis(cuts.len() as u64 * 700));
    }

    /// Line noise (bytes with bit 7 clear) between messages is dropped and
    /// reported, but never costs a message: the board's events and what it
    /// says about itself come through exactly as without the noise.
    #[test]
    fn noise_between_messages_hides_nothing(
        msgs in vec(any_msg(), 1..30),
        noise in vec(vec(0u8..0x80, 0..8), 31),
        cuts in vec(any::<Index>(), 0..10),
    ) {
        let mut clean = Vec::new();
        let mut noisy = noise[0].clone();
        for (msg, gap) in msgs.iter().zip(&noise[1..]) {
            msg.encode(&mut clean);
            msg.encode(&mut noisy);
            noisy.extend_from_slice(gap);
        }
        let noise_len: usize = noise[..=msgs.len()].iter().map(Vec::len).sum();
        let expected = decode([clean.as_slice()]);
        prop_assert!(!expected.iter().any(|d| matches!(d, Decoded::Problem(_))), "valid messages: {:?}", expected);
        let got = decode(split(&noisy, &cuts));
        let (problems, items): (Vec<Decoded>, Vec<Decoded>) =
            got.into_iter().partition(|d| matches!(d, Decoded::Problem(_)));
        prop_assert_eq!(items, expected);
        let mut dropped = 0;
        for problem in &problems {
            let Decoded::Problem(DecodeProblem::Garbage { len, .. }) = problem else {
                return Err(TestCaseError::fail(format!("noise taken for a bad message: {problem:?}")));
            };
            dropped += len;
        }
        prop_assert_eq!(dropped, noise_len, "problems: {:?}", problems);
    }
}

// ---------------------------------------------------------------------------
// 4. The capture reader
// ---------------------------------------------------------------------------

fn quoted(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// A JSON value of the kinds the capture format uses, right or wrong.
fn json_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|n| n.to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        select(vec!["null", "true", "false", "1.5", "1e3", "[]", "{}", "[1, \"a\"]"]).prop_map(str::to_owned),
        "[a-i][0-9]".prop_map(|s| quoted(&s)),
        "[PNBRQKpnbrqk?X]{0,2}".prop_map(|s| quoted(&s)),
        "[0-9a-fA-F ]{0,12}".prop_map(|s| quoted(&s)),
        "[rnbqkpRNBQKP?1-9/]{0,50}".prop_map(|s| quoted(&s)),
        "(events|dgt|zz|white|black|red)".prop_map(|s| quoted(&s)),
        any::<String>().prop_map(|s| quoted(&s)),
        (any::<u32>(), any::<u32>(), "(\"white\"|\"black\"|null|\"x\"|1)")
            .prop_map(|(w, b, r)| format!("{{\"white_ms\":{w},\"black_ms\":{b},\"running\":{r}}}")),
    ]
}

/// A line that is mostly a JSON object with capture keys, sometimes cut
/// short or mangled.
fn json_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        9 => select(vec![
            "t_us", "rx", "tx", "board", "square", "piece", "clock", "capture", "protocol", "game", "chess960",
            "started_at",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_]{1,8}",
    ];
    let object = vec((key, json_value()), 0..6)
        .prop_map(|pairs| {
            let fields: Vec<String> = pairs.iter().map(|(k, v)| format!("{}:{v}", quoted(k))).collect();
            format!("{{{}}}", fields.join(","))
        })
        .boxed();
    prop_oneof![
        8 => object.clone(),
        1 => (object, any::<Index>()).prop_map(|(line, cut)| cut_at(&line, cut).to_owned()),
        1 => "(#.*|\\s*|[^\n]{0,40})",
    ]
}

fn header_line() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => Just(r#"{"capture":1,"protocol":"events","board":"b"}"#.to_owned()),
        2 => Just(r#"{"capture":1,"protocol":"dgt","board":"b"}"#.to_owned()),
        1 => json_line(),
    ]
}

/// The longest prefix of `text` that ends on a character boundary at or
/// before the byte `cut` picks.
fn cut_at(text: &str, cut: Index) -> &str {
    let mut at = cut.index(text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

/// A capture the way the daemon writes it, with its header and records.
fn any_capture() -> impl Strategy<Value = (CaptureHeader, Vec<Record>)> {
    let header = (
        any::<bool>(),
        any::<String>(),
        option::of(any::<String>()),
        btree_map("[A-Za-z]{1,8}", any::<String>(), 0..4),
        any::<bool>(),
        option::of(prop_oneof![Just(Tempo::Standard), Just(Tempo::Rapid), Just(Tempo::Blitz)]),
        any::<bool>(),
    )
        .prop_map(
            |(events, board, started_at, game, chess960, rules, supervised): (
                _,
                _,
                _,
                BTreeMap<String, String>,
                _,
                _,
                _,
            )| {
                let protocol = if events { Protocol::EVENTS } else { Protocol::DGT };
                CaptureHeader {
                    protocol,
                    board,
                    started_at,
                    game: game.into_iter().collect(),
                    chess960,
                    rules,
                    supervised,
                    calibration: Vec::new(),
                }
            },
        );
    let event = prop_oneof![
        6 => (any_square(), any_cell()).prop_map(|(square, cell)| SensorEvent::Square { square, cell }),
        2 => (any::<u64>(), any::<u64>(), option::of(any::<bool>())).prop_map(|(white_ms, black_ms, running)| {
            SensorEvent::Clock(ClockReading::ByColor {
                white_ms,
                black_ms,
                running: running.map(Color::from_white),
            })
        }),
        1 => any_picture().prop_map(|p| SensorEvent::Board(Box::new(p))),
    ];
    let bytes = prop_oneof![
        3 => vec(any::<u8>(), 0..20).prop_map(RecordBody::Rx),
        1 => vec(any::<u8>(), 0..4).prop_map(RecordBody::Tx),
    ];
    let dts = vec(prop_oneof![0u64..1000, 0u64..100_000_000], 0..20);
    (header, any_picture(), vec(event, 0..20), vec(bytes, 0..20), dts).prop_map(
        |(header, first, events, bytes, dts)| {
            let bodies: Vec<RecordBody> = if header.protocol == Protocol::EVENTS {
                std::iter::once(SensorEvent::Board(Box::new(first))).chain(events).map(RecordBody::Event).collect()
            } else {
                bytes
            };
            let mut t = 0;
            let records = bodies
                .into_iter()
                .zip(dts.into_iter().chain(std::iter::repeat(0)))
                .map(|(body, dt)| {
                    t += dt;
                    Record { t: Timestamp::from_micros(t), body }
                })
                .collect();
            (header, records)
        },
    )
}

fn capture_text(header: &CaptureHeader, records: &[Record]) -> String {
    let mut text = format_header(header);
    text.push('\n');
    for record in records {
        text.push_str(&format_record(record));
        text.push('\n');
    }
    text
}

/// What every text must give: a header error, or records until at most one
/// error, the last item; every error names a line of the text; and what was
/// read writes back to a capture that reads the same.
fn check_reader(text: &str) -> Result<(), TestCaseError> {
    let lines = text.lines().count().max(1);
    let reader = match CaptureReader::new(text) {
        Ok(reader) => reader,
        Err(e) => {
            prop_assert!((1..=lines).contains(&e.line), "header error on line {} of {lines}: {e}", e.line);
            return Ok(());
        }
    };
    let header = reader.header().clone();
    let items: Vec<_> = reader.collect();
    let mut records = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok(record) => records.push(record.clone()),
            Err(e) => {
                prop_assert_eq!(i, items.len() - 1, "an error that is not the last item: {}", e);
                prop_assert!((2..=lines).contains(&e.line), "record error on line {} of {lines}: {e}", e.line);
                let _ = e.to_string();
            }
        }
    }
    prop_assert!(records.windows(2).all(|w| w[0].t <= w[1].t), "times go back: {:?}", records);
    let written = capture_text(&header, &records);
    let again = CaptureReader::new(&written)
        .map_err(|e| TestCaseError::fail(format!("what was read does not write back ({e}): {written}")))?;
    prop_assert_eq!(again.header(), &header);
    let again: Vec<_> = again.collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(again, records);
    Ok(())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        vec(any::<char>(), 0..300).prop_map(String::from_iter),
        (header_line(), vec(json_line(), 0..20), select(vec!["\n", "\r\n"])).prop_map(|(header, lines, newline)| {
            std::iter::once(header).chain(lines).collect::<Vec<_>>().join(newline)
        }),
        (any_capture(), any::<Index>())
            .prop_map(|((header, records), cut)| { cut_at(&capture_text(&header, &records), cut).to_owned() }),
    ]
}

proptest! {
    #![proptest_config(config(1000))]

    /// Captures come from other tools and from crashed daemons: whatever
    /// the text, the reader does not panic, stops at the first bad line and
    /// names a line that exists; what it does accept can be written back.
    #[test]
    fn capture_reader_survives_any_text(text in any_text()) {
        check_reader(&text)?;
    }

    /// A capture cut off at any byte (a daemon killed mid-write, a full
    /// disk) still gives every record before the cut, and at most one error
    /// naming the line that was cut, or the header error if the cut is in
    /// the header.
    #[test]
    fn a_cut_capture_gives_everything_before_the_cut((header, records) in any_capture(), cut in any::<Index>()) {
        let text = capture_text(&header, &records);
        let prefix = cut_at(&text, cut);
        let cut = prefix.len();
        let header_end = text.find('\n').expect("a header line");
        let reader = match CaptureReader::new(prefix) {
            Ok(reader) => reader,
            Err(e) => {
                prop_assert!(cut < header_end, "a whole header is refused: {}", e);
                prop_assert_eq!(e.line, 1);
                return Ok(());
            }
        };
        prop_assert!(cut >= header_end, "a cut header is accepted: {:?}", prefix);
        prop_assert_eq!(reader.header(), &header);
        // Where each record line ends (before its newline).
        let mut line_end = header_end;
        let mut complete = 0;
        let mut partial = false;
        for record in &records {
            let start = line_end + 1;
            line_end = start + format_record(record).len();
            if line_end <= cut {
                complete += 1;
            } else {
                partial = start < cut;
                break;
            }
        }
        let items: Vec<_> = reader.collect();
        let ok: Vec<Record> = items.iter().filter_map(|r| r.as_ref().ok().cloned()).collect();
        prop_assert_eq!(&ok[..], &records[..complete]);
        if partial {
            prop_assert_eq!(items.len(), complete + 1);
            let error = items[complete].as_ref().expect_err("the cut line is an error");
            prop_assert_eq!(error.line, complete + 2, "{}", error);
        } else {
            prop_assert_eq!(items.len(), complete, "{:?}", items.last());
        }
    }
}

// ---------------------------------------------------------------------------
// 5. The reconstructor
// ---------------------------------------------------------------------------

/// Something that happens on or beside the board.
#[derive(Clone, Debug)]
enum Action {
    /// One square changes, whatever the game says.
    Square(Square, Cell),
    /// A board dump: of anything, or (`None`) of the board as it stands.
    Board(Option<Box<Picture>>),
    /// The pieces are set up for a new game: the standard start position,
    /// or Chess960 position `n` on a Chess960 board; the board may be turned
    /// 180°.
    StartPosition { n: u32, rotated: bool },
    /// A clock reading.
    Clock { white: ClockDisplay, black: ClockDisplay, running: Option<Color> },
    /// A legal move for the board as it stands (picked by the first index),
    /// its squares reported in an order picked by the second.
    Move(Index, Index),
}

/// What happens at a board; `noisy` boards see many more knocked pieces
/// and dumps of random boards, calm ones mostly moves.
fn any_action(noisy: bool) -> impl Strategy<Value = Action> {
    let ms = prop_oneof![0u64..2000, 0u64..10_000_000];
    let display = (ms, prop::bool::weighted(0.05)).prop_map(|(ms, flag)| ClockDisplay { ms, flag });
    let square = if noisy { 6 } else { 1 };
    let dump = if noisy { option::weighted(0.7, any_picture().prop_map(Box::new)).boxed() } else { Just(None).boxed() };
    prop_oneof![
        square => (any_square(), any_cell()).prop_map(|(sq, cell)| Action::Square(sq, cell)),
        1 => dump.prop_map(Action::Board),
        1 => (0u32..960, prop::bool::weighted(0.2)).prop_map(|(n, rotated)| Action::StartPosition { n, rotated }),
        6 => (display.clone(), display, option::of(any::<bool>())).prop_map(|(white, black, running)| {
            Action::Clock { white, black, running: running.map(Color::from_white) }
        }),
        40 => (any::<Index>(), any::<Index>()).prop_map(|(pick, order)| Action::Move(pick, order)),
    ]
}

/// Milliseconds before an action: mostly quick, sometimes long enough for
/// every timer of the reconstructor to run out.
fn any_pause() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 0u64..100, 3 => 100u64..2500, 1 => 2500u64..15_000]
}

/// The simulated board: what stands on it and, while only legal moves were
/// made on it, the position it is in.
struct Table {
    chess960: bool,
    /// The clock display White's time is on; `None` for readings by colour.
    white_side: Option<ClockSide>,
    /// The board reports every square turned 180°.
    rotated: bool,
    /// What stands on the board, seen from White's side.
    picture: Picture,
    position: Option<Chess>,
    turn: Color,
}

impl Table {
    fn new(chess960: bool, white_side: Option<ClockSide>) -> Self {
        let start = if chess960 { chess960_start(518) } else { Chess::default() };
        let picture = Picture::from_board(start.board());
        Self { chess960, white_side, rotated: false, picture, position: Some(start), turn: Color::White }
    }

    fn mode(&self) -> CastlingMode {
        if self.chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard }
    }

    /// A square as the board reports it.
    fn reported(&self, square: Square) -> Square {
        if self.rotated { square.flip_vertical().flip_horizontal() } else { square }
    }

    /// The whole board as the board reports it.
    fn dump(&self) -> SensorEvent {
        SensorEvent::Board(Box::new(if self.rotated { self.picture.rotated() } else { self.picture.clone() }))
    }

    /// The position to move from: the one kept if the board still shows it,
    /// else whatever the board shows, with the side after the last move to
    /// move.
    fn position(&self) -> Option<Chess> {
        let board = self.picture.to_board()?;
        if let Some(pos) = self.position.as_ref().filter(|p| *p.board() == board) {
            return Some(pos.clone());
        }
        let mut setup = Setup::empty();
        let back_ranks = Bitboard::from_rank(Rank::First) | Bitboard::from_rank(Rank::Eighth);
        setup.castling_rights = board.rooks() & if self.chess960 { back_ranks } else { Bitboard::CORNERS };
        setup.board = board;
        setup.turn = self.turn;
        let error = match Chess::from_setup(setup, self.mode()) {
            Ok(pos) => return Some(pos),
            Err(error) => error,
        };
        let error = match error.ignore_invalid_castling_rights() {
            Ok(pos) => return Some(pos),
            Err(error) => error,
        };
        error.ignore_impossible_check().ok()
    }

    /// The sensor events for `action`, updating the table.
    fn act(&mut self, action: &Action) -> Vec<SensorEvent> {
        match action {
            &Action::Square(square, cell) => {
                self.picture.set(square, cell);
                vec![SensorEvent::Square { square: self.reported(square), cell }]
            }
            Action::Board(picture) => {
                if let Some(picture) = picture {
                    self.picture = (**picture).clone();
                }
                vec![self.dump()]
            }
            &Action::StartPosition { n, rotated } => {
                let start = if self.chess960 { chess960_start(n) } else { Chess::default() };
                self.picture = Picture::from_board(start.board());
                self.position = Some(start);
                self.turn = Color::White;
                self.rotated = rotated;
                vec![self.dump()]
            }
            &Action::Clock { white, black, running } => {
                let reading = match self.white_side {
                    None => ClockReading::ByColor { white_ms: white.ms, black_ms: black.ms, running },
                    Some(side) => {
                        let (left, right) = if side == ClockSide::Left { (white, black) } else { (black, white) };
                        let running = running.map(|c| if c == Color::White { side } else { side.other() });
                        ClockReading::BySide { left, right, running }
                    }
                };
                vec![SensorEvent::Clock(reading)]
            }
            Action::Move(pick, order) => {
                let Some(before) = self.position() else {
                    return Vec::new();
                };
                let legal = before.legal_moves();
                if legal.is_empty() {
                    return Vec::new();
                }
                let mut after = before.clone();
                after.play_unchecked(legal[pick.index(legal.len())]);
                let mut events: Vec<SensorEvent> = Square::ALL
                    .into_iter()
                    .filter(|&sq| before.board().piece_at(sq) != after.board().piece_at(sq))
                    .map(|sq| SensorEvent::Square {
                        square: self.reported(sq),
                        cell: after.board().piece_at(sq).into(),
                    })
                    .collect();
                let len = events.len();
                events.rotate_left(order.index(len));
                self.picture = Picture::from_board(after.board());
                self.turn = after.turn();
                self.position = Some(after);
                events
            }
        }
    }
}

/// A game as its events tell it: the position after each ply.
struct Line {
    mode: CastlingMode,
    positions: Vec<Chess>,
}

/// Follows the event stream as a consumer would, checking it on the way.
#[derive(Default)]
struct Follower {
    last_seq: HashMap<u32, u64>,
    games: HashMap<u32, Line>,
    trace: Vec<String>,
}

impl Follower {
    fn drain(&mut self, session: &mut BoardSession) -> Result<(), TestCaseError> {
        while let Some(output) = session.poll_output() {
            if let Output::Event(event) = output {
                self.trace.push(event.to_string());
                self.follow(&event)?;
            }
        }
        Ok(())
    }

    fn follow(&mut self, event: &Event) -> Result<(), TestCaseError> {
        if let Some(&last) = self.last_seq.get(&event.game) {
            prop_assert!(event.seq > last, "seq {} after {last} in game {}", event.seq, event.game);
        }
        self.last_seq.insert(event.game, event.seq);
        if let EventKind::GameStarted { start, chess960, .. } = &event.kind {
            let mode = if *chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
            prop_assert!(!self.games.contains_key(&event.game), "game {} started twice", event.game);
            self.games.insert(event.game, Line { mode, positions: vec![(**start).clone()] });
            return Ok(());
        }
        let Some(line) = self.games.get_mut(&event.game) else {
            prop_assert!(
                !matches!(
                    event.kind,
                    EventKind::MoveMade(_) | EventKind::MoveAmended { .. } | EventKind::MoveRetracted { .. }
                ),
                "a move event before game {} started: {}",
                event.game,
                event
            );
            return Ok(());
        };
        let plies = line.positions.len() - 1;
        match &event.kind {
            EventKind::MoveMade(info) => {
                prop_assert_eq!(info.ply, plies + 1, "{}", event);
                line.play(info)?;
            }
            EventKind::MoveAmended { previous, now } => {
                prop_assert_eq!(previous.ply, plies, "{}", event);
                prop_assert_eq!(now.ply, plies, "{}", event);
                line.positions.pop();
                line.play(now)?;
            }
            EventKind::MoveRetracted { previous } => {
                prop_assert_eq!(previous.ply, plies, "{}", event);
                prop_assert!(plies > 0, "retracted a move of an empty game: {}", event);
                line.positions.pop();
            }
            _ => {}
        }
        Ok(())
    }
}

impl Line {
    /// Plays a published move: legal in the position before it (unless it
    /// is an illegal move that stood), and leading to the position it says.
    fn play(&mut self, info: &MoveInfo) -> Result<(), TestCaseError> {
        let before = self.positions.last().expect("a start position");
        if !info.illegal() {
            let mode = self.mode;
            let legal = before.legal_moves();
            let m = legal.iter().find(|&&m| UciMove::from_move(m, mode).to_string() == info.uci);
            let Some(&m) = m else {
                return Err(TestCaseError::fail(format!("{info} is not legal in {}", fen(before))));
            };
            let mut after = before.clone();
            after.play_unchecked(m);
            prop_assert!(after == *info.after, "{} leads to {}, not {}", info, fen(&after), info.fen());
        }
        self.positions.push((*info.after).clone());
        Ok(())
    }
}

fn fen(pos: &Chess) -> String {
    shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
}

/// Every legal ply of a record is legal where it was played and leads to
/// the position recorded after it.
fn check_record(game: &GameRecord) -> Result<(), TestCaseError> {
    let mut pos = game.start.clone();
    for (i, ply) in game.plies.iter().enumerate() {
        if let PlyMove::Legal(m) = ply.mv {
            prop_assert!(pos.is_legal(m), "game {} ply {}: {:?} is not legal in {}", game.number, i + 1, m, fen(&pos));
            pos.play_unchecked(m);
            prop_assert!(pos == ply.after, "game {} ply {}: the record says {}", game.number, i + 1, fen(&ply.after));
        }
        // An illegal move that stood (A.5.2): the game goes on from the
        // position the board showed.
        pos = ply.after.clone();
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(1000))]

    /// A live board sends anything: moves, pieces knocked over, whole
    /// boards, clocks at any time, a board turned around. The reconstructor
    /// must not panic; a consumer following its events in `seq` order must
    /// see only legal moves played one after another, ending where the game
    /// records end; every recorded move must be legal; and no deadline may
    /// lie in the past, or timers would fire out of order.
    #[test]
    fn the_reconstructor_survives_any_sensor_stream(
        steps in any::<bool>().prop_flat_map(|noisy| vec((any_pause(), any_action(noisy)), 0..150)),
        chess960 in prop::bool::weighted(0.25),
        white_side in option::of(prop_oneof![Just(ClockSide::Left), Just(ClockSide::Right)]),
    ) {
        let setup = GameSetup { chess960, ..GameSetup::default() };
        let mut session = BoardSession::new(Protocol::EVENTS, ReconstructorConfig::default(), setup);
        let mut table = Table::new(chess960, white_side);
        let mut follower = Follower::default();
        let mut t = Timestamp::ZERO;
        session.handle_sensor(t, &table.dump());
        follower.drain(&mut session)?;
        // The players sit down: the set-up stands long enough to start a game.
        t = Timestamp::from_millis(1000);
        for (pause, action) in &steps {
            t = t + std::time::Duration::from_millis(*pause);
            for (i, event) in table.act(action).iter().enumerate() {
                if i > 0 {
                    // A hand takes a moment between the squares of a move.
                    t = t + std::time::Duration::from_millis(40);
                }
                session.advance_to(t);
                follower.drain(&mut session)?;
                if let Some(deadline) = session.poll_timeout() {
                    prop_assert!(deadline > t, "after advance_to({}), deadline {}", t, deadline);
                }
                session.handle_sensor(t, event);
                follower.drain(&mut session)?;
                if let Some(deadline) = session.poll_timeout() {
                    prop_assert!(
                        deadline >= t,
                        "after {:?} at {}, deadline {} in the past\n{}",
                        event,
                        t,
                        deadline,
                        follower.trace.join("\n")
                    );
                }
            }
        }
        session.advance_to(t);
        session.handle_end(t);
        follower.drain(&mut session)?;
        let games = session.into_games();
        for game in &games {
            check_record(game)?;
            let line = follower.games.get(&game.number).map(|l| &l.positions);
            let recorded: Vec<&Chess> = std::iter::once(&game.start).chain(game.plies.iter().map(|p| &p.after)).collect();
            let published: Option<Vec<&Chess>> = line.map(|l| l.iter().collect());
            prop_assert!(
                published.as_ref() == Some(&recorded),
                "game {}: the events end at ply {:?}, the record at ply {}\n{}",
                game.number,
                line.map(|l| l.len() - 1),
                game.plies.len(),
                follower.trace.join("\n")
            );
        }
    }
}
