//! Engine analysis (`[analysis]`): the engine pool (`shell::analysis`)
//! started beside the feed, and each board's [`Positions`] sink feeding it.
//! Without an engine, one line says so and nothing else changes.

use std::time::Duration;

use tokio::{sync::mpsc, task::JoinHandle};
use tracing::{Instrument, error, info};

use boardcast::{
    config::Analysis,
    shell::{
        analysis::{PoolSettings, run},
        driver::Forward,
    },
};
use boardcast_core::{
    analysis::{Positions, schedule::Position},
    publish::{Item, topics::Topics},
    sink::Sink,
};

use super::board::Start;

/// The running pool: where boards send their positions.
pub(super) struct Pool {
    pub(super) positions: mpsc::UnboundedSender<Position>,
    pub(super) task: JoinHandle<()>,
}

/// Starts the pool, when analysis is configured and an engine is there.
pub(super) fn start(
    analysis: &Analysis,
    topics: Topics,
    delay: Duration,
    items: mpsc::UnboundedSender<Item>,
) -> Option<Pool> {
    let Some(engine) = analysis.find_engine() else {
        error!("analysis: {}; the daemon runs without analysis", super::plan::no_engine(analysis));
        return None;
    };
    info!(
        "analysis: {} engine(s) {} on every new position, published no earlier than the position itself ({} s delay)",
        analysis.engines,
        engine.display(),
        delay.as_secs()
    );
    let settings = PoolSettings {
        engine,
        engines: analysis.engines,
        threads: analysis.threads,
        hash_mb: analysis.hash_mb,
        budget: analysis.budget,
        deadline: analysis.deadline(),
        nice: analysis.nice,
        delay,
        topics,
    };
    let (positions, positions_rx) = mpsc::unbounded_channel();
    let task = tokio::spawn(run(settings, positions_rx, items).instrument(tracing::info_span!("analysis")));
    Some(Pool { positions, task })
}

/// A board's positions, to the pool: the position it stands in now first
/// (a resumed board's), then each new one.
pub(super) fn outlet(start: &Start<'_>, positions: &mpsc::UnboundedSender<Position>) -> Forward<Positions> {
    let mut sink = Positions::new(start.board.path.clone(), &start.board.name);
    sink.flush(start.games);
    while let Some(position) = sink.poll_item() {
        let _ = positions.send(position);
    }
    Forward::to(sink, positions.clone())
}
