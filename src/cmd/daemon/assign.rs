//! Assigning a board in the running daemon (the console's `POST
//! /api/assign`): the board is checked as a `[[boards]]` table against every
//! board the daemon has (a clash is refused with the reason), written to
//! the state file (so that the next start has it too), and its session
//! starts at once under the same supervision as a configured board's.

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

use boardcast::{config::Board, shell::console::assign::AssignRequest};

use super::{Shared, discover::Offered, plan::Hall, supervised};

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
}

/// Hands assignments to the daemon until shutdown.
pub(super) async fn run(
    assigner: Assigner,
    mut requests: mpsc::UnboundedReceiver<AssignRequest>,
    shared: Shared,
    tasks: TaskTracker,
) {
    let Assigner { mut hall, mut boards, offered, known } = assigner;
    loop {
        let request = tokio::select! {
            () = shared.shutdown.cancelled() => return,
            request = requests.recv() => match request {
                Some(request) => request,
                None => return,
            },
        };
        let AssignRequest { mut board, by, reply } = request;
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        board.assigned = Some(format!("{now} by {by}"));
        let offered_now = is_offered(&offered.borrow(), &board);
        let answer = match offered_now {
            Ok(()) => assign(&mut hall, &mut boards, board).await,
            Err(why) => Err(why),
        };
        let answer = answer.map(|started| {
            let said = format!(
                "board {} ({} {}) assigned, kept in {}: its session starts now",
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
            let span = tracing::info_span!(parent: None, "board", board = %started.name);
            tasks.spawn(supervised(started, shared.clone()).instrument(span));
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
) -> Result<Board, String> {
    let index = hall.state.boards.len();
    let mut checked = hall
        .config
        .assigned_board(index, &board, boards)
        .map_err(|e| format!("refused: {e}").replace(&format!("boards[{index}]."), ""))?;
    // A pairings file names the players of the board's number, as it does
    // for a configured board (and will at the next start).
    hall.config.apply_pairings(std::slice::from_mut(&mut checked)).map_err(|e| format!("refused: {e}"))?;
    let mut state = hall.state.clone();
    state.boards.push(board);
    let path = hall.state_file.clone();
    let written = {
        let state = state.clone();
        tokio::task::spawn_blocking(move || state.write(&path)).await
    };
    match written {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(format!(
                "the state file {} cannot be written ({e}): nothing was assigned; give the daemon's user access to its folder, or set hall.state_file",
                hall.state_file.display()
            ));
        }
        Err(e) => return Err(format!("writing the state file failed: {e}")),
    }
    hall.state = state;
    hall.assigned.push(checked.name.clone());
    boards.push(checked.clone());
    Ok(checked)
}
