//! The daemon's HTTP server: the display pages and their assets, compiled
//! into the binary (halls are often offline), `/config.json`, which tells
//! the pages where the WebSocket broker is, and the delivered PGN under
//! `/pgn/` (the [`Shelf`]), for relays that poll a URL. It serves what it
//! holds only: the pages read the feed from the broker themselves, and a PGN
//! path is looked up by name, never in the file system. The operator
//! console's log-in and commands under `/api/` are `super::console`'s.

use std::{
    collections::{BTreeMap, HashMap},
    convert::Infallible,
    net::IpAddr,
    sync::{Arc, RwLock},
    time::{Duration, SystemTime},
};

use http_body_util::Full;
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Bytes, Incoming},
    header,
    server::conn::http1,
    service::service_fn,
};
use hyper_util::rt::TokioIo;
use sha2::Digest as _;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::console::Console;

/// One file of the site.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $file:literal, $type:expr) => {
        Asset { path: $path, content_type: $type, body: include_bytes!(concat!("../../assets/displays/", $file)) }
    };
}

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";
const TEXT: &str = "text/plain; charset=utf-8";

/// Every file served, by path.
const ASSETS: &[Asset] = &[
    asset!("/", "index.html", HTML),
    asset!("/board.html", "board.html", HTML),
    asset!("/overview.html", "overview.html", HTML),
    asset!("/console.html", "console.html", HTML),
    asset!("/tv.html", "tv.html", HTML),
    asset!("/displays.css", "displays.css", CSS),
    asset!("/displays.js", "displays.js", JS),
    asset!("/board.js", "board.js", JS),
    asset!("/cards.js", "cards.js", JS),
    asset!("/overview.js", "overview.js", JS),
    asset!("/tv.js", "tv.js", JS),
    asset!("/console.js", "console.js", JS),
    asset!("/console-game.js", "console-game.js", JS),
    asset!("/console-alerts.js", "console-alerts.js", JS),
    asset!("/console-views.css", "console-views.css", CSS),
    asset!("/console-assign.js", "console-assign.js", JS),
    asset!("/console-hall-ops.js", "console-hall-ops.js", JS),
    asset!("/console-bridges.js", "console-bridges.js", JS),
    asset!("/console-round.js", "console-round.js", JS),
    asset!("/mqtt.min.js", "mqtt.min.js", JS),
    asset!("/vendor/chessground.min.js", "vendor/chessground.min.js", JS),
    asset!("/vendor/chessground.base.css", "vendor/chessground.base.css", CSS),
    asset!("/vendor/pieces/wP.svg", "vendor/pieces/wP.svg", SVG),
    asset!("/vendor/pieces/wN.svg", "vendor/pieces/wN.svg", SVG),
    asset!("/vendor/pieces/wB.svg", "vendor/pieces/wB.svg", SVG),
    asset!("/vendor/pieces/wR.svg", "vendor/pieces/wR.svg", SVG),
    asset!("/vendor/pieces/wQ.svg", "vendor/pieces/wQ.svg", SVG),
    asset!("/vendor/pieces/wK.svg", "vendor/pieces/wK.svg", SVG),
    asset!("/vendor/pieces/bP.svg", "vendor/pieces/bP.svg", SVG),
    asset!("/vendor/pieces/bN.svg", "vendor/pieces/bN.svg", SVG),
    asset!("/vendor/pieces/bB.svg", "vendor/pieces/bB.svg", SVG),
    asset!("/vendor/pieces/bR.svg", "vendor/pieces/bR.svg", SVG),
    asset!("/vendor/pieces/bQ.svg", "vendor/pieces/bQ.svg", SVG),
    asset!("/vendor/pieces/bK.svg", "vendor/pieces/bK.svg", SVG),
    asset!("/licences/mqtt.js.txt", "mqtt.js-LICENSE.txt", TEXT),
    asset!("/licences/chessground.txt", "vendor/chessground-LICENSE.txt", TEXT),
    asset!("/licences/flag-icons.txt", "vendor/flag-icons-LICENSE.txt", TEXT),
    asset!("/licences/SOURCE.md", "SOURCE.md", "text/markdown; charset=utf-8"),
];

