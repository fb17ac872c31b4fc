//! The console's tournament panel, server side: `GET /api/tournament` (the
//! event as the configuration has it, this daemon's boards and their
//! numbers, those assigned since it started included ([`Panel::follow`]), the PGN addresses served, the lichess push's state per round)
//! and `POST /api/pairings` (a pairings
//! file's text read by the core's parsers into a preview of one round, or
//! the line and the problem). Nothing here changes a game: the page starts
//! the round by sending the preview's `next_round` through
//! `/api/command`, signed on the server like every other command, so that
//! it is exactly the command `boardcast ctl next-round N --pairings FILE`
//! sends.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex, OnceLock},
};

use hyper::StatusCode;
use serde_json::{Value, json};

use boardcast_core::{
    lichess::report::LichessReport,
    pairings::{Pairing, Pairings, PairingsError, board_number},
};

use crate::shell::http::Shelf;

/// The largest pairings file read: a TRF16 report of a 2 000-player open
/// after 13 rounds is about 400 KiB; the command made from one round must
/// still fit a command (`MAX_COMMAND_BYTES`), which the page's send checks.
pub const MAX_PAIRINGS_BYTES: usize = 1024 * 1024;

/// One board of this daemon, as the pairings see it.
#[derive(Clone, Debug)]
pub struct RoundBoard {
    /// Its name (commands name it).
    pub name: String,
    /// Its label, the topic level whose trailing number is its board number.
    pub label: String,
}

/// What the configuration says about the event: the panel's heading, until
/// the boards' live games say more (their round and players).
#[derive(Clone, Debug, Default)]
pub struct Tournament {
    /// `[broadcast] event`.
    pub event: String,
    /// `[broadcast] site`.
    pub site: String,
    /// `[broadcast] time_control`.
    pub time_control: String,
    /// `[broadcast] rules` (empty: from the time control).
    pub rules: String,
    /// `[broadcast] round`: the round at start, before any `next_round`.
    pub round: String,
    /// This daemon's boards.
    pub boards: Vec<RoundBoard>,
    /// The lichess rounds configured (`[lichess.rounds]`: round → id).
    pub lichess_rounds: BTreeMap<String, String>,
}

/// The panel's view of the daemon: set once the daemon has its boards and
/// its PGN shelf.
#[derive(Debug, Default)]
pub struct Panel {
    tournament: OnceLock<(Tournament, Option<Arc<Shelf>>)>,
    /// The lichess push's state per round, kept by the delivery; unset:
    /// nothing is pushed to lichess.
    lichess: OnceLock<Arc<Mutex<LichessReport>>>,
    /// Every board of the daemon as the assigner keeps them (configured,
    /// and assigned since it started); unset: the boards it started with.
    following: OnceLock<tokio::sync::watch::Receiver<Vec<crate::config::Board>>>,
}

impl Panel {
    /// Sets what the panel shows (the first call wins: the configuration a
    /// daemon started with; a reload does not change boards or event).
    pub fn set(&self, tournament: Tournament, shelf: Option<Arc<Shelf>>) {
        let _ = self.tournament.set((tournament, shelf));
    }

    /// The delivery keeps the lichess push's state in `report`.
    pub fn set_lichess(&self, report: Arc<Mutex<LichessReport>>) {
        let _ = self.lichess.set(report);
    }

    /// From now on the panel lists the boards `boards` holds: a board
    /// assigned during the day appears as soon as its session starts.
    pub fn follow(&self, boards: tokio::sync::watch::Receiver<Vec<crate::config::Board>>) {
        let _ = self.following.set(boards);
    }

    fn boards(&self) -> Vec<RoundBoard> {
        match self.following.get() {
            Some(boards) => boards
                .borrow()
                .iter()
                .map(|b| RoundBoard { name: b.name.clone(), label: b.path.board.clone() })
                .collect(),
            None => self.tournament.get().map(|(t, _)| t.boards.clone()).unwrap_or_default(),
        }
    }
}

