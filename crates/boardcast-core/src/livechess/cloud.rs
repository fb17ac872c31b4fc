//! LiveChess Cloud's JSON, from the delivered rounds: what boardcast
//! serves under `/lcc/<tournament id>/` for viewers and scrapers that read
//! LiveChess Cloud (`tournament.json`, `round-<n>/index.json`,
//! `round-<n>/game-<m>.json`). It is built from the public tree only, the
//! rounds as the delivery releases them after the public delay, with
//! completed moves only (docs/delivery.md): nothing here is earlier than
//! the delay.

// The fields are LiveChess's keys, each described in docs/livechess.md.
#![allow(missing_docs)]

use std::collections::BTreeMap;

use serde::Serialize;
use shakmaty::Color;

use super::{
    hall::round_number,
    ids,
    records::{Player, ResultValue, chess960_number},
};
use crate::game::GameRecord;

/// A player as LiveChess Cloud writes one (`fideid` a number).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct CloudPlayer {
    pub(crate) fname: Option<String>,
    pub(crate) mname: Option<String>,
    pub(crate) lname: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) federation: Option<String>,
    pub(crate) gender: Option<String>,
    pub(crate) fideid: Option<u64>,
}

impl From<Player> for CloudPlayer {
    fn from(p: Player) -> Self {
        Self {
            fideid: p.fideid.as_deref().and_then(|id| id.parse().ok()),
            fname: p.fname,
            mname: p.mname,
            lname: p.lname,
            title: p.title,
            federation: p.federation,
            gender: p.gender,
        }
    }
}

/// One board's game of a delivered round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloudGame {
    /// The board's label.
    pub(crate) label: String,
    pub(crate) white: CloudPlayer,
    pub(crate) black: CloudPlayer,
    pub(crate) result: Option<ResultValue>,
    pub(crate) chess960: u32,
    /// `"e4 5436+23"`: SAN, seconds left, `+` seconds used (either time
    /// left out when unknown).
    pub(crate) moves: Vec<String>,
    /// The `TimeControl` tag.
    pub(crate) time_control: Option<String>,
}

impl CloudGame {
    /// The delivered form of `game` on the board labelled `label`:
    /// completed moves only.
    pub fn new(label: &str, game: &GameRecord) -> Self {
        let completed = &game.plies[..game.completed_plies()];
        let moves = completed
            .iter()
            .enumerate()
            .map(|(i, ply)| {
                let left = ply.clock_ms.filter(|_| !ply.inferred).map(|ms| (ms / 1000).to_string());
                let used = match (i.checked_sub(1).and_then(|j| completed[j].pressed_at), ply.pressed_at) {
                    (Some(before), Some(now)) if now >= before => {
                        Some(format!("+{}", (now.as_micros() - before.as_micros()) / 1_000_000))
                    }
                    _ => None,
                };
                match (left, used) {
                    (Some(left), Some(used)) => format!("{} {left}{used}", ply.san),
                    (Some(time), None) | (None, Some(time)) => format!("{} {time}", ply.san),
                    (None, None) => ply.san.to_string(),
                }
            })
            .collect();
        Self {
            label: label.to_owned(),
            white: Player::from_tags(&game.tags, Color::White).into(),
            black: Player::from_tags(&game.tags, Color::Black).into(),
            result: ResultValue::of(game),
            chess960: chess960_number(&game.start, game.castling_mode),
            moves,
            time_control: game.tags.iter().find(|(k, _)| k == "TimeControl").map(|(_, v)| v.clone()),
        }
    }
}

#[derive(Serialize)]
struct RoundEntry {
    count: usize,
    live: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TournamentJson<'a> {
    id: String,
    name: &'a str,
    location: Option<&'a str>,
    country: Option<&'a str>,
    website: Option<&'a str>,
    rules: &'a str,
    chess960: &'a str,
    timecontrol: Option<&'a str>,
    rounds: Vec<RoundEntry>,
    eboards: Vec<String>,
}

