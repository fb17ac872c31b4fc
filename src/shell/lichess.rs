//! The lichess pusher's shell: reads the token, and performs the pushes
//! the [`Pusher`] asks for over HTTPS (rustls, the system's certificates),
//! one at a time, feeding it the answers and the time.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use http_body_util::{BodyExt as _, Full, Limited};
use hyper::{Request, body::Bytes, header};
use hyper_util::{client::legacy::Client, rt::TokioExecutor};
use tokio::{sync::mpsc, time::Instant};

use boardcast_core::{
    lichess::{PushEvent, PushRequest, Pusher},
    time::Timestamp,
};

/// A lichess API token. Its `Debug` never shows it.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// The token in `path` (its first line).
///
/// # Errors
///
/// The file is missing, unreadable or empty: the message names it and says
/// what to do.
pub fn read_token(path: &Path, url: &str) -> Result<Token, String> {
    let make = format!(
        "make a token with the study:write scope at {url}/account/oauth/token and write it, on one line, to {} (chmod 600), or change lichess.token_file",
        path.display()
    );
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => format!("lichess.token_file {}: no such file: {make}", path.display()),
        _ => format!("lichess.token_file {}: cannot read it ({e}): {make}", path.display()),
    })?;
    let token = text.lines().next().unwrap_or_default().trim();
    if token.is_empty() {
        return Err(format!("lichess.token_file {}: the file is empty: {make}", path.display()));
    }
    Ok(Token(token.to_owned()))
}

/// Where to push.
#[derive(Clone, Debug)]
pub struct PushSettings {
    /// The lichess server's base address.
    pub url: String,
    /// The token's file (read again after a refusal: a new token needs no
    /// restart).
    pub token_file: PathBuf,
    /// A round at most once per this.
    pub interval: Duration,
}

/// The longest a push may take.
const PUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the daemon's stop waits for the last pushes of rounds with
/// changes not yet sent.
const FINAL_PUSHES: Duration = Duration::from_secs(5);

/// The most of an answer read (lichess answers a few KiB).
const ANSWER_LIMIT: usize = 1 << 20;

/// Pushes until `changes` closes. A change is a lichess round id and its
/// games (one PGN each, in board order); what happens goes to `events`.
/// When `changes` closes (the daemon stops), rounds with changes not yet
/// sent are pushed once more, whatever the interval, within
/// [`FINAL_PUSHES`].
pub async fn run(
    settings: PushSettings,
    mut token: Token,
    mut changes: mpsc::UnboundedReceiver<(String, Vec<String>)>,
    events: mpsc::UnboundedSender<PushEvent>,
) {
    let connector = match hyper_rustls::HttpsConnectorBuilder::new().with_native_roots() {
        Ok(builder) => builder.https_or_http().enable_http1().build(),
        Err(e) => {
            tracing::error!("lichess: cannot load the system's certificates ({e}): nothing is pushed");
            return;
        }
    };
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    let start = Instant::now();
    let now = move || Timestamp::from_micros(start.elapsed().as_micros() as u64);
    let mut pusher = Pusher::new(settings.interval);
    let mut in_flight: Option<std::pin::Pin<Box<dyn Future<Output = Answer> + Send>>> = None;
    loop {
        while let Some(event) = pusher.poll_event() {
            if matches!(event, PushEvent::TokenRefused { .. }) {
                // Perhaps the operator has put a new token in the file.
                if let Ok(new) = read_token(&settings.token_file, &settings.url) {
                    token = new;
                }
            }
            let _ = events.send(event);
        }
        if in_flight.is_none()
            && let Some(request) = pusher.poll_request(now())
        {
            in_flight = Some(Box::pin(push(client.clone(), settings.url.clone(), token.clone(), request)));
        }
        let deadline = pusher.poll_timeout().map(|t| start + Duration::from_micros(t.as_micros()));
        tokio::select! {
            change = changes.recv() => match change {
                Some((round, games)) => pusher.handle_change(now(), &round, &games),
                None => {
                    let last = async {
                        if let Some(flight) = in_flight.take() {
                            settle(&mut pusher, now(), flight.await);
                        }
                        // Each round once: a failure now is not tried again.
                        let mut tried = std::collections::HashSet::new();
                        while let Some(request) = pusher.poll_final_request() {
                            if !tried.insert(request.round.clone()) {
                                break;
                            }
                            let answer = push(client.clone(), settings.url.clone(), token.clone(), request).await;
                            settle(&mut pusher, now(), answer);
                        }
                    };
                    if tokio::time::timeout(FINAL_PUSHES, last).await.is_err() {
                        tracing::warn!(
                            "lichess: the last pushes did not end within {} s of the stop; the rounds' latest games may not be on lichess (the PGN files have them)",
                            FINAL_PUSHES.as_secs()
                        );
                    }
                    while let Some(event) = pusher.poll_event() {
                        let _ = events.send(event);
                    }
                    return;
                }
            },
            answer = async { in_flight.as_mut().expect("guarded").await }, if in_flight.is_some() => {
                in_flight = None;
                settle(&mut pusher, now(), answer);
            }
            () = sleep_until(deadline), if deadline.is_some() => {}
        }
    }
}

