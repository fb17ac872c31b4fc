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
//! written once. Boards send only the games that changed (a board with
//! thousands of games costs no more per change than one with two). Every
//! round written is also handed on for delivery (`deliver.rs`: HTTP and
//! lichess), as the same files with completed moves only.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use tokio::sync::{mpsc, oneshot};

use boardcast::shell::{driver::Forward, files::write_atomic};
use boardcast_core::{
    deliver::RoundPgn,
    game::{GameRecord, pgn::write_pgn},
    names::component,
    publish::topics::level,
    sink::ChangedGames,
};

/// A board's games that changed (or all of them: games are matched by
/// their number, and never removed).
#[derive(Debug)]
pub(super) struct PgnUpdate {
    /// The board's label.
    pub(super) board: String,
    /// The games, new or changed.
    pub(super) games: Vec<GameRecord>,
    /// Told once these games, and every update before them, are written.
    pub(super) written: Option<oneshot::Sender<()>>,
}

impl PgnUpdate {
    /// Games to write, with nobody waiting for them.
    pub(super) fn new(board: String, games: Vec<GameRecord>) -> Self {
        Self { board, games, written: None }
    }
}

/// The PGN writer's outlet on a board: the games that changed after each
/// batch of outputs, labelled with the board; an operator's command is
/// answered once a marker sent behind them has been written.
pub(super) fn outlet(board: String, pgn: mpsc::UnboundedSender<PgnUpdate>) -> Forward<ChangedGames> {
    let marker_board = board.clone();
    let markers = pgn.clone();
    Forward::new(ChangedGames::default(), move |games| {
        let _ = pgn.send(PgnUpdate { board: board.clone(), games, written: None });
    })
    .settled_by(move || {
        let (tx, rx) = oneshot::channel();
        markers.send(PgnUpdate { board: marker_board.clone(), games: Vec::new(), written: Some(tx) }).ok()?;
        Some(rx)
    })
}

/// An event's round folder.
type Round = (String, String);

/// Writes the folders until every board has stopped.
pub(super) async fn run(
    dir: PathBuf,
    mut updates: mpsc::UnboundedReceiver<PgnUpdate>,
    deliver: Option<mpsc::UnboundedSender<RoundPgn>>,
) {
    let mut boards: BTreeMap<String, BTreeMap<u32, GameRecord>> = BTreeMap::new();
    let mut written: BTreeSet<PathBuf> = BTreeSet::new();
    while let Some(update) = updates.recv().await {
        let mut touched: BTreeSet<Round> = BTreeSet::new();
        let mut waiting = Vec::new();
        let mut apply = |update: PgnUpdate, touched: &mut BTreeSet<Round>| {
            waiting.extend(update.written);
            // The rounds the changed games were in and are in now (a game
            // moved to another round leaves the old folder).
            let games = boards.entry(update.board).or_default();
            for game in update.games {
                touched.insert(round_of(&game));
                if let Some(old) = games.insert(game.number, game) {
                    touched.insert(round_of(&old));
                }
            }
        };
        apply(update, &mut touched);
        while let Ok(update) = updates.try_recv() {
            apply(update, &mut touched);
        }
        for round in touched {
            write_round(&dir, &round, &boards, &mut written).await;
            if let Some(deliver) = &deliver {
                let _ = deliver.send(delivered(&round, &boards));
            }
        }
        for written in waiting {
            let _ = written.send(());
        }
    }
}

/// `(Event, Round)` of a game, `?` when unknown.
fn round_of(game: &GameRecord) -> Round {
    (game.tag("Event").unwrap_or("?").to_owned(), game.tag("Round").unwrap_or("?").to_owned())
}

