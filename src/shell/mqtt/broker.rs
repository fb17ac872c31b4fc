//! The built-in broker (rumqttd, `[mqtt.embedded] broker = "builtin"`, or
//! "auto" without Mosquitto), so that the daemon works on a bare machine:
//! MQTT over TCP for local tools and the daemon itself, and MQTT over
//! WebSocket for browser displays. For demonstrations: it has no accounts
//! and no access control, and rumqttd 0.20 can stop accepting clients when
//! one reconnects with the id of a connection still going away (a panic
//! in its Last Will bookkeeping); the managed Mosquitto has neither flaw.
//!
//! rumqttd's defaults do not suit a tournament hall (see
//! `docs/mqtt.md`, "The embedded broker"), so it is configured here: payloads
//! up to 1 MiB (a long PGN is tens of KiB; its own sample allows 20 KiB), a
//! small commit log per subscription (its sample keeps up to 1 GB per
//! filter), a large outgoing window (a QoS 0 wildcard subscriber gets at
//! most that many retained messages at once), and no delay between
//! accepted connections (a hall of displays reconnecting at once would
//! otherwise queue for seconds). It has no access control: keep it on a
//! closed network, and use Mosquitto for anything public.

use std::{net::SocketAddr, time::Duration};

use rumqttd::{ConnectionSettings, LinkType, Router, RouterConfig, Server, ServerSettings, protocol::v4::V4};

/// The largest payload the embedded broker takes.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// Why the embedded broker could not start.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// Something else listens there already.
    #[error(
        "{addr} is in use (another MQTT broker? then set mqtt.url = \"mqtt://{addr}\" to publish to it, or give mqtt.embedded.{key} another address)"
    )]
    InUse {
        /// The address.
        addr: SocketAddr,
        /// Which setting gave it.
        key: &'static str,
    },
    /// The address cannot be listened on.
    #[error("cannot listen on {addr} (mqtt.embedded.{key}): {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Which setting gave it.
        key: &'static str,
        /// What the system said.
        source: std::io::Error,
    },
    /// The listener did not come up.
    #[error("the embedded broker did not start listening on {0} within 5 s")]
    NotListening(SocketAddr),
}

/// A running embedded broker. It runs until the process ends (rumqttd has
/// no way to stop it).
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedBroker {
    /// MQTT over TCP.
    pub listen: SocketAddr,
    /// MQTT over WebSocket.
    pub ws_listen: Option<SocketAddr>,
}

/// Starts the broker on the current tokio runtime.
///
/// # Errors
///
/// When an address is in use or cannot be listened on.
pub async fn start(listen: SocketAddr, ws_listen: Option<SocketAddr>) -> Result<EmbeddedBroker, BrokerError> {
    // rumqttd binds inside its accept loop and only logs a failure; try
    // each address first so that the operator gets a clear message.
    check_free(listen, "listen")?;
    if let Some(ws) = ws_listen {
        check_free(ws, "ws_listen")?;
    }
    let router = Router::new(0, router_config()).spawn();
    let mut tcp = Server::new(server_settings("mqtt", listen), router.clone(), V4);
    tokio::spawn(async move { tcp.start(LinkType::Remote).await });
    if let Some(ws) = ws_listen {
        let mut server = Server::new(server_settings("ws", ws), router, V4);
        tokio::spawn(async move { server.start(LinkType::Websocket).await });
    }
    for addr in std::iter::once(listen).chain(ws_listen) {
        wait_listening(addr).await?;
    }
    Ok(EmbeddedBroker { listen, ws_listen })
}

pub(crate) fn check_free(addr: SocketAddr, key: &'static str) -> Result<(), BrokerError> {
    match std::net::TcpListener::bind(addr) {
        Ok(_) => Ok(()),
        Err(source) if source.kind() == std::io::ErrorKind::AddrInUse => Err(BrokerError::InUse { addr, key }),
        Err(source) => Err(BrokerError::Listen { addr, key, source }),
    }
}

pub(crate) async fn wait_listening(addr: SocketAddr) -> Result<(), BrokerError> {
    let target = if addr.ip().is_unspecified() { SocketAddr::new([127, 0, 0, 1].into(), addr.port()) } else { addr };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < deadline {
        if tokio::net::TcpStream::connect(target).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(BrokerError::NotListening(addr))
}

fn router_config() -> RouterConfig {
    RouterConfig {
        max_connections: 10_010,
        // The number of retained messages a QoS 0 wildcard subscriber gets
        // at once (rumqttd truncates the rest).
        max_outgoing_packet_count: 10_000,
        max_segment_size: 1 << 20,
        max_segment_count: 4,
        custom_segment: None,
        initialized_filters: None,
        shared_subscriptions_strategy: Default::default(),
    }
}

fn server_settings(name: &str, listen: SocketAddr) -> ServerSettings {
    ServerSettings {
        name: name.to_owned(),
        listen,
        tls: None,
        next_connection_delay_ms: 0,
        connections: ConnectionSettings {
            connection_timeout_ms: 60_000,
            max_payload_size: MAX_PAYLOAD,
            max_inflight_count: 500,
            auth: None,
            external_auth: None,
            dynamic_filters: true,
        },
    }
}