/// The Content-Security-Policy of every answer: scripts only from the site
/// itself and the pages' own inline scripts (by hash, so an injected one
/// does not run), the WebSocket broker wherever `/config.json` puts it, no
/// plugins, and no framing by another site (clickjacking the console).
static CONTENT_SECURITY_POLICY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    use base64::{Engine, engine::general_purpose::STANDARD};
    let mut hashes = String::new();
    for asset in ASSETS.iter().filter(|a| a.content_type == HTML) {
        for script in inline_scripts(&String::from_utf8_lossy(asset.body)) {
            hashes.push_str(&format!(" 'sha256-{}'", STANDARD.encode(sha2::Sha256::digest(script.as_bytes()))));
        }
    }
    format!(
        "default-src 'self'; script-src 'self'{hashes}; style-src 'self'; img-src 'self' data:; \
         connect-src 'self' ws: wss:; worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
    )
});

/// The text of each `<script>` element without a `src` in `html`, as the
/// browser hashes it.
fn inline_scripts(html: &str) -> Vec<&str> {
    html.split("<script>").skip(1).filter_map(|rest| rest.split_once("</script>").map(|(body, _)| body)).collect()
}

/// One PGN file as served.
#[derive(Clone, Debug)]
struct Served {
    body: Bytes,
    /// A strong validator: a digest of the body.
    etag: String,
    /// When the body last changed, as an HTTP date.
    modified: String,
}

/// The delivered PGN files, by path below `/pgn/` (`Open-A/round-3/games.pgn`).
#[derive(Debug, Default)]
pub struct Shelf {
    files: RwLock<BTreeMap<String, Served>>,
    /// LiveChess Cloud's JSON of the delivered rounds, by path below
    /// `/lcc/` (docs/livechess.md).
    cloud: RwLock<BTreeMap<String, Bytes>>,
}

impl Shelf {
    /// Puts a round's files on the shelf (paths below `/pgn/`, all in
    /// `folder`), and takes off the folder's files that are no longer in
    /// it (a board's game moved to another round). A file whose text did
    /// not change keeps its validators.
    pub fn put_round(&self, folder: &str, files: Vec<(String, String)>, now: SystemTime) {
        let mut shelf = self.files.write().expect("not poisoned");
        let prefix = format!("{folder}/");
        let keep: Vec<&String> = files.iter().map(|(path, _)| path).collect();
        shelf.retain(|path, _| !path.starts_with(&prefix) || keep.contains(&path));
        for (path, text) in files {
            if shelf.get(&path).is_some_and(|served| served.body == text.as_bytes()) {
                continue;
            }
            let digest = sha2::Sha256::digest(text.as_bytes());
            let etag = format!("\"{}\"", digest[..12].iter().map(|b| format!("{b:02x}")).collect::<String>());
            shelf.insert(path, Served { body: Bytes::from(text), etag, modified: http_date(now) });
        }
    }

    /// The text of the file at `path` (below `/pgn/`), if it is served.
    pub fn get(&self, path: &str) -> Option<String> {
        let shelf = self.files.read().expect("not poisoned");
        shelf.get(path).map(|served| String::from_utf8_lossy(&served.body).into_owned())
    }

    /// The paths of the files served (below `/pgn/`), in order: the
    /// console lists them for the operator to copy.
    pub fn paths(&self) -> Vec<String> {
        self.files.read().expect("not poisoned").keys().cloned().collect()
    }

    /// Puts LiveChess Cloud files on the shelf (paths below `/lcc/`).
    pub fn put_cloud(&self, files: Vec<(String, String)>) {
        let mut cloud = self.cloud.write().expect("not poisoned");
        for (path, text) in files {
            cloud.insert(path, Bytes::from(text));
        }
    }

    fn served(&self, path: &str) -> Option<Served> {
        self.files.read().expect("not poisoned").get(path).cloned()
    }
}

/// How long a client may take to send a request's headers, and how long a
/// kept-alive connection may stay silent before its next request (hyper's
/// header-read timer runs for both): a slow or idle client is cut off.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The most a request's headers may take (bytes; hyper answers 431 above).
/// Requests for the pages are well under 2 KiB.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Connections served at once, in all and per client address; those above
/// are closed at once. Far below the daemon's descriptor limit (1024 at the
/// least), so that captures, PGN files and the broker's sockets always
/// find descriptors whatever web clients do; a hall's displays behind one
/// address (a NAT) each hold one or two.
pub const MAX_CONNECTIONS: usize = 256;
/// See [`MAX_CONNECTIONS`].
pub const MAX_CONNECTIONS_PER_ADDRESS: u32 = 32;

