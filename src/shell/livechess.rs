//! DGT LiveChess's local API, served (docs/livechess.md): REST under
//! `/api/v1.0/` and the WebSocket at `/api/v1.0`, on one port, as LiveChess
//! serves them. The answers come from the core's [`Hall`] (REST) and a
//! [`Connection`] per WebSocket; this file only moves requests, frames and
//! the boards' changes between them and the network.
//!
//! WebSocket upgrades are accepted from any origin, as LiveChess accepts
//! them: browser connectors open the socket from a chess site's page
//! (docs/security.md says what that exposes).

use std::{
    convert::Infallible,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Bytes, Incoming},
    header,
    server::conn::http1,
    service::service_fn,
};
use hyper_util::rt::TokioIo;
use tokio::{
    net::TcpListener,
    sync::{mpsc, oneshot, watch},
};
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{
        Message,
        handshake::derive_accept_key,
        protocol::{Role, WebSocketConfig},
    },
};
use tokio_util::sync::CancellationToken;

use boardcast_core::{
    livechess::{
        hall::{Hall, Rest},
        socket::{Connection, Step},
    },
    operator::Command,
};

/// A `setup` or `flip` for a board's session, and where its answer goes.
#[derive(Debug)]
pub struct Write {
    /// The board's name.
    pub board: String,
    /// What to do.
    pub command: Command,
    /// Done, or why not.
    pub reply: oneshot::Sender<Result<(), String>>,
}

/// What the server's connections share.
#[derive(Debug)]
pub struct Shared {
    /// Every board and game.
    pub hall: Mutex<Hall>,
    /// Bumped after every change of the hall, so that subscribers look.
    pub changed: watch::Sender<u64>,
    /// `setup` and `flip` are carried out (allowed, and on loopback).
    pub writes: bool,
    /// Where writes go.
    pub write_to: mpsc::UnboundedSender<Write>,
}

/// The longest call a client may send: LiveChess's calls are a few
/// hundred bytes; a bigger frame closes the connection, unread.
const MAX_CALL: usize = 64 * 1024;

/// How long a write may take before the client is told it failed.
const WRITE_WAIT: Duration = Duration::from_secs(10);

/// Serves the API on `listener` until `shutdown`.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    loop {
        let stream = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("livechess: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        tokio::spawn(async move {
            let inner = shutdown.clone();
            let service_shared = shared.clone();
            let service = service_fn(move |request: Request<Incoming>| {
                let response = respond(request, &service_shared, &inner);
                async move { Ok::<_, Infallible>(response) }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service).with_upgrades();
            tokio::select! {
                _ = connection => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// Wall-clock milliseconds since 1970 (the envelope's `time`).
fn now_ms() -> i64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}

fn respond(
    mut request: Request<Incoming>,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let upgrade = request
        .headers()
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"));
    if upgrade {
        if path.trim_end_matches('/') != "/api/v1.0" {
            return plain(StatusCode::NOT_FOUND, "the WebSocket is at /api/v1.0");
        }
        let Some(key) = request.headers().get(header::SEC_WEBSOCKET_KEY).cloned() else {
            return plain(StatusCode::BAD_REQUEST, "a WebSocket upgrade needs Sec-WebSocket-Key");
        };
        let accept = derive_accept_key(key.as_bytes());
        let upgrading = hyper::upgrade::on(&mut request);
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        tokio::spawn(async move {
            match upgrading.await {
                Ok(upgraded) => {
                    let config =
                        WebSocketConfig::default().max_message_size(Some(MAX_CALL)).max_frame_size(Some(MAX_CALL));
                    let socket =
                        WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
                    socket_session(socket, shared, shutdown).await;
                }
                Err(e) => tracing::debug!("livechess: a WebSocket upgrade failed: {e}"),
            }
        });
        return Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header(header::CONNECTION, "Upgrade")
            .header(header::UPGRADE, "websocket")
            .header(header::SEC_WEBSOCKET_ACCEPT, accept)
            .body(Full::new(Bytes::new()))
            .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())));
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the LiveChess API is read with GET (writes go over the WebSocket)",
        );
    }
    let Some(rest) = path.strip_prefix("/api/v1.0/") else {
        return plain(StatusCode::NOT_FOUND, "the LiveChess API is under /api/v1.0/ (docs/livechess.md)");
    };
    let answer = shared.hall.lock().expect("not poisoned").rest(rest);
    match answer {
        Rest::Json(body) => {
            let body = if request.method() == Method::HEAD { Bytes::new() } else { Bytes::from(body) };
            Response::builder()
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::CACHE_CONTROL, "no-cache")
                .body(Full::new(body))
                .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
        }
        Rest::NotFound(why) => {
            let mut response = Response::new(Full::new(Bytes::from(why)));
            *response.status_mut() = StatusCode::NOT_FOUND;
            response
        }
    }
}

/// One WebSocket client, until it closes or the daemon stops.
async fn socket_session<S>(mut socket: WebSocketStream<S>, shared: Arc<Shared>, shutdown: CancellationToken)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut connection = Connection::new(shared.writes);
    let mut changed = shared.changed.subscribe();
    loop {
        let texts: Vec<String> = tokio::select! {
            () = shutdown.cancelled() => break,
            message = socket.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    let steps = {
                        let hall = shared.hall.lock().expect("not poisoned");
                        connection.handle_text(now_ms(), text.as_str(), &hall)
                    };
                    let mut out = Vec::new();
                    for step in steps {
                        match step {
                            Step::Send(text) => out.push(text),
                            Step::Write { call, board, command } => {
                                let done = write(&shared, board, command).await;
                                out.push(connection.answer_write(&call, done, now_ms()));
                            }
                        }
                    }
                    out
                }
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => Vec::new(),
            },
            result = changed.changed() => {
                if result.is_err() {
                    break;
                }
                let hall = shared.hall.lock().expect("not poisoned");
                connection.handle_changed(now_ms(), &hall)
            }
        };
        for text in texts {
            if socket.send(Message::text(text)).await.is_err() {
                return;
            }
        }
    }
    let _ = socket.close(None).await;
}

/// Hands a write to the board's session and waits for its answer.
async fn write(shared: &Shared, board: String, command: Command) -> Result<(), String> {
    let (reply, answer) = oneshot::channel();
    let what = command.name();
    if shared.write_to.send(Write { board: board.clone(), command, reply }).is_err() {
        return Err("the daemon is stopping".into());
    }
    tracing::info!("livechess: {what} on board {board}, asked over the LiveChess WebSocket");
    match tokio::time::timeout(WRITE_WAIT, answer).await {
        Ok(Ok(done)) => done,
        Ok(Err(_)) => Err(format!("board {board} is not running")),
        Err(_) => Err(format!("board {board} did not answer within {} s", WRITE_WAIT.as_secs())),
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response
}
