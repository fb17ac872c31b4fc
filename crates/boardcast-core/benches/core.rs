//! Throughput of the sans-I/O core: the protocol decoder and the move
//! reconstructor inside a [`BoardSession`], with no JSON parsing and no file
//! access.
//!
//! The captures are parsed into records before timing starts. Each timed
//! iteration replays every capture of a case through a fresh session, in the
//! same order of calls that `boardcast replay` and a live board use:
//! `advance_to(t)`, `handle_record`, drain `poll_output`, and `handle_end`
//! at the end. Throughput is given in sensor records (events) per second,
//! so the figure can be compared with what boards actually send.
//!
//! Three cases:
//!
//! - `dgt-real`: the two real DGT board recordings in `tests/fixtures/dgt-real`
//!   (raw DGT bytes). Their mix is what a tournament board produces: mostly
//!   one clock message a second, with field updates when a piece moves.
//! - `events-varied`: 100 games of `twic0920-sample.pgn` turned into `events`
//!   captures by the generator with `Style::varied` (seed 1, as
//!   `boardcast synth --seed 1` does); the style gives some games a clock.
//! - `events-board-only`: the same 100 games with the clock taken away, so
//!   every record is a board event: the most expensive mix per event.
//!
//! Run with `cargo bench --bench core`.

use std::{hint::black_box, time::Duration};

use boardcast_core::{
    capture::{CaptureHeader, CaptureReader, Record},
    protocol::Protocol,
    reconstruct::ReconstructorConfig,
    session::BoardSession,
    time::Timestamp,
};
use boardcast_sim::synth::{Style, events_capture, header, play, read_games, rng_for};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The generated cases use this many games from the start of the sample.
const GAMES: usize = 100;
/// The seed `boardcast synth` uses by default.
const SEED: u64 = 1;

/// A capture parsed into values.
struct Parsed {
    header: CaptureHeader,
    records: Vec<Record>,
}

fn parse(text: &str) -> Parsed {
    let reader = CaptureReader::new(text).expect("the capture header is valid");
    let header = reader.header().clone();
    let records = reader.collect::<Result<Vec<_>, _>>().expect("every capture record is valid");
    Parsed { header, records }
}

/// The generated captures of the first [`GAMES`] games, and the plies each
/// should give.
fn generated(board_only: bool) -> (Vec<Parsed>, usize) {
    let pgn = include_str!("../../../tests/fixtures/games/twic0920-sample.pgn");
    let games = read_games(pgn).expect("the sample PGN reads");
    assert!(games.len() >= GAMES, "the sample holds {} games", games.len());
    let mut expected_plies = 0;
    let captures = games
        .iter()
        .take(GAMES)
        .enumerate()
        .map(|(index, game)| {
            let mut rng = rng_for(SEED, index);
            let mut style = Style::varied(&mut rng);
            if board_only {
                style.clock = None;
            }
            let stream = play(game, &style, &mut rng);
            expected_plies += stream.expected.uci.len();
            let board = format!("synth-{}", index + 1);
            parse(&events_capture(&header(game, Protocol::EVENTS, &board), &stream.events))
        })
        .collect();
    (captures, expected_plies)
}

/// Replays every capture through a fresh session; returns the plies of the
/// games found.
fn run(captures: &[Parsed], config: &ReconstructorConfig) -> usize {
    let mut plies = 0;
    for capture in captures {
        let mut session = BoardSession::for_capture(&capture.header, config.clone());
        let mut last = Timestamp::ZERO;
        for record in &capture.records {
            session.advance_to(record.t);
            session.handle_record(record);
            while let Some(output) = session.poll_output() {
                black_box(output);
            }
            last = record.t;
        }
        session.advance_to(last);
        session.handle_end(last);
        while let Some(output) = session.poll_output() {
            black_box(output);
        }
        plies += session.into_games().iter().map(|game| game.plies.len()).sum::<usize>();
    }
    plies
}

fn records(captures: &[Parsed]) -> u64 {
    captures.iter().map(|c| c.records.len() as u64).sum()
}

fn core(c: &mut Criterion) {
    let config = ReconstructorConfig::default();
    let real = vec![
        parse(include_str!("../../../tests/fixtures/dgt-real/dgt-real-1.jsonl")),
        parse(include_str!("../../../tests/fixtures/dgt-real/dgt-real-2.jsonl")),
    ];
    let real_plies = [
        include_str!("../../../tests/fixtures/dgt-real/1.uci"),
        include_str!("../../../tests/fixtures/dgt-real/2.uci"),
    ]
    .iter()
    .flat_map(|uci| uci.split_whitespace())
    .filter(|token| !token.ends_with('.') && *token != "*")
    .count();
    let (varied, varied_plies) = generated(false);
    let (board_only, board_only_plies) = generated(true);

    // Outside the timing: the sessions must do the real work, every move
    // found, or the figures would mean nothing.
    assert_eq!(run(&real, &config), real_plies, "dgt-real: every move is found");
    assert_eq!(run(&varied, &config), varied_plies, "events-varied: every move is found");
    assert_eq!(run(&board_only, &config), board_only_plies, "events-board-only: every move is found");
    eprintln!(
        "core: dgt-real {} records, {real_plies} plies; events-varied {} records, {varied_plies} plies; \
         events-board-only {} records, {board_only_plies} plies",
        records(&real),
        records(&varied),
        records(&board_only),
    );

    let mut group = c.benchmark_group("core");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(6));
    for (name, captures) in [("dgt-real", &real), ("events-varied", &varied), ("events-board-only", &board_only)] {
        group.throughput(Throughput::Elements(records(captures)));
        group.bench_function(name, |b| b.iter(|| run(black_box(captures), &config)));
    }
    group.finish();
}

criterion_group!(benches, core);
criterion_main!(benches);
