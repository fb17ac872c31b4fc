//! Occupancy-only boards in the Sentio line format, from bytes to pictures:
//!
//! 1. Byte-level vectors: rank bitmasks as the board sends them.
//! 2. The simulated board and the synthetic captures report exactly the
//!    occupancy of the events they were made from, for every game of the
//!    corpus.
//! 3. The corpus through the reconstructor: ignored until the
//!    reconstructor resolves captures from occupancy alone.
//! 4. Properties: the decoder gives the same items however the bytes are
//!    chunked, and survives any bytes.

mod support;

use boardcast::{
    capture::RecordBody,
    protocol::{
        DecodeProblem, Decoded, Protocol,
        certabo::line::encode_report,
        sentio::{SentioDecoder, occupancy, ranks},
    },
    reconstruct::ReconstructorConfig,
    replay::{read_capture, replay},
    sensor::{Cell, Picture, SensorEvent},
    synth::{ReportForm, Style, header, play, rng_for, sentio_capture},
    time::Timestamp,
};
use proptest::{collection::vec, prelude::*, sample::Index, test_runner::Config};
use shakmaty::{Bitboard, Board, Square};

fn decode_all(decoder: &mut SentioDecoder, chunks: &[&[u8]]) -> Vec<Decoded> {
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.handle_bytes(chunk);
        out.extend(std::iter::from_fn(|| decoder.poll_decoded()));
    }
    out.extend(decoder.finish());
    out
}

fn occupied_picture(occupied: Bitboard) -> Picture {
    let mut picture = Picture::empty();
    for square in occupied {
        picture.set(square, Cell::Occupied);
    }
    picture
}

// ---------------------------------------------------------------------------
// 1. Byte-level vectors
// ---------------------------------------------------------------------------

#[test]
fn the_start_position_with_h1_empty() {
    let out = decode_all(&mut SentioDecoder::new(), &[b":255 255 0 0 0 0 255 254 \r\n"]);
    let expected = Board::new().occupied() ^ Bitboard::from(Square::H1);
    assert_eq!(out, [Decoded::Sensor(SensorEvent::Board(Box::new(occupied_picture(expected))))]);
}

#[test]
fn bit_seven_is_the_a_file_and_the_first_number_rank_eight() {
    let out = decode_all(&mut SentioDecoder::new(), &[b":128 0 0 0 0 0 0 1\r\n"]);
    let expected = Bitboard::from(Square::A8) | Bitboard::from(Square::H1);
    assert_eq!(out, [Decoded::Sensor(SensorEvent::Board(Box::new(occupied_picture(expected))))]);
}

#[test]
fn only_changes_are_reported_and_bad_lines_say_why() {
    let mut decoder = SentioDecoder::new();
    let out = decode_all(
        &mut decoder,
        &[b":255 255 0 0 0 0 255 255 \r\n:255 255 0 0 0 0 255 255 \r\n:255 255 0 0 8 0 247 255 \r\n:1 2\r\n"],
    );
    assert_eq!(out.len(), 3, "{out:?}");
    let Decoded::Sensor(SensorEvent::Board(moved)) = &out[1] else { panic!("{out:?}") };
    assert_eq!(moved.get(Square::E4), Cell::Occupied);
    assert_eq!(moved.get(Square::E2), Cell::Empty);
    assert_eq!(
        out[2],
        Decoded::Problem(DecodeProblem::BadMessage("a report of 2 numbers (a Sentio-format board sends 8)".into()))
    );
}

// ---------------------------------------------------------------------------
// 2. Simulated board and synthetic captures
// ---------------------------------------------------------------------------

