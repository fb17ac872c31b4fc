//! `[http]`: the display pages and PGN over HTTP.

use super::{Config, ConfigError, error};
use serde::Deserialize;
use std::net::SocketAddr;

/// `[http]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct HttpConfig {
    pub enabled: bool,
    pub listen: String,
    pub broker_ws_url: String,
}

/// The display pages' server, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Http {
    /// Where the pages are served.
    pub listen: SocketAddr,
    /// The WebSocket broker the pages connect to, when it is not the
    /// embedded broker's listener (`ws://…` or `wss://…`).
    pub broker_ws_url: Option<String>,
}

impl Config {
    /// The display pages' server (`None`: not served).
    ///
    /// # Errors
    ///
    /// An address that cannot be used, or a broker URL the pages cannot
    /// speak to.
    pub fn http(&self) -> Result<Option<Http>, ConfigError> {
        let h = &self.http;
        if !h.enabled {
            return Ok(None);
        }
        let listen = h.listen.trim().parse::<SocketAddr>().map_err(|_| {
            error("http.listen".into(), &format!("{:?}", h.listen), "an address and port such as \"127.0.0.1:8080\"")
        })?;
        let url = h.broker_ws_url.trim();
        // The URL is served to every page in `/config.json`: a password in
        // it would be given to anyone on the hall network.
        let authority = url.split_once("://").map_or("", |(_, rest)| rest.split('/').next().unwrap_or_default());
        let broker_ws_url = if url.is_empty() {
            None
        } else if authority.contains('@') {
            return Err(error(
                "http.broker_ws_url".into(),
                "(a URL with a user name or password, not repeated here)",
                "a ws:// or wss:// URL without user name or password: it is served to every page in /config.json; \
                 displays read as anonymous or log in themselves",
            ));
        } else if url.starts_with("ws://") || url.starts_with("wss://") {
            Some(url.to_owned())
        } else {
            return Err(error(
                "http.broker_ws_url".into(),
                &format!("{url:?}"),
                "\"\" (the embedded broker) or a ws:// or wss:// URL such as \"wss://broker.example.org/mqtt\"",
            ));
        };
        Ok(Some(Http { listen, broker_ws_url }))
    }
}
