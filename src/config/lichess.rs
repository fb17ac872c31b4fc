//! `[lichess]`: pushing each round's PGN to its lichess broadcast round.

use super::{Config, ConfigError, error, quoted};
use serde::Deserialize;
use std::{collections::BTreeMap, path::PathBuf, time::Duration};

/// `[lichess]`: see `config/default.toml`. Holds the token file's path,
/// never the token.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LichessConfig {
    pub url: String,
    pub token_file: PathBuf,
    pub interval_ms: u64,
    /// The daemon's round (or `<event>/<round>`) → the lichess round id.
    #[serde(default)]
    pub rounds: BTreeMap<String, String>,
}

/// Pushing to lichess, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lichess {
    /// The base address, without a trailing `/` (`https://lichess.org`).
    pub url: String,
    /// The file holding the API token.
    pub token_file: PathBuf,
    /// A round is pushed at most once per this.
    pub interval: Duration,
    /// The daemon's round (or `<event>/<round>`) → the lichess round id.
    pub rounds: BTreeMap<String, String>,
}

impl Lichess {
    /// The lichess round id of the games of `event` and `round` (their PGN
    /// tags), if they are pushed: `"<event>/<round>"` first, then
    /// `"<round>"`.
    pub fn round_id(&self, event: &str, round: &str) -> Option<&str> {
        self.rounds.get(&format!("{event}/{round}")).or_else(|| self.rounds.get(round)).map(String::as_str)
    }
}

impl Config {
    /// Pushing to lichess (`None`: no round has a lichess id).
    ///
    /// # Errors
    ///
    /// A URL that is not http(s), a zero interval, or a round id that is
    /// not one (lichess round ids are 8 letters and digits).
    pub fn lichess(&self) -> Result<Option<Lichess>, ConfigError> {
        let l = &self.lichess;
        if l.rounds.is_empty() {
            return Ok(None);
        }
        let url = l.url.trim().trim_end_matches('/');
        let host = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"));
        if host.is_none_or(|h| h.is_empty() || h.contains('@')) {
            return Err(error(
                "lichess.url".into(),
                &quoted(&l.url),
                "an https:// (or http://) address without user name, such as \"https://lichess.org\"",
            ));
        }
        // Over plain http the token would cross the network in clear: only
        // a lichess on this machine (a test, a local proxy) may be reached so.
        if let Some(rest) = url.strip_prefix("http://") {
            let authority = rest.split('/').next().unwrap_or_default();
            let host = match authority.rsplit_once(':') {
                Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) => host,
                _ => authority,
            };
            let host = host.trim_start_matches('[').trim_end_matches(']');
            let loopback = host.eq_ignore_ascii_case("localhost")
                || host.parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback());
            if !loopback {
                return Err(error(
                    "lichess.url".into(),
                    &quoted(&l.url),
                    "an https:// address such as \"https://lichess.org\": over http:// the token would cross the network \
                     in clear (http:// is accepted for a loopback address only)",
                ));
            }
        }
        if l.interval_ms < 100 {
            return Err(error(
                "lichess.interval_ms".into(),
                &l.interval_ms.to_string(),
                "at least 100 milliseconds between two pushes of a round (2000 suits lichess)",
            ));
        }
        for (round, id) in &l.rounds {
            if round.trim().is_empty() {
                return Err(error("lichess.rounds".into(), "\"\"", "a round name, such as \"1\" = \"abcdefgh\""));
            }
            if id.len() != 8 || !id.chars().all(|c| c.is_ascii_alphanumeric()) {
                return Err(error(
                    format!("lichess.rounds.{round:?}"),
                    &quoted(id),
                    "the lichess round id: the 8 letters and digits after the round's name in its address (https://lichess.org/broadcast/<tournament>/<round>/<round id>)",
                ));
            }
        }
        Ok(Some(Lichess {
            url: url.to_owned(),
            token_file: l.token_file.clone(),
            interval: Duration::from_millis(l.interval_ms),
            rounds: l.rounds.clone(),
        }))
    }
}
