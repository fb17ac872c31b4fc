//! The hall's actions on one board beyond the commands of its game:
//! `POST /api/unassign` (an operator undoes an assignment: the board goes
//! back to "plugged in, not assigned"), `GET /api/board/capture?board=…`
//! (its capture file, downloaded) and `GET /api/board/log?board=…` (its
//! latest log lines). Un-assigning goes to the bridge that reads the board
//! as the signed command `unassign_board`, as `boardcast ctl board-7
//! unassign` sends it (this daemon's own bridge included: one path for
//! every bridge of the hall), and the bridge's answer is this one's. The
//! capture and the lines are this daemon's (`shell::board_files`), for any
//! logged-in console account: an arbiter reads them too.

use std::time::Instant;

use http_body_util::Full;
use hyper::{Request, Response, StatusCode, body::Body, body::Bytes, header};
use serde_json::{Value, json};

use boardcast_core::operator::Command;

use super::{
    Console,
    api::{answer, json_body, not_logged_in, token},
};
use crate::shell::{board_files, http::percent_decoded};

/// The largest un-assignment body read.
const MAX_UNASSIGN_BYTES: usize = 1024;

/// `POST /api/unassign` (the Origin already checked): `{"board": NAME,
/// "bridge": ID}`.
pub(super) async fn unassign<B>(request: Request<B>, console: &Console) -> Response<Full<Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let who = match super::api::operator(&request, console, "un-assign a board") {
        Ok(who) => who,
        Err(refusal) => return *refusal,
    };
    let refused = |status: StatusCode, reason: String| answer(status, &json!({"status": "refused", "reason": reason}));
    let body = json_body(request, MAX_UNASSIGN_BYTES).await.unwrap_or(Value::Null);
    let Some(board) = body["board"].as_str().map(str::trim).filter(|b| !b.is_empty() && b.len() <= 100) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "an un-assignment is {\"board\": \"<its name>\", \"bridge\": \"<id>\"}".into(),
        );
    };
    let Some(commander) = &console.commander else {
        return refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "the daemon has no MQTT feed (mqtt.enabled = false): there is no bridge to ask".into(),
        );
    };
    let bridge = match &body["bridge"] {
        Value::String(bridge) if !bridge.is_empty() => bridge.clone(),
        _ => commander.bridge.clone(),
    };
    if bridge.len() > 128 || bridge.chars().any(|c| matches!(c, '/' | '+' | '#') || c.is_control()) {
        return refused(StatusCode::BAD_REQUEST, "\"bridge\" is a bridge id: one topic level, without / + #".into());
    }
    let command = Command::UnassignBoard { by: Some(who.account.clone()) };
    let sent = super::bridges::send(commander, &bridge, board, &command, &who.account).await;
    tracing::info!(
        "console: {} un-assigns board {board} (bridge {bridge}): {}: {}",
        who.account,
        sent.status,
        sent.reason
    );
    let status = match sent.status {
        "done" => StatusCode::OK,
        "refused" => StatusCode::CONFLICT,
        _ => StatusCode::GATEWAY_TIMEOUT,
    };
    answer(status, &json!({"status": sent.status, "reason": sent.reason, "board": board, "bridge": bridge}))
}

/// The `board` of the query string.
fn board_of(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let value = pair.strip_prefix("board=")?;
        percent_decoded(&value.replace('+', " ")).filter(|b| !b.is_empty())
    })
}

/// `GET /api/board/capture?board=NAME`: the board's capture file now, as
/// a download.
pub(super) async fn capture<B>(request: &Request<B>, console: &Console) -> Response<Full<Bytes>> {
    if token(request).and_then(|t| console.sessions.lock().expect("not poisoned").check(Instant::now(), &t)).is_none() {
        return not_logged_in();
    }
    let Some(board) = board_of(request.uri().query()) else {
        return answer(StatusCode::BAD_REQUEST, &json!({"error": "name the board: /api/board/capture?board=NAME"}));
    };
    let Some(path) = board_files::capture(&board) else {
        return answer(
            StatusCode::NOT_FOUND,
            &json!({"error": format!("board {board} has no capture here: it is not read by this daemon, or recording is off (recording.enabled)")}),
        );
    };
    let bytes = match tokio::fs::read(&path).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return answer(
                StatusCode::INTERNAL_SERVER_ERROR,
                &json!({"error": format!("the capture {} cannot be read: {e}", path.display())}),
            );
        }
    };
    let name = path.file_name().map_or_else(|| "capture.jsonl".into(), |n| n.to_string_lossy().into_owned());
    // A file name is the board's name made safe (`names::component`) and a
    // time: nothing in it needs quoting but a quote, which it cannot hold.
    let name = name.replace(['"', '\\'], "_");
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/x-ndjson")
        .header(header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\""))
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .body(Full::new(Bytes::from(bytes)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// `GET /api/board/log?board=NAME`: the board's latest log lines.
pub(super) fn log<B>(request: &Request<B>, console: &Console) -> Response<Full<Bytes>> {
    if token(request).and_then(|t| console.sessions.lock().expect("not poisoned").check(Instant::now(), &t)).is_none() {
        return not_logged_in();
    }
    let Some(board) = board_of(request.uri().query()) else {
        return answer(StatusCode::BAD_REQUEST, &json!({"error": "name the board: /api/board/log?board=NAME"}));
    };
    let lines = board_files::lines(&board);
    answer(StatusCode::OK, &json!({"board": board, "lines": lines, "kept": board_files::LINES_KEPT}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_board_is_read_from_the_query_escaped_or_not() {
        assert_eq!(board_of(Some("board=mil7")), Some("mil7".into()));
        assert_eq!(board_of(Some("x=1&board=board%207")), Some("board 7".into()));
        assert_eq!(board_of(Some("board=")), None);
        assert_eq!(board_of(None), None);
    }
}
