//! DGT LiveChess's local API (docs/livechess.md): its listener, the hall
//! every board's snapshots go into, each board's outlet (a core
//! [`BoardWatch`] sink), and the writes (`setup`, `flip`) routed to the
//! boards' sessions as operator commands.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use anyhow::Context;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use boardcast::{
    config::{Board, FindBoard, LiveChess},
    shell::{
        driver::{Answer, Forward, Input, InputBody},
        livechess::{Shared, Write, serve},
    },
};
use boardcast_core::{
    livechess::{
        board::{BoardWatch, Identity, Snapshot},
        hall::Hall,
    },
    sink::Sink,
};

use super::{Boards, board::Start};

/// The board's outlet: its e-board and game as LiveChess shows them, a
/// resumed board's past (its clock, its connection) included.
pub(super) fn outlet(start: &Start<'_>, snapshots: mpsc::UnboundedSender<Snapshot>) -> Forward<BoardWatch> {
    let mut watch = BoardWatch::new(identity(start.board), start.epoch_ms);
    for output in start.past {
        watch.handle_output(output, start.games);
    }
    Forward::to(watch, snapshots)
}

/// Who `board` is for LiveChess: its DGT serial number when it is found
/// by one, else its name (stable across restarts either way).
pub(super) fn identity(board: &Board) -> Identity {
    let tag = |name: &str| board.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let (serialnr, source) = match &board.find {
        FindBoard::Serial(serial) => (serial.clone(), None),
        FindBoard::Port(path) => (board.name.clone(), path.file_name().map(|name| name.to_string_lossy().into_owned())),
        FindBoard::Bluetooth(target) => (board.name.clone(), Some(target.to_string())),
    };
    Identity {
        name: board.name.clone(),
        serialnr,
        source,
        label: board.path.board.clone(),
        event: tag("Event").unwrap_or_else(|| board.path.event.clone()),
        round: tag("Round").unwrap_or_else(|| board.path.round.clone()),
    }
}

/// Binds the API's address and serves it until `shutdown`; returns where
/// boards send their snapshots, and the address bound.
pub(super) async fn start(
    settings: &LiveChess,
    location: Option<String>,
    boards: Boards,
    shutdown: CancellationToken,
) -> anyhow::Result<(mpsc::UnboundedSender<Snapshot>, SocketAddr)> {
    let listener = tokio::net::TcpListener::bind(settings.listen).await.with_context(|| {
        format!(
            "serving the LiveChess API on {} (livechess.listen): is DGT LiveChess or another program there? Choose another port, or set livechess.enabled = false",
            settings.listen
        )
    })?;
    let address = listener.local_addr().context("the LiveChess API's address")?;
    let writes = settings.writes(address);
    let (changed, _) = watch::channel(0u64);
    let (write_to, writes_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared { hall: Mutex::new(Hall::new(location)), changed, writes, write_to });
    tracing::info!(
        "livechess: the LiveChess API on http://{address}/api/v1.0/ and ws://{address}/api/v1.0 ({})",
        if writes {
            "setup and flip are carried out: livechess.allow_writes = true"
        } else if settings.allow_writes {
            "setup and flip refused: writes are allowed on a loopback address only"
        } else {
            "read-only: setup and flip refused"
        }
    );
    if !address.ip().is_loopback() {
        tracing::warn!(
            "livechess: the LiveChess API is served beyond this machine, on {address}: anyone who reaches it reads the live, undelayed games (livechess.allow_remote = true)"
        );
    }
    let (snapshots_tx, snapshots) = mpsc::unbounded_channel();
    tokio::spawn(keep(snapshots, shared.clone()));
    tokio::spawn(route_writes(writes_rx, boards));
    tokio::spawn(serve(listener, shared, shutdown));
    Ok((snapshots_tx, address))
}

/// Puts every board's snapshot in the hall and tells the subscribers.
async fn keep(mut snapshots: mpsc::UnboundedReceiver<Snapshot>, shared: Arc<Shared>) {
    while let Some(snapshot) = snapshots.recv().await {
        shared.hall.lock().expect("not poisoned").update(snapshot);
        // Several snapshots waiting are told as one change.
        while let Ok(more) = snapshots.try_recv() {
            shared.hall.lock().expect("not poisoned").update(more);
        }
        shared.changed.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// Gives each write to its board's session, as an operator command (the
/// capture records it like any command).
async fn route_writes(mut writes: mpsc::UnboundedReceiver<Write>, boards: Boards) {
    while let Some(Write { board, command, reply }) = writes.recv().await {
        let handle = boards.lock().expect("not poisoned").get(&board).cloned();
        let Some(handle) = handle else {
            let _ = reply.send(Err(format!("board {board} is not running")));
            continue;
        };
        tokio::spawn(async move {
            let (answer_tx, answer_rx) = oneshot::channel::<Answer>();
            let input = Input { t: handle.clock.now(), body: InputBody::Command { command, reply: Some(answer_tx) } };
            if handle.inputs.send(input).await.is_err() {
                let _ = reply.send(Err(format!("board {board} is not running")));
                return;
            }
            let done = match answer_rx.await {
                Ok(answer) => answer.said.map(|_| ()),
                Err(_) => Err(format!("board {board} stopped")),
            };
            let _ = reply.send(done);
        });
    }
}
