//! Assigning a board in the running daemon (the console's `POST
//! /api/assign`): the board is checked as a `[[boards]]` table against every
//! board the daemon has (a clash is refused with the reason), written to
//! the state file (so that the next start has it too), and its session
//! starts at once under the same supervision as a configured board's.
//!
//! Un-assigning (the console's `POST /api/unassign`, `unassign_board`)
//! undoes it for a board of the state file: the file is written without
//! it first (a file that cannot be written changes nothing), then the
//! board's session stops as at a shutdown (its games go to the PGN files,
//! its capture is closed: nothing recorded is lost), its retained status
//! and its LiveChess e-board go, and the search offers it again. Each
//! assigned board runs under a stop of its own for this ([`Running`]).

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::{sync::mpsc, task::JoinHandle};
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::Instrument;

use boardcast::{
    config::{Board, FindBoard, StateFile},
    shell::console::assign::{AssignRequest, HallChange},
};
use boardcast_core::publish::{Item, Publication, Qos};

use super::{Shared, discover::Offered, plan::Hall, supervised};

/// The boards assigned in the console that run now, by name: the stop of
/// each (a child of the daemon's shutdown) and its task.
pub(super) type Running = Arc<Mutex<HashMap<String, (CancellationToken, JoinHandle<()>)>>>;

/// How long an un-assigned board's session has to stop and write its
/// games.
const STOP_WAIT: Duration = Duration::from_secs(8);

/// Starts an assigned board under supervision, with a stop of its own.
pub(super) fn spawn(board: Board, shared: &Shared, tasks: &TaskTracker, running: &Running) {
    let stop = shared.shutdown.child_token();
    let own = Shared { shutdown: stop.clone(), ..shared.clone() };
    let name = board.name.clone();
    let span = tracing::info_span!(parent: None, "board", board = %name);
    let task = tasks.spawn(supervised(board, own).instrument(span));
    running.lock().expect("not poisoned").insert(name, (stop, task));
}

/// What the assigner keeps.
pub(super) struct Assigner {
    /// The state file and the configuration.
    pub(super) hall: Hall,
    /// Every board of the daemon: configured, and assigned.
    pub(super) boards: Vec<Board>,
    /// The boards the search found at its last look: only these may be
    /// assigned (an operator's request names no device the daemon did not
    /// find a board on).
    pub(super) offered: tokio::sync::watch::Receiver<Vec<Offered>>,
    /// Where the search learns of a board assigned, whose port and serial
    /// number it then no longer offers.
    pub(super) known: tokio::sync::watch::Sender<Vec<Board>>,
    /// The assigned boards running now.
    pub(super) running: Running,
}

/// Hands assignments to the daemon until shutdown.
pub(super) async fn run(
    assigner: Assigner,
    mut requests: mpsc::UnboundedReceiver<AssignRequest>,
    shared: Shared,
    tasks: TaskTracker,
) {
    let Assigner { mut hall, mut boards, offered, known, running } = assigner;
    loop {
        let request = tokio::select! {
            () = shared.shutdown.cancelled() => return,
            request = requests.recv() => match request {
                Some(request) => request,
                None => return,
            },
        };
        let AssignRequest { change, by, reply } = request;
        let mut board = match change {
            HallChange::Assign(board) => board,
            HallChange::Unassign(name) => {
                let answer = unassign(&mut hall, &mut boards, &name, &running, &shared).await;
                if answer.is_ok() {
                    // Its port and serial number are offered again.
                    known.send_replace(boards.clone());
                    tracing::info!("board {name} un-assigned by {by}");
                }
                let _ = reply.send(answer);
                continue;
            }
        };
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        board.assigned = Some(format!("{now} by {by}"));
        let offered_now = is_offered(&offered.borrow(), &board);
        let answer = match offered_now {
            Ok(()) => {
                let round = shared.round_now.lock().expect("not poisoned").clone();
                assign(&mut hall, &mut boards, board, round.as_ref()).await
            }
            Err(why) => Err(why),
        };
        let answer = answer.map(|(started, joined)| {
            let joined = joined.map(|j| format!("; it plays {j}")).unwrap_or_default();
            let said = format!(
                "board {} ({} {}) assigned, kept in {}: its session starts now{joined}",
                started.name,
                started.protocol.name(),
                match &started.find {
                    boardcast::config::FindBoard::Port(path) => format!("at {}", path.display()),
                    boardcast::config::FindBoard::Serial(serial) => format!("serial {serial}"),
                    boardcast::config::FindBoard::Bluetooth(target) => format!("Bluetooth LE {target}"),
                },
                hall.state_file.display()
            );
            tracing::info!("{said} (assigned by {by} in the console)");

            // Its port and serial number are no longer offered.
            known.send_replace(boards.clone());
            spawn(started, &shared, &tasks, &running);
            said
        });
        let _ = reply.send(answer);
    }
}

