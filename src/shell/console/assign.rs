//! `POST /api/assign`: an operator assigns a board found plugged in but not
//! configured (the hall's "not assigned" rows) — its number or label, its
//! name, and optionally its players. Only `operator` accounts may; the
//! request must come from the page's own origin like every POST (checked
//! by `api::handle` before this runs). The daemon itself checks the board
//! as a `[[boards]]` table, writes it to the state file and starts its
//! session (`cmd/daemon/assign.rs`); this side only reads the request,
//! checks who asks, and hands it over. A request naming another `bridge`
//! (a board that bridge found) goes there as a signed command
//! (`bridges.rs`), and that bridge's answer is this one's.

use hyper::{Request, Response, StatusCode, body::Body};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::Console;
use crate::config::AssignedBoard;

/// The largest assignment body read.
const MAX_ASSIGN_BYTES: usize = 4 * 1024;

/// What changes in the hall.
#[derive(Debug)]
pub enum HallChange {
    /// A board found is read from now on: the board as the state file
    /// will hold it.
    Assign(AssignedBoard),
    /// A board assigned before (its name) is no longer read; its games and
    /// captures are kept, and it is offered again.
    Unassign(String),
}

/// An assignment (or its undoing) asked for, and where the daemon's answer
/// goes.
#[derive(Debug)]
pub struct AssignRequest {
    /// What is asked.
    pub change: HallChange,
    /// Who asked (the account), for the log and the state file.
    pub by: String,
    /// `Ok`: what was done; `Err`: why it was refused.
    pub reply: oneshot::Sender<Result<String, String>>,
}

/// Where the console hands assignments: the daemon's assigner.
pub type Assigner = mpsc::UnboundedSender<AssignRequest>;

/// A text field of the request: trimmed, `None` when empty; at most 100
/// characters.
fn field(body: &Value, name: &str) -> Result<Option<String>, String> {
    match &body[name] {
        Value::Null => Ok(None),
        Value::String(s) if s.chars().count() > 100 => Err(format!("\"{name}\" is longer than 100 characters")),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_owned())),
        _ => Err(format!("\"{name}\" is a text")),
    }
}

/// The board the request describes.
fn board_of(body: &Value) -> Result<AssignedBoard, String> {
    let family = field(body, "family")?.ok_or("the request names no \"family\" (dgt, millennium, …)")?;
    let label = field(body, "board")?.ok_or("the request gives no board number or label (\"board\")")?;
    let name = field(body, "name")?.unwrap_or_else(|| label.clone());
    let (port, serial) = (field(body, "port")?, field(body, "serial")?);
    // A board that tells its serial number is found by it wherever it is
    // plugged in next; the others stay on their port.
    let (port, serial) = match serial {
        Some(serial) => (None, Some(serial)),
        None => (Some(port.ok_or("the request gives neither \"serial\" nor \"port\"")?.into()), None),
    };
    Ok(AssignedBoard {
        name,
        protocol: family,
        port,
        serial,
        board: Some(label),
        white: field(body, "white")?,
        black: field(body, "black")?,
        assigned: None,
    })
}

