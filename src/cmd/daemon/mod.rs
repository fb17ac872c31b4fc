//! The daemon itself, shared by `boardcast run` and `boardcast demo`: one
//! set of tasks per board (see `board.rs`), the MQTT feed (`feed.rs`), and
//! a clean stop when asked: every board's port closes, its driver hands
//! back the session, the last games and captures are written, the feed
//! says the bridge is offline. SIGHUP reloads the broker's accounts and
//! certificate (`reload.rs`).

mod analysis;
mod assign;
mod board;
mod bridged;
mod deliver;
mod discover;
mod feed;
mod http;
mod livechess;
mod log;
mod operator;
mod pgn;
mod plan;
mod recover;
mod reload;
mod round_now;
mod speech;

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::sync::mpsc;
use tokio_util::{sync::CancellationToken, task::TaskTracker};
use tracing::Instrument;

use boardcast::{
    config::{Board, Speech},
    shell::{
        clock::SessionClock,
        console::{Console, assign as assign_console},
        driver::Input,
        http::Shelf,
        supervise::{Outcome, Patience, Report, supervise},
    },
};
use boardcast_core::{protocol::link::LinkConfig, reconstruct::ReconstructorConfig};

pub(crate) use feed::{FeedReady, host_name};
pub(crate) use plan::Plan;

/// What every board's tasks share.
#[derive(Clone)]
struct Shared {
    reconstruction: ReconstructorConfig,
    link: LinkConfig,
    reconnect_max: Duration,
    extra_ports: Vec<PathBuf>,
    recording: Option<PathBuf>,
    /// Where boards send their games for the PGN folders.
    pgn: mpsc::UnboundedSender<pgn::PgnUpdate>,
    /// When the daemon started, RFC 3339 (capture headers, PGN dates).
    started_at: String,
    /// The same as a file name part.
    file_stamp: String,
    /// Session time for every board.
    clock: SessionClock,
    /// Wall-clock milliseconds at session time zero.
    epoch_ms: i64,
    /// Where boards send their MQTT feed, when there is one.
    feed: Option<feed::BoardFeeds>,
    /// Announcing moves aloud, for the boards it names.
    speech: Option<Speech>,
    /// Where boards send their positions for analysis, when engines run.
    analysis: Option<mpsc::UnboundedSender<boardcast_core::analysis::schedule::Position>>,
    /// Where boards send their LiveChess snapshots, when the API is served.
    livechess: Option<mpsc::UnboundedSender<boardcast_core::livechess::board::Snapshot>>,
    /// The boards running now, for operator commands and for a mirror
    /// board's game to reach its game board.
    boards: Boards,
    /// The round the boards were last moved to, for a board assigned later.
    round_now: round_now::RoundNow,
    shutdown: CancellationToken,
}

/// The boards running now, by name.
type Boards = Arc<Mutex<HashMap<String, BoardHandle>>>;

/// How to reach a running board's session.
#[derive(Clone)]
struct BoardHandle {
    inputs: mpsc::Sender<Input>,
    /// The board's session time (a resumed board has its own).
    clock: SessionClock,
    /// The pairings' board number it stands for: the number its label
    /// ends with (docs/delivery.md, "Pairings").
    number: Option<u32>,
}

/// One board under supervision: started again after a failure (its game
/// resumes from its capture), given up after five failures in ten minutes,
/// never disturbing the other boards.
async fn supervised(board: Board, shared: Shared) {
    let shutdown = shared.shutdown.clone();
    let start = move || {
        let (board, shared) = (board.clone(), shared.clone());
        async move { board::run_board(board, shared).await }.instrument(tracing::Span::current())
    };
    let report = |report: Report| {
        let Report::Restarting { why, failures } = report;
        tracing::warn!("starting the board again in 2 s ({failures} failure(s) in the last 10 minutes): {why}");
    };
    if let Outcome::GaveUp(why) = supervise(start, shutdown, Patience::default(), report).await {
        tracing::error!(
            "giving up on this board after 5 failures in 10 minutes (the other boards go on; restart the daemon once it is fixed): {why}"
        );
    }
}

