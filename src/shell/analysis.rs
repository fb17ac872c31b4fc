//! The engine pool (`[analysis]`, docs/displays.md "Analysis"): UCI
//! engines as child processes, fed the positions the boards reach, their
//! results handed to the publisher as [`Item::Analysis`], which the hub lets
//! out only after the public `state` showing the position.
//!
//! The decisions are the core's ([`Schedule`]: newest first, stale ones
//! dropped, a result held until its position is public; [`Search`]: the
//! engine's lines); this task only runs the engines and the clock:
//!
//! - one task per engine, each asking for work when idle, so a slow engine
//!   holds up nobody and a board's driver never waits for analysis;
//! - an engine that exits, or says nothing within its budget plus
//!   `hung_after_ms`, is killed and started again; meanwhile the board it
//!   was analysing has its analysis cleared (an empty retained message)
//!   rather than left showing an older position's;
//! - an engine that cannot be started is tried again, less and less often,
//!   and said once per reason.

use std::{
    path::PathBuf,
    process::Stdio,
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines},
    process::{Child, ChildStdin, ChildStdout, Command},
    sync::mpsc,
    time::{Instant, sleep, sleep_until, timeout, timeout_at},
};
use tracing::{debug, info, warn};

use boardcast_core::{
    analysis::{
        self,
        schedule::{Job, Position, Schedule},
        uci::{self, Budget, EngineLine, Evaluation, Search},
    },
    publish::{Item, topics::Topics},
    time::Timestamp,
};

/// What the pool needs.
#[derive(Clone, Debug)]
pub struct PoolSettings {
    /// The engine's program.
    pub engine: PathBuf,
    /// Engines side by side.
    pub engines: usize,
    /// Each engine's `Threads`.
    pub threads: u32,
    /// Each engine's `Hash` in MiB.
    pub hash_mb: u32,
    /// The budget per position.
    pub budget: Budget,
    /// The longest a search may take before the engine counts as hung.
    pub deadline: Duration,
    /// The engines' nice value (0 to 19).
    pub nice: i32,
    /// The public tree's delay.
    pub delay: Duration,
    /// Topic names.
    pub topics: Topics,
}

/// How long an engine may take to introduce itself and to be ready (a
/// large hash table is allocated at `isready`).
const HANDSHAKE: Duration = Duration::from_secs(30);

/// What an engine task tells the pool.
#[derive(Debug)]
enum Report {
    /// The engine runs and waits for work.
    Ready { worker: usize, name: String },
    /// A search ended.
    Done { worker: usize, id: u64, evaluation: Evaluation },
    /// The engine failed on job `id` and is being started again.
    Failed { id: u64 },
    /// The position could not be searched (the engine is fine).
    Refused { worker: usize, id: u64 },
}

/// Runs the pool until `positions` closes (every board has stopped).
pub async fn run(
    settings: PoolSettings,
    mut positions: mpsc::UnboundedReceiver<Position>,
    items: mpsc::UnboundedSender<Item>,
) {
    let settings = Arc::new(settings);
    let origin = Instant::now();
    let now = || Timestamp::from_micros(origin.elapsed().as_micros() as u64);
    let mut schedule = Schedule::new(settings.delay);
    let (reports_tx, mut reports) = mpsc::unbounded_channel();
    let mut workers = Vec::with_capacity(settings.engines);
    for worker in 0..settings.engines {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        tokio::spawn(engine_task(worker, settings.clone(), jobs_rx, reports_tx.clone()));
        workers.push(jobs_tx);
    }
    drop(reports_tx);
    let mut idle: Vec<usize> = Vec::new();
    let mut name = String::new();
    loop {
        let wake = schedule.poll_timeout().map(|at| origin + at.saturating_since(Timestamp::ZERO));
        tokio::select! {
            position = positions.recv() => match position {
                Some(position) => {
                    schedule.handle_position(now(), position);
                    while let Ok(position) = positions.try_recv() {
                        schedule.handle_position(now(), position);
                    }
                }
                None => break,
            },
            Some(report) = reports.recv() => match report {
                Report::Ready { worker, name: engine } => {
                    name = engine;
                    idle.push(worker);
                }
                Report::Done { worker, id, evaluation } => {
                    schedule.handle_result(now(), id, evaluation);
                    idle.push(worker);
                }
                Report::Refused { worker, id } => {
                    schedule.handle_failure(now(), id);
                    idle.push(worker);
                }
                Report::Failed { id } => schedule.handle_failure(now(), id),
            },
            () = sleep_until(wake.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600))), if wake.is_some() => {
                schedule.handle_timeout(now());
            }
        }
        while let Some(worker) = idle.last().copied() {
            let Some(job) = schedule.next_job(now()) else { break };
            idle.pop();
            let _ = workers[worker].send(job);
        }
        while let Some(release) = schedule.poll_release() {
            let _ = items.send(analysis::item(&settings.topics, &release, &name, wall_ms()));
        }
    }
    // The boards have stopped: the engines are told to quit as their job
    // channels close; results still held are not released early.
}