/// Serves the pages on `listener` until `shutdown`. `config` is the body of
/// `/config.json`; `shelf` holds the PGN served under `/pgn/`; `console`
/// answers the operator console's `/api/` (none: not served).
pub async fn serve(
    listener: TcpListener,
    config: Arc<str>,
    shelf: Arc<Shelf>,
    console: Option<Arc<Console>>,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let per_address: Arc<std::sync::Mutex<HashMap<IpAddr, u32>>> = Arc::default();
    let mut refused = 0u64;
    loop {
        let (stream, address) = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => (stream, peer.ip()),
                Err(e) => {
                    // Out of file descriptors, usually: wait rather than spin.
                    tracing::warn!("http: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            },
        };
        let Some(taken) = take_slot(&slots, &per_address, address) else {
            // Dropped unread: the descriptor is free again at once.
            drop(stream);
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(
                    "http: {refused} connection(s) refused so far: more than {MAX_CONNECTIONS} in all or \
                     {MAX_CONNECTIONS_PER_ADDRESS} from one address (the last from {address}; docs/security.md)"
                );
            }
            continue;
        };
        let (config, shelf, console, shutdown) = (config.clone(), shelf.clone(), console.clone(), shutdown.clone());
        tokio::spawn(async move {
            let _taken = taken;
            let service = service_fn(move |request: Request<Incoming>| {
                let (config, shelf, console) = (config.clone(), shelf.clone(), console.clone());
                async move {
                    let response = match console.as_deref() {
                        Some(console) if request.uri().path().starts_with("/api/") => {
                            super::console::api::handle(request, address, console).await
                        }
                        _ => respond(&request, &config, &shelf),
                    };
                    Ok::<_, Infallible>(response)
                }
            });
            let connection = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT)
                .max_buf_size(MAX_HEADER_BYTES)
                .serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// A connection's place among [`MAX_CONNECTIONS`] and its address's
/// [`MAX_CONNECTIONS_PER_ADDRESS`], given back when dropped.
struct Slot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    per_address: Arc<std::sync::Mutex<HashMap<IpAddr, u32>>>,
    address: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.per_address.lock().expect("not poisoned");
        if let Some(count) = counts.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

fn take_slot(
    slots: &Arc<tokio::sync::Semaphore>,
    per_address: &Arc<std::sync::Mutex<HashMap<IpAddr, u32>>>,
    address: IpAddr,
) -> Option<Slot> {
    let permit = slots.clone().try_acquire_owned().ok()?;
    let mut counts = per_address.lock().expect("not poisoned");
    let count = counts.entry(address).or_insert(0);
    if *count >= MAX_CONNECTIONS_PER_ADDRESS {
        return None;
    }
    *count += 1;
    Some(Slot { _permit: permit, per_address: per_address.clone(), address })
}

/// The answer to one request.
fn respond<B>(request: &Request<B>, config: &str, shelf: &Shelf) -> Response<Full<Bytes>> {
    let method = request.method();
    let path = request.uri().path();
    if method != Method::GET && method != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
    }
    if let Some(rest) = path.strip_prefix("/lcc/") {
        let Some(body) = shelf.cloud.read().expect("not poisoned").get(rest).cloned() else {
            return plain(
                StatusCode::NOT_FOUND,
                "no such file: /lcc/<tournament id>/tournament.json, round-<n>/index.json, round-<n>/game-<m>.json (docs/livechess.md)",
            );
        };
        let body = if method == Method::HEAD { Bytes::new() } else { body };
        return Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::CACHE_CONTROL, "no-cache")
            // Viewers of LiveChess Cloud read it from their own pages.
            .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
            .body(Full::new(body))
            .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())));
    }
    if let Some(rest) = path.strip_prefix("/pgn/") {
        let if_none_match = request.headers().get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
        return pgn(method, rest, if_none_match, shelf);
    }
    let (content_type, body) = if path == "/config.json" {
        ("application/json", Bytes::from(config.to_owned()))
    } else if let Some(fed) = path.strip_prefix("/flags/").and_then(|rest| rest.strip_suffix(".svg")) {
        let Some(flag) = super::flags::flag(fed) else {
            return plain(
                StatusCode::NOT_FOUND,
                "no flag: /flags/<FIDE federation, three letters>.svg, e.g. /flags/NOR.svg",
            );
        };
        (SVG, Bytes::from_static(flag.svg))
    } else if let Some(asset) = ASSETS.iter().find(|a| a.path == path) {
        (asset.content_type, Bytes::from_static(asset.body))
    } else {
        return plain(StatusCode::NOT_FOUND, "no such page: try / for the list of pages");
    };
    let body = if method == Method::HEAD { Bytes::new() } else { body };
    Response::builder()
        .header(header::CONTENT_TYPE, content_type)
        // The pages change with the daemon's version: never use a stale one.
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
        .header(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY.as_str())
        // For browsers that do not know frame-ancestors.
        .header(header::X_FRAME_OPTIONS, "SAMEORIGIN")
        .body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// A delivered PGN file: `rest` is the path below `/pgn/`, still
