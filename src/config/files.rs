//! `[recording]` and `[pgn]`: where captures and PGN folders go.

use serde::Deserialize;
use std::path::PathBuf;

/// `[recording]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingConfig {
    /// Record captures at all.
    pub enabled: bool,
    /// Where.
    pub dir: PathBuf,
}

/// `[pgn]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PgnConfig {
    /// Where.
    pub dir: PathBuf,
}
