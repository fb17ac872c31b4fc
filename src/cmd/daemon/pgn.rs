//! The PGN folders, in the layout broadcast uploaders read:
//!
//! ```text
//! <pgn dir>/<event>/round-<round>/game-<board>.pgn   the board's games of that round
//! <pgn dir>/<event>/round-<round>/games.pgn          every board's, in board order
//! ```
//!
//! The event and round of a game are its `Event` and `Round` tags (from the
//! configuration, or changed by the operator), so a board moved to the next
//! round writes into the next folder. Every file is replaced whole (written
//! beside it, then renamed over it) after every change, so a reader polling
//! the folder never sees half a file. Updates that arrive together are
//! written once.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use tokio::sync::mpsc;

use boardcast::{
    game::{GameRecord, pgn::write_pgn},
    publish::topics::level,
    shell::files::write_atomic,
};

/// A board's games, after a change.
#[derive(Debug)]
pub(super) struct PgnUpdate {
    /// The board's label.
    pub(super) board: String,
    /// Every game on the board so far.
    pub(super) games: Vec<GameRecord>,
}

/// An event's round folder.
type Round = (String, String);

/// Writes the folders until every board has stopped.
pub(super) async fn run(dir: PathBuf, mut updates: mpsc::UnboundedReceiver<PgnUpdate>) {
    let mut boards: BTreeMap<String, Vec<GameRecord>> = BTreeMap::new();
    while let Some(update) = updates.recv().await {
        let mut touched: BTreeSet<Round> = BTreeSet::new();
        let mut apply = |update: PgnUpdate, touched: &mut BTreeSet<Round>| {
            // The rounds the board's games were in and are in now (a game
            // moved to another round leaves the old folder).
            if let Some(old) = boards.get(&update.board) {
                touched.extend(old.iter().map(round_of));
            }
            touched.extend(update.games.iter().map(round_of));
            boards.insert(update.board, update.games);
        };
        apply(update, &mut touched);
        while let Ok(update) = updates.try_recv() {
            apply(update, &mut touched);
        }
        for round in touched {
            write_round(&dir, &round, &boards).await;
        }
    }
}

/// `(Event, Round)` of a game, `?` when unknown.
fn round_of(game: &GameRecord) -> Round {
    (game.tag("Event").unwrap_or("?").to_owned(), game.tag("Round").unwrap_or("?").to_owned())
}

/// Rewrites a round's folder: one file per board that has games in it, and
/// the combined file.
async fn write_round(dir: &Path, round: &Round, boards: &BTreeMap<String, Vec<GameRecord>>) {
    let folder = dir.join(level(&round.0)).join(format!("round-{}", level(&round.1)));
    let mut order: Vec<&String> = boards.keys().collect();
    order.sort_by_key(|label| board_order(label));
    let mut all = String::new();
    for label in order {
        let games: Vec<&GameRecord> = boards[label].iter().filter(|g| &round_of(g) == round).collect();
        let path = folder.join(format!("game-{}.pgn", level(label)));
        if games.is_empty() {
            // The board's game left this round (the operator moved it).
            let _ = tokio::fs::remove_file(&path).await;
            continue;
        }
        let mut text = String::new();
        for game in games {
            write_pgn(game, &mut text);
        }
        write(&path, &text).await;
        all.push_str(&text);
    }
    write(&folder.join("games.pgn"), &all).await;
}

/// Boards in number order when their labels are numbers (2 before 10).
fn board_order(label: &str) -> (u64, String) {
    (label.parse::<u64>().unwrap_or(u64::MAX), label.to_owned())
}

async fn write(path: &Path, text: &str) {
    if let Err(error) = write_atomic(path, text).await {
        tracing::error!("cannot write {}: {error} (the games are still in the captures)", path.display());
    }
}
