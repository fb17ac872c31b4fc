//! The round this bridge's boards were last moved to by a `next_round` for
//! every board, with its pairings, kept so that a board assigned later in
//! the day (from this bridge's console or another bridge's) starts in that
//! round with the players of its number's pairing, as if it had been there
//! when the round started. Kept in memory: after a restart the boards'
//! own captures hold their rounds, and the next `next_round` sets it again.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
};

use boardcast::config::Board;
use boardcast_core::{pairings::board_number, publish::topics::level};

/// The round, its tags for every board, and its pairings by board number.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Round {
    pub(super) round: String,
    pub(super) tags: BTreeMap<String, String>,
    pub(super) pairings: BTreeMap<u32, BTreeMap<String, String>>,
}

/// Shared between the command router (which sets it) and the assigner
/// (which reads it).
pub(super) type RoundNow = Arc<Mutex<Option<Round>>>;

/// `board` as it starts when assigned during `round`: in that round (its
/// topic and its `Round` tag), with the round's tags and its pairing's
/// players. Nothing changes without a round started since the daemon
/// started. Says whose players it got, for the assigner's answer.
pub(super) fn join(board: &mut Board, round: Option<&Round>) -> Option<String> {
    let round = round?;
    board.path.round = level(&round.round);
    let mut tags = round.tags.clone();
    tags.insert("Round".into(), round.round.clone());
    let paired = board_number(&board.path.board).and_then(|n| round.pairings.get(&n));
    if let Some(paired) = paired {
        tags.extend(paired.clone());
    }
    for (name, value) in tags {
        board.tags.retain(|(k, _)| *k != name);
        if !value.is_empty() {
            board.tags.push((name, value));
        }
    }
    let tag = |name: &str| board.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    Some(match (paired, tag("White"), tag("Black")) {
        (Some(_), Some(white), Some(black)) => format!("round {}: {white} - {black}", round.round),
        _ => format!("round {} (no pairing for its number)", round.round),
    })
}