/// Gives the pusher what came of its push.
fn settle(pusher: &mut Pusher, now: Timestamp, answer: Answer) {
    match answer {
        Answer::Status { status, retry_after, body } => pusher.handle_response(now, status, retry_after, &body),
        Answer::Failed(why) => pusher.handle_failure(now, &why),
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    if let Some(deadline) = deadline {
        tokio::time::sleep_until(deadline).await;
    }
}

/// What came of one push.
enum Answer {
    Status { status: u16, retry_after: Option<Duration>, body: String },
    Failed(String),
}

/// One push: `POST <url>/api/broadcast/round/<id>/push`.
async fn push<C>(client: Client<C, Full<Bytes>>, url: String, token: Token, request: PushRequest) -> Answer
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    let uri = format!("{url}/api/broadcast/round/{}/push", request.round);
    let built = Request::post(&uri)
        .header(header::AUTHORIZATION, format!("Bearer {}", token.0))
        .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .header(header::USER_AGENT, concat!("boardcast/", env!("CARGO_PKG_VERSION")))
        .body(Full::new(Bytes::from(request.body)));
    let built = match built {
        Ok(built) => built,
        Err(e) => return Answer::Failed(format!("cannot make the request to {uri}: {e}")),
    };
    let exchange = async {
        let response = client.request(built).await.map_err(|e| describe(&e))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = Limited::new(response.into_body(), ANSWER_LIMIT)
            .collect()
            .await
            .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
            .unwrap_or_default();
        Ok::<_, String>(Answer::Status { status, retry_after, body })
    };
    match tokio::time::timeout(PUSH_TIMEOUT, exchange).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(why)) => Answer::Failed(format!("{uri}: {why}")),
        Err(_) => Answer::Failed(format!("{uri}: no answer within {} s", PUSH_TIMEOUT.as_secs())),
    }
}

/// A client error with its causes (hyper's own message is only the outer
/// one: "client error (Connect)").
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_and_never_shown() {
        let dir = std::env::temp_dir().join(format!("boardcast-token-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lichess.token");
        let missing = read_token(&path, "https://lichess.org").unwrap_err();
        assert!(missing.contains("no such file"), "{missing}");
        assert!(missing.contains("https://lichess.org/account/oauth/token"), "{missing}");
        assert!(missing.contains(&path.display().to_string()), "{missing}");
        std::fs::write(&path, "\n").unwrap();
        assert!(read_token(&path, "https://lichess.org").unwrap_err().contains("empty"));
        std::fs::write(&path, "lip_secret123\n").unwrap();
        let token = read_token(&path, "https://lichess.org").unwrap();
        assert_eq!(token.0, "lip_secret123");
        assert!(!format!("{token:?}").contains("secret"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
