//! The display pages' HTTP server: the pages and their assets, compiled
//! into the binary (halls are often offline), and `/config.json`, which
//! tells the pages where the WebSocket broker is. It serves files only; the
//! pages read the feed from the broker themselves.

use std::{convert::Infallible, sync::Arc, time::Duration};

use http_body_util::Full;
use hyper::{
    Method, Request, Response, StatusCode,
    body::{Bytes, Incoming},
    header,
    server::conn::http1,
    service::service_fn,
};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

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

/// Every file served, by path.
const ASSETS: &[Asset] = &[
    asset!("/", "index.html", HTML),
    asset!("/board.html", "board.html", HTML),
    asset!("/overview.html", "overview.html", HTML),
    asset!("/console.html", "console.html", HTML),
    asset!("/displays.css", "displays.css", "text/css; charset=utf-8"),
    asset!("/displays.js", "displays.js", JS),
    asset!("/sha256.js", "sha256.js", JS),
    asset!("/mqtt.min.js", "mqtt.min.js", JS),
    asset!("/licences/mqtt.js.txt", "mqtt.js-LICENSE.txt", "text/plain; charset=utf-8"),
];

/// Serves the pages on `listener` until `shutdown`. `config` is the body of
/// `/config.json`.
pub async fn serve(listener: TcpListener, config: Arc<str>, shutdown: CancellationToken) {
    loop {
        let stream = tokio::select! {
            () = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors, usually: wait rather than spin.
                    tracing::warn!("http: accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            },
        };
        let (config, shutdown) = (config.clone(), shutdown.clone());
        tokio::spawn(async move {
            let service = service_fn(move |request: Request<Incoming>| {
                let response = respond(request.method(), request.uri().path(), &config);
                async move { Ok::<_, Infallible>(response) }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                _ = connection => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// The answer to one request.
fn respond(method: &Method, path: &str, config: &str) -> Response<Full<Bytes>> {
    if method != Method::GET && method != Method::HEAD {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD");
    }
    let (content_type, body) = if path == "/config.json" {
        ("application/json", Bytes::from(config.to_owned()))
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
        .body(Full::new(body))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn plain(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_and_the_configuration_are_served_and_nothing_else() {
        for asset in ASSETS {
            let response = respond(&Method::GET, asset.path, "{}");
            assert_eq!(response.status(), StatusCode::OK, "{}", asset.path);
        }
        let config = respond(&Method::GET, "/config.json", "{\"root\":\"bc\"}");
        assert_eq!(config.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(respond(&Method::GET, "/../Cargo.toml", "{}").status(), StatusCode::NOT_FOUND);
        assert_eq!(respond(&Method::POST, "/", "{}").status(), StatusCode::METHOD_NOT_ALLOWED);
    }
}
