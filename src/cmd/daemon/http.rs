//! Starting the daemon's HTTP server (display pages, delivered PGN): its
//! address, the `/config.json` that tells the pages where the WebSocket
//! broker is, and the log lines.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use boardcast::{
    config::{BrokerChoice, Embedded, Http, Mqtt, Scheme},
    shell::{
        console::{
            Console,
            round::{RoundBoard, Tournament},
        },
        http::{self, Shelf},
    },
};

use super::{FeedReady, plan::Plan};

/// What the console's tournament panel shows of the configuration: the
/// tournament's own event, site, time control, rules and round
/// (`[broadcast]`), not a board's (a board may override them for itself);
/// a key left empty there is the first board's. Each board's round and
/// players come to the page from its live state.
pub(super) fn tournament(plan: &Plan) -> Tournament {
    let broadcast = &plan.hall.config.broadcast;
    let first = plan.boards.first();
    let or_first_board = |value: &str, tag: &str| {
        let value = value.trim();
        if !value.is_empty() {
            return value.to_owned();
        }
        first.and_then(|b| b.tags.iter().find(|(n, _)| n == tag)).map(|(_, v)| v.clone()).unwrap_or_default()
    };
    Tournament {
        event: or_first_board(&broadcast.event, "Event"),
        site: or_first_board(&broadcast.site, "Site"),
        time_control: or_first_board(&broadcast.time_control, "TimeControl"),
        rules: broadcast.rules.trim().to_owned(),
        round: or_first_board(&broadcast.round, "Round"),
        boards: plan.boards.iter().map(|b| RoundBoard { name: b.name.clone(), label: b.path.board.clone() }).collect(),
        lichess_rounds: plan.lichess.as_ref().map(|(l, _)| l.rounds.clone()).unwrap_or_default(),
    }
}

/// Binds the pages' address and serves them, the PGN on `shelf` and the
/// operator console's API (`console`), until `shutdown`; returns the
/// address bound. Without an MQTT feed the pages
/// have nothing to show, but the PGN is served.
pub(super) async fn start(
    settings: &Http,
    mqtt: Option<&Mqtt>,
    ready: Option<&FeedReady>,
    shelf: Arc<Shelf>,
    console: Option<Arc<Console>>,
    shutdown: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(settings.listen).await.with_context(|| {
        format!(
            "serving the display pages on {} (http.listen): is another program there? Choose another port, or set http.enabled = false",
            settings.listen
        )
    })?;
    let address = listener.local_addr().context("the pages' address")?;
    let config = match (mqtt, ready) {
        (Some(mqtt), Some(ready)) => {
            let broker = broker_for_pages(settings, mqtt);
            if broker["url"].is_null() && broker["port"].is_null() {
                tracing::warn!(
                    "http: the display pages cannot reach the broker: set http.broker_ws_url to its WebSocket address (ws://…)"
                );
            }
            json!({"schema": 1, "root": ready.root, "bridges": [ready.bridge_id], "broker": broker})
        }
        _ => {
            tracing::warn!(
                "http: the display pages have no feed to show without MQTT (mqtt.enabled = false); the PGN is served"
            );
            json!({"schema": 1, "root": null, "bridges": [], "broker": {"url": null, "host": null, "port": null}})
        }
    };
    tracing::info!("http: display pages on http://{address}/ (board, overview, console)");
    tracing::info!("http: PGN on http://{address}/pgn/<event>/round-<round>/games.pgn and game-<board>.pgn");
    if !address.ip().is_loopback() {
        tracing::warn!(
            "http: the display pages are served beyond this machine, on {address} (they hold no secrets: the broker decides who reads what)"
        );
    }
    tracing::info!("http: operator console on http://{address}/console.html (log-in with an operator or live account)");
    if let Some(console) = &console {
        tokio::spawn(console.clone().say_warnings(shutdown.clone()));
    }
    tokio::spawn(http::serve(listener, Arc::from(config.to_string()), shelf, console, shutdown));
    Ok(address)
}

/// Where the pages find the WebSocket broker: a URL, or the port of the
/// embedded broker's WebSocket listener on the host the page came from
/// (`host` is `null`) or on the address it listens on.
fn broker_for_pages(settings: &Http, mqtt: &Mqtt) -> Value {
    if let Some(url) = &settings.broker_ws_url {
        return json!({"url": url, "host": null, "port": null, "tls": url.starts_with("wss://")});
    }
    match &mqtt.broker {
        BrokerChoice::External(url) if matches!(url.scheme, Scheme::Ws | Scheme::Wss) => {
            json!({"url": url.url, "host": null, "port": null, "tls": url.scheme == Scheme::Wss})
        }
        BrokerChoice::Embedded(Embedded { ws_listen: Some(ws), tls, .. }) => {
            // A wildcard or loopback listener is reached on the host the
            // page itself came from.
            let host = (!ws.ip().is_unspecified() && !ws.ip().is_loopback()).then(|| ws.ip().to_string());
            // With TLS the page must use wss:// (and the browser must trust
            // the certificate for the name it reaches the host by).
            json!({"url": null, "host": host, "port": ws.port(), "tls": tls.is_some()})
        }
        _ => json!({"url": null, "host": null, "port": null, "tls": false}),
    }
}
