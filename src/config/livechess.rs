//! `[livechess]`: DGT LiveChess's local API (docs/livechess.md).

use std::net::SocketAddr;

use serde::Deserialize;

use super::{Config, ConfigError, error};

/// `[livechess]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LiveChessConfig {
    pub enabled: bool,
    pub listen: String,
    pub allow_writes: bool,
    pub allow_remote: bool,
}

/// The LiveChess API's settings, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveChess {
    /// Where REST and the WebSocket are served.
    pub listen: SocketAddr,
    /// `setup` and `flip` are carried out (only ever on a loopback
    /// address: see [`LiveChess::writes`]).
    pub allow_writes: bool,
}

impl LiveChess {
    /// Whether `setup` and `flip` are carried out on a listener bound to
    /// `bound`: allowed by the configuration, and on loopback (a connector
    /// on the operator's own PC).
    pub fn writes(&self, bound: SocketAddr) -> bool {
        self.allow_writes && bound.ip().is_loopback()
    }
}

impl Config {
    /// The LiveChess API (`None`: not served).
    ///
    /// # Errors
    ///
    /// An address that cannot be used, or one beyond this machine that
    /// `allow_remote` does not allow.
    pub fn livechess(&self) -> Result<Option<LiveChess>, ConfigError> {
        let l = &self.livechess;
        if !l.enabled {
            return Ok(None);
        }
        let listen = l.listen.trim().parse::<SocketAddr>().map_err(|_| {
            error(
                "livechess.listen".into(),
                &format!("{:?}", l.listen),
                "an address and port such as \"127.0.0.1:1982\"",
            )
        })?;
        if !listen.ip().is_loopback() && !l.allow_remote {
            return Err(error(
                "livechess.listen".into(),
                &format!("{:?}", l.listen),
                "a loopback address (\"127.0.0.1:1982\"), or set livechess.allow_remote = true to serve the hall's live games to the network (docs/security.md)",
            ));
        }
        Ok(Some(LiveChess { listen, allow_writes: l.allow_writes }))
    }
}
