//! Delivering the rounds beyond the hall: each round the PGN writer hands
//! on is held back by the public delay, then put on the HTTP server's
//! shelf (`/pgn/…`) and, when its round has a lichess id, pushed to lichess.
//! What lichess answers is logged, kept per round for the console's
//! tournament panel and, when the operator must act, published on the
//! bridge's `notices` topic.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime},
};

use tokio::{sync::mpsc, task::JoinHandle, time::Instant};
use tracing::{debug, error, info, warn};

use boardcast::{
    config::Lichess,
    shell::{
        http::Shelf,
        lichess::{self, PushSettings, Token},
    },
};
use boardcast_core::{
    deliver::{DelayLine, RoundPgn},
    lichess::{MAX_GAMES, PushEvent, report::LichessReport},
    livechess::cloud::CloudTree,
    publish::{
        Item,
        notices::{Severity, notice},
        topics::Topics,
    },
    time::Timestamp,
};

/// Where delivered rounds go.
pub(super) struct Delivery {
    /// How far delivery is behind the boards (`mqtt.public_delay_s`).
    pub(super) delay: Duration,
    /// The HTTP server's PGN, if it is served.
    pub(super) shelf: Option<Arc<Shelf>>,
    /// Pushing to lichess, if configured.
    pub(super) lichess: Option<(Lichess, Token)>,
    /// The operator's notices, when there is an MQTT feed.
    pub(super) feed: Option<(mpsc::UnboundedSender<Item>, Topics)>,
    /// The delivered rounds as LiveChess Cloud shows them (`/lcc/` on the
    /// shelf).
    pub(super) cloud: CloudTree,
    /// The lichess push's state per round, which the console shows.
    pub(super) report: Arc<Mutex<LichessReport>>,
}

/// Something that takes each round once the public delay has passed: the
/// HTTP server's shelf (`[http]`), the lichess pusher (`[lichess]`). Each
/// section builds its own; the delivery loop holds them in a list.
trait RoundOutlet: Send {
    /// A round, as it stands now (completed moves only), delayed.
    fn handle_round(&mut self, round: &RoundPgn);
}

/// PGN over HTTP: the round's files on the shelf `/pgn/…` serves.
struct ShelfOutlet(Arc<Shelf>);

impl RoundOutlet for ShelfOutlet {
    fn handle_round(&mut self, round: &RoundPgn) {
        self.0.put_round(&round.folder, round.files(), SystemTime::now());
    }
}

/// LiveChess Cloud JSON (`/lcc/…` on the shelf), from the delayed rounds
/// only (docs/livechess.md).
struct CloudOutlet {
    shelf: Arc<Shelf>,
    cloud: CloudTree,
}

impl RoundOutlet for CloudOutlet {
    fn handle_round(&mut self, round: &RoundPgn) {
        self.shelf.put_cloud(self.cloud.handle_round(&round.event, &round.round, round.cloud.clone()));
    }
}

/// The lichess push: the round's games to its lichess broadcast round, if
/// it has one; the pusher and its reporter run as tasks of their own.
struct LichessOutlet {
    settings: Lichess,
    changes: mpsc::UnboundedSender<(String, Vec<String>)>,
}

impl RoundOutlet for LichessOutlet {
    fn handle_round(&mut self, round: &RoundPgn) {
        if let Some(id) = self.settings.round_id(&round.event, &round.round) {
            let _ = self.changes.send((id.to_owned(), round.games.clone()));
        }
    }
}

