//! Paired boards (Laws appendix D): a visually impaired player's board that
//! mirrors the game played on the sighted player's board. This module
//! compares the two and raises `boards_diverge` (D.2.9) when they have
//! shown different positions for longer than copying a move takes, and
//! `boards_agree` when they show the same position again.
//!
//! Sans-I/O: each board's game comes in as a [`Line`] with the time it
//! changed, deadlines come out of [`Pair::poll_timeout`], alerts out of
//! [`Pair::poll_alert`].
//!
//! # What is compared
//!
//! The piece placement of each board's *reconstructed* game (the position
//! after its last made move), not the raw sensor picture. A hand holding a
//! piece in the air, a knight set down on its way, a scan half read: none
//! of that is a position, and each board's reconstructor already waits it
//! out. What remains is what D.2.9 is about: two different positions on
//! the two boards. A board showing something no legal move explains is
//! reported by its own out-of-sync status; here it counts at its last
//! explained position.
//!
//! # When it is a divergence
//!
//! By D.2.1 every move is announced, repeated and then executed on the
//! other board (by the opponent, or by an assistant, D.2.10.1): for a few
//! seconds after each move the boards differ, and either may be the one
//! that is behind (the sighted player copies the visually impaired player's
//! moves onto the game board). So the tolerance runs *per move*: a board
//! behind by some plies is accused only when the oldest move it has not
//! copied was made longer ago than the tolerance. A mirror that copies each
//! move within the tolerance is never accused, even when play is so fast
//! that it is a move behind for a long stretch. Boards that differ in a way
//! no copying explains (a move copied wrongly) are given the tolerance from
//! the moment they came to differ so.
//!
//! Only the game board's game in progress is compared: after its result
//! nothing is (D.2.9 speaks of the game), and a mirror still holding the
//! previous game's moves when the next game is set up is left alone until
//! the first move of the new game (the players are still setting up).

use std::{collections::VecDeque, fmt::Write as _, time::Duration};

use shakmaty::{Board, Position, Square};

use crate::{
    alert::{Alert, AlertKind, Evidence, Seen},
    game::GameRecord,
    sensor::Cell,
    session::Output,
    sink::{Games, Sink},
    time::Timestamp,
};

/// The tolerance when the configuration gives none (`diverge_after_ms`):
/// see docs/live-boards.md, "Paired boards".
pub const DEFAULT_DIVERGE_AFTER: Duration = Duration::from_secs(20);

/// How a pair is compared and named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairSettings {
    /// The board the game is played and published on.
    pub game_board: String,
    /// The visually impaired player's board, which mirrors it.
    pub mirror_board: String,
    /// How long the boards may differ before it is an alert.
    pub diverge_after: Duration,
}

/// One board's game as the comparison needs it: the piece placement at the
/// start and after each ply made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Line {
    /// The board's own number for the game (0: no game yet).
    game: u32,
    /// The placement at the start, then after each ply (empty: no game).
    placements: Vec<Board>,
    /// The game has no result yet.
    in_progress: bool,
}

impl Line {
    /// The line of `game` (the board's current or last game), or of no game.
    pub fn of(game: Option<&GameRecord>) -> Self {
        let Some(game) = game else { return Self::default() };
        let mut placements = Vec::with_capacity(game.plies.len() + 1);
        placements.push(game.start.board().clone());
        placements.extend(game.plies.iter().map(|p| p.after.board().clone()));
        Self { game: game.number, placements, in_progress: game.result.is_none() }
    }

    /// Whether `game` would give this line, checked cheaply (a board's
    /// line is asked for after every input, a clock reading included).
    pub fn is_of(&self, game: Option<&GameRecord>) -> bool {
        match game {
            None => self.placements.is_empty(),
            Some(game) => {
                self.game == game.number
                    && self.in_progress == game.result.is_none()
                    && self.placements.len() == game.plies.len() + 1
                    && self.placements.last() == Some(game.position().board())
            }
        }
    }

