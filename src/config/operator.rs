//! `[operator]`: the key that signs operator commands.

use serde::Deserialize;
use std::path::PathBuf;

/// `[operator]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// The operator key (created by the daemon when missing; read by
    /// `boardcast ctl`).
    pub key_file: PathBuf,
}
