//! Engine analysis for spectators (docs/displays.md, "Analysis"): every new
//! position of every board, analysed by UCI engines the shell runs, and
//! published on the board's public `analysis` topic no earlier than the
//! position itself reaches the public tree.
//!
//! - [`Positions`]: a board's sink: its outputs → the positions to analyse,
//!   one per batch that changed the position;
//! - [`schedule`]: which position an engine takes next (newest first,
//!   stale ones dropped) and the gate that holds a result until its
//!   position is public;
//! - [`uci`]: the lines an engine is sent and what it answers;
//! - [`item`]: a result as the retained message on `…/analysis`, for the
//!   hub, which lets it out only after the public `state` showing its
//!   position.
//!
//! Nothing here goes to the live tree, the console, PGN or lichess: the
//! only topic an analysis is ever published on is built by
//! [`Topics::analysis`](crate::publish::topics::Topics::analysis), in the
//! public tree.

pub mod schedule;
pub mod uci;

use std::collections::VecDeque;

use shakmaty::{EnPassantMode, fen::Fen};

use self::{
    schedule::{Position, Release},
    uci::Evaluation,
};
use crate::{
    publish::{
        Item, Publication, Qos,
        payload::{self, AnalysisPayload},
        topics::{BoardPath, BoardTopic, Topics, Tree},
    },
    session::Output,
    sink::{Games, Sink},
};

/// A board's sink for analysis: after each batch, the position on the
/// board's current game if it changed (a move made, completed, taken back,
/// a new game).
#[derive(Debug)]
pub struct Positions {
    board: BoardPath,
    name: String,
    last: Option<(u32, usize, String)>,
    out: VecDeque<Position>,
}

impl Positions {
    /// The sink of the board called `name`, published under `board`.
    pub fn new(board: BoardPath, name: &str) -> Self {
        Self { board, name: name.to_owned(), last: None, out: VecDeque::new() }
    }
}

impl Sink for Positions {
    type Item = Position;

    fn handle_output(&mut self, _output: &Output, _games: Games<'_>) {}

    fn flush(&mut self, games: Games<'_>) {
        let Some(game) = games.current() else { return };
        let fen = Fen::from_position(game.position(), EnPassantMode::Legal).to_string();
        let now = (game.number, game.plies.len(), fen);
        if self.last.as_ref() == Some(&now) {
            return;
        }
        self.out.push_back(Position {
            board: self.board.clone(),
            name: self.name.clone(),
            game: now.0,
            ply: now.1,
            fen: now.2.clone(),
        });
        self.last = Some(now);
    }

    fn poll_item(&mut self) -> Option<Position> {
        self.out.pop_front()
    }
}

/// A release of the [`schedule::Schedule`] as the hub's item: the retained
/// analysis on the board's public `analysis` topic, or an empty retained
/// message that clears it. `engine` is the engine's `id name`; `ts_ms` the
/// wall-clock time of publication.
pub fn item(topics: &Topics, release: &Release, engine: &str, ts_ms: i64) -> Item {
    let (board, (game, ply), payload) = match release {
        Release::Clear { board } => (board, (0, 0), None),
        Release::Publish { position, evaluation } => {
            (&position.board, (position.game, position.ply), Some(payload(position, evaluation, engine, ts_ms)))
        }
    };
    Item::Analysis {
        state: topics.board(Tree::Live, board, BoardTopic::State),
        game,
        ply,
        publication: Publication {
            topic: topics.analysis(board),
            payload,
            retain: true,
            qos: Qos::AtMostOnce,
            public: false,
        },
    }
}

fn payload(position: &Position, evaluation: &Evaluation, engine: &str, ts_ms: i64) -> serde_json::Value {
    payload::to_value(&AnalysisPayload {
        schema: payload::SCHEMA,
        ts_ms,
        board: &position.name,
        event: &position.board.event,
        round: &position.board.round,
        game: position.game,
        ply: position.ply,
        fen: &position.fen,
        score: evaluation.score,
        depth: evaluation.depth,
        nodes: evaluation.nodes,
        pv: &evaluation.pv,
        best_uci: evaluation.best_uci.as_deref(),
        engine,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{
        uci::{Evaluation, Score},
        *,
    };

    #[test]
    fn an_analysis_is_published_retained_on_the_public_tree_only() {
        let topics = Topics::new("bc", "pc1");
        let position = Position {
            board: BoardPath::new("Open A", "3", "12"),
            name: "Board 12".into(),
            game: 2,
            ply: 1,
            fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
        };
        let evaluation = Evaluation {
            score: Score::Cp(31),
            depth: 18,
            nodes: 1_000_000,
            pv: vec!["e5".into(), "Nf3".into()],
            best_uci: Some("e7e5".into()),
        };
        let publication = |release: &Release, engine: &str, ts_ms: i64| match item(&topics, release, engine, ts_ms) {
            Item::Analysis { state, game, ply, publication } => {
                assert_eq!(state, "bc/v1/live/Open-A/3/12/state", "names the board's state, to wait for it");
                if publication.payload.is_some() {
                    assert_eq!((game, ply), (2, 1));
                }
                publication
            }
            other => panic!("not an analysis: {other:?}"),
        };
        let release = Release::Publish { position: position.clone(), evaluation };
        let message = publication(&release, "Stockfish 16", 1_700_000_000_000);
        assert_eq!(message.topic, "bc/v1/public/Open-A/3/12/analysis");
        assert!(message.retain);
        assert!(!message.public, "not copied again by the hub: it is public already");
        assert_eq!(
            message.payload.unwrap(),
            json!({
                "schema": 1, "ts_ms": 1_700_000_000_000i64, "board": "Board 12", "event": "Open-A", "round": "3",
                "game": 2, "ply": 1, "fen": position.fen, "score": {"cp": 31}, "depth": 18, "nodes": 1_000_000,
                "pv": ["e5", "Nf3"], "best_uci": "e7e5", "engine": "Stockfish 16"
            })
        );
        let mate = Evaluation { score: Score::Mate(-2), depth: 5, nodes: 10, pv: vec![], best_uci: None };
        let message = publication(&Release::Publish { position, evaluation: mate }, "sf", 1);
        let payload = message.payload.unwrap();
        assert_eq!(payload["score"], json!({"mate": -2}));
        assert_eq!(payload["best_uci"], json!(null));
        let clear = publication(&Release::Clear { board: BoardPath::new("Open A", "3", "12") }, "sf", 1);
        assert_eq!(clear.topic, "bc/v1/public/Open-A/3/12/analysis");
        assert_eq!((clear.payload, clear.retain), (None, true), "an empty retained message clears the topic");
    }
}