    /// Plies made.
    fn plies(&self) -> usize {
        self.placements.len().saturating_sub(1)
    }

    fn current(&self) -> Option<&Board> {
        self.placements.last()
    }
}

/// Follows a board's game and says when its [`Line`] changed (the mirror
/// board's side of the pair: its line goes to the game board's session).
/// As a [`Sink`], it looks once per batch of outputs.
#[derive(Debug, Default)]
pub struct LineWatch {
    last: Option<Line>,
    changed: Option<Line>,
}

impl LineWatch {
    /// The board's line if it changed since the last call (or on the first).
    pub fn poll(&mut self, game: Option<&GameRecord>) -> Option<Line> {
        if self.last.as_ref().is_some_and(|l| l.is_of(game)) {
            return None;
        }
        let line = Line::of(game);
        self.last = Some(line.clone());
        Some(line)
    }
}

impl Sink for LineWatch {
    type Item = Line;

    fn handle_output(&mut self, _output: &Output, _games: Games<'_>) {}

    fn flush(&mut self, games: Games<'_>) {
        if let Some(line) = self.poll(games.current()) {
            self.changed = Some(line);
        }
    }

    fn poll_item(&mut self) -> Option<Line> {
        self.changed.take()
    }
}

/// How the two boards relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Relation {
    /// The same placement.
    Agree,
    /// The mirror shows the game's position after ply `at`, `plies` behind.
    MirrorBehind { at: usize, plies: usize },
    /// The game board shows the mirror's position after ply `at`, `plies`
    /// behind the mirror.
    GameBehind { at: usize, plies: usize },
    /// Neither shows a position the other had.
    Disagree,
}