/// Whether the search found `board` (its family, and its serial number or
/// port) at its last look.
fn is_offered(offered: &[Offered], board: &boardcast::config::AssignedBoard) -> Result<(), String> {
    let found = offered.iter().any(|o| {
        o.family == board.protocol
            && match (&board.serial, &board.port) {
                (Some(serial), _) => {
                    o.serial.as_deref().is_some_and(|s| boardcast::shell::port::same_serial(s, serial))
                }
                (None, Some(port)) => o.port == *port,
                (None, None) => false,
            }
    });
    let what = match (&board.serial, &board.port) {
        (Some(serial), _) => format!("with serial number {serial}"),
        (None, Some(port)) => format!("on {}", port.display()),
        (None, None) => String::new(),
    };
    match found {
        true => Ok(()),
        false => Err(format!(
            "refused: no {} board {what} is offered now (only a board the daemon found at its last look, every hall.probe_interval_s, may be assigned; plug it in and wait for its row)",
            board.protocol
        )),
    }
}

/// Checks `board` against `boards`, writes the state file with it; the
/// board to start.
async fn assign(
    hall: &mut Hall,
    boards: &mut Vec<Board>,
    board: boardcast::config::AssignedBoard,
    round: Option<&super::round_now::Round>,
) -> Result<(Board, Option<String>), String> {
    let index = hall.state.boards.len();
    let mut checked = hall
        .config
        .assigned_board(index, &board, boards)
        .map_err(|e| format!("refused: {e}").replace(&format!("boards[{index}]."), ""))?;
    // A pairings file names the players of the board's number, as it does
    // for a configured board (and will at the next start).
    hall.config.apply_pairings(std::slice::from_mut(&mut checked)).map_err(|e| format!("refused: {e}"))?;
    // A round started since (`next_round` for every board) wins: the board
    // joins it, with its pairing's players.
    let joined = super::round_now::join(&mut checked, round);
    let mut state = hall.state.clone();
    state.boards.push(board);
    write_state(hall, state, "nothing was assigned").await?;
    hall.assigned.push(checked.name.clone());
    boards.push(checked.clone());
    Ok((checked, joined))
}

/// Writes `state` to the hall's state file (off the async threads) and
/// then keeps it as the hall's; on failure the hall keeps the old one and
/// the answer says what `unchanged` says stayed as it was.
async fn write_state(hall: &mut Hall, state: StateFile, unchanged: &str) -> Result<(), String> {
    let path = hall.state_file.clone();
    let written = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || state.write(&path)).await
    };
    match written {
        Ok(Ok(())) => {
            hall.state = state;
            Ok(())
        }
        Ok(Err(e)) => Err(format!(
            "the state file {} cannot be written ({e}): {unchanged}; give the daemon's user access to its folder, or set hall.state_file",
            hall.state_file.display()
        )),
        Err(e) => Err(format!("writing the state file failed: {e}")),
    }
}

/// Stops reading `name`, a board of the state file: the file without it,
/// its session stopped (its games written), its status and e-board gone.
async fn unassign(
    hall: &mut Hall,
    boards: &mut Vec<Board>,
    name: &str,
    running: &Running,
    shared: &Shared,
) -> Result<String, String> {
    if !hall.assigned.iter().any(|n| n == name) {
        if boards.iter().any(|b| b.name == name) {
            return Err(format!(
                "board {name} is in the configuration file, not assigned in the console: to stop reading it, remove its [[boards]] table and restart the daemon"
            ));
        }
        return Err(format!(
            "no board called {name:?} is assigned here (assigned in the console: {})",
            if hall.assigned.is_empty() { "none".to_owned() } else { hall.assigned.join(", ") }
        ));
    }
    let mut state = hall.state.clone();
    state.boards.retain(|b| b.name != name);
    write_state(hall, state, &format!("board {name} is still assigned and read")).await?;
    hall.assigned.retain(|n| n != name);
    let Some(index) = boards.iter().position(|b| b.name == name) else {
        return Err(format!("board {name} was not running"));
    };
    let board = boards.remove(index);
    // As at a shutdown: the port closes, the driver hands back the games,
    // which go to the PGN files; the capture is closed.
    let stopping = running.lock().expect("not poisoned").remove(name);
    let stopped = match stopping {
        Some((stop, task)) => {
            stop.cancel();
            tokio::time::timeout(STOP_WAIT, task).await.is_ok()
        }
        None => true,
    };
    // Its retained status goes (under its name, and its serial number once
    // told), so that every console's hall drops its row; after the board's
    // last status, which went out as it stopped.
    if let Some(feed) = &shared.feed {
        let mut keys = vec![board.name.clone()];
        if let FindBoard::Serial(serial) = &board.find {
            keys.push(serial.clone());
        }
        for key in keys {
            let publication = Publication {
                topic: feed.settings.topics.board_status(&key),
                payload: None,
                retain: true,
                qos: Qos::AtLeastOnce,
                public: false,
            };
            let _ = feed.items.send(Item::BoardStatus { board: board.name.clone(), publication, sync_ts_ms: 0 });
        }
    }
    if let Some(snapshots) = &shared.livechess {
        let _ = snapshots.send(boardcast_core::livechess::board::Snapshot::removed(super::livechess::identity(&board)));
    }
    let found = match &board.find {
        FindBoard::Port(path) => format!("at {}", path.display()),
        FindBoard::Serial(serial) => format!("serial {serial}"),
        FindBoard::Bluetooth(target) => format!("on Bluetooth LE {target}"),
    };
    Ok(format!(
        "board {name} ({} {found}) un-assigned: no longer read, removed from {}; its games and captures are kept; it is offered again as not assigned{}",
        board.protocol.name(),
        hall.state_file.display(),
        if stopped { "" } else { " (its session is still stopping)" }
    ))
}
