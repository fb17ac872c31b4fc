//! Operator commands from MQTT to the boards: each request the commands
//! listener let through goes to its board's session as an input (recorded
//! in the board's capture like any other), and the session's answer goes
//! back on the bridge's `replies` topic; so do the listener's refusals,
//! which are also logged.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};

use boardcast::shell::{
    driver::{Input, InputBody},
    mqtt::commands::Heard,
};
use boardcast_core::publish::{
    Item,
    commands::{Request, reply},
    guard::Refusal,
    topics::Topics,
};

use super::BoardHandle;

/// Routes requests until the publisher stops.
pub(super) async fn route(
    mut requests: mpsc::UnboundedReceiver<Heard>,
    boards: Arc<Mutex<HashMap<String, BoardHandle>>>,
    items: mpsc::UnboundedSender<Item>,
    topics: Topics,
) {
    while let Some(request) = requests.recv().await {
        let (id, board, answer) = match request {
            Err(Refusal { id, board, reason, .. }) => {
                warn!("command {id:?} for board {board:?} refused: {reason}");
                (id, board, Err(reason))
            }
            Ok(Request { id, board, command }) => {
                let handle = boards.lock().expect("not poisoned").get(&board).cloned();
                let answer = match handle {
                    None => {
                        let mut names: Vec<String> = boards.lock().expect("not poisoned").keys().cloned().collect();
                        names.sort();
                        Err(format!("no board called {board:?} is running here (boards: {})", names.join(", ")))
                    }
                    Some(handle) => {
                        let described = command.to_string();
                        let (tx, rx) = oneshot::channel();
                        let input =
                            Input { t: handle.clock.now(), body: InputBody::Command { command, reply: Some(tx) } };
                        let answer = if handle.inputs.send(input).await.is_err() {
                            Err(format!("board {board:?} is stopping"))
                        } else {
                            match tokio::time::timeout(Duration::from_secs(10), rx).await {
                                Ok(Ok(answer)) => answer,
                                _ => Err(format!("board {board:?} did not answer")),
                            }
                        };
                        match &answer {
                            Ok(message) => info!("{board}: {described}: {message}"),
                            Err(message) => warn!("{board}: {described} refused: {message}"),
                        }
                        answer
                    }
                };
                (id, board, answer)
            }
        };
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        let _ = items.send(Item::Publish(reply(&topics, &id, &board, &answer, now)));
    }
}
