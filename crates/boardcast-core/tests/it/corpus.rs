//! The corpus: real games turned into sensor streams with every physical
//! variation (capture, castling, en passant and promotion orders, slides,
//! flicker, scan-order swaps, quick replies, result gestures, no clock, a
//! turned board), in `events` and `dgt` form. Every game must come back move
//! for move, with its result when the board shows one, and without a single
//! irregularity alert.

use crate::support::CorpusGame;
use boardcast_core::{protocol::Protocol, reconstruct::ReconstructorConfig, replay::replay};
use boardcast_sim::synth::{DgtForm, Style, dgt_capture, events_capture, header, play, rng_for};

fn check(corpus: &CorpusGame, dgt: bool, seed: u64) -> Result<(), String> {
    let (game, name) = (&corpus.game, corpus.name());
    let name = name.as_str();
    let mut rng = rng_for(seed, corpus.index);
    let style = Style::varied(&mut rng);
    let stream = play(game, &style, &mut rng);
    let capture = if dgt {
        let form = DgtForm::varied(&mut rng);
        dgt_capture(&header(game, Protocol::DGT, name), &stream.events, form, &mut rng)
    } else {
        events_capture(&header(game, Protocol::EVENTS, name), &stream.events)
    };
    let replayed = replay(&capture, &ReconstructorConfig::default()).map_err(|e| e.to_string())?;
    let form = if dgt { "dgt" } else { "events" };
    let context = || {
        format!(
            "{name} ({form}); reproduce with: boardcast synth tests/fixtures/games/{} --game {} --seed {seed} --protocol {form} | boardcast replay --trace /dev/stdin\n{}",
            corpus.file,
            corpus.index + 1,
            crate::support::trace(&replayed)
        )
    };
    crate::support::same_game(&replayed, &stream.expected).map_err(|e| format!("{e}: {}", context()))
}

fn run(dgt: bool, seeds: std::ops::Range<u64>) {
    let corpus = crate::support::corpus();
    assert!(corpus.len() >= 400, "the corpus has {} games", corpus.len());
    let mut failures = Vec::new();
    // BOARDCAST_CORPUS_ONLY=twic0920-sample.pgn#7 runs (and fully reports) one game.
    let only = std::env::var("BOARDCAST_CORPUS_ONLY").ok();
    for game in &corpus {
        if only.as_ref().is_some_and(|o| *o != game.name()) {
            continue;
        }
        for seed in seeds.clone() {
            if let Err(e) = check(game, dgt, seed * 2 + u64::from(dgt)) {
                failures.push(e);
            }
        }
    }
    if !failures.is_empty() {
        if only.is_some() {
            panic!("{}", failures[0]);
        }
        let shown: Vec<String> =
            failures.iter().take(3).map(|f| f.lines().next().unwrap_or_default().to_owned()).collect();
        panic!(
            "{} of {} streams failed; first ones:\n{}",
            failures.len(),
            corpus.len() * seeds.clone().count(),
            shown.join("\n")
        );
    }
}

#[test]
fn every_game_comes_back_from_events_captures() {
    run(false, 0..1);
}

#[test]
fn every_game_comes_back_from_dgt_bytes() {
    run(true, 0..1);
}

/// The same with many more seeds: `cargo test --release -p boardcast-core
/// --test it corpus:: -- --ignored` (BOARDCAST_CORPUS_SEEDS sets how many,
/// 20 by default).
#[test]
#[ignore = "long: run before changing the reconstructor"]
fn every_game_comes_back_under_many_seeds() {
    let seeds = std::env::var("BOARDCAST_CORPUS_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(20);
    run(false, 1..seeds);
    run(true, 1..seeds);
}