#[derive(Serialize)]
struct IndexPairing<'a> {
    white: &'a CloudPlayer,
    black: &'a CloudPlayer,
    result: &'a str,
    live: bool,
}

#[derive(Serialize)]
struct IndexJson<'a> {
    date: Option<&'a str>,
    pairings: Vec<IndexPairing<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GameJson<'a> {
    live: bool,
    serial_nr: &'a str,
    first_move: Option<i64>,
    chess960: u32,
    result: Option<ResultValue>,
    comment: Option<&'a str>,
    clock: Option<()>,
    moves: &'a [String],
}

/// The delivered rounds of every event, as LiveChess Cloud files.
#[derive(Debug, Default)]
pub struct CloudTree {
    /// By event, then round number: the round's games in board order.
    events: BTreeMap<String, BTreeMap<u32, Vec<CloudGame>>>,
    /// Board label → LiveChess serial number.
    serials: BTreeMap<String, String>,
    location: Option<String>,
}

impl CloudTree {
    /// An empty tree; `serials` maps board labels to the e-boards' serial
    /// numbers; `location` is the tournaments' location.
    pub fn new(serials: BTreeMap<String, String>, location: Option<String>) -> Self {
        Self { events: BTreeMap::new(), serials, location }
    }

    /// A round as delivered (its games in board order); returns every file
    /// that changed, paths below `/lcc/`. A round whose tag is not a
    /// number is not served.
    pub fn handle_round(&mut self, event: &str, round: &str, games: Vec<CloudGame>) -> Vec<(String, String)> {
        let Some(nr) = round_number(round) else { return Vec::new() };
        let id = ids::tournament(event);
        let rounds = self.events.entry(event.to_owned()).or_default();
        rounds.insert(nr, games);
        let rounds = &self.events[event];
        let serial = |label: &str| self.serials.get(label).cloned().unwrap_or_else(|| label.to_owned());
        let last = rounds.keys().copied().max().unwrap_or(nr);
        let games = &rounds[&nr];
        let mut files = Vec::new();
        let mut labels: Vec<&str> = rounds.values().flatten().map(|g| g.label.as_str()).collect();
        labels.dedup();
        let tournament = TournamentJson {
            id: id.clone(),
            name: event,
            location: self.location.as_deref(),
            country: None,
            website: None,
            rules: "STANDARD",
            chess960: if rounds.values().flatten().any(|g| g.chess960 != 518) { "CHESS960" } else { "STANDARD" },
            timecontrol: rounds.values().flatten().find_map(|g| g.time_control.as_deref()),
            rounds: (1..=last)
                .map(|n| {
                    let games = rounds.get(&n).map_or(&[][..], Vec::as_slice);
                    RoundEntry { count: games.len(), live: games.iter().filter(|g| g.result.is_none()).count() }
                })
                .collect(),
            eboards: games.iter().map(|g| serial(&g.label)).collect(),
        };
        files.push((format!("{id}/tournament.json"), to_json(&tournament)));
        let index = IndexJson {
            date: None,
            pairings: games
                .iter()
                .map(|g| IndexPairing {
                    white: &g.white,
                    black: &g.black,
                    result: g.result.map_or("*", ResultValue::pgn),
                    live: g.result.is_none(),
                })
                .collect(),
        };
        files.push((format!("{id}/round-{nr}/index.json"), to_json(&index)));
        for (m, game) in games.iter().enumerate() {
            let serial = serial(&game.label);
            let json = GameJson {
                live: game.result.is_none(),
                serial_nr: &serial,
                first_move: None,
                chess960: game.chess960,
                result: game.result,
                comment: None,
                clock: None,
                moves: &game.moves,
            };
            files.push((format!("{id}/round-{nr}/game-{}.json", m + 1), to_json(&json)));
        }
        files
    }
}

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
