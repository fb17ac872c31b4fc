//! `[broadcast]`: the event and round every board belongs to unless it says
//! otherwise, and the round's pairings file.

use serde::Deserialize;
use std::path::PathBuf;

/// `[broadcast]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct BroadcastConfig {
    pub event: String,
    pub site: String,
    pub round: String,
    pub time_control: String,
    pub rules: String,
    pub supervised: bool,
    #[serde(default)]
    pub pairings: PathBuf,
}
