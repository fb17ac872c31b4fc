//! What the operator sees of the lichess push, per lichess round: when
//! lichess last took the round, how many games it accepted and refused,
//! what it refused and why, and whether it refuses the token. Folded from
//! the [`Pusher`](super::Pusher)'s events; the wall time each came at is
//! an input (no clock is read here). The console's tournament panel shows
//! it (`GET /api/tournament`, docs/operator.md).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{MAX_GAMES, PushEvent};

/// Refusals kept per round: the newest; older ones are counted only.
pub const REFUSALS_KEPT: usize = 20;

/// One lichess round's delivery, as the operator reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RoundReport {
    /// When lichess last took a push of the round (ms since 1970), or
    /// `null` before it has.
    pub last_push_ms: Option<i64>,
    /// Games lichess accepted in that push.
    pub games_accepted: usize,
    /// Games of that push lichess refused.
    pub games_refused: usize,
    /// Refusals told since the start, newest last: a game and lichess's
    /// reason, a push refused as a whole, a round larger than lichess
    /// takes; at most [`REFUSALS_KEPT`].
    pub refusals: Vec<String>,
    /// Refusals told in all, including those no longer kept.
    pub refusals_told: usize,
    /// Why pushes of the round fail for now (429, 5xx, no connection); they
    /// are tried again. `null` once one is taken.
    pub retrying: Option<String>,
}

/// Every lichess round's delivery, and the token's state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LichessReport {
    /// By lichess round id.
    pub rounds: BTreeMap<String, RoundReport>,
    /// The HTTP status (401, 403) with which lichess refused the token,
    /// until a push is taken again (a new token in the token file).
    pub token_refused: Option<u16>,
    /// When the token was refused (ms since 1970).
    pub token_refused_ms: Option<i64>,
}

impl LichessReport {
    /// Takes in what the pusher said at `now_ms` (ms since 1970).
    pub fn handle_event(&mut self, now_ms: i64, event: &PushEvent) {
        match event {
            PushEvent::Pushed { round, games, refused, .. } => {
                self.token_refused = None;
                self.token_refused_ms = None;
                let report = self.round(round);
                report.last_push_ms = Some(now_ms);
                report.games_accepted = *games;
                report.games_refused = *refused;
                report.retrying = None;
            }
            PushEvent::TooManyGames { round, games } => self.refusal(
                round,
                format!("the round has {games} games; lichess takes the first {MAX_GAMES} (in board order)"),
            ),
            PushEvent::GameRefused { round, game, error } => self.refusal(round, format!("{game}: {error}")),
            PushEvent::Refused { round, status, message } => {
                self.refusal(round, format!("the push was refused ({status}): {message}"));
            }
            PushEvent::TokenRefused { status } => {
                self.token_refused = Some(*status);
                self.token_refused_ms = Some(now_ms);
            }
            PushEvent::Retrying { round, why, .. } => self.round(round).retrying = Some(why.clone()),
        }
    }

    fn round(&mut self, round: &str) -> &mut RoundReport {
        self.rounds.entry(round.to_owned()).or_default()
    }

    fn refusal(&mut self, round: &str, what: String) {
        let report = self.round(round);
        report.refusals_told += 1;
        report.refusals.push(what);
        if report.refusals.len() > REFUSALS_KEPT {
            report.refusals.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_token_is_reported_until_a_push_is_taken_and_refusals_are_kept_per_round() {
        let mut report = LichessReport::default();
        report.handle_event(1_000, &PushEvent::TokenRefused { status: 401 });
        assert_eq!((report.token_refused, report.token_refused_ms), (Some(401), Some(1_000)));
        report.handle_event(
            2_000,
            &PushEvent::Retrying { round: "r1".into(), why: "lichess answered 502".into(), retry_in: MAX_RETRY },
        );
        assert_eq!(report.rounds["r1"].retrying.as_deref(), Some("lichess answered 502"));
        assert_eq!(report.rounds["r1"].last_push_ms, None);
        report.handle_event(
            3_000,
            &PushEvent::GameRefused { round: "r1".into(), game: "A - B (board 2)".into(), error: "Bad FEN".into() },
        );
        report.handle_event(3_000, &PushEvent::Pushed { round: "r1".into(), games: 3, moves: 40, refused: 1 });
        let r1 = &report.rounds["r1"];
        assert_eq!(report.token_refused, None, "a push taken: the token is good again");
        assert_eq!((r1.last_push_ms, r1.games_accepted, r1.games_refused), (Some(3_000), 3, 1));
        assert_eq!(r1.refusals, ["A - B (board 2): Bad FEN"]);
        assert_eq!(r1.retrying, None);
        for n in 0..REFUSALS_KEPT + 5 {
            report.handle_event(
                4_000,
                &PushEvent::Refused { round: "r2".into(), status: 404, message: format!("no round {n}") },
            );
        }
        let r2 = &report.rounds["r2"];
        assert_eq!((r2.refusals.len(), r2.refusals_told), (REFUSALS_KEPT, REFUSALS_KEPT + 5));
        assert!(r2.refusals.last().unwrap().ends_with(&format!("no round {}", REFUSALS_KEPT + 4)), "{r2:?}");
        assert_eq!(report.rounds["r1"].refusals.len(), 1, "each round its own");
    }

    const MAX_RETRY: std::time::Duration = std::time::Duration::from_secs(2);
}