/// For every game of the corpus played in a varied style, the clean Sentio
/// capture's reports decode to exactly the occupancy the events show at
/// each report's time, and every change of occupancy between two reports
/// is reported.
#[test]
fn reports_carry_exactly_the_occupancy_of_the_events() {
    for corpus in support::corpus() {
        let mut rng = rng_for(11, corpus.index);
        let mut style = Style::varied(&mut rng);
        style.clock = None;
        let stream = play(&corpus.game, &style, &mut rng);
        let text =
            sentio_capture(&header(&corpus.game, Protocol::Sentio, "s"), &stream.events, ReportForm::clean(), &mut rng);
        let capture = read_capture(&text).unwrap();
        assert_eq!(capture.header.protocol, Protocol::Sentio);
        let mut decoder = SentioDecoder::new();
        let mut board = Picture::empty();
        let mut events = stream.events.iter().peekable();
        let mut previous: Option<Bitboard> = None;
        for record in &capture.records {
            let RecordBody::Rx(bytes) = &record.body else { panic!("{:?}", record.body) };
            while let Some((_, event)) = events.next_if(|(t, _)| *t <= record.t) {
                match event {
                    SensorEvent::Board(picture) => board = (**picture).clone(),
                    &SensorEvent::Square { square, cell } => {
                        board.set(square, cell);
                    }
                    SensorEvent::Clock(_) => {}
                }
            }
            decoder.handle_bytes(bytes);
            let out: Vec<Decoded> = std::iter::from_fn(|| decoder.poll_decoded()).collect();
            let occupied = board.occupied();
            let expected = if previous == Some(occupied) {
                vec![]
            } else {
                vec![Decoded::Sensor(SensorEvent::Board(Box::new(occupied_picture(occupied))))]
            };
            assert_eq!(out, expected, "{} at {}", corpus.name(), record.t);
            previous = Some(occupied);
        }
        assert!(events.next().is_none(), "{}: the reports go on past the last event", corpus.name());
    }
}

#[test]
fn noisy_chunked_reports_end_on_the_final_occupancy() {
    for corpus in support::corpus().iter().step_by(20) {
        let mut rng = rng_for(5, corpus.index);
        let mut style = Style::varied(&mut rng);
        style.clock = None;
        let stream = play(&corpus.game, &style, &mut rng);
        let form = ReportForm { noise: 0.05, ..ReportForm::varied(&mut rng) };
        let text = sentio_capture(&header(&corpus.game, Protocol::Sentio, "s"), &stream.events, form, &mut rng);
        let mut decoder = SentioDecoder::new();
        let mut last = None;
        let mut problems = 0;
        for record in read_capture(&text).unwrap().records {
            let RecordBody::Rx(bytes) = record.body else { unreachable!() };
            for decoded in decode_all_keep(&mut decoder, &bytes) {
                match decoded {
                    Decoded::Sensor(SensorEvent::Board(picture)) => last = Some(picture.occupied()),
                    Decoded::Problem(_) => problems += 1,
                    Decoded::Sensor(_) | Decoded::Info(_) => {}
                }
            }
        }
        let mut board = Picture::empty();
        for (_, event) in &stream.events {
            match event {
                SensorEvent::Board(picture) => board = (**picture).clone(),
                &SensorEvent::Square { square, cell } => {
                    board.set(square, cell);
                }
                SensorEvent::Clock(_) => {}
            }
        }
        assert_eq!(last, Some(board.occupied()), "{}", corpus.name());
        assert!(problems > 0, "{}: noise was reported", corpus.name());
    }
}

fn decode_all_keep(decoder: &mut SentioDecoder, bytes: &[u8]) -> Vec<Decoded> {
    decoder.handle_bytes(bytes);
    std::iter::from_fn(|| decoder.poll_decoded()).collect()
}

// ---------------------------------------------------------------------------
// 3. The corpus through the reconstructor
// ---------------------------------------------------------------------------

