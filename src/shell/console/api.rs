//! The console's HTTP API under `/api/`: `POST /api/login` (JSON
//! `{account, password}`), `POST /api/login-link` (JSON `{token}`: a
//! one-time link's, [`super::link`]), `POST /api/logout`, `GET /api/session`, and
//! `GET /api/legal?fen=…` (a position's legal moves, [`super::legal`]),
//! `POST /api/command` (a command request of docs/operator.md without
//! `id`, `ts_ms` and the MAC, with an optional `bridge`), `POST
//! /api/assign` (`assign.rs`), `POST /api/unassign` and `GET
//! /api/board/capture`, `/api/board/log` (`hall.rs`), and the
//! tournament panel's `GET /api/tournament` and `POST /api/pairings`
//! (`round.rs`). Every POST must
//! carry the page's own `Origin` (a page of another site cannot make a
//! logged-in browser change a game); answers are JSON, never cached.
//! Passwords are read from the body only and never logged.

use std::{net::IpAddr, time::Instant};

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Body, Bytes},
    header,
};
use serde_json::{Map, Value, json};

use boardcast_core::operator::Command;

use super::{Console, round};
use crate::{
    accounts::{self, Role},
    shell::mqtt::mosquitto,
};

/// The session cookie's name.
pub const COOKIE: &str = "boardcast-session";

/// The largest log-in body read.
const MAX_LOGIN_BYTES: usize = 4 * 1024;
/// The largest command body read (the pairings of a round fit).
const MAX_COMMAND_BYTES: usize = boardcast_core::publish::guard::MAX_COMMAND_BYTES;

/// A hash checked when the account does not exist, so that an unknown
/// account takes as long to refuse as a wrong password.
static NO_ACCOUNT_HASH: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| accounts::hash_password("no such account", &[0; accounts::SALT_BYTES]));

/// The answer to a request under `/api/` from `peer`.
pub async fn handle<B>(request: Request<B>, peer: IpAddr, console: &Console) -> Response<Full<Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    match (method, path.as_str()) {
        (Method::GET, "/api/session") => session(&request, console),
        (Method::GET, "/api/legal") => legal(&request, console),
        (Method::GET, "/api/board/capture") => super::hall::capture(&request, console).await,
        (Method::GET, "/api/board/log") => super::hall::log(&request, console),
        (Method::GET, "/api/tournament") => match logged_in(&request, console) {
            Some(_) => answer(StatusCode::OK, &round::tournament(&console.round)),
            None => not_logged_in(),
        },
        (
            Method::POST,
            "/api/login" | "/api/login-link" | "/api/logout" | "/api/command" | "/api/assign" | "/api/unassign"
            | "/api/pairings",
        ) => {
            if !same_origin(&request) {
                return text(
                    StatusCode::FORBIDDEN,
                    "refused: a change must come from the console page itself (the request's Origin header is missing or is not this site's)",
                );
            }
            match path.as_str() {
                "/api/login" => login(request, peer, console).await,
                "/api/login-link" => login_link(request, peer, console).await,
                "/api/logout" => logout(&request, console),
                "/api/assign" => super::assign::assign(request, console).await,
                "/api/unassign" => super::hall::unassign(request, console).await,
                "/api/pairings" => pairings(request, console).await,
                _ => command(request, peer, console).await,
            }
        }
        (
            _,
            "/api/session" | "/api/legal" | "/api/tournament" | "/api/login" | "/api/login-link" | "/api/logout"
            | "/api/command" | "/api/assign" | "/api/unassign" | "/api/pairings" | "/api/board/capture"
            | "/api/board/log",
        ) => text(
            StatusCode::METHOD_NOT_ALLOWED,
            "GET /api/session, /api/legal, /api/tournament, /api/board/capture, /api/board/log; POST /api/login, /api/login-link, /api/logout, /api/command, /api/assign, /api/unassign, /api/pairings",
        ),
        _ => text(
            StatusCode::NOT_FOUND,
            "no such API: /api/login, /api/login-link, /api/logout, /api/session, /api/legal, /api/tournament, /api/command, /api/assign, /api/unassign, /api/pairings, /api/board/capture, /api/board/log (docs/operator.md)",
        ),
    }
}

/// Whether the request's `Origin` is the site it was sent to (`http://` or
/// `https://`, for a TLS proxy in front, and the `Host` it names).
fn same_origin<B>(request: &Request<B>) -> bool {
    let header = |name| request.headers().get(name).and_then(|v| v.to_str().ok());
    let (Some(origin), Some(host)) = (header(header::ORIGIN), header(header::HOST)) else { return false };
    origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) == Some(host)
}