/// percent-encoded.
fn pgn(method: &Method, rest: &str, if_none_match: Option<&str>, shelf: &Shelf) -> Response<Full<Bytes>> {
    let Some(name) = percent_decoded(rest) else {
        return plain(StatusCode::BAD_REQUEST, "not a path: bad percent-encoding");
    };
    // Names on the shelf are made safe when they are written; a request
    // that could mean another folder is refused before it is looked up.
    if name.split('/').any(|part| part.is_empty() || part == "." || part == "..")
        || name.chars().any(|c| c == '\\' || c.is_control())
    {
        return plain(StatusCode::BAD_REQUEST, "refused: a name that could leave its folder");
    }
    let Some(served) = shelf.served(&name) else {
        return plain(
            StatusCode::NOT_FOUND,
            "no such PGN: /pgn/<event>/round-<round>/games.pgn or game-<board>.pgn (docs/delivery.md)",
        );
    };
    let matches = if_none_match.is_some_and(|tags| {
        tags.split(',').map(|t| t.trim().trim_start_matches("W/")).any(|t| t == "*" || t == served.etag)
    });
    let builder = Response::builder()
        .header(header::ETAG, &served.etag)
        .header(header::LAST_MODIFIED, &served.modified)
        // Relays poll: they must ask every time, and may use the ETag.
        .header(header::CACHE_CONTROL, "no-cache")
        .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    let response = if matches {
        builder.status(StatusCode::NOT_MODIFIED).body(Full::new(Bytes::new()))
    } else {
        let body = if method == Method::HEAD { Bytes::new() } else { served.body };
        builder.header(header::CONTENT_TYPE, "application/x-chess-pgn; charset=utf-8").body(Full::new(body))
    };
    response.unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

/// `%XX` escapes decoded; `None` when one is malformed or the result is not
/// UTF-8.
pub(crate) fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// An HTTP date (RFC 9110 IMF-fixdate): `Sun, 06 Nov 1994 08:49:37 GMT`.
fn http_date(at: SystemTime) -> String {
    let secs = at.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (proleptic Gregorian).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, path: &str, if_none_match: Option<&str>) -> Request<()> {
        let mut builder = Request::builder().method(method).uri(path);
        if let Some(tag) = if_none_match {
            builder = builder.header(header::IF_NONE_MATCH, tag);
        }
        builder.body(()).unwrap()
    }

    fn get(path: &str, shelf: &Shelf) -> Response<Full<Bytes>> {
        respond(&request(Method::GET, path, None), "{}", shelf)
    }

    #[test]
    fn every_page_and_the_configuration_are_served_and_nothing_else() {
        let shelf = Shelf::default();
        for asset in ASSETS {
            let response = get(asset.path, &shelf);
            assert_eq!(response.status(), StatusCode::OK, "{}", asset.path);
        }
        let config = respond(&request(Method::GET, "/config.json", None), "{\"root\":\"bc\"}", &shelf);
        assert_eq!(config.headers()[header::CONTENT_TYPE], "application/json");
        for asset in ASSETS {
            let response = get(asset.path, &shelf);
            let policy = response.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
            assert!(policy.contains("frame-ancestors 'self'") && !policy.contains("unsafe"), "{policy}");
            assert_eq!(response.headers()[header::X_FRAME_OPTIONS], "SAMEORIGIN");
        }
        // The pages keep their scripts in files, so scripts come from the
        // site alone; an inline script added to a page would be allowed by
        // its hash only.
        let policy = CONTENT_SECURITY_POLICY.as_str();
        for asset in ASSETS.iter().filter(|a| a.content_type == HTML) {
            let page = String::from_utf8_lossy(asset.body);
            let inline = inline_scripts(&page);
            assert!(policy.matches("'sha256-").count() >= inline.len(), "{}: {policy}", asset.path);
        }
        assert!(policy.contains("script-src 'self'") && policy.contains("worker-src 'self' blob:"), "{policy}");
        assert_eq!(
            inline_scripts("<p><script>one()</script><script src=\"x.js\"></script><script>two()</script>"),
            ["one()", "two()"]
        );
        assert_eq!(get("/../Cargo.toml", &shelf).status(), StatusCode::NOT_FOUND);
        let flag = get("/flags/NOR.svg", &shelf);
        assert_eq!(flag.status(), StatusCode::OK);
        assert_eq!(flag.headers()[header::CONTENT_TYPE], "image/svg+xml");
        assert_eq!(get("/flags/XYZ.svg", &shelf).status(), StatusCode::NOT_FOUND);
        assert_eq!(respond(&request(Method::POST, "/", None), "{}", &shelf).status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[test]
    fn pgn_is_served_by_name_with_validators() {
        let shelf = Shelf::default();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777);
        shelf.put_round(
            "Open-A/round-3",
            vec![
                ("Open-A/round-3/games.pgn".into(), "[Event \"Open A\"]\n\n*\n\n".into()),
                ("Open-A/round-3/game-Ålesund.pgn".into(), "[Event \"Open A\"]\n\n*\n\n".into()),
            ],
            t0,
        );
        let response = get("/pgn/Open-A/round-3/games.pgn", &shelf);
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::LAST_MODIFIED], "Sun, 06 Nov 1994 08:49:37 GMT");
        let etag = response.headers()[header::ETAG].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.len() == 26, "{etag}");
        assert_eq!(get("/pgn/Open-A/round-3/game-%C3%85lesund.pgn", &shelf).status(), StatusCode::OK);
        let again = respond(&request(Method::GET, "/pgn/Open-A/round-3/games.pgn", Some(&etag)), "{}", &shelf);
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        let other = respond(&request(Method::GET, "/pgn/Open-A/round-3/games.pgn", Some("\"x\"")), "{}", &shelf);
        assert_eq!(other.status(), StatusCode::OK);
        // The same text again keeps its validators; a new text gets new ones.
        let later = t0 + Duration::from_secs(60);
        shelf.put_round(
            "Open-A/round-3",
            vec![("Open-A/round-3/games.pgn".into(), "[Event \"Open A\"]\n\n*\n\n".into())],
            later,
        );
        assert_eq!(get("/pgn/Open-A/round-3/games.pgn", &shelf).headers()[header::ETAG], etag.as_str());
        // The board that left the round is gone from it.
        assert_eq!(get("/pgn/Open-A/round-3/game-%C3%85lesund.pgn", &shelf).status(), StatusCode::NOT_FOUND);
        shelf.put_round(
            "Open-A/round-3",
            vec![("Open-A/round-3/games.pgn".into(), "[Event \"Open A\"]\n\n1. e4 *\n\n".into())],
            later,
        );
        let changed = get("/pgn/Open-A/round-3/games.pgn", &shelf);
        assert_ne!(changed.headers()[header::ETAG], etag.as_str());
        assert_eq!(changed.headers()[header::LAST_MODIFIED], "Sun, 06 Nov 1994 08:50:37 GMT");
        for (path, status) in [
            ("/pgn/Open-A/round-4/games.pgn", StatusCode::NOT_FOUND),
            ("/pgn/Open-A/../../Cargo.toml", StatusCode::BAD_REQUEST),
            ("/pgn/Open-A/%2e%2e/%2e%2e/x.pgn", StatusCode::BAD_REQUEST),
            ("/pgn/Open-A/round-3%2F..%2F..%2Fx", StatusCode::BAD_REQUEST),
            ("/pgn/Open-A//games.pgn", StatusCode::BAD_REQUEST),
            ("/pgn/a%5c..%5cb", StatusCode::BAD_REQUEST),
            ("/pgn/a%00b", StatusCode::BAD_REQUEST),
            ("/pgn/a%zz", StatusCode::BAD_REQUEST),
        ] {
            assert_eq!(get(path, &shelf).status(), status, "{path}");
        }
    }

    #[test]
    fn http_dates_are_imf_fixdates() {
        assert_eq!(http_date(SystemTime::UNIX_EPOCH), "Thu, 01 Jan 1970 00:00:00 GMT");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400 + 86_399);
        assert_eq!(http_date(leap), "Tue, 29 Feb 2000 23:59:59 GMT");
    }
}
