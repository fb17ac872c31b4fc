//! Starting the display pages' server: its address, the `/config.json` that
//! tells the pages where the WebSocket broker is, and the log lines.

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use boardcast::{
    config::{BrokerChoice, Embedded, Http, Mqtt, Scheme},
    shell::http,
};

use super::FeedReady;

/// Binds the pages' address and serves them until `shutdown`; returns the
/// address bound.
pub(super) async fn start(
    settings: &Http,
    mqtt: &Mqtt,
    ready: &FeedReady,
    shutdown: CancellationToken,
) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(settings.listen).await.with_context(|| {
        format!(
            "serving the display pages on {} (http.listen): is another program there? Choose another port, or set http.enabled = false",
            settings.listen
        )
    })?;
    let address = listener.local_addr().context("the pages' address")?;
    let broker = broker_for_pages(settings, mqtt);
    if broker["url"].is_null() && broker["port"].is_null() {
        tracing::warn!(
            "http: the display pages cannot reach the broker: set http.broker_ws_url to its WebSocket address (ws://…)"
        );
    }
    let config = json!({"schema": 1, "root": ready.root, "bridges": [ready.bridge_id], "broker": broker});
    tracing::info!("http: display pages on http://{address}/ (board, overview, console)");
    if !address.ip().is_loopback() {
        tracing::warn!(
            "http: the display pages are served beyond this machine, on {address} (they hold no secrets: the broker decides who reads what)"
        );
    }
    tokio::spawn(http::serve(listener, Arc::from(config.to_string()), shutdown));
    Ok(address)
}

/// Where the pages find the WebSocket broker: a URL, or the port of the
/// embedded broker's WebSocket listener on the host the page came from
/// (`host` is `null`) or on the address it listens on.
fn broker_for_pages(settings: &Http, mqtt: &Mqtt) -> Value {
    if let Some(url) = &settings.broker_ws_url {
        return json!({"url": url, "host": null, "port": null});
    }
    match &mqtt.broker {
        BrokerChoice::External(url) if matches!(url.scheme, Scheme::Ws | Scheme::Wss) => {
            json!({"url": url.url, "host": null, "port": null})
        }
        BrokerChoice::Embedded(Embedded { ws_listen: Some(ws), .. }) => {
            // A wildcard or loopback listener is reached on the host the
            // page itself came from.
            let host = (!ws.ip().is_unspecified() && !ws.ip().is_loopback()).then(|| ws.ip().to_string());
            json!({"url": null, "host": host, "port": ws.port()})
        }
        _ => json!({"url": null, "host": null, "port": null}),
    }
}
