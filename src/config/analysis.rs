//! `[analysis]`: engine analysis for spectators on the public tree
//! (docs/displays.md, "Analysis").

use std::{path::PathBuf, time::Duration};

use serde::Deserialize;

use super::{Config, ConfigError, error};
use boardcast_core::analysis::uci::Budget;

/// `[analysis]`: see `config/default.toml` and docs/displays.md.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct AnalysisConfig {
    pub enabled: bool,
    /// The engine's program; empty: `stockfish` on `PATH`, then
    /// `/usr/games/stockfish` (where Debian installs it).
    #[serde(default)]
    pub engine: PathBuf,
    pub engines: usize,
    pub threads: u32,
    pub hash_mb: u32,
    pub movetime_ms: u64,
    /// When not 0, the budget is this many nodes instead of `movetime_ms`.
    pub nodes: u64,
    pub hung_after_ms: u64,
    /// The engines' CPU priority (nice value), 0 to 19.
    pub nice: i32,
}

/// Engine analysis, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// The engine's program as configured (`None`: look for Stockfish in
    /// the usual places, [`Analysis::find_engine`]).
    pub engine: Option<PathBuf>,
    /// Engines running side by side (each analyses one position at a
    /// time).
    pub engines: usize,
    /// Each engine's threads (its `Threads` option).
    pub threads: u32,
    /// Each engine's hash table in MiB (its `Hash` option).
    pub hash_mb: u32,
    /// The budget per position.
    pub budget: Budget,
    /// How long past the budget (after `go` for a budget in nodes) an
    /// engine may stay silent before it counts as hung.
    pub hung_after: Duration,
    /// The engines' nice value: the boards, the capture and the feed come
    /// first, the engines get what CPU is left.
    pub nice: i32,
}

/// Where Debian's `stockfish` package puts the engine (outside most users'
/// `PATH`).
pub const DEBIAN_STOCKFISH: &str = "/usr/games/stockfish";

impl Analysis {
    /// The engine's program: the configured one if it exists (a bare name
    /// is looked for on `PATH`), else `stockfish` on `PATH`, else
    /// [`DEBIAN_STOCKFISH`]; `None` when there is none.
    pub fn find_engine(&self) -> Option<PathBuf> {
        match &self.engine {
            Some(path) if path.components().count() == 1 && !path.is_absolute() => on_path(path.as_os_str()),
            Some(path) => path.is_file().then(|| path.clone()),
            None => find_stockfish(),
        }
    }

    /// The longest a search may take before the engine counts as hung.
    pub fn deadline(&self) -> Duration {
        match self.budget {
            Budget::MoveTime { ms } => Duration::from_millis(ms) + self.hung_after,
            Budget::Nodes { .. } => self.hung_after,
        }
    }
}

/// `stockfish` on `PATH`, else [`DEBIAN_STOCKFISH`], if either exists.
pub fn find_stockfish() -> Option<PathBuf> {
    on_path("stockfish".as_ref()).or_else(|| Some(PathBuf::from(DEBIAN_STOCKFISH)).filter(|p| p.is_file()))
}

/// The program called `name` in a folder of `PATH`.
fn on_path(name: &std::ffi::OsStr) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths).map(|dir| dir.join(name)).find(|p| p.is_file())
}

impl Config {
    /// Engine analysis (`None`: not enabled).
    ///
    /// # Errors
    ///
    /// No engine to run, threads or hash out of range, no budget.
    pub fn analysis(&self) -> Result<Option<Analysis>, ConfigError> {
        let a = &self.analysis;
        if !a.enabled {
            return Ok(None);
        }
        if !(1..=64).contains(&a.engines) {
            return Err(error(
                "analysis.engines".into(),
                &a.engines.to_string(),
                "1 to 64 engines side by side (one per spare core suits a hall)",
            ));
        }
        if !(1..=512).contains(&a.threads) {
            return Err(error("analysis.threads".into(), &a.threads.to_string(), "1 to 512 threads per engine"));
        }
        if !(1..=65_536).contains(&a.hash_mb) {
            return Err(error(
                "analysis.hash_mb".into(),
                &a.hash_mb.to_string(),
                "1 to 65536 MiB of hash table per engine (64 suits a position a second)",
            ));
        }
        let budget = if a.nodes > 0 {
            if a.nodes < 1_000 {
                return Err(error(
                    "analysis.nodes".into(),
                    &a.nodes.to_string(),
                    "at least 1000 nodes per position (1000000 is about a second of one thread), or 0 for movetime_ms",
                ));
            }
            Budget::Nodes { nodes: a.nodes }
        } else {
            if a.movetime_ms < 10 {
                return Err(error(
                    "analysis.movetime_ms".into(),
                    &a.movetime_ms.to_string(),
                    "at least 10 milliseconds per position (1000 suits a broadcast), or a budget in analysis.nodes",
                ));
            }
            Budget::MoveTime { ms: a.movetime_ms }
        };
        if a.hung_after_ms < 100 {
            return Err(error(
                "analysis.hung_after_ms".into(),
                &a.hung_after_ms.to_string(),
                "at least 100 milliseconds past the budget before an engine counts as hung (10000 suits a busy machine)",
            ));
        }
        if !(0..=19).contains(&a.nice) {
            return Err(error(
                "analysis.nice".into(),
                &a.nice.to_string(),
                "a nice value from 0 (the daemon's own priority) to 19 (only CPU nothing else wants, the default)",
            ));
        }
        let engine = Some(a.engine.clone()).filter(|p| !p.as_os_str().is_empty());
        Ok(Some(Analysis {
            engine,
            engines: a.engines,
            threads: a.threads,
            hash_mb: a.hash_mb,
            budget,
            hung_after: Duration::from_millis(a.hung_after_ms),
            nice: a.nice,
        }))
    }
}
