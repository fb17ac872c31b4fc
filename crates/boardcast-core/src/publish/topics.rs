//! The topic tree, version 1 (docs/mqtt.md is the contract):
//!
//! ```text
//! <root>/v1/live/<event>/<round>/<board>/{state,moves,pgn,clock,alerts}
//! <root>/v1/live/<event>/<round>/summary/<bridge-id>
//! <root>/v1/public/…            the same without alerts, delayed
//! <root>/v1/public/<event>/<round>/<board>/analysis   an engine's (public only)
//! <root>/v1/bridges/<bridge-id>/status
//! <root>/v1/bridges/<bridge-id>/boards/<serial>/status
//! ```
//!
//! Names from the configuration become single topic levels: characters
//! MQTT gives a meaning to (`/`, `+`, `#`, a leading `$`) and white space
//! are replaced, so that a board called "Board 1/A" cannot open a level of
//! its own or turn a subscription into a wildcard.

/// Which tree a publication belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Tree {
    /// Everything as it happens, alerts included (arbiters, operators).
    Live,
    /// The same without alerts, delayed (the audience).
    Public,
}

impl Tree {
    /// `"live"` or `"public"`.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::Public => "public",
        }
    }
}

/// What a board's topics are about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BoardTopic {
    /// The whole current picture (retained).
    State,
    /// One message per move event.
    Moves,
    /// The whole game as PGN (retained).
    Pgn,
    /// The clock (retained).
    Clock,
    /// Arbiter alerts (live only).
    Alerts,
}

impl BoardTopic {
    /// The last topic level.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::State => "state",
            Self::Moves => "moves",
            Self::Pgn => "pgn",
            Self::Clock => "clock",
            Self::Alerts => "alerts",
        }
    }
}

/// Where a board's game is published: its event, round and board levels.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BoardPath {
    /// The event level.
    pub event: String,
    /// The round level.
    pub round: String,
    /// The board level.
    pub board: String,
}

impl BoardPath {
    /// A path from configured names, each made a safe topic level.
    pub fn new(event: &str, round: &str, board: &str) -> Self {
        Self { event: level(event), round: level(round), board: level(board) }
    }

    /// The round this board is in.
    pub(crate) fn round_path(&self) -> RoundPath {
        RoundPath { event: self.event.clone(), round: self.round.clone() }
    }
}

/// An event's round.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RoundPath {
    /// The event level.
    pub(crate) event: String,
    /// The round level.
    pub round: String,
}

/// The root and the bridge's identity: everything needed to name topics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topics {
    root: String,
    bridge: String,
}

impl Topics {
    /// Topics under `root` (which may have several levels, such as
    /// `chess/boardcast`) for the bridge called `bridge_id`.
    pub fn new(root: &str, bridge_id: &str) -> Self {
        let root = root.split('/').filter(|l| !l.is_empty()).map(level).collect::<Vec<_>>().join("/");
        Self { root: if root.is_empty() { "boardcast".into() } else { root }, bridge: level(bridge_id) }
    }

    /// `<root>/v1/<tree>/<event>/<round>/<board>/<topic>`.
    pub(crate) fn board(&self, tree: Tree, path: &BoardPath, topic: BoardTopic) -> String {
        format!("{}/v1/{}/{}/{}/{}/{}", self.root, tree.name(), path.event, path.round, path.board, topic.name())
    }

    /// `<root>/v1/public/<event>/<round>/<board>/analysis`: an engine's
    /// analysis, in the public tree only (it has no live counterpart, and
    /// [`Self::to_public`] never makes one).
    pub fn analysis(&self, path: &BoardPath) -> String {
        format!("{}/v1/public/{}/{}/{}/analysis", self.root, path.event, path.round, path.board)
    }

    /// `<root>/v1/<tree>/<event>/<round>/summary/<bridge-id>`: the boards of
    /// the round that this bridge reads. A hall with several bridges has a
    /// round's boards spread over them; one retained topic per bridge keeps
    /// each bridge's part (a single topic would hold only the last bridge's
    /// boards), and an overview subscribes to `…/summary/+` and joins them.
    pub(crate) fn summary(&self, tree: Tree, round: &RoundPath) -> String {
        format!("{}/v1/{}/{}/{}/summary/{}", self.root, tree.name(), round.event, round.round, self.bridge)
    }

    /// `<root>/v1/bridges/<bridge-id>/status`.
    pub fn bridge_status(&self) -> String {
        format!("{}/v1/bridges/{}/status", self.root, self.bridge)
    }

    /// `<root>/v1/bridges/<bridge-id>/boards/<serial>/status`.
    pub fn board_status(&self, serial: &str) -> String {
        format!("{}/v1/bridges/{}/boards/{}/status", self.root, self.bridge, level(serial))
    }

    /// The same topic in the public tree, if it has one there (alerts and
    /// bridge topics do not).
    pub(crate) fn to_public(&self, live: &str) -> Option<String> {
        let prefix = format!("{}/v1/live/", self.root);
        let rest = live.strip_prefix(&prefix)?;
        if rest.ends_with("/alerts") {
            return None;
        }
        Some(format!("{}/v1/public/{rest}", self.root))
    }

    /// The root.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The bridge's topic level.
    pub fn bridge(&self) -> &str {
        &self.bridge
    }
}

/// A configured name as one safe topic level.
pub fn level(name: &str) -> String {
    let mut out: String = name
        .trim()
        .chars()
        .map(|c| if c == '/' || c == '+' || c == '#' || c.is_whitespace() || c.is_control() { '-' } else { c })
        .collect();
    if out.starts_with('$') {
        out.replace_range(0..1, "_");
    }
    if out.is_empty() { "_".into() } else { out }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_single_safe_levels() {
        assert_eq!(level("Board 1/A"), "Board-1-A");
        assert_eq!(level("round+#"), "round--");
        assert_eq!(level("$SYS"), "_SYS");
        assert_eq!(level("  "), "_");
        assert_eq!(level("Tata Steel 2026"), "Tata-Steel-2026");
    }

    #[test]
    fn the_tree_is_as_documented() {
        let topics = Topics::new("boardcast", "hall-pc-1");
        let path = BoardPath::new("Open A", "3", "12");
        assert_eq!(topics.board(Tree::Live, &path, BoardTopic::State), "boardcast/v1/live/Open-A/3/12/state");
        assert_eq!(topics.board(Tree::Public, &path, BoardTopic::Moves), "boardcast/v1/public/Open-A/3/12/moves");
        assert_eq!(topics.summary(Tree::Live, &path.round_path()), "boardcast/v1/live/Open-A/3/summary/hall-pc-1");
        assert_eq!(topics.bridge_status(), "boardcast/v1/bridges/hall-pc-1/status");
        assert_eq!(topics.board_status("03921"), "boardcast/v1/bridges/hall-pc-1/boards/03921/status");
        let live = topics.board(Tree::Live, &path, BoardTopic::Pgn);
        assert_eq!(topics.to_public(&live).as_deref(), Some("boardcast/v1/public/Open-A/3/12/pgn"));
        assert_eq!(topics.to_public(&topics.board(Tree::Live, &path, BoardTopic::Alerts)), None);
        assert_eq!(topics.to_public(&topics.bridge_status()), None);
        assert_eq!(Topics::new("/chess//feed/", "x").root(), "chess/feed");
    }
}