/// Boards not configured: looked for at an interval (when there is a feed
/// to show them on), and assigned from the console (when it is served) or
/// by a console of the hall through `assignments` (when there is a feed
/// to hear it on); both tasks end at shutdown, in `tasks`.
fn hall(
    hall: &plan::Hall,
    boards: &[Board],
    console: Option<&Console>,
    feed: Option<&feed::FeedStarted>,
    assignments: (assign_console::Assigner, mpsc::UnboundedReceiver<assign_console::AssignRequest>, &assign::Running),
    shared: &Shared,
    tasks: &TaskTracker,
) {
    let (known_tx, known_rx) = tokio::sync::watch::channel(boards.to_vec());
    if let Some(console) = console {
        console.round.follow(known_tx.subscribe());
    }
    let (offered_tx, offered_rx) = tokio::sync::watch::channel(Vec::new());
    if let (Some(feed), false) = (feed, hall.probe_interval.is_zero()) {
        let search = discover::Search {
            interval: hall.probe_interval,
            extra_ports: shared.extra_ports.clone(),
            boards: known_rx,
            items: feed.items.clone(),
            topics: feed.topics.clone(),
            offered: offered_tx,
        };
        tasks.spawn(
            discover::run(search, shared.shutdown.clone()).instrument(tracing::info_span!("hall", hall = "hall")),
        );
    }
    // Assignments come from this daemon's console, and from a console of
    // another bridge of the hall as signed commands (`bridged.rs`).
    if console.is_some() || feed.is_some() {
        let (assigner, requests, running) = assignments;
        if let Some(console) = console {
            console.set_assigner(assigner);
        }
        let run = assign::Assigner {
            hall: hall.clone(),
            boards: boards.to_vec(),
            offered: offered_rx,
            known: known_tx,
            running: running.clone(),
        };
        let run = assign::run(run, requests, shared.clone(), tasks.clone());
        tasks.spawn(run.instrument(tracing::info_span!("hall", hall = "hall")));
    }
}

/// The operator key, created when missing (and said where).
fn operator_key(path: &std::path::Path) -> anyhow::Result<boardcast_core::publish::guard::OperatorKey> {
    let (key, created) = boardcast::shell::key::load_or_create(path)?;
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    if created {
        tracing::warn!(
            "created the operator key {} (mode 600): `boardcast ctl` on this machine uses it; copy it to any other machine that sends commands (docs/operator.md)",
            shown.display()
        );
    } else {
        tracing::info!("commands are applied only when signed with the operator key {}", shown.display());
    }
    Ok(key)
}