/// Every game from Sentio reports, move for move. Occupancy alone does not
/// say which piece was captured where when two captures are possible, nor
/// what a pawn was promoted to: this waits for the reconstructor to resolve
/// moves from occupancy (being added separately); promotions other than to
/// a queen can never come back from occupancy alone.
#[test]
#[ignore = "waits for occupancy reconstruction (captures resolved from occupancy alone)"]
fn every_game_comes_back_from_sentio_reports() {
    let corpus = support::corpus();
    let mut failures = Vec::new();
    for game in &corpus {
        let mut rng = rng_for(7, game.index);
        let mut style = Style::varied(&mut rng);
        style.clock = None;
        let stream = play(&game.game, &style, &mut rng);
        let form = ReportForm::varied(&mut rng);
        let capture =
            sentio_capture(&header(&game.game, Protocol::Sentio, &game.name()), &stream.events, form, &mut rng);
        let replayed = replay(&capture, &ReconstructorConfig::default()).unwrap();
        let moves = replayed.games.first().map(support::uci).unwrap_or_default();
        if moves != stream.expected.uci {
            failures.push(game.name());
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} games failed: {:?}",
        failures.len(),
        corpus.len(),
        &failures[..failures.len().min(5)]
    );
}

// ---------------------------------------------------------------------------
// 4. Properties
// ---------------------------------------------------------------------------

fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(cases);
    Config { failure_persistence: None, ..Config::with_cases(cases) }
}

fn any_stream() -> impl Strategy<Value = Vec<u8>> {
    let part = prop_oneof![
        4 => any::<u64>().prop_map(|bits| {
            let mut line = Vec::new();
            encode_report(ranks(Bitboard(bits)), &mut line);
            line
        }),
        1 => vec(0x20u8..0x7F, 0..20).prop_map(|mut junk| {
            junk.extend(b"\n");
            junk
        }),
    ];
    vec(part, 0..20).prop_map(|parts| parts.concat())
}

fn split<'a>(bytes: &'a [u8], cuts: &[Index]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    at.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in at {
        chunks.push(&bytes[start..cut]);
        start = cut;
    }
    chunks.push(&bytes[start..]);
    chunks
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn decoding_does_not_depend_on_chunking(bytes in any_stream(), cuts in vec(any::<Index>(), 0..30)) {
        let whole = decode_all(&mut SentioDecoder::new(), &[&bytes]);
        let chunked = decode_all(&mut SentioDecoder::new(), &split(&bytes, &cuts));
        prop_assert_eq!(whole, chunked);
    }

    #[test]
    fn ranks_round_trip(bits in any::<u64>()) {
        prop_assert_eq!(occupancy(&ranks(Bitboard(bits))), Bitboard(bits));
    }

    #[test]
    fn any_bytes_are_survived(bytes in vec(prop_oneof![any::<u8>(), Just(b':'), Just(b' '), Just(b'\n'), Just(b'1')], 0..2000)) {
        let mut decoder = SentioDecoder::new();
        decode_all(&mut decoder, &[&bytes]);
        let out = decode_all(&mut decoder, &[b"\r\n:255 255 0 0 0 0 255 255 \r\n"]);
        let last = out.iter().rev().find_map(|d| match d {
            Decoded::Sensor(SensorEvent::Board(p)) => Some(p.occupied()),
            _ => None,
        });
        prop_assert_eq!(last, Some(Board::new().occupied()));
    }
}

#[test]
fn timestamps_of_reports_follow_the_form() {
    let game = boardcast::synth::read_san_lines("e4 e5").unwrap().remove(0);
    let mut rng = rng_for(1, 0);
    let mut style = Style::calm();
    style.clock = None;
    let stream = play(&game, &style, &mut rng);
    let text = sentio_capture(&header(&game, Protocol::Sentio, "s"), &stream.events, ReportForm::clean(), &mut rng);
    let times: Vec<Timestamp> = read_capture(&text).unwrap().records.iter().map(|r| r.t).collect();
    assert_eq!(times[..3], [Timestamp::ZERO, Timestamp::from_millis(100), Timestamp::from_millis(200)]);
    let last_event = stream.events.last().unwrap().0;
    assert!(*times.last().unwrap() >= last_event + std::time::Duration::from_millis(2900));
}
