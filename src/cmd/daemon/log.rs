//! The daemon's log of a board: one line per thing that happens on it
//! (logged in the board's span, so every line says which board).

use std::{path::PathBuf, time::Duration};

use tokio::sync::mpsc;
use tracing::{info, warn};

use boardcast::shell::port::PortEvent;
use boardcast_core::{
    event::EventKind,
    protocol::BoardInfo,
    session::{Notice, NoticeKind, Output},
};

/// Logs what happens on the board: moves, results, alerts, connections.
pub(super) async fn log_outputs(
    mut outputs: mpsc::UnboundedReceiver<Output>,
    mut events: mpsc::UnboundedReceiver<PortEvent>,
    reconnect_max: Duration,
) {
    let mut last_failure: Option<String> = None;
    let mut last_path: Option<PathBuf> = None;
    let mut port_done = false;
    loop {
        tokio::select! {
            output = outputs.recv() => match output {
                Some(Output::Event(event)) if !matches!(event.kind, EventKind::Clock(_)) => info!("{event}"),
                // The board's serial number and firmware are asked again
                // whenever it is quiet; the link says once who it is.
                // A ChessUp's acknowledgements come with every move.
                Some(Output::Notice(Notice { kind: NoticeKind::Board(BoardInfo::Serial(_) | BoardInfo::Version(_) | BoardInfo::Acknowledge(_)), .. })) => {}
                Some(Output::Notice(notice)) if matches!(notice.kind, NoticeKind::Decode(_)) => warn!("{}", notice.kind),
                Some(Output::Notice(notice)) => info!("{}", notice.kind),
                Some(_) => {}
                None => break,
            },
            event = events.recv(), if !port_done => match event {
                Some(PortEvent::OpenFailed { error, .. }) => {
                    // Said once per kind of failure, not at every retry.
                    if last_failure.as_ref() != Some(&error) {
                        warn!(
                            "cannot open the port: {error}; trying again, at least every {:.1} s (said again only if the reason changes)",
                            reconnect_max.as_secs_f64()
                        );
                        last_failure = Some(error);
                    }
                }
                Some(PortEvent::Opened { path }) => {
                    // Said when the board is first found and when it comes
                    // back somewhere else.
                    if last_path.as_ref() != Some(&path) {
                        info!("reading {}", path.display());
                        last_path = Some(path);
                    }
                    last_failure = None;
                }
                Some(PortEvent::Closed { reason }) => info!("port closed: {reason}"),
                None => port_done = true,
            },
        }
    }
}