/// One engine, started again whenever it fails, until its jobs close.
async fn engine_task(
    worker: usize,
    settings: Arc<PoolSettings>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    reports: mpsc::UnboundedSender<Report>,
) {
    let mut retry = Duration::from_secs(1);
    let mut failing: Option<String> = None;
    loop {
        let mut engine = match Engine::start(&settings).await {
            Ok(engine) => engine,
            Err(why) => {
                if failing.as_ref() != Some(&why) {
                    warn!(
                        "analysis: cannot start the engine {}: {why}; trying again in {} s and then less often (the feed goes on without analysis meanwhile)",
                        settings.engine.display(),
                        retry.as_secs()
                    );
                    failing = Some(why);
                }
                // Stop trying once the pool has stopped.
                tokio::select! {
                    () = sleep(retry) => {}
                    () = reports.closed() => return,
                }
                retry = (retry * 2).min(Duration::from_secs(30));
                continue;
            }
        };
        if failing.take().is_some() || worker == 0 {
            info!(
                "analysis: engine {} ({}) runs with {} thread(s) and {} MiB hash",
                worker + 1,
                engine.name,
                settings.threads,
                settings.hash_mb
            );
        }
        retry = Duration::from_secs(1);
        if reports.send(Report::Ready { worker, name: engine.name.clone() }).is_err() {
            return;
        }
        loop {
            let Some(job) = jobs.recv().await else {
                engine.quit().await;
                return;
            };
            match engine.search(&job.position.fen, settings.budget, settings.deadline).await {
                Ok(evaluation) => {
                    let _ = reports.send(Report::Done { worker, id: job.id, evaluation });
                }
                Err(Failure::Position(why)) => {
                    warn!("analysis: board {}: {why}", job.position.name);
                    let _ = reports.send(Report::Refused { worker, id: job.id });
                }
                Err(Failure::Engine(why)) => {
                    warn!(
                        "analysis: engine {} ({}) {why} on board {} (ply {}): killed and started again; the board's analysis is cleared meanwhile",
                        worker + 1,
                        engine.name,
                        job.position.name,
                        job.position.ply
                    );
                    engine.kill().await;
                    let _ = reports.send(Report::Failed { id: job.id });
                    break;
                }
            }
        }
    }
}

/// Why a search gave nothing.
enum Failure {
    /// The engine is broken (exited, hung, talks nonsense): start it again.
    Engine(String),
    /// The position cannot be searched; the engine is fine.
    Position(String),
}

