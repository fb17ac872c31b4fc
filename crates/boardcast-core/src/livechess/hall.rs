//! The hall as LiveChess's REST API shows it: the tournaments (one per
//! event), their rounds and games, and the e-boards, from the boards'
//! latest [`Snapshot`]s. A game stays in its round after its board has
//! moved on to the next (until the daemon stops).
//!
//! [`Hall::rest`] answers a path below `/api/v1.0/` with the JSON body, so
//! the shell only moves requests and bodies.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::{
    board::{GameView, Snapshot},
    ids,
    records::{EBoard, Game, Pairing, Round, State, Tournament, TournamentSummary},
};
use crate::pairings::board_number;

/// A game as the hall keeps it.
#[derive(Clone, Debug)]
struct Kept {
    view: GameView,
    /// The board's label (its number in the round).
    label: String,
    /// The board's name.
    board: String,
    /// It is the game on its board now.
    current: bool,
}

/// A `sources` record: a port boards are read on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[allow(missing_docs)] // LiveChess's own names (docs/livechess.md)
pub(crate) struct Source {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) device: String,
    pub(crate) name: String,
    pub(crate) present: bool,
    pub(crate) active: bool,
    pub(crate) status: String,
}

/// The answer to a REST request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rest {
    /// 200 with this JSON body.
    Json(String),
    /// 404, with why.
    NotFound(String),
}

/// Every board and game, for the REST API and the WebSocket.
#[derive(Debug, Default)]
pub struct Hall {
    /// By board name, in the order boards first reported.
    boards: Vec<Snapshot>,
    /// By (event, round, board label).
    games: BTreeMap<(String, String, String), Kept>,
    /// The tournaments' `location` (`[broadcast] site`).
    location: Option<String>,
}

impl Hall {
    /// An empty hall in `location` (`None`: unknown).
    pub fn new(location: Option<String>) -> Self {
        Self { location, ..Self::default() }
    }

    /// A board's state changed.
    pub fn update(&mut self, snapshot: Snapshot) {
        let name = snapshot.identity.name.clone();
        if snapshot.removed {
            // Its games stay (they were played); the e-board goes.
            self.boards.retain(|b| b.identity.name != name);
            for kept in self.games.values_mut().filter(|kept| kept.board == name) {
                kept.current = false;
            }
            return;
        }
        if let Some(game) = &snapshot.game {
            let key = (game.event.clone(), game.round.clone(), snapshot.identity.label.clone());
            for (k, kept) in &mut self.games {
                if kept.board == name && *k != key {
                    kept.current = false;
                }
            }
            self.games.insert(
                key,
                Kept { view: game.clone(), label: snapshot.identity.label.clone(), board: name.clone(), current: true },
            );
        }
        match self.boards.iter_mut().find(|b| b.identity.name == name) {
            Some(kept) => *kept = snapshot,
            None => self.boards.push(snapshot),
        }
    }

    /// The board with this LiveChess serial number.
    pub fn board(&self, serialnr: &str) -> Option<&Snapshot> {
        self.boards.iter().find(|b| b.identity.serialnr == serialnr)
    }

    /// Every e-board.
    pub(crate) fn eboards(&self) -> Vec<EBoard> {
        self.boards
            .iter()
            .map(|b| EBoard {
                serialnr: b.identity.serialnr.clone(),
                source: b.identity.source.clone(),
                state: Some(if b.active { State::Active } else { State::Inactive }),
                battery: b.battery.clone(),
                comment: None,
                board: Some(b.board.clone()),
                flipped: b.flipped,
                clock: b.clock,
            })
            .collect()
    }

    /// The ports boards are read on.
    pub(crate) fn sources(&self) -> Vec<Source> {
        self.boards
            .iter()
            .map(|b| Source {
                kind: "SERIAL".into(),
                device: b.identity.source.clone().unwrap_or_else(|| b.identity.name.clone()),
                name: b.identity.name.clone(),
                present: b.active,
                active: b.active,
                status: if b.active { "ACTIVE" } else { "INACTIVE" }.into(),
            })
            .collect()
    }

    /// The events, each a tournament, by name.
    fn events(&self) -> Vec<String> {
        let mut events: Vec<String> = self.boards.iter().map(|b| b.identity.event.clone()).collect();
        events.extend(self.games.keys().map(|(event, _, _)| event.clone()));
        events.sort();
        events.dedup();
        events
    }

    fn event_of(&self, uuid: &str) -> Option<String> {
        self.events().into_iter().find(|e| ids::tournament(e) == uuid)
    }

    /// An event's rounds: the highest round number its games and boards
    /// have (round tags that are not numbers are not shown).
    fn rounds(&self, event: &str) -> u32 {
        let from_boards = self.boards.iter().filter(|b| b.identity.event == event).map(|b| &b.identity.round);
        let from_games = self.games.keys().filter(|(e, _, _)| e == event).map(|(_, round, _)| round);
        from_boards.chain(from_games).filter_map(|r| round_number(r)).max().unwrap_or(1)
    }