/// Whether the page was reached over TLS (a proxy in front of the daemon):
/// the cookie is then `Secure`.
fn over_tls<B>(request: &Request<B>) -> bool {
    request.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok()).is_some_and(|o| o.starts_with("https://"))
}

/// The session token in the request's cookies.
pub(super) fn token<B>(request: &Request<B>) -> Option<String> {
    request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('=').map(str::to_owned))
        .filter(|t| !t.is_empty())
}

fn session<B>(request: &Request<B>, console: &Console) -> Response<Full<Bytes>> {
    let Some(token) = token(request) else { return not_logged_in() };
    let Some(who) = console.sessions.lock().expect("not poisoned").check(Instant::now(), &token) else {
        return not_logged_in();
    };
    answer(StatusCode::OK, &who_json(console, &who))
}

/// The legal moves of a position (`super::legal`), for a logged-in page.
fn legal<B>(request: &Request<B>, console: &Console) -> Response<Full<Bytes>> {
    let Some(token) = token(request) else { return not_logged_in() };
    if console.sessions.lock().expect("not poisoned").check(Instant::now(), &token).is_none() {
        return not_logged_in();
    }
    let (status, body) = super::legal::answer(request.uri().query());
    answer(status, &body)
}

fn who_json(console: &Console, who: &super::session::Who) -> Value {
    json!({
        "account": who.account,
        "role": who.role.name(),
        "may_change": console.may(who.role, "set_result"),
        "expires_in_s": who.expires_in.as_secs(),
        "ends_in_s": who.ends_in.as_secs(),
        "bridge": console.commander.as_ref().map(|c| c.bridge.clone()),
    })
}

async fn login<B>(request: Request<B>, peer: IpAddr, console: &Console) -> Response<Full<Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let tls = over_tls(&request);
    let Some(body) = json_body(request, MAX_LOGIN_BYTES).await else {
        return text(StatusCode::BAD_REQUEST, "a log-in is a JSON object {\"account\": …, \"password\": …}");
    };
    let (Some(name), Some(password)) = (body["account"].as_str(), body["password"].as_str()) else {
        return text(StatusCode::BAD_REQUEST, "a log-in is a JSON object {\"account\": …, \"password\": …}");
    };
    let name: String = name.trim().chars().take(64).collect();
    let now = console.now();
    // While an address or an account is being slowed down, no password is
    // even checked: a guess then tells nothing, right or wrong.
    if let Some(wait) = console.logins.lock().expect("not poisoned").wait(now, peer, &name) {
        let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
        let mut response = text(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("too many failed log-ins from this address or for this account: try again in {seconds} s"),
        );
        response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
        return response;
    }
    let account = console.accounts.read().expect("not poisoned").iter().find(|a| a.name == name).cloned();
    let hash = account.as_ref().map_or(NO_ACCOUNT_HASH.as_str(), |a| a.hash.as_str());
    let verified = accounts::verify(password, hash);
    {
        let mut logins = console.logins.lock().expect("not poisoned");
        if verified && account.is_some() {
            logins.succeeded(now, peer, &name);
        } else {
            logins.failed(now, peer, &name);
        }
    }
    console.warn(now);
    let Some(account) = account.filter(|_| verified) else {
        tracing::debug!("console: a failed log-in from {peer} for the account {name:?}");
        return text(StatusCode::UNAUTHORIZED, "wrong account name or password");
    };
    if account.role == Role::Public {
        return text(
            StatusCode::FORBIDDEN,
            "this is a public (display) account: the console needs an operator or live account (`boardcast accounts add NAME --role operator`)",
        );
    }
    open_session(console, &account, tls, peer, "")
}