/// `GET /api/tournament`'s answer.
pub(super) fn tournament(panel: &Panel) -> Value {
    let Some((t, shelf)) = panel.tournament.get() else {
        return json!({"event": null, "boards": [], "pgn": []});
    };
    let pgn: Vec<String> = shelf
        .as_ref()
        .map(|s| s.paths().into_iter().filter(|p| p.ends_with("/games.pgn")).map(|p| format!("/pgn/{p}")).collect())
        .unwrap_or_default();
    json!({
        "event": t.event,
        "site": t.site,
        "time_control": t.time_control,
        "rules": t.rules,
        "round": t.round,
        "boards": panel.boards().iter().map(|b| json!({
            "name": b.name, "label": b.label, "number": board_number(&b.label),
        })).collect::<Vec<_>>(),
        "lichess_rounds": t.lichess_rounds,
        "lichess": panel.lichess.get().map(|r| serde_json::to_value(&*r.lock().expect("not poisoned")).unwrap_or_default()),
        "pgn": pgn,
    })
}

/// `POST /api/pairings` with `{"text": …, "round": …}` (`round` optional:
/// a report's last round), from an account that `may_change` games (an
/// operator's): the preview, or why not.
pub(super) fn preview(panel: &Panel, may_change: bool, body: &Value) -> (StatusCode, Value) {
    if !may_change {
        return (
            StatusCode::FORBIDDEN,
            json!({"error": "this account may not change games, so it starts no round: log in with an operator account"}),
        );
    }
    let Some(text) = body["text"].as_str() else {
        return (
            StatusCode::BAD_REQUEST,
            json!({"error": "a preview is {\"text\": the file's text, \"round\": \"4\"}"}),
        );
    };
    let asked = match &body["round"] {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    let pairings = match Pairings::parse(text) {
        Ok(pairings) => pairings,
        Err(e) => return (StatusCode::UNPROCESSABLE_ENTITY, problem(&e)),
    };
    let (format, rounds) = match &pairings {
        Pairings::Trf(t) => ("trf", (1..=t.rounds()).map(|n| n.to_string()).collect::<Vec<_>>()),
        Pairings::Csv(rows) => {
            let mut rounds: Vec<String> = Vec::new();
            for round in rows.iter().filter_map(|(r, _)| r.as_deref()) {
                if !rounds.iter().any(|r| r == round.trim()) {
                    rounds.push(round.trim().to_owned());
                }
            }
            ("csv", rounds)
        }
    };
    // A report's last round is the one just paired; a CSV without rounds
    // is whatever round the operator starts.
    let round = asked.or_else(|| rounds.last().cloned());
    let chosen = match pairings.round(round.as_deref().unwrap_or("")) {
        Ok(chosen) => chosen,
        Err(e) => {
            let mut answer = problem(&e);
            answer["rounds"] = json!(rounds);
            return (StatusCode::UNPROCESSABLE_ENTITY, answer);
        }
    };
    (StatusCode::OK, view(&panel.boards(), format, &rounds, round.as_deref(), &chosen))
}

/// The preview of a round's pairings against this daemon's boards.
fn view(boards: &[RoundBoard], format: &str, rounds: &[String], round: Option<&str>, chosen: &[Pairing]) -> Value {
    let numbered: BTreeMap<u32, &RoundBoard> =
        boards.iter().filter_map(|b| Some((board_number(&b.label)?, b))).collect();
    let player = |tags: &BTreeMap<String, String>, colour: &str| {
        let tag = |name: &str| tags.get(&format!("{colour}{name}")).cloned().unwrap_or_default();
        json!({"name": tag(""), "title": tag("Title"), "elo": tag("Elo"), "fed": tag("Fed"), "fide_id": tag("FideId")})
    };
    let rows: Vec<Value> = chosen
        .iter()
        .map(|p| {
            let tags = p.tags();
            json!({
                "board": p.board,
                "on": numbered.get(&p.board).map(|b| b.name.clone()),
                "white": player(&tags, "White"),
                "black": player(&tags, "Black"),
            })
        })
        .collect();
    let paired: Vec<u32> = chosen.iter().map(|p| p.board).collect();
    let without_pairing: Vec<&str> = boards
        .iter()
        .filter(|b| board_number(&b.label).is_none_or(|n| !paired.contains(&n)))
        .map(|b| b.name.as_str())
        .collect();
    let without_board: Vec<u32> = paired.iter().copied().filter(|n| !numbered.contains_key(n)).collect();
    // Exactly what `ctl next-round N --pairings FILE` sends: board number
    // → the pairing's tags.
    let command_pairings: BTreeMap<String, BTreeMap<String, String>> =
        chosen.iter().map(|p| (p.board.to_string(), p.tags())).collect();
    json!({
        "format": format,
        "rounds": rounds,
        "round": round,
        "pairings": rows,
        "boards_without_pairing": without_pairing,
        "pairings_without_board": without_board,
        "command": {"board": "*", "command": "next_round", "round": round, "pairings": command_pairings},
    })
}

/// A parser's error as the page shows it: the line (when there is one)
/// and the problem.
fn problem(error: &PairingsError) -> Value {
    let line = match error {
        PairingsError::Field { line, .. } | PairingsError::Conflict { line, .. } => Some(*line),
        _ => None,
    };
    let words = error.to_string();
    let problem = line.and_then(|l| words.strip_prefix(&format!("line {l}: ")).map(str::to_owned)).unwrap_or(words);
    json!({"error": error.to_string(), "line": line, "problem": problem})
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str = "round,board,white,black,white_elo\n5,1,\"Aa, Bb\",\"Cc, Dd\",2400\n5,3,\"Ee, Ff\",\"Gg, Hh\",\n";

    fn panel(labels: &[&str]) -> Panel {
        let panel = Panel::default();
        let boards = labels.iter().map(|l| RoundBoard { name: format!("n-{l}"), label: (*l).to_owned() }).collect();
        panel.set(Tournament { boards, ..Tournament::default() }, None);
        panel
    }

    #[test]
    fn a_preview_places_each_pairing_on_its_board_and_says_what_is_left_over() {
        let (status, answer) = preview(&panel(&["b1", "b2"]), true, &json!({"text": CSV}));
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["round"], "5");
        assert_eq!(answer["rounds"], json!(["5"]));
        assert_eq!(answer["pairings"][0]["on"], "n-b1");
        assert_eq!(answer["pairings"][0]["white"]["elo"], "2400");
        assert_eq!(answer["boards_without_pairing"], json!(["n-b2"]));
        assert_eq!(answer["pairings_without_board"], json!([3]));
        assert_eq!(answer["command"]["pairings"]["1"]["White"], "Aa, Bb");
        assert_eq!(answer["command"]["board"], "*");
    }

    #[test]
    fn a_bad_file_gives_its_line_and_a_missing_round_the_rounds_there_are() {
        let bad = "round,board,white,black,white_elo\n5,1,A,B,2400\n5,2,C,D,strong\n";
        let (status, answer) = preview(&panel(&["b1"]), true, &json!({"text": bad}));
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(answer["line"], 3, "{answer}");
        assert!(answer["problem"].as_str().unwrap().contains("strong"), "{answer}");
        let (status, answer) = preview(&panel(&["b1"]), true, &json!({"text": CSV, "round": "6"}));
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(answer["rounds"], json!(["5"]), "{answer}");
    }

    #[test]
    fn only_an_operator_gets_a_preview() {
        let (status, _) = preview(&panel(&["b1"]), false, &json!({"text": CSV}));
        assert_eq!(status, StatusCode::FORBIDDEN);
    }
}