    /// Each board's number: its label's (`board-3` is 3), else after the
    /// highest, in the order boards reported.
    fn numbers(&self) -> BTreeMap<String, u32> {
        let mut numbers: BTreeMap<String, u32> = BTreeMap::new();
        let mut labels: Vec<&str> = self.boards.iter().map(|b| b.identity.label.as_str()).collect();
        labels.extend(self.games.values().map(|k| k.label.as_str()));
        let mut next = labels.iter().filter_map(|l| board_number(l)).max().unwrap_or(0);
        for label in labels {
            if numbers.contains_key(label) {
                continue;
            }
            let n = board_number(label).unwrap_or_else(|| {
                next += 1;
                next
            });
            numbers.insert(label.to_owned(), n);
        }
        numbers
    }

    /// Every tournament.
    pub(crate) fn tournaments(&self) -> Vec<TournamentSummary> {
        self.events()
            .into_iter()
            .map(|event| TournamentSummary {
                uuid: ids::tournament(&event),
                rounds: self.rounds(&event),
                description: event,
            })
            .collect()
    }

    /// The tournament `uuid`.
    pub fn tournament(&self, uuid: &str) -> Option<Tournament> {
        let event = self.event_of(uuid)?;
        let numbers = self.numbers();
        let last = numbers.values().copied().max().unwrap_or(0);
        let eboards = (1..=last)
            .map(|n| {
                let label = numbers.iter().find(|(_, m)| **m == n).map(|(l, _)| l.as_str());
                label
                    .and_then(|l| self.boards.iter().find(|b| b.identity.label == l))
                    .map_or_else(String::new, |b| b.identity.serialnr.clone())
            })
            .collect();
        Some(Tournament {
            uuid: uuid.to_owned(),
            name: event.clone(),
            description: event.clone(),
            location: self.location.clone(),
            country: None,
            rounds: self.rounds(&event),
            eboards,
        })
    }

    /// Round `index` of the tournament `uuid`. Clients count rounds from
    /// 0 (`0` is round 1, as the PyPI `livechess` helper asks) or from 1:
    /// an index below the number of rounds is counted from 0, the number
    /// of rounds itself is the last round.
    pub(crate) fn round(&self, uuid: &str, index: u32) -> Option<Round> {
        let event = self.event_of(uuid)?;
        let rounds = self.rounds(&event);
        let nr = if index < rounds {
            index + 1
        } else if index == rounds {
            rounds
        } else {
            return None;
        };
        let numbers = self.numbers();
        let mut pairings: Vec<Pairing> = self
            .games
            .iter()
            .filter(|((e, r, _), _)| *e == event && round_number(r) == Some(nr))
            .map(|((e, r, label), kept)| Pairing {
                nr: numbers.get(label).copied().unwrap_or(0),
                uuid: ids::game(e, r, label),
                white: kept.view.white.clone(),
                black: kept.view.black.clone(),
                live: kept.current && kept.view.result.is_none(),
                result: kept.view.result,
            })
            .collect();
        pairings.sort_by_key(|p| p.nr);
        Some(Round { nr, date: None, pairings })
    }

    /// The game `uuid`.
    pub fn game(&self, uuid: &str) -> Option<Game> {
        let ((_, _, _), kept) = self.games.iter().find(|((e, r, l), _)| ids::game(e, r, l) == uuid)?;
        let board = self.boards.iter().find(|b| b.identity.name == kept.board);
        // The game on the board now has the board's clock; an earlier one
        // its last reading, stopped.
        let clock = match board {
            Some(board) if kept.current && kept.view.result.is_none() => board.clock,
            _ => kept.view.clock.map(|c| super::records::Clock { run: None, ..c }),
        };
        Some(Game {
            chess960: kept.view.chess960,
            result: kept.view.result,
            comment: None,
            clock,
            moves: kept.view.moves.clone(),
        })
    }

    /// The answer to `GET /api/v1.0/<path>`.
    pub fn rest(&self, path: &str) -> Rest {
        let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
        let found = match parts.as_slice() {
            ["tournaments"] => Some(json(&self.tournaments())),
            ["eboards"] => Some(json(&self.eboards())),
            ["sources"] => Some(json(&self.sources())),
            ["tournament", uuid] => self.tournament(uuid).map(|t| json(&t)),
            ["round", uuid, n] => n.parse().ok().and_then(|n| self.round(uuid, n)).map(|r| json(&r)),
            ["game", uuid] => self.game(uuid).map(|g| json(&g)),
            _ => {
                return Rest::NotFound(
                    "no such path: tournaments, tournament/<uuid>, round/<uuid>/<n>, game/<uuid>, eboards (docs/livechess.md)"
                        .into(),
                );
            }
        };
        found
            .map_or_else(|| Rest::NotFound(format!("nothing at {path}: no such tournament, round or game")), Rest::Json)
    }
}

/// A round tag's number (`"3"` is 3, and LiveChess's `"3.5"`, round 3
/// board 5, too); `None` for one that is not a number.
pub(crate) fn round_number(round: &str) -> Option<u32> {
    let round = round.trim();
    round.split_once('.').map_or(round, |(whole, _)| whole).parse().ok().filter(|n| *n > 0)
}

fn json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| Value::Null.to_string())
}

#[cfg(test)]
mod tests {
    use super::round_number;

    #[test]
    fn round_tags_are_numbered_as_livechess_numbers_rounds() {
        assert_eq!(round_number("3"), Some(3));
        assert_eq!(round_number(" 4.12 "), Some(4));
        assert_eq!(round_number("0"), None);
        assert_eq!(round_number("final"), None);
    }
}
