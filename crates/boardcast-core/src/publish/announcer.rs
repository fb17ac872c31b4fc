//! What a board's speaker says, and when (rules.md N3): one board's events
//! in, announcements out. A move is announced once it is completed, not
//! when it is made (a made move can still be taken back or replaced), and
//! a result when the game has one.
//!
//! Sans-I/O: the daemon's speech task (`shell::speech`) feeds it events
//! and runs the configured command for each announcement it polls.

use std::collections::{BTreeMap, VecDeque};

use shakmaty::{Chess, uci::UciMove};

use super::{
    render::Language,
    spoken::{spoken_illegal_in, spoken_in, spoken_result},
};
use crate::{
    event::{Event, EventKind, MoveInfo},
    game::Notation,
    session::Output,
    sink::{Games, Sink},
};

/// One board's announcements.
#[derive(Debug)]
pub struct Announcer {
    language: Language,
    /// The game's start position (`None` before a game started).
    start: Option<Chess>,
    /// The game's moves by ply, made or completed.
    moves: BTreeMap<usize, MoveInfo>,
    /// The plies already announced (a ply is completed once, but the
    /// events of a resumed game may say it again).
    announced: usize,
    out: VecDeque<String>,
}

impl Announcer {
    /// Announcements in `language`'s words.
    pub const fn new(language: Language) -> Self {
        Self { language, start: None, moves: BTreeMap::new(), announced: 0, out: VecDeque::new() }
    }

    /// One event of the board's session.
    pub fn handle_event(&mut self, event: &Event) {
        match &event.kind {
            EventKind::GameStarted { start, .. } => {
                self.start = Some((**start).clone());
                self.moves.clear();
                self.announced = 0;
            }
            EventKind::MoveMade(m) => {
                // A move made again at a ply replaces what stood there and
                // after it.
                self.moves.split_off(&m.ply);
                self.moves.insert(m.ply, m.clone());
            }
            EventKind::MoveAmended { now, .. } => {
                self.moves.insert(now.ply, (**now).clone());
            }
            EventKind::MoveRetracted { previous } => {
                self.moves.split_off(&previous.ply);
            }
            EventKind::MoveCompleted { ply, .. } => {
                if *ply > self.announced
                    && let Some(text) = self.move_words(*ply)
                {
                    self.announced = *ply;
                    self.out.push_back(text);
                }
            }
            EventKind::GameEnded(result) => self.out.push_back(spoken_result(result, self.language).to_owned()),
            EventKind::GameClosed
            | EventKind::Clock(_)
            | EventKind::Status(_)
            | EventKind::Alert(_)
            | EventKind::TagsChanged(_)
            | EventKind::AlertAcknowledged { .. } => {}
        }
    }

    /// The next thing to say.
    pub fn poll_announcement(&mut self) -> Option<String> {
        self.out.pop_front()
    }

    /// The words for the move at `ply`, from the position before it.
    fn move_words(&self, ply: usize) -> Option<String> {
        let m = self.moves.get(&ply)?;
        let before = if ply == 1 { self.start.as_ref()? } else { &*self.moves.get(&(ply - 1))?.after };
        match &m.san {
            Notation::Illegal(illegal) => Some(spoken_illegal_in(illegal, self.language)),
            Notation::San(_) => {
                let mv = m.uci.parse::<UciMove>().ok()?.to_move(before).ok()?;
                Some(spoken_in(before, mv, self.language))
            }
        }
    }
}

/// The announcer is a sink of its board's outputs; its items are the
/// announcements, in order.
impl Sink for Announcer {
    type Item = String;

    fn handle_output(&mut self, output: &Output, _games: Games<'_>) {
        if let Output::Event(event) = output {
            self.handle_event(event);
        }
    }

    fn poll_item(&mut self) -> Option<String> {
        self.poll_announcement()
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, KnownOutcome, Position, san::SanPlus, uci::UciMove};

    use super::*;
    use crate::{
        game::{GameResult, Termination},
        time::Timestamp,
    };

    /// The events of a game as a session publishes them.
    struct Game {
        pos: Chess,
        ply: usize,
        seq: u64,
    }

    impl Game {
        fn event(&mut self, kind: EventKind) -> Event {
            self.seq += 1;
            Event { game: 1, seq: self.seq, t: Timestamp::ZERO, kind }
        }

        fn start(&mut self) -> Event {
            self.event(EventKind::GameStarted { start: Box::new(Chess::default()), chess960: false, rotated: false })
        }

        fn make(&mut self, san: &str) -> (Event, MoveInfo) {
            let san: SanPlus = san.parse().unwrap();
            let m = san.san.to_move(&self.pos).unwrap();
            let mover = self.pos.turn();
            let san = SanPlus::from_move_and_play_unchecked(&mut self.pos, m);
            self.ply += 1;
            let info = MoveInfo {
                ply: self.ply,
                mover,
                san: Notation::San(san),
                uci: UciMove::from_standard(m).to_string(),
                after: Box::new(self.pos.clone()),
                inferred: false,
                order_uncertain: false,
            };
            (self.event(EventKind::MoveMade(info.clone())), info)
        }

        fn complete(&mut self) -> Event {
            self.event(EventKind::MoveCompleted { ply: self.ply, clock_ms: None })
        }
    }

    fn said(announcer: &mut Announcer) -> Vec<String> {
        std::iter::from_fn(|| announcer.poll_announcement()).collect()
    }

    #[test]
    fn completed_moves_and_the_result_are_announced_once_in_order() {
        let mut game = Game { pos: Chess::default(), ply: 0, seq: 0 };
        let mut announcer = Announcer::new(Language::De);
        announcer.handle_event(&game.start());
        let (made, _) = game.make("e4");
        announcer.handle_event(&made);
        assert!(said(&mut announcer).is_empty(), "a made move is not said yet");
        announcer.handle_event(&game.complete());
        assert_eq!(said(&mut announcer), ["Bauer Eva zwei Eva vier"]);
        // Black's move, taken back before it was completed, then another.
        let (made, taken_back) = game.make("e5");
        announcer.handle_event(&made);
        announcer.handle_event(&game.event(EventKind::MoveRetracted { previous: taken_back }));
        game.pos = *announcer.moves[&1].after.clone();
        game.ply = 1;
        let (made, _) = game.make("c5");
        announcer.handle_event(&made);
        let completed = game.complete();
        announcer.handle_event(&completed);
        // The same completion said again (a resumed session) is not
        // announced twice.
        announcer.handle_event(&completed);
        assert_eq!(said(&mut announcer), ["Bauer Cesar sieben Cesar fünf"]);
        let result = GameResult {
            outcome: KnownOutcome::Decisive { winner: Color::White },
            termination: Termination::Resignation,
        };
        announcer.handle_event(&game.event(EventKind::GameEnded(result)));
        assert_eq!(said(&mut announcer), ["Weiß gewinnt"]);
    }

    #[test]
    fn a_move_replaced_before_completion_is_announced_as_played() {
        let mut game = Game { pos: Chess::default(), ply: 0, seq: 0 };
        let mut announcer = Announcer::new(Language::Nl);
        announcer.handle_event(&game.start());
        let (made, previous) = game.make("Nf3");
        announcer.handle_event(&made);
        game.pos = Chess::default();
        game.ply = 0;
        let (_, now) = game.make("Nc3");
        let amended = game.event(EventKind::MoveAmended { previous: Box::new(previous), now: Box::new(now) });
        announcer.handle_event(&amended);
        announcer.handle_event(&game.complete());
        assert_eq!(said(&mut announcer), ["Paard Bella een Cesar drie"]);
    }
}
