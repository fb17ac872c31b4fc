//! Sinks: everything that consumes a board's outputs. The MQTT feed, the
//! PGN writer's change tracker, the speech announcer, the log, the mirror
//! line and the outputs this wave adds are each a [`Sink`]: the shell's
//! driver (and the replay loops) hand every [`Output`] of a board's session
//! to each sink in turn, then tell each that the batch is complete
//! ([`Sink::flush`]), and pass on what the sink has to hand on
//! ([`Sink::poll_item`]) to wherever that sink's items go (the publisher,
//! the PGN writer, the speaker…).
//!
//! A sink sees the games through [`Games`], a read-only view, never the
//! session or the reconstructor: what a sink can do to a board is nothing.
//! Like the rest of the core, a sink takes what happened and says what to
//! do; it never performs I/O itself, so the same sinks run live, in a
//! replay at any speed and in tests.

use std::collections::{BTreeSet, VecDeque};

use crate::{event::EventKind, game::GameRecord, reconstruct::Reconstructor, session::Output};

/// Something that consumes one board's outputs (see the module's docs).
pub trait Sink {
    /// What the sink hands on.
    type Item;

    /// One output of the board's session, in the order the session gave
    /// them; `games` as they stand once the whole batch is out (the game an
    /// event refers to is found by its number).
    fn handle_output(&mut self, output: &Output, games: Games<'_>);

    /// The outputs of one input (or one deadline) have all been handed in:
    /// a sink that describes the board as a whole (a retained state, the
    /// games that changed) says so now, once per batch rather than per
    /// output.
    fn flush(&mut self, _games: Games<'_>) {}

    /// The next item to hand on, if any.
    fn poll_item(&mut self) -> Option<Self::Item>;
}

/// A sink with what it hands on left out, as a list of different sinks
/// holds them ([`crate::session::BoardSession::pump`]). Every [`Sink`] is
/// one; its items wait in it until polled. A shell adapter that polls
/// them on to a channel is one too.
pub trait AnySink {
    /// [`Sink::handle_output`].
    fn handle(&mut self, output: &Output, games: Games<'_>);

    /// [`Sink::flush`].
    fn end_batch(&mut self, games: Games<'_>);
}

impl<S: Sink> AnySink for S {
    fn handle(&mut self, output: &Output, games: Games<'_>) {
        self.handle_output(output, games);
    }

    fn end_batch(&mut self, games: Games<'_>) {
        self.flush(games);
    }
}

/// A read-only view of a board's games, for sinks.
#[derive(Clone, Copy, Debug)]
pub struct Games<'a> {
    reconstructor: &'a Reconstructor,
}

impl<'a> Games<'a> {
    pub(crate) const fn of(reconstructor: &'a Reconstructor) -> Self {
        Self { reconstructor }
    }

    /// The game on the board now (the last one), if any has begun.
    pub(crate) fn current(self) -> Option<&'a GameRecord> {
        self.reconstructor.game()
    }

    /// The game numbered `number` (numbers start at 1 on each board).
    pub(crate) fn by_number(self, number: u32) -> Option<&'a GameRecord> {
        self.reconstructor.game_by_number(number)
    }

    /// Every game of the board, in order.
    pub fn all(self) -> impl Iterator<Item = &'a GameRecord> {
        self.reconstructor.games()
    }

    /// What the board shows (corrected for a turned board): the pieces an
    /// e-board reports to DGT LiveChess's clients.
    pub fn picture(self) -> &'a crate::sensor::Picture {
        self.reconstructor.picture()
    }

    /// Whether the board is read turned 180°.
    pub fn rotated(self) -> bool {
        self.reconstructor.rotated()
    }
}

/// Hands on every output as it is (the board's log reads them all).
#[derive(Debug, Default)]
pub struct EveryOutput {
    out: VecDeque<Output>,
}

impl Sink for EveryOutput {
    type Item = Output;

    fn handle_output(&mut self, output: &Output, _games: Games<'_>) {
        self.out.push_back(output.clone());
    }

    fn poll_item(&mut self) -> Option<Output> {
        self.out.pop_front()
    }
}

/// The games whose PGN changed, once per batch: only those, so that a
/// board with many games (a flood of `set_position`) costs the same per
/// change as a board with one.
#[derive(Debug, Default)]
pub struct ChangedGames {
    changed: BTreeSet<u32>,
    out: VecDeque<Vec<GameRecord>>,
}

impl ChangedGames {
    /// Whether an event changes what a game's PGN says.
    fn changes_pgn(kind: &EventKind) -> bool {
        !matches!(
            kind,
            EventKind::Clock(_) | EventKind::Status(_) | EventKind::Alert(_) | EventKind::AlertAcknowledged { .. }
        )
    }
}

impl Sink for ChangedGames {
    type Item = Vec<GameRecord>;

    fn handle_output(&mut self, output: &Output, _games: Games<'_>) {
        if let Output::Event(event) = output
            && Self::changes_pgn(&event.kind)
        {
            self.changed.insert(event.game);
        }
    }

    fn flush(&mut self, games: Games<'_>) {
        if self.changed.is_empty() {
            return;
        }
        let changed = std::mem::take(&mut self.changed);
        self.out.push_back(changed.into_iter().filter_map(|n| games.by_number(n)).cloned().collect());
    }

    fn poll_item(&mut self) -> Option<Vec<GameRecord>> {
        self.out.pop_front()
    }
}