/// Rewrites a round's folder: one file per board that has games in it, and
/// the combined file.
async fn write_round(
    dir: &Path,
    round: &Round,
    boards: &BTreeMap<String, BTreeMap<u32, GameRecord>>,
    written: &mut BTreeSet<PathBuf>,
) {
    // Event and round come from the configuration and from operator
    // commands: each becomes one component that stays inside `dir`.
    let folder = dir.join(component(&level(&round.0))).join(format!("round-{}", component(&level(&round.1))));
    let mut order: Vec<&String> = boards.keys().collect();
    order.sort_by_key(|label| board_order(label));
    let mut all = String::new();
    for label in order {
        let games: Vec<&GameRecord> = boards[label].values().filter(|g| &round_of(g) == round).collect();
        let path = folder.join(format!("game-{}.pgn", component(&level(label))));
        if games.is_empty() {
            // The board's game left this round (the operator moved it).
            let _ = tokio::fs::remove_file(&path).await;
            continue;
        }
        let mut text = String::new();
        for game in games {
            write_pgn(game, &mut text);
        }
        write(&path, &text, written).await;
        all.push_str(&text);
    }
    write(&folder.join("games.pgn"), &all, written).await;
}

/// The round as delivered: the same files, completed moves only.
fn delivered(round: &Round, boards: &BTreeMap<String, BTreeMap<u32, GameRecord>>) -> RoundPgn {
    let mut order: Vec<&String> = boards.keys().collect();
    order.sort_by_key(|label| board_order(label));
    let games: Vec<(&str, Vec<&GameRecord>)> = order
        .into_iter()
        .map(|label| (label.as_str(), boards[label].values().filter(|g| &round_of(g) == round).collect()))
        .collect();
    RoundPgn::new(&round.0, &round.1, &games)
}

/// Boards in number order when their labels are numbers (2 before 10).
fn board_order(label: &str) -> (u64, String) {
    (label.parse::<u64>().unwrap_or(u64::MAX), label.to_owned())
}

