//! `[http]`: the display pages and PGN over HTTP.

use super::{Config, ConfigError, error};
use serde::Deserialize;
use std::{net::SocketAddr, time::Duration};

/// `[http]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct HttpConfig {
    pub enabled: bool,
    pub listen: String,
    pub broker_ws_url: String,
    #[serde(default)]
    pub live_may_change: bool,
    #[serde(default = "default_session_idle_min")]
    pub session_idle_min: u64,
    #[serde(default = "default_session_max_h")]
    pub session_max_h: u64,
}

fn default_session_idle_min() -> u64 {
    60
}

fn default_session_max_h() -> u64 {
    12
}

/// The display pages' server, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Http {
    /// Where the pages are served.
    pub listen: SocketAddr,
    /// The WebSocket broker the pages connect to, when it is not the
    /// embedded broker's listener (`ws://…` or `wss://…`).
    pub broker_ws_url: Option<String>,
    /// The operator console's log-in (docs/operator.md).
    pub console: ConsoleSettings,
}

/// The operator console's sessions and who may change what
/// (`[http] live_may_change`, `session_idle_min`, `session_max_h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConsoleSettings {
    /// Whether `live` accounts (arbiters) may change games; they may always
    /// acknowledge alerts.
    pub live_may_change: bool,
    /// A session unused this long ends.
    pub idle: Duration,
    /// A session ends this long after its log-in, used or not.
    pub max: Duration,
}

impl Default for ConsoleSettings {
    fn default() -> Self {
        Self {
            live_may_change: false,
            idle: Duration::from_secs(default_session_idle_min() * 60),
            max: Duration::from_secs(default_session_max_h() * 3600),
        }
    }
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
        if h.session_idle_min == 0 || h.session_idle_min > 24 * 60 {
            return Err(error(
                "http.session_idle_min".into(),
                &h.session_idle_min.to_string(),
                "minutes from 1 to 1440: how long an operator console left unused stays logged in",
            ));
        }
        if h.session_max_h == 0 || h.session_max_h > 7 * 24 {
            return Err(error(
                "http.session_max_h".into(),
                &h.session_max_h.to_string(),
                "hours from 1 to 168: how long a console log-in lasts at most",
            ));
        }
        let console = ConsoleSettings {
            live_may_change: h.live_may_change,
            idle: Duration::from_secs(h.session_idle_min * 60),
            max: Duration::from_secs(h.session_max_h * 3600),
        };
        Ok(Some(Http { listen, broker_ws_url, console }))
    }
}
