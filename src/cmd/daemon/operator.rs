//! Operator commands from MQTT to the boards: each request the commands
//! listener let through goes to its board's session as an input (recorded
//! in the board's capture like any other), and the session's answer goes
//! back on the bridge's `replies` topic; so do the listener's refusals,
//! which are also logged. An `assign_board` or `unassign_board` (from a
//! console of the hall, or `ctl`) goes to the bridge's assigner instead.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};

use boardcast::shell::{
    console::assign::Assigner,
    driver::{Answer, Input, InputBody},
    mqtt::commands::Heard,
};
use boardcast_core::{
    operator::{Command, board_key},
    publish::{
        Item,
        commands::{EVERY_BOARD, Request, reply},
        guard::Refusal,
        topics::Topics,
    },
};

use super::BoardHandle;

/// Routes requests until the publisher stops; `assign_board` goes to
/// `assigner` (`bridged.rs`).
pub(super) async fn route(
    mut requests: mpsc::UnboundedReceiver<Heard>,
    boards: Arc<Mutex<HashMap<String, BoardHandle>>>,
    items: mpsc::UnboundedSender<Item>,
    topics: Topics,
    assigner: Assigner,
    round_now: super::round_now::RoundNow,
) {
    while let Some(request) = requests.recv().await {
        let (id, board, answer) = match request {
            Err(Refusal { id, board, reason, .. }) => {
                warn!("command {id:?} for board {board:?} refused: {reason}");
                (id, board, Err(reason))
            }
            Ok(Request { id, board, command }) => {
                let to_boards = board == EVERY_BOARD
                    || matches!(&command, Command::NextRound { pairings, .. } if !pairings.is_empty());
                let answer = if matches!(command, Command::AssignBoard(_)) {
                    super::bridged::assign(&assigner, &board, &command).await
                } else if matches!(command, Command::UnassignBoard { .. }) {
                    super::bridged::unassign(&assigner, &board, &command).await
                } else if to_boards && matches!(command, Command::NextRound { .. }) {
                    next_round(&boards, &board, command, &round_now).await
                } else if board == EVERY_BOARD {
                    Err(format!("only next_round goes to every board ({EVERY_BOARD:?}); name the board"))
                } else {
                    let handle = boards.lock().expect("not poisoned").get(&board).cloned();
                    match handle {
                        None => Err(no_such_board(&boards, &board)),
                        Some(handle) => ask(&handle, &board, command).await,
                    }
                };
                (id, board, answer)
            }
        };
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        let _ = items.send(Item::Publish(reply(&topics, &id, &board, &answer, now)));
    }
}

/// Boards by name.
type Boards = Arc<Mutex<HashMap<String, BoardHandle>>>;

/// The refusal for a board that is not running here, naming those that are.
fn no_such_board(boards: &Boards, board: &str) -> String {
    let mut names: Vec<String> = boards.lock().expect("not poisoned").keys().cloned().collect();
    names.sort();
    format!("no board called {board:?} is running here (boards: {})", names.join(", "))
}

/// Gives one board its command and waits for its answer (logged), and for
/// the PGN files to hold what it did.
async fn ask(handle: &BoardHandle, board: &str, command: Command) -> Result<String, String> {
    let described = command.to_string();
    let (tx, rx) = oneshot::channel();
    let input = Input { t: handle.clock.now(), body: InputBody::Command { command, reply: Some(tx) } };
    let answer = if handle.inputs.send(input).await.is_err() {
        Err(format!("board {board:?} is stopping"))
    } else {
        match tokio::time::timeout(Duration::from_secs(10), rx).await {
            Ok(Ok(Answer { said, written })) => {
                // "Done" means done in the PGN files too: a script that
                // uploads games.pgn after `ctl … result` gets the result.
                if let Some(written) = written
                    && tokio::time::timeout(Duration::from_secs(10), written).await.is_err()
                {
                    warn!("{board}: the PGN files were not written within 10 s of {described}");
                }
                said
            }
            _ => Err(format!("board {board:?} did not answer")),
        }
    };
    match &answer {
        Ok(message) => info!("{board}: {described}: {message}"),
        Err(message) => warn!("{board}: {described} refused: {message}"),
    }
    answer
}

/// `next_round` for every board (`board` is [`EVERY_BOARD`]) or one, with
/// a round's pairings: each board gets the tags of the pairing of its
/// number (docs/delivery.md, "Pairings"); a board without one keeps its
/// players. A pairing no board here has is told in the answer and logged.
/// The round for every board is kept (`round_now.rs`) for a board assigned
/// later; the same round sent again (a console of the hall trying a bridge
/// once more) changes nothing, so that no game is closed twice.
async fn next_round(
    boards: &Boards,
    board: &str,
    command: Command,
    round_now: &super::round_now::RoundNow,
) -> Result<String, String> {
    let Command::NextRound { round, tags, pairings } = command else {
        return Err("not next_round".into());
    };
    // Checked when the request was read: every key is a board number.
    let pairings: BTreeMap<u32, BTreeMap<String, String>> =
        pairings.into_iter().filter_map(|(board, tags)| Some((board_key(&board)?, tags))).collect();
    let kept = super::round_now::Round { round: round.clone(), tags: tags.clone(), pairings: pairings.clone() };
    if board == EVERY_BOARD && round_now.lock().expect("not poisoned").as_ref() == Some(&kept) {
        return Ok(format!("already in round {round} with these pairings: nothing changed"));
    }
    let mut targets: Vec<(String, BoardHandle)> = {
        let running = boards.lock().expect("not poisoned");
        if board == EVERY_BOARD {
            running.iter().map(|(name, handle)| (name.clone(), handle.clone())).collect()
        } else {
            match running.get(board) {
                Some(handle) => vec![(board.to_owned(), handle.clone())],
                None => {
                    drop(running);
                    return Err(no_such_board(boards, board));
                }
            }
        }
    };
    targets.sort_by_key(|(name, handle)| (handle.number, name.clone()));
    let mut numbered: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    for (name, handle) in &targets {
        if let Some(number) = handle.number {
            numbered.entry(number).or_default().push(name);
        }
    }
    if let Some((number, names)) = numbered.iter().find(|(n, names)| names.len() > 1 && pairings.contains_key(*n)) {
        return Err(format!(
            "boards {} all stand for board {number} (their labels end in {number}); nothing changed: give them labels with different numbers",
            names.join(", ")
        ));
    }
    let unplaced: Vec<String> =
        pairings.keys().filter(|n| !numbered.contains_key(*n)).map(ToString::to_string).collect();
    let mut said = Vec::new();
    let mut all_ok = true;
    for (name, handle) in &targets {
        let mut board_tags = tags.clone();
        if let Some(paired) = handle.number.and_then(|n| pairings.get(&n)) {
            board_tags.extend(paired.clone());
        }
        let command = Command::NextRound { round: round.clone(), tags: board_tags, pairings: BTreeMap::new() };
        match ask(handle, name, command).await {
            Ok(message) => said.push(format!("{name}: {message}")),
            Err(message) => {
                all_ok = false;
                said.push(format!("{name}: refused: {message}"));
            }
        }
    }
    if !unplaced.is_empty() {
        warn!("round {round}: no board here for the pairings of board(s) {}", unplaced.join(", "));
        said.push(format!("no board here for the pairings of board(s) {}", unplaced.join(", ")));
    }
    let message = said.join("; ");
    if all_ok && board == EVERY_BOARD {
        *round_now.lock().expect("not poisoned") = Some(kept);
    }
    if all_ok { Ok(message) } else { Err(message) }
}
