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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULTS;

    /// The defaults with `overrides` layered on top, as the binary layers
    /// a configuration file.
    fn with(overrides: &str) -> Config {
        config::Config::builder()
            .add_source(config::File::from_str(DEFAULTS, config::FileFormat::Toml))
            .add_source(config::File::from_str(overrides, config::FileFormat::Toml))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap()
    }

    #[test]
    fn off_by_default_on_loopback_when_on_and_beyond_it_only_when_allowed() {
        assert_eq!(with("").livechess().unwrap(), None);
        let on = with("[livechess]\nenabled = true\n").livechess().unwrap().unwrap();
        assert_eq!(on.listen, "127.0.0.1:1982".parse().unwrap());
        assert!(!on.writes(on.listen), "read-only unless allowed");
        let writes = with("[livechess]\nenabled = true\nallow_writes = true\n").livechess().unwrap().unwrap();
        assert!(writes.writes(writes.listen));
        let hall = "[livechess]\nenabled = true\nlisten = \"0.0.0.0:1982\"\nallow_writes = true\n";
        let refused = with(hall).livechess().unwrap_err().to_string();
        assert!(refused.contains("livechess.listen") && refused.contains("allow_remote"), "{refused}");
        let remote = with(&format!("{hall}allow_remote = true\n")).livechess().unwrap().unwrap();
        assert!(!remote.writes(remote.listen), "never writes beyond loopback");
        let bad = with("[livechess]\nenabled = true\nlisten = \"port 1982\"\n").livechess().unwrap_err().to_string();
        assert!(bad.contains("\"port 1982\"") && bad.contains("127.0.0.1:1982"), "{bad}");
    }
}