/// A session for `account`, logged in from `peer` (`how`: "" for a
/// password, or how else): the answer with its cookie.
fn open_session(
    console: &Console,
    account: &accounts::Account,
    tls: bool,
    peer: IpAddr,
    how: &str,
) -> Response<Full<Bytes>> {
    let token = match mosquitto::random::<32>() {
        Ok(bytes) => mosquitto::hex(&bytes),
        Err(e) => {
            tracing::error!("console: no session token: {e}");
            return text(StatusCode::SERVICE_UNAVAILABLE, "the daemon could not make a session token: see its log");
        }
    };
    let who = console.sessions.lock().expect("not poisoned").open(Instant::now(), token.clone(), account);
    tracing::info!("console: {} ({}) logged in from {peer}{how}", account.name, account.role);
    let cookie = format!(
        "{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        who.ends_in.as_secs(),
        if tls { "; Secure" } else { "" }
    );
    let mut response = answer(StatusCode::OK, &who_json(console, &who));
    if let Ok(value) = header::HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `POST /api/login-link` with `{"token": …}`: the one-time token of a
/// log-in link (`link.rs`), spent whatever comes of it. A token that is not
/// one counts as a failed log-in of the address, as a wrong password does.
async fn login_link<B>(request: Request<B>, peer: IpAddr, console: &Console) -> Response<Full<Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    const LINK: &str = "(log-in link)";
    let tls = over_tls(&request);
    let Some(token) = json_body(request, MAX_LOGIN_BYTES).await.and_then(|b| b["token"].as_str().map(str::to_owned))
    else {
        return text(StatusCode::BAD_REQUEST, "a log-in link is a JSON object {\"token\": …}");
    };
    let now = console.now();
    if let Some(wait) = console.logins.lock().expect("not poisoned").wait(now, peer, LINK) {
        let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
        let mut response = text(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("too many failed log-ins from this address: try again in {seconds} s"),
        );
        response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(seconds));
        return response;
    }
    let name = console.links.lock().expect("not poisoned").spend(Instant::now(), &token);
    let account =
        name.and_then(|n| console.accounts.read().expect("not poisoned").iter().find(|a| a.name == n).cloned());
    let Some(account) = account.filter(|a| a.role != Role::Public) else {
        console.logins.lock().expect("not poisoned").failed(now, peer, LINK);
        console.warn(now);
        return text(
            StatusCode::UNAUTHORIZED,
            "this log-in link was used already or has expired (a link logs in once, within 10 minutes): log in with the account's password",
        );
    };
    open_session(console, &account, tls, peer, " with a log-in link")
}

fn logout<B>(request: &Request<B>, console: &Console) -> Response<Full<Bytes>> {
    if let Some(token) = token(request) {
        console.sessions.lock().expect("not poisoned").close(&token);
    }
    let mut response = answer(StatusCode::OK, &json!({"logged_out": true}));
    let cookie = format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
    if let Ok(value) = header::HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

async fn command<B>(request: Request<B>, peer: IpAddr, console: &Console) -> Response<Full<Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(who) =
        token(&request).and_then(|t| console.sessions.lock().expect("not poisoned").check(Instant::now(), &t))
    else {
        return not_logged_in();
    };
    let Some(Value::Object(mut fields)) = json_body(request, MAX_COMMAND_BYTES).await else {
        return text(
            StatusCode::BAD_REQUEST,
            "a command is a JSON object such as {\"board\": \"board-1\", \"command\": \"set_result\", \"result\": \"1-0\", \"reason\": \"resignation\"} (docs/operator.md)",
        );
    };
    let bridge = match fields.remove("bridge") {
        // A bridge id is one topic level: no wildcard, separator or control
        // character can take the command to another topic.
        Some(Value::String(bridge))
            if !bridge.is_empty()
                && bridge.len() <= 128
                && !bridge.chars().any(|c| matches!(c, '/' | '+' | '#') || c.is_control()) =>
        {
            Some(bridge)
        }
        None | Some(Value::Null) => None,
        Some(_) => {
            return text(StatusCode::BAD_REQUEST, "\"bridge\" is a bridge id: one topic level, without / + #");
        }
    };
    let Some(Value::String(board)) = fields.remove("board") else {
        return text(StatusCode::BAD_REQUEST, "the command names no \"board\"");
    };
    for sealed in ["id", "ts_ms", "mac", "signed"] {
        fields.remove(sealed);
    }
    let name = fields.get("command").and_then(Value::as_str).unwrap_or_default().to_owned();
    if !console.may(who.role, &name) {
        tracing::warn!(
            "console: {} ({}) from {peer} was refused {name} on {board}: not an operator",
            who.account,
            who.role
        );
        return answer(
            StatusCode::FORBIDDEN,
            &json!({"status": "refused", "reason": format!(
                "the account {} is a {} account: it may acknowledge alerts but not change games (an operator account may; or set [http] live_may_change = true)",
                who.account, who.role
            )}),
        );
    }
    let command = match Command::from_json(Value::Object(Map::from_iter(fields))) {
        Ok(command) => command,
        Err(e) => return answer(StatusCode::BAD_REQUEST, &json!({"status": "refused", "reason": e.to_string()})),
    };
    // A FEN no game can go on from is refused here, in the same words the
    // bridge would use, before anything is signed or sent.
    if let Command::SetPosition { fen } = &command
        && let Err(e) = boardcast_core::legal::position(fen, false)
    {
        return answer(StatusCode::BAD_REQUEST, &json!({"status": "refused", "reason": e.to_string()}));
    }
    let Some(commander) = &console.commander else {
        return text(
            StatusCode::SERVICE_UNAVAILABLE,
            "the daemon has no MQTT feed (mqtt.enabled = false): there is no bridge to send commands to",
        );
    };
    let bridge = bridge.unwrap_or_else(|| commander.bridge.clone());
    let super::bridges::Sent { status, reason } =
        super::bridges::send(commander, &bridge, &board, &command, &who.account).await;
    tracing::info!("console: {} from {peer}: {name} on {board} (bridge {bridge}): {status}: {reason}", who.account);
    answer(StatusCode::OK, &json!({"status": status, "reason": reason, "board": board, "bridge": bridge}))
}