/// Makes the engine run at nice value `nice`: an engine searching takes a
/// whole core per thread, and on a hall PC with fewer spare cores than
/// engine threads it would otherwise delay the boards' moves (BENCHMARKS.md
/// §13: with one engine on two cores the `made` p99 grew 3.8 times at nice
/// 0, 7 % at nice 19, while the engine still had 80 % of a core).
/// Spectators' analysis waits; the record does not.
#[allow(unsafe_code)]
fn gentle(command: &mut Command, nice: i32) {
    if nice == 0 {
        return;
    }
    // SAFETY: the closure runs in the forked child before exec and calls
    // only setpriority(2), an async-signal-safe system call.
    unsafe {
        command.pre_exec(move || {
            if nix::libc::setpriority(nix::libc::PRIO_PROCESS, 0, nice) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A running engine.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    name: String,
}

impl Engine {
    /// Starts the engine and goes through the handshake.
    async fn start(settings: &PoolSettings) -> Result<Self, String> {
        let mut command = Command::new(&settings.engine);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).kill_on_drop(true);
        gentle(&mut command, settings.nice);
        let mut child = command.spawn().map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut engine = Self { child, stdin, lines: BufReader::new(stdout).lines(), name: String::new() };
        let handshake = async {
            engine.send(&uci::Command::Uci).await?;
            loop {
                match engine.read().await? {
                    EngineLine::Name(name) => engine.name = name,
                    EngineLine::UciOk => break,
                    _ => {}
                }
            }
            for (name, value) in [("Threads", settings.threads), ("Hash", settings.hash_mb)] {
                let option = uci::Command::SetOption { name: name.into(), value: value.to_string() };
                engine.send(&option).await?;
            }
            engine.send(&uci::Command::IsReady).await?;
            while engine.read().await? != EngineLine::ReadyOk {}
            Ok::<(), String>(())
        };
        match timeout(HANDSHAKE, handshake).await {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Err(format!("{why} (is it a UCI chess engine?)")),
            Err(_) => {
                return Err(format!("no uciok/readyok within {} s (is it a UCI chess engine?)", HANDSHAKE.as_secs()));
            }
        }
        if engine.name.is_empty() {
            engine.name = settings.engine.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        }
        Ok(engine)
    }

    /// One search of `fen`, within `deadline`.
    async fn search(&mut self, fen: &str, budget: Budget, deadline: Duration) -> Result<Evaluation, Failure> {
        let mut search = Search::new(fen).map_err(|e| Failure::Position(e.to_string()))?;
        let until = Instant::now() + deadline;
        let run = async {
            self.send(&uci::Command::Position { fen: fen.to_owned() }).await?;
            self.send(&uci::Command::Go(budget)).await?;
            loop {
                let line = self.read().await?;
                if let Some(result) = search.handle_line(&line) {
                    return result.map_err(|e| e.to_string());
                }
            }
        };
        match timeout_at(until, run).await {
            Ok(result) => result.map_err(Failure::Engine),
            Err(_) => Err(Failure::Engine(format!("hung: no bestmove within {} ms", deadline.as_millis()))),
        }
    }

    async fn send(&mut self, command: &uci::Command) -> Result<(), String> {
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await.map_err(|e| format!("stopped listening ({e})"))?;
        self.stdin.flush().await.map_err(|e| format!("stopped listening ({e})"))
    }

    /// The next line the engine prints that makes sense.
    async fn read(&mut self) -> Result<EngineLine, String> {
        loop {
            let Some(line) = self.lines.next_line().await.map_err(|e| format!("cannot be read ({e})"))? else {
                return Err(match self.child.try_wait() {
                    Ok(Some(status)) => format!("exited ({status})"),
                    _ => "closed its output".to_owned(),
                });
            };
            match EngineLine::parse(&line) {
                Ok(parsed) => return Ok(parsed),
                // One garbled line is not worth a restart.
                Err(why) => debug!("analysis: {why}"),
            }
        }
    }

    /// Asks the engine to quit, and kills it if it does not at once.
    async fn quit(mut self) {
        let _ = self.send(&uci::Command::Quit).await;
        if timeout(Duration::from_secs(1), self.child.wait()).await.is_err() {
            self.kill().await;
        }
    }

    async fn kill(&mut self) {
        let _ = self.child.kill().await;
    }
}

/// Wall-clock milliseconds now (the payload's `ts_ms`).
fn wall_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}
