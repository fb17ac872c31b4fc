//! Cost of the dead-position check (`game::dead::verdict`) that ends the
//! game after every move: on the positions of real games, where it must
//! cost next to nothing, and on locked pawn chains, where it does its work.
//!
//! Three cases, each timed per call to `verdict` with the per-move budget:
//!
//! - `normal`: every position after every move of the first 100 games of
//!   `twic0920-sample.pgn` in which some pawn can still push (one timed
//!   iteration checks them all; the figure is per position): the filter
//!   alone;
//! - `game-positions`: all positions of those games, the few locked ones
//!   included (where the static proof or the search runs): the average a
//!   real game pays per move;
//! - `locked-proved`: a closed chain proved dead by the static argument
//!   (no search);
//! - `locked-searched`: a blockade the static argument cannot settle, where
//!   the search of reachable positions runs;
//! - `worst-case`: a blockade the search cannot decide: it runs until the
//!   budget is spent and answers "unknown".
//!
//! Run with `cargo bench -p boardcast-core --bench dead`.

use std::{hint::black_box, time::Duration};

use boardcast_core::game::dead::{Budget, Verdict, verdict};
use boardcast_sim::synth::read_games;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

const GAMES: usize = 100;

fn pos(fen: &str) -> Chess {
    fen.parse::<Fen>().expect("a FEN").into_position(CastlingMode::Standard).expect("a legal position")
}

/// Whether every pawn is blocked head-on by a pawn (the analysis' filter,
/// restated here to split the cases).
fn locked(pos: &Chess) -> bool {
    let board = pos.board();
    let pawns = board.pawns();
    pawns.any()
        && ((pawns & board.white()).shift(8) & !pawns).is_empty()
        && ((pawns & board.black()).shift(-8) & !pawns).is_empty()
}

/// Every position after every move of the first [`GAMES`] games.
fn normal_positions() -> Vec<Chess> {
    let pgn = include_str!("../../../tests/fixtures/games/twic0920-sample.pgn");
    let games = read_games(pgn).expect("the sample PGN reads");
    let mut out = Vec::new();
    for game in games.iter().take(GAMES) {
        let mut pos = game.start.clone();
        for m in &game.moves {
            pos.play_unchecked(*m);
            out.push(pos.clone());
        }
    }
    out
}

fn dead(c: &mut Criterion) {
    let all = normal_positions();
    let normal: Vec<Chess> = all.iter().filter(|p| !locked(p)).cloned().collect();
    let proved = pos("2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1");
    let searched = pos("7k/5K1p/7P/8/8/8/8/2B5 w - - 0 1");
    let worst = pos("8/1p3k2/pPp3p1/P1Pp1pPp/2bP1P1P/4BK2/5B2/8 b - - 0 1");
    // Outside the timing: each case does the work its name says.
    assert_eq!(verdict(&proved, Budget::PER_MOVE), Verdict::Dead);
    assert_eq!(verdict(&searched, Budget::PER_MOVE), Verdict::Alive);
    assert_eq!(verdict(&worst, Budget::PER_MOVE), Verdict::Unknown);
    let decided = all.iter().filter(|p| verdict(p, Budget::PER_MOVE) != Verdict::Unknown).count();
    eprintln!(
        "dead: {} game positions, {} with every pawn locked, {decided} decided",
        all.len(),
        all.len() - normal.len()
    );

    let mut group = c.benchmark_group("dead");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (name, positions) in [("normal", &normal), ("game-positions", &all)] {
        group.throughput(Throughput::Elements(positions.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| positions.iter().filter(|p| verdict(black_box(p), Budget::PER_MOVE) == Verdict::Dead).count())
        });
    }
    group.throughput(Throughput::Elements(1));
    for (name, position) in [("locked-proved", &proved), ("locked-searched", &searched), ("worst-case", &worst)] {
        group.bench_function(name, |b| b.iter(|| verdict(black_box(position), Budget::PER_MOVE)));
    }
    group.finish();
}

criterion_group!(benches, dead);
criterion_main!(benches);