/// Runs the daemon until `shutdown`, reloading at each of `hangups` (SIGHUP,
/// already caught: `None` leaves it alone). `on_feed` hears where the feed
/// goes once it is up (the demo prints it).
///
/// # Errors
///
/// When the feed cannot start (the embedded broker's address is taken).
pub(crate) async fn serve(
    plan: Plan,
    shutdown: CancellationToken,
    hangups: Option<tokio::signal::unix::Signal>,
    on_feed: impl FnOnce(&FeedReady),
) -> anyhow::Result<()> {
    let now = std::time::SystemTime::now();
    let started_at = humantime::format_rfc3339_seconds(now).to_string();
    let clock = SessionClock::start(1.0);
    let epoch_ms = now.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let boot: Arc<str> = format!("{:x}-{:x}", epoch_ms, std::process::id()).into();
    for unplaced in &plan.unplaced {
        tracing::warn!("broadcast.pairings: no board here for the pairing of {unplaced}");
    }
    let names: Vec<String> = plan.boards.iter().map(|b| b.name.clone()).collect();
    let (requests_tx, requests_rx) = mpsc::unbounded_channel();
    let mut started = match &plan.mqtt {
        Some(mqtt) => {
            let key = operator_key(&plan.key_file)?;
            Some(feed::start(mqtt, boot.clone(), names, epoch_ms, key, requests_tx.clone()).await?)
        }
        None => None,
    };
    let shelf = plan.http.as_ref().map(|_| Arc::new(Shelf::default()));
    let lichess_report = Arc::new(Mutex::new(boardcast_core::lichess::report::LichessReport::default()));
    let console = plan.http.as_ref().map(|settings| {
        // A bad accounts file stops neither the broker (which refuses it
        // itself) nor the pages: the console then lets nobody in.
        let accounts = crate::cmd::accounts::load(&plan.accounts_file).unwrap_or_else(|e| {
            tracing::error!("console: nobody can log in: {e:#}");
            Vec::new()
        });
        let commander = started.as_ref().map(|s| s.commander.clone());
        let console = Console::new(settings.console, accounts, commander);
        console.round.set(http::tournament(&plan), shelf.clone());
        if plan.lichess.is_some() {
            console.round.set_lichess(lichess_report.clone());
        }
        Arc::new(console)
    });
    if let (Some(settings), Some(shelf)) = (&plan.http, &shelf) {
        let ready = started.as_ref().map(|s| &s.ready);
        let address =
            http::start(settings, plan.mqtt.as_ref(), ready, shelf.clone(), console.clone(), shutdown.clone()).await?;
        if let Some(started) = &mut started {
            started.ready.http = Some(address);
            started.ready.console.clone_from(&console);
        }
    }
    let boards: Boards = Arc::new(Mutex::new(HashMap::new()));
    let livechess = match &plan.livechess {
        Some(settings) => {
            let (snapshots, _) =
                livechess::start(settings, plan.site.clone(), boards.clone(), shutdown.clone()).await?;
            Some(snapshots)
        }
        None => None,
    };
    if let Some(started) = &started {
        on_feed(&started.ready);
    }
    let reloading = hangups.map(|hangups| {
        let target = started
            .as_mut()
            .and_then(|started| started.reload.take())
            .unwrap_or_else(|| reload::Target::Nothing("mqtt.enabled = false: there is no broker".to_owned()));
        let console = console.clone().map(|console| (console, plan.accounts_file.clone()));
        tokio::spawn(reload::run(hangups, target, console))
    });
    let delivering = shelf.is_some() || plan.lichess.is_some();
    let (deliver_tx, deliver_rx) = mpsc::unbounded_channel();
    let delivery = deliver::Delivery {
        delay: plan.public_delay,
        shelf,
        lichess: plan.lichess,
        feed: started.as_ref().map(|s| (s.items.clone(), s.topics.clone())),
        cloud: boardcast_core::livechess::cloud::CloudTree::new(
            plan.boards.iter().map(|b| (b.path.board.clone(), livechess::identity(b).serialnr)).collect(),
            plan.site.clone(),
        ),
        report: lichess_report,
    };
    let pool = match (&plan.analysis, &started) {
        (Some(analysis), Some(feed)) => {
            analysis::start(analysis, feed.topics.clone(), plan.public_delay, feed.items.clone())
        }
        (Some(_), None) => {
            tracing::warn!("analysis: enabled, but there is no feed to publish it on (mqtt.enabled = false)");
            None
        }
        _ => None,
    };
    let (pool_positions, pool_task) = match pool {
        Some(pool) => (Some(pool.positions), Some(pool.task)),
        None => (None, None),
    };
    let deliverer = tokio::spawn(deliver::run(delivery, deliver_rx).instrument(tracing::info_span!("deliver")));
    let (pgn_tx, pgn_rx) = mpsc::unbounded_channel();
    let pgn_writer = tokio::spawn(
        pgn::run(plan.pgn_dir.clone(), pgn_rx, delivering.then_some(deliver_tx))
            .instrument(tracing::info_span!("pgn", files = "pgn")),
    );
    let shared = Shared {
        reconstruction: plan.reconstruction,
        link: plan.link,
        reconnect_max: plan.reconnect_max,
        extra_ports: plan.extra_ports,
        recording: plan.recording,
        pgn: pgn_tx,
        file_stamp: started_at.replace([':', '-'], "").trim_end_matches('Z').to_owned(),
        started_at,
        clock,
        epoch_ms,
        feed: started.as_ref().map(|s| feed::BoardFeeds {
            settings: s.settings.clone(),
            items: s.items.clone(),
            marks: s.marks.clone(),
        }),
        speech: plan.speech,
        analysis: pool_positions,
        livechess,
        boards,
        round_now: round_now::RoundNow::default(),
        shutdown: shutdown.clone(),
    };
    let (assigner, assignments) = mpsc::unbounded_channel();
    let router = started.as_ref().map(|started| {
        let router = operator::route(
            requests_rx,
            shared.boards.clone(),
            started.items.clone(),
            started.topics.clone(),
            assigner.clone(),
            shared.round_now.clone(),
        );
        tokio::spawn(router.instrument(tracing::info_span!("operator", who = "operator")))
    });
    drop(requests_tx);
    let tasks = TaskTracker::new();
    // The boards assigned in the console can be un-assigned: each has a
    // stop of its own.
    let running = assign::Running::default();
    let assignments = (assigner, assignments, &running);
    hall(&plan.hall, &plan.boards, console.as_deref(), started.as_ref(), assignments, &shared, &tasks);
    for board in plan.boards {
        if plan.hall.assigned.contains(&board.name) {
            assign::spawn(board, &shared, &tasks, &running);
            continue;
        }
        let span = tracing::info_span!("board", board = %board.name);
        tasks.spawn(supervised(board, shared.clone()).instrument(span));
    }
    // The boards hold the only senders of feed items now: when the last
    // board has stopped, the publisher says goodbye and ends.
    drop(shared);
    tasks.close();
    tasks.wait().await;
    // No board sends positions any more: the pool stops its engines and
    // lets go of the feed.
    if let Some(pool) = pool_task {
        let _ = pool.await;
    }
    // No board is left to command; the router's hold on the feed goes.
    if let Some(router) = router {
        router.abort();
        let _ = router.await;
    }
    let _ = pgn_writer.await;
    // The PGN writer's end closes delivery; its hold on the feed goes.
    let _ = deliverer.await;
    // No reload while the broker stops and its files go.
    if let Some(reloading) = reloading {
        reloading.abort();
        let _ = reloading.await;
    }
    if let Some(started) = started {
        started.finish().await;
    }
    Ok(())
}
