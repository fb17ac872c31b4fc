//! End-to-end throughput of a replay, from capture files to PGN text: what
//! `boardcast replay --fast` does for each file, minus writing the output.
//!
//! Before timing starts, the captures are written as files into a fresh
//! folder under the system's temporary folder (removed at the end). Each
//! timed iteration, for every file: reads it with `std::fs::read_to_string`,
//! replays it with [`boardcast_core::replay::replay`] (JSON parsing, decoder,
//! reconstructor) and renders each game with
//! [`boardcast_core::game::pgn::write_pgn`]. Throughput is in capture records per
//! second (lines minus the header line), the same unit as `benches/core.rs`.
//!
//! Two cases:
//!
//! - `events-varied`: 100 games of `twic0920-sample.pgn` turned into `events`
//!   captures with `Style::varied` (seed 1), as `boardcast synth --seed 1`
//!   writes them.
//! - `dgt-real`: the two real DGT board recordings in
//!   `tests/fixtures/dgt-real`.
//!
//! Run with `cargo bench --bench replay`.

use std::{
    fs,
    hint::black_box,
    path::PathBuf,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use boardcast_core::{game::pgn::write_pgn, protocol::Protocol, reconstruct::ReconstructorConfig, replay::replay};
use boardcast_sim::synth::{Style, events_capture, header, play, read_games, rng_for};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The generated case uses this many games from the start of the sample.
const GAMES: usize = 100;
/// The seed `boardcast synth` uses by default.
const SEED: u64 = 1;

/// A folder of its own under the temporary folder, removed when dropped
/// (also when a benchmark panics).
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!("boardcast-bench-{}-{nanos}", std::process::id()));
        fs::create_dir(&path).expect("creating the scratch folder");
        Self(path)
    }

    /// Writes `text` into a file `name` under a subfolder `set`.
    fn write(&self, set: &str, name: &str, text: &str) -> PathBuf {
        let dir = self.0.join(set);
        fs::create_dir_all(&dir).expect("creating a scratch subfolder");
        let path = dir.join(name);
        fs::write(&path, text).expect("writing a capture");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Capture records in a file's text: its lines minus the header line.
fn records(text: &str) -> u64 {
    text.lines().count().saturating_sub(1) as u64
}

/// Reads, replays and renders every file; returns the length of the PGN.
fn run(files: &[PathBuf], config: &ReconstructorConfig) -> usize {
    let mut pgn = String::new();
    for file in files {
        let text = fs::read_to_string(file).expect("reading a capture");
        let replayed = replay(&text, config).expect("the capture replays");
        for game in &replayed.games {
            write_pgn(game, &mut pgn);
        }
        black_box(&replayed.outputs);
    }
    black_box(pgn).len()
}

/// Writes the generated captures; returns their paths and their records.
fn generated(scratch: &Scratch) -> (Vec<PathBuf>, u64) {
    let pgn = include_str!("../../../tests/fixtures/games/twic0920-sample.pgn");
    let games = read_games(pgn).expect("the sample PGN reads");
    assert!(games.len() >= GAMES, "the sample holds {} games", games.len());
    let mut total = 0;
    let files = games
        .iter()
        .take(GAMES)
        .enumerate()
        .map(|(index, game)| {
            let mut rng = rng_for(SEED, index);
            let style = Style::varied(&mut rng);
            let stream = play(game, &style, &mut rng);
            let board = format!("synth-{}", index + 1);
            let text = events_capture(&header(game, Protocol::EVENTS, &board), &stream.events);
            total += records(&text);
            scratch.write("events-varied", &format!("game-{}.jsonl", index + 1), &text)
        })
        .collect();
    (files, total)
}

/// Every file must replay whole, or the figure would not be of a replay.
fn check(files: &[PathBuf], expected_records: u64, config: &ReconstructorConfig) {
    let mut replayed_records = 0;
    for file in files {
        let replayed = replay(&fs::read_to_string(file).expect("reading a capture"), config).expect("replays");
        assert!(replayed.error.is_none(), "{}: {:?}", file.display(), replayed.error);
        replayed_records += replayed.records as u64;
    }
    assert_eq!(replayed_records, expected_records, "every record is replayed");
}

fn end_to_end(c: &mut Criterion) {
    let config = ReconstructorConfig::default();
    let scratch = Scratch::new();
    let (varied, varied_records) = generated(&scratch);
    let real_texts = [
        ("dgt-real-1.jsonl", include_str!("../../../tests/fixtures/dgt-real/dgt-real-1.jsonl")),
        ("dgt-real-2.jsonl", include_str!("../../../tests/fixtures/dgt-real/dgt-real-2.jsonl")),
    ];
    let real: Vec<PathBuf> = real_texts.iter().map(|(name, text)| scratch.write("dgt-real", name, text)).collect();
    let real_records = real_texts.iter().map(|(_, text)| records(text)).sum();
    check(&varied, varied_records, &config);
    check(&real, real_records, &config);
    eprintln!("replay: events-varied {varied_records} records in {GAMES} files; dgt-real {real_records} records");

    let mut group = c.benchmark_group("replay");
    group.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(6));
    for (name, files, total) in [("events-varied", &varied, varied_records), ("dgt-real", &real, real_records)] {
        group.throughput(Throughput::Elements(total));
        group.bench_function(name, |b| b.iter(|| run(black_box(files), &config)));
    }
    group.finish();
    drop(scratch);
}

criterion_group!(benches, end_to_end);
criterion_main!(benches);
