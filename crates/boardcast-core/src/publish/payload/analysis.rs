//! `…/<board>/analysis` (public tree only): an engine's analysis of the
//! board's position (docs/mqtt.md, "`analysis`"). Built by
//! [`crate::analysis::publication`].

use serde::Serialize;

use crate::analysis::uci::Score;

/// `…/<board>/analysis`.
#[derive(Clone, Debug, Serialize)]
pub struct AnalysisPayload<'a> {
    /// `1`.
    pub schema: u32,
    /// When it was published: wall-clock milliseconds since 1970.
    pub ts_ms: i64,
    /// The board's configured name.
    pub board: &'a str,
    /// The event's topic level.
    pub event: &'a str,
    /// The round's topic level.
    pub round: &'a str,
    /// Which game of the board's session (as in `state`).
    pub game: u32,
    /// Plies on the record of the analysed position (as `state`'s `ply`).
    pub ply: usize,
    /// The analysed position.
    pub fen: &'a str,
    /// `{"cp": n}` or `{"mate": n}`, from White's side.
    pub score: Score,
    /// The depth of the engine's last complete iteration.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// The principal variation in SAN.
    pub pv: &'a [String],
    /// Its first move in UCI, or `null` when there is none.
    pub best_uci: Option<&'a str>,
    /// The engine (its `id name`).
    pub engine: &'a str,
}