/// Starts the lichess pusher and its reporter (`[lichess]`).
fn lichess_outlet(
    settings: Lichess,
    token: Token,
    delay: Duration,
    feed: Option<(mpsc::UnboundedSender<Item>, Topics)>,
    report: Arc<Mutex<LichessReport>>,
) -> (LichessOutlet, [JoinHandle<()>; 2]) {
    let (changes_tx, changes_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    info!(
        "lichess: pushing {} to {} at most every {} ms{}",
        settings.rounds.iter().map(|(round, id)| format!("round {round} to {id}")).collect::<Vec<_>>().join(", "),
        settings.url,
        settings.interval.as_millis(),
        delayed(delay)
    );
    let push_settings = PushSettings {
        url: settings.url.clone(),
        token_file: settings.token_file.clone(),
        interval: settings.interval,
    };
    let push = tokio::spawn(lichess::run(push_settings, token, changes_rx, events_tx));
    let tell = tokio::spawn(tell(events_rx, settings.clone(), feed, report));
    (LichessOutlet { settings, changes: changes_tx }, [push, tell])
}

/// Delivers rounds until the PGN writer stops. Rounds still held back by
/// the delay then are not delivered (as in the public MQTT tree).
pub(super) async fn run(delivery: Delivery, mut rounds: mpsc::UnboundedReceiver<RoundPgn>) {
    let Delivery { delay, shelf, lichess, feed, cloud, report } = delivery;
    let mut outlets: Vec<Box<dyn RoundOutlet>> = Vec::new();
    if let Some(shelf) = shelf {
        outlets.push(Box::new(ShelfOutlet(shelf.clone())));
        outlets.push(Box::new(CloudOutlet { shelf, cloud }));
    }
    let mut tasks = Vec::new();
    if let Some((settings, token)) = lichess {
        let (outlet, running) = lichess_outlet(settings, token, delay, feed, report);
        outlets.push(Box::new(outlet));
        tasks.extend(running);
    }
    let start = Instant::now();
    let now = move || Timestamp::from_micros(start.elapsed().as_micros() as u64);
    let mut line: DelayLine<RoundPgn> = DelayLine::new(delay);
    loop {
        while let Some(round) = line.poll(now()) {
            for outlet in &mut outlets {
                outlet.handle_round(&round);
            }
        }
        let due = line.poll_timeout().map(|t| start + Duration::from_micros(t.as_micros()));
        tokio::select! {
            round = rounds.recv() => match round {
                Some(round) => line.push(now(), round),
                None => break,
            },
            () = async { if let Some(due) = due { tokio::time::sleep_until(due).await } }, if due.is_some() => {}
        }
    }
    if !line.is_empty() {
        info!("{} round update(s) held back by the public delay were not delivered", line.len());
    }
    // The pusher ends once its changes close, after its final push.
    drop(outlets);
    for task in tasks {
        let _ = task.await;
    }
}

fn delayed(delay: Duration) -> String {
    if delay.is_zero() { String::new() } else { format!(", {} s behind the boards", delay.as_secs()) }
}

/// Logs what the pusher says, and tells the operator what needs them.
async fn tell(
    mut events: mpsc::UnboundedReceiver<PushEvent>,
    settings: Lichess,
    feed: Option<(mpsc::UnboundedSender<Item>, Topics)>,
    report: Arc<Mutex<LichessReport>>,
) {
    // A failure that lasts is said once, not at every try.
    let mut failing: HashSet<String> = HashSet::new();
    while let Some(event) = events.recv().await {
        let now_ms = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
        report.lock().expect("not poisoned").handle_event(now_ms, &event);
        let (severity, message) = match &event {
            PushEvent::Pushed { round, games, moves, .. } => {
                if failing.remove(round) {
                    info!("lichess round {round}: pushed again ({games} games, {moves} moves)");
                } else {
                    debug!("lichess round {round}: pushed {games} games, {moves} moves");
                }
                continue;
            }
            PushEvent::Retrying { round, why, retry_in } => {
                if failing.insert(round.clone()) {
                    warn!(
                        "lichess round {round}: {why}; trying again in {:.0} s and then less often (the latest games are sent then)",
                        retry_in.as_secs_f64()
                    );
                }
                continue;
            }
            PushEvent::TooManyGames { round, games } => (
                Severity::Warning,
                format!(
                    "lichess round {round}: the round has {games} games but lichess takes at most {MAX_GAMES} a round: only the first {MAX_GAMES} (in board order) are pushed; put the other boards in another event with its own lichess broadcast ([lichess.rounds] \"<event>/<round>\" keys)"
                ),
            ),
            PushEvent::GameRefused { round, game, error } => (
                Severity::Warning,
                format!(
                    "lichess round {round}: lichess refused the game {game}: {error} (the other games are pushed; check the game's moves and tags)"
                ),
            ),
            PushEvent::TokenRefused { status } => (
                Severity::Error,
                format!(
                    "lichess refused the token ({status}): it is wrong, expired or lacks the study:write scope; make a new one with study:write at {}/account/oauth/token and write it to {} (it is read again at the next try, every minute)",
                    settings.url,
                    settings.token_file.display()
                ),
            ),
            PushEvent::Refused { round, status: 404, message } => (
                Severity::Error,
                format!(
                    "lichess round {round}: lichess has no such round, or it is not the token owner's ({message}); check the id in [lichess.rounds] against the round's address"
                ),
            ),
            PushEvent::Refused { round, status, message } => {
                (Severity::Error, format!("lichess round {round}: lichess refused the push ({status}): {message}"))
            }
        };
        match severity {
            Severity::Error => error!("{message}"),
            Severity::Warning => warn!("{message}"),
        }
        if event.alerts_operator()
            && let Some((items, topics)) = &feed
        {
            let _ = items.send(Item::Publish(notice(topics, "lichess", severity, &message, now_ms)));
        }
    }
}