/// The session of the request's cookie, if it is a live one.
pub(super) fn logged_in<B>(request: &Request<B>, console: &Console) -> Option<super::session::Who> {
    token(request).and_then(|t| console.sessions.lock().expect("not poisoned").check(Instant::now(), &t))
}

/// The operator behind `request`, or the answer for anyone else: 401 not
/// logged in, 403 (logged, with the account) another role. `action` says
/// what was refused: "assign a board".
pub(super) fn operator<B>(
    request: &Request<B>,
    console: &Console,
    action: &str,
) -> Result<super::session::Who, Box<Response<Full<Bytes>>>> {
    let Some(who) = logged_in(request, console) else { return Err(Box::new(not_logged_in())) };
    if who.role != Role::Operator {
        tracing::warn!("console: {} ({}) may not {action}: not an operator", who.account, who.role);
        let reason =
            format!("the account {} is a {} account: only an operator account may {action}", who.account, who.role);
        return Err(Box::new(answer(StatusCode::FORBIDDEN, &json!({"status": "refused", "reason": reason}))));
    }
    Ok(who)
}

/// `POST /api/pairings`: a pairings file's preview (`round.rs`).
async fn pairings<B>(request: Request<B>, console: &Console) -> Response<Full<Bytes>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let Some(who) = logged_in(&request, console) else { return not_logged_in() };
    let Some(body) = json_body(request, round::MAX_PAIRINGS_BYTES).await else {
        return answer(
            StatusCode::BAD_REQUEST,
            &json!({"error": format!(
                "a preview is a JSON object {{\"text\": the file's text, \"round\": \"4\"}} of at most {} KiB",
                round::MAX_PAIRINGS_BYTES / 1024
            )}),
        );
    };
    let (status, preview) = round::preview(&console.round, console.may(who.role, "next_round"), &body);
    answer(status, &preview)
}

/// The body as JSON, if it is JSON and no longer than `limit`.
pub(super) async fn json_body<B>(request: Request<B>, limit: usize) -> Option<Value>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let body = Limited::new(request.into_body(), limit).collect().await.ok()?.to_bytes();
    serde_json::from_slice(&body).ok()
}

pub(super) fn not_logged_in() -> Response<Full<Bytes>> {
    answer(StatusCode::UNAUTHORIZED, &json!({"error": "not logged in"}))
}

pub(super) fn answer(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    respond(status, "application/json", body.to_string())
}

fn text(status: StatusCode, words: &str) -> Response<Full<Bytes>> {
    respond(status, "text/plain; charset=utf-8", words.to_owned())
}

fn respond(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(path: &str, origin: Option<&str>) -> Request<Full<Bytes>> {
        let mut builder = Request::builder().method(Method::POST).uri(path).header(header::HOST, "hall:8080");
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(Full::new(Bytes::new())).unwrap()
    }

    #[test]
    fn only_the_pages_own_origin_may_change_anything() {
        assert!(same_origin(&post("/api/command", Some("http://hall:8080"))));
        assert!(same_origin(&post("/api/command", Some("https://hall:8080"))));
        for other in
            [None, Some("http://evil.example"), Some("http://hall:8081"), Some("null"), Some("http://hall:8080.evil")]
        {
            assert!(!same_origin(&post("/api/command", other)), "{other:?}");
        }
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let request = Request::builder().header(header::COOKIE, format!("a=1; {COOKIE}=abc; b=2")).body(()).unwrap();
        assert_eq!(token(&request).as_deref(), Some("abc"));
        let other = Request::builder().header(header::COOKIE, format!("{COOKIE}x=1")).body(()).unwrap();
        assert_eq!(token(&other), None);
    }
}
