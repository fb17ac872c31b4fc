//! Helpers shared by the integration tests.
#![allow(dead_code, unreachable_pub)]

use boardcast_core::{
    alert::{Alert, Severity},
    event::EventKind,
    game::GameRecord,
    replay::Replayed,
    session::Output,
};
use boardcast_sim::synth::{Expected, SourceGame, read_games, read_san_lines};

/// A game of the vendored corpus (see tests/fixtures/games/SOURCE.md).
pub struct CorpusGame {
    /// The fixture file, under tests/fixtures/games/.
    pub file: &'static str,
    /// The game's place in the file (0-based).
    pub index: usize,
    /// The game.
    pub game: SourceGame,
}

impl CorpusGame {
    /// `file#n`, for messages.
    pub fn name(&self) -> String {
        format!("{}#{}", self.file, self.index + 1)
    }
}

/// Every clean game of the vendored corpus.
pub fn corpus() -> Vec<CorpusGame> {
    let mut games = Vec::new();
    for (file, text) in [
        ("twic0920-sample.pgn", include_str!("../../../../../tests/fixtures/games/twic0920-sample.pgn")),
        (
            "livechess-vestland-round1.pgn",
            include_str!("../../../../../tests/fixtures/games/livechess-vestland-round1.pgn"),
        ),
        ("stLouisFischerandom.pgn", include_str!("../../../../../tests/fixtures/games/stLouisFischerandom.pgn")),
        ("allSortOfClocks.pgn", include_str!("../../../../../tests/fixtures/games/allSortOfClocks.pgn")),
    ] {
        for (index, game) in read_games(text).unwrap().into_iter().enumerate() {
            games.push(CorpusGame { file, index, game });
        }
    }
    let raws = read_san_lines(include_str!("../../../../../tests/fixtures/games/raws.san.txt")).unwrap();
    for (index, game) in raws.into_iter().enumerate() {
        games.push(CorpusGame { file: "raws.san.txt", index, game });
    }
    games
}

/// The seed of the generated hands in the protocol corpus tests: 7, or
/// `BOARDCAST_CORPUS_SEED` (to try the corpus with other hands).
pub fn corpus_seed() -> u64 {
    std::env::var("BOARDCAST_CORPUS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(7)
}

/// Whether a replay brought back exactly the one game expected: its moves,
/// its result, and no false irregularity alert. The error says what
/// differs (the caller adds where it comes from).
pub fn same_game(replayed: &Replayed, expected: &Expected) -> Result<(), String> {
    if replayed.games.len() != 1 {
        return Err(format!("{} games instead of 1", replayed.games.len()));
    }
    let got = &replayed.games[0];
    let moves = uci(got);
    if moves != expected.uci {
        let at =
            moves.iter().zip(&expected.uci).position(|(a, b)| a != b).unwrap_or(moves.len().min(expected.uci.len()));
        return Err(format!(
            "moves differ at ply {}: got {:?}, expected {:?}",
            at + 1,
            moves.get(at),
            expected.uci.get(at)
        ));
    }
    let result = got.result.map(|r| r.outcome);
    if result != expected.result {
        return Err(format!("result {result:?}, expected {:?}", expected.result));
    }
    let irregular = irregularities(replayed);
    if !irregular.is_empty() {
        let list: Vec<String> = irregular.iter().map(ToString::to_string).collect();
        return Err(format!("false alerts: {}", list.join(" | ")));
    }
    Ok(())
}

/// The alerts of a replay.
pub fn alerts(replayed: &Replayed) -> Vec<Alert> {
    replayed.alerts().cloned().collect()
}

/// The irregularity alerts of a replay (information alerts left out).
pub fn irregularities(replayed: &Replayed) -> Vec<Alert> {
    alerts(replayed).into_iter().filter(|a| a.kind.severity() == Severity::Irregularity).collect()
}

/// The moves of a game in UCI.
pub fn uci(game: &GameRecord) -> Vec<String> {
    game.uci_moves()
}

/// Every event of a replay, one readable line each.
pub fn trace(replayed: &Replayed) -> String {
    replayed
        .outputs
        .iter()
        .filter_map(|o| match o {
            Output::Event(e) if !matches!(e.kind, EventKind::Clock(_)) => Some(e.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub mod chunks;
pub mod script;