/// `POST /api/assign` (the Origin already checked).
pub(super) async fn assign<B>(
    request: Request<B>,
    console: &Console,
) -> Response<http_body_util::Full<hyper::body::Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    use super::api::{answer, json_body};
    let who = match super::api::operator(&request, console, "assign a board") {
        Ok(who) => who,
        Err(refusal) => return *refusal,
    };
    let refused = |status: StatusCode, reason: String| answer(status, &json!({"status": "refused", "reason": reason}));
    let Some(body) = json_body(request, MAX_ASSIGN_BYTES).await else {
        return refused(
            StatusCode::BAD_REQUEST,
            "an assignment is a JSON object such as {\"family\": \"millennium\", \"port\": \"/dev/ttyACM3\", \"board\": \"7\", \"name\": \"board-7\", \"white\": \"…\", \"black\": \"…\"}".into(),
        );
    };
    let board = match board_of(&body) {
        Ok(board) => board,
        Err(reason) => return refused(StatusCode::BAD_REQUEST, reason),
    };
    // A board another bridge of the hall found: that bridge assigns it
    // and keeps it in its own state file (`bridges.rs`).
    if let (Some(Value::String(bridge)), Some(commander)) = (body.get("bridge"), &console.commander)
        && *bridge != commander.bridge
    {
        return elsewhere(commander, bridge, &board, &who.account).await;
    }
    let Some(assigner) = console.assigner.get() else {
        return refused(StatusCode::SERVICE_UNAVAILABLE, "this daemon does not assign boards".into());
    };
    let name = board.name.clone();
    let (reply, answered) = oneshot::channel();
    let change = HallChange::Assign(board);
    if assigner.send(AssignRequest { change, by: who.account.clone(), reply }).is_err() {
        return refused(StatusCode::SERVICE_UNAVAILABLE, "the daemon is stopping".into());
    }
    match answered.await {
        Ok(Ok(done)) => {
            tracing::info!("console: {} assigned board {name}: {done}", who.account);
            answer(StatusCode::OK, &json!({"status": "done", "reason": done, "board": name}))
        }
        Ok(Err(why)) => {
            tracing::info!("console: {} was refused board {name}: {why}", who.account);
            refused(StatusCode::CONFLICT, why)
        }
        Err(_) => refused(StatusCode::SERVICE_UNAVAILABLE, "the daemon is stopping".into()),
    }
}

/// Asks `bridge` to assign `board` (the `assign_board` command) and says
/// its answer as this bridge's own assignments are said.
async fn elsewhere(
    commander: &super::Commander,
    bridge: &str,
    board: &AssignedBoard,
    account: &str,
) -> Response<http_body_util::Full<hyper::body::Bytes>> {
    use super::api::answer;
    if bridge.is_empty() || bridge.chars().any(|c| matches!(c, '/' | '+' | '#') || c.is_control()) {
        return answer(
            StatusCode::BAD_REQUEST,
            &json!({"status": "refused", "reason": "\"bridge\" is a bridge id: one topic level, without / + #"}),
        );
    }
    let command = super::bridges::assignment(board, account);
    let sent = super::bridges::send(commander, bridge, &board.name, &command, account).await;
    tracing::info!(
        "console: {account} asked bridge {bridge} to assign board {}: {}: {}",
        board.name,
        sent.status,
        sent.reason
    );
    let status = match sent.status {
        "done" => StatusCode::OK,
        "refused" => StatusCode::CONFLICT,
        _ => StatusCode::GATEWAY_TIMEOUT,
    };
    answer(status, &json!({"status": sent.status, "reason": sent.reason, "board": board.name, "bridge": bridge}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_board_with_a_serial_number_is_found_by_it_the_others_by_their_port() {
        let dgt =
            board_of(&json!({"family": "dgt", "serial": "03921", "port": "/dev/ttyACM0", "board": "12"})).unwrap();
        assert_eq!((dgt.serial.as_deref(), dgt.port, dgt.name.as_str()), (Some("03921"), None, "12"));
        let mil = board_of(&json!({"family": "millennium", "port": "/dev/ttyACM1", "board": " 7 ", "name": "mil-7", "white": "A", "black": ""}))
            .unwrap();
        assert_eq!(mil.port.as_deref(), Some(std::path::Path::new("/dev/ttyACM1")));
        assert_eq!((mil.board.as_deref(), mil.white.as_deref(), mil.black), (Some("7"), Some("A"), None));
        assert!(board_of(&json!({"family": "dgt", "board": "1"})).unwrap_err().contains("neither"));
        assert!(board_of(&json!({"family": "dgt", "port": "/dev/x"})).unwrap_err().contains("board number"));
    }
}