impl Relation {
    fn same_kind(self, other: Self) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// A divergence being timed, or already alerted.
#[derive(Clone, Copy, Debug)]
struct Episode {
    /// When the boards came to differ.
    since: Timestamp,
    /// The relation now, and since when it has been of this kind.
    relation: Relation,
    kind_since: Timestamp,
    /// The alert went out.
    alerted: bool,
}

/// The comparison of a game board and its mirror.
#[derive(Debug)]
pub struct Pair {
    settings: PairSettings,
    game: Line,
    /// When each of the game line's placements first appeared.
    game_seen: Vec<Timestamp>,
    mirror: Option<Line>,
    mirror_seen: Vec<Timestamp>,
    /// The mirror's game still holding the previous game (its number), left
    /// alone until the game board's game has a move.
    stale_mirror: Option<u32>,
    episode: Option<Episode>,
    now: Timestamp,
    alerts: VecDeque<Alert>,
}

impl Pair {
    /// A pair that has seen neither board yet.
    pub fn new(settings: PairSettings) -> Self {
        Self {
            settings,
            game: Line::default(),
            game_seen: Vec::new(),
            mirror: None,
            mirror_seen: Vec::new(),
            stale_mirror: None,
            episode: None,
            now: Timestamp::ZERO,
            alerts: VecDeque::new(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &PairSettings {
        &self.settings
    }

    /// The game board's game, after any input to its session (cheap when
    /// nothing changed).
    pub fn handle_game(&mut self, now: Timestamp, game: Option<&GameRecord>) {
        self.now = self.now.max(now);
        if self.game.is_of(game) {
            return;
        }
        let line = Line::of(game);
        if line.game != self.game.game {
            // A new game: a mirror still holding moves of another game is
            // being set up, not behind.
            self.stale_mirror = self.mirror.as_ref().filter(|m| m.plies() > 0).map(|m| m.game);
        }
        self.game_seen = seen_times(&self.game, &self.game_seen, &line, self.now);
        self.game = line;
        self.update();
    }

    /// The mirror board's game, whenever it changed.
    pub fn handle_mirror(&mut self, now: Timestamp, line: Line) {
        self.now = self.now.max(now);
        let before = self.mirror.take().unwrap_or_default();
        if self.stale_mirror.is_some_and(|g| g != line.game) {
            self.stale_mirror = None;
        }
        self.mirror_seen = seen_times(&before, &self.mirror_seen, &line, self.now);
        self.mirror = Some(line);
        self.update();
    }

    /// Acts on the deadline that has come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.now = self.now.max(now);
        if self.deadline().is_some_and(|d| d <= self.now) {
            self.raise();
        }
    }

    /// When to call [`Pair::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.deadline()
    }

    /// The next alert, if any.
    pub fn poll_alert(&mut self) -> Option<Alert> {
        self.alerts.pop_front()
    }

    /// The game board's plies made.
    fn game_plies(&self) -> usize {
        self.game.plies()
    }

    /// Whether the two are compared now (see the module's doc).
    fn comparing(&self) -> bool {
        let Some(mirror) = &self.mirror else { return false };
        self.game.in_progress
            && !mirror.placements.is_empty()
            && !(self.stale_mirror == Some(mirror.game) && self.game_plies() == 0)
    }

    fn relation(&self) -> Relation {
        let (Some(mirror), Some(game_now)) = (&self.mirror, self.game.current()) else {
            return Relation::Agree;
        };
        let Some(mirror_now) = mirror.current() else { return Relation::Agree };
        if game_now == mirror_now {
            return Relation::Agree;
        }
        let n = self.game.plies();
        if let Some(at) = self.game.placements[..n].iter().rposition(|b| b == mirror_now) {
            return Relation::MirrorBehind { at, plies: n - at };
        }
        let m = mirror.plies();
        if let Some(at) = mirror.placements[..m].iter().rposition(|b| b == game_now) {
            return Relation::GameBehind { at, plies: m - at };
        }
        Relation::Disagree
    }

    /// Brings the episode in step with the boards after either changed.
    fn update(&mut self) {
        let relation = if self.comparing() { Some(self.relation()) } else { None };
        match (relation, self.episode) {
            (None, _) => self.episode = None,
            (Some(Relation::Agree), Some(episode)) => {
                if episode.alerted {
                    self.agree_again(episode.since);
                }
                self.episode = None;
            }
            (Some(Relation::Agree), None) => {}
            (Some(relation), None) => {
                self.episode = Some(Episode { since: self.now, relation, kind_since: self.now, alerted: false });
            }
            (Some(relation), Some(episode)) => {
                let kind_since = if relation.same_kind(episode.relation) { episode.kind_since } else { self.now };
                self.episode = Some(Episode { relation, kind_since, ..episode });
            }
        }
    }

    /// When the current divergence began to count: for a board behind, when
    /// the oldest move it has not copied was made; otherwise when the boards
    /// came to differ as they do.
    fn counted_from(&self, episode: &Episode) -> Timestamp {
        let first_uncopied = |seen: &[Timestamp], at: usize| seen.get(at + 1).copied().unwrap_or(episode.since);
        let from = match episode.relation {
            Relation::MirrorBehind { at, .. } => first_uncopied(&self.game_seen, at),
            Relation::GameBehind { at, .. } => first_uncopied(&self.mirror_seen, at),
            Relation::Disagree | Relation::Agree => episode.kind_since,
        };
        from.max(episode.since)
    }

    fn deadline(&self) -> Option<Timestamp> {
        let episode = self.episode.as_ref().filter(|e| !e.alerted)?;
        Some(self.counted_from(episode) + self.settings.diverge_after)
    }

    /// Raises `boards_diverge` for the episode in progress.
    fn raise(&mut self) {
        let Some(mut episode) = self.episode else { return };
        // Marked first: a deadline that came must go, whatever follows.
        episode.alerted = true;
        self.episode = Some(episode);
        let (Some(mirror), Some(game_now)) = (&self.mirror, self.game.current()) else { return };
        let Some(mirror_now) = mirror.current() else { return };
        let began = self.counted_from(&episode);
        let (game_name, mirror_name) = (&self.settings.game_board, &self.settings.mirror_board);
        let (ply, mut message) = match episode.relation {
            Relation::MirrorBehind { at, plies } => (
                at,
                format!(
                    "the mirror board {mirror_name} is {} behind the game board {game_name} (it shows the position after ply {at}, the game is at ply {})",
                    plies_text(plies),
                    self.game.plies()
                ),
            ),
            Relation::GameBehind { at, plies } => (
                at,
                format!(
                    "the game board {game_name} is {} behind the mirror board {mirror_name} (it shows the mirror's position after ply {at}, the mirror is at ply {})",
                    plies_text(plies),
                    mirror.plies()
                ),
            ),
            Relation::Disagree | Relation::Agree => {
                let common = self.game.placements.iter().zip(&mirror.placements).take_while(|(a, b)| a == b).count();
                let ply = common.saturating_sub(1);
                (
                    ply,
                    format!(
                        "the game board {game_name} and the mirror board {mirror_name} show different positions (their moves agree up to ply {ply}; the game is at ply {}, the mirror at ply {})",
                        self.game.plies(),
                        mirror.plies()
                    ),
                )
            }
        };
        let squares: Vec<Square> = (game_now.occupied() | mirror_now.occupied())
            .into_iter()
            .filter(|&sq| game_now.piece_at(sq) != mirror_now.piece_at(sq))
            .collect();
        let _ = write!(message, ", for {} s; where they differ:", self.now.saturating_since(began).as_secs());
        for sq in &squares {
            let _ = write!(
                message,
                " {sq}: game board {}, mirror {};",
                cell_text(game_now.piece_at(*sq)),
                cell_text(mirror_now.piece_at(*sq))
            );
        }
        message.push_str(" to be put right with the arbiter from both scoresheets (D.2.9)");
        let evidence = squares
            .iter()
            .map(|&square| Evidence {
                t: self.now,
                seen: Seen::Boards {
                    square,
                    game: Cell::from(game_now.piece_at(square)),
                    mirror: Cell::from(mirror_now.piece_at(square)),
                },
            })
            .collect();
        self.alerts.push_back(Alert {
            kind: AlertKind::BoardsDiverge,
            ply,
            side: None,
            t: began,
            message,
            squares,
            evidence,
        });
    }

    /// The boards agree again after `boards_diverge`.
    fn agree_again(&mut self, since: Timestamp) {
        let message = format!(
            "the mirror board {} shows the game's position again (after ply {}), {} s after the boards came to differ",
            self.settings.mirror_board,
            self.game.plies(),
            self.now.saturating_since(since).as_secs()
        );
        self.alerts.push_back(Alert {
            kind: AlertKind::BoardsAgree,
            ply: self.game.plies(),
            side: None,
            t: self.now,
            message,
            squares: Vec::new(),
            evidence: Vec::new(),
        });
    }
}

/// When each placement of `new` first appeared: the times of the
/// placements it shares with `old` from the start are kept, the rest are
/// new at `now`.
fn seen_times(old: &Line, old_seen: &[Timestamp], new: &Line, now: Timestamp) -> Vec<Timestamp> {
    let kept = if old.game == new.game {
        old.placements.iter().zip(&new.placements).take_while(|(a, b)| a == b).count().min(old_seen.len())
    } else {
        0
    };
    let mut seen = old_seen[..kept].to_vec();
    seen.resize(new.placements.len(), now);
    seen
}

fn plies_text(plies: usize) -> String {
    if plies == 1 { "1 ply".to_owned() } else { format!("{plies} plies") }
}

/// `white knight`, or `empty`: the reconstructor's wording.
fn cell_text(piece: Option<shakmaty::Piece>) -> String {
    crate::reconstruct::describe::describe_cell(piece.map_or(crate::sensor::Cell::Empty, crate::sensor::Cell::Piece))
}