/// Writes a file; the first time in this run, a longer board file already
/// there is kept aside first. A restarted daemon rebuilds its games from
/// the captures, and a capture cut short (the daemon killed while a full
/// disk held records back) must not shorten the games already delivered.
/// (The round's `games.pgn` is left out: it fills up board by board after
/// a start, and is made of the board files anyway.)
async fn write(path: &Path, text: &str, written: &mut BTreeSet<PathBuf>) {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("games.pgn");
    if name.starts_with("game-")
        && written.insert(path.to_path_buf())
        && let Ok(before) = tokio::fs::read_to_string(path).await
        && before.len() > text.len()
    {
        let kept = path.with_file_name(format!("{name}.before-restart"));
        match tokio::fs::rename(path, &kept).await {
            Ok(()) => tracing::error!(
                "{} was longer before this start than what the captures give now (a capture cut short by a full disk, or games of an earlier run in the same round?); the longer file is kept as {}: compare the two",
                path.display(),
                kept.display()
            ),
            Err(error) => tracing::error!("cannot keep the longer {} aside: {error}", path.display()),
        }
    }
    if let Err(error) = write_atomic(path, text).await {
        tracing::error!("cannot write {}: {error} (the games are still in the captures)", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boardcast_core::time::Timestamp;
    use shakmaty::{CastlingMode, Chess};

    fn game(event: &str, round: &str) -> GameRecord {
        let mut game = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
        game.tags = vec![("Event".into(), event.into()), ("Round".into(), round.into())];
        game
    }

    /// Every file under `dir`, relative to it.
    fn files(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                if entry.path().is_dir() {
                    stack.push(entry.path());
                } else {
                    out.push(entry.path().strip_prefix(dir).unwrap().display().to_string());
                }
            }
        }
        out.sort();
        out
    }

    /// A restart whose captures give less than the PGN already had (records
    /// lost to a full disk) keeps the longer file aside, once; later writes
    /// of the same run replace the file as usual.
    #[tokio::test]
    async fn a_restart_never_shortens_a_board_file_without_keeping_the_longer_one() {
        let dir = std::env::temp_dir().join(format!("boardcast-pgn-restart-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("e/round-1/game-b1.pgn");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut long = game("e", "1");
        for uci in ["e2e4", "e7e5", "g1f3", "b8c6"] {
            let m = uci.parse::<shakmaty::uci::UciMove>().unwrap().to_move(long.position()).unwrap();
            long.push(m, Timestamp::ZERO, false);
        }
        let mut before = String::new();
        write_pgn(&long, &mut before);
        std::fs::write(&path, &before).unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send(PgnUpdate::new("b1".into(), vec![game("e", "1")])).unwrap();
        tx.send(PgnUpdate::new("b2".into(), vec![game("e", "1")])).unwrap();
        drop(tx);
        run(dir.clone(), rx, None).await;
        let kept = dir.join("e/round-1/game-b1.pgn.before-restart");
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), before, "the longer file is kept whole");
        assert!(std::fs::read_to_string(&path).unwrap().len() < before.len());
        assert!(!dir.join("e/round-1/games.pgn.before-restart").exists(), "the round file is not a board's");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Whoever waits on an update (an operator's `ctl`) is told only once
    /// the files hold it, and the writer runs on for the next update.
    #[tokio::test]
    async fn a_waiter_is_told_once_the_file_holds_the_game() {
        let dir = std::env::temp_dir().join(format!("boardcast-pgn-written-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (tx, rx) = mpsc::unbounded_channel();
        let writer = tokio::spawn(run(dir.clone(), rx, None));
        let mut tagged = game("e", "1");
        tagged.tags.push(("Annotator".into(), "by ctl".into()));
        let (written, told) = oneshot::channel();
        tx.send(PgnUpdate::new("b1".into(), vec![tagged])).unwrap();
        tx.send(PgnUpdate { board: "b1".into(), games: Vec::new(), written: Some(written) }).unwrap();
        told.await.expect("told");
        let file = std::fs::read_to_string(dir.join("e/round-1/game-b1.pgn")).unwrap();
        assert!(file.contains("[Annotator \"by ctl\"]"), "{file}");
        assert!(!writer.is_finished(), "the writer goes on");
        drop(tx);
        writer.await.unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Event and round tags reach here from the configuration and from
    /// operator commands (`set_tags`, `next_round`) alike.
    #[tokio::test]
    async fn tags_from_commands_never_leave_the_pgn_folder() {
        let top = std::env::temp_dir().join(format!("boardcast-pgn-names-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        let dir = top.join("pgn");
        let long = "é".repeat(300);
        let hostile = [
            ("..", ".."),
            ("../../outside", "../x"),
            ("a\0b", "1\\..\\2"),
            ("CON", "NUL"),
            (long.as_str(), long.as_str()),
            ("Open A", "Round 3.1"),
        ];
        let (tx, rx) = mpsc::unbounded_channel();
        for (i, (event, round)) in hostile.iter().enumerate() {
            tx.send(PgnUpdate::new(format!("{}/../{i}", ".."), vec![game(event, round)])).unwrap();
        }
        tx.send(PgnUpdate::new("Ålesund".into(), vec![game("Open A", "Round 3.1")])).unwrap();
        drop(tx);
        run(dir.clone(), rx, None).await;
        let written = files(&top);
        assert!(written.iter().all(|f| f.starts_with("pgn/")), "{written:#?}");
        assert!(!written.is_empty());
        // Every game was written, each into its own folder.
        assert_eq!(written.iter().filter(|f| f.ends_with("games.pgn")).count(), hostile.len(), "{written:#?}");
        // An ordinary name gives the path it always gave.
        assert!(written.contains(&"pgn/Open-A/round-Round-3.1/game-Ålesund.pgn".to_owned()), "{written:#?}");
        assert!(written.contains(&"pgn/_../round-_../game-..-..-0.pgn".to_owned()), "{written:#?}");
        std::fs::remove_dir_all(&top).unwrap();
    }
}
