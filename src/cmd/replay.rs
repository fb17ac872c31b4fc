//! `boardcast replay`: recorded captures in, PGN and arbiter alerts out.

use std::{
    collections::BTreeMap,
    fs::{self, File},
    io::{self, BufWriter, Write},
    panic::{self, AssertUnwindSafe},
    path::{Path, PathBuf},
    process::ExitCode,
    sync::{
        Condvar, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
};

use anyhow::{Context, bail};
use clap::Args;
use tokio::sync::mpsc;

use boardcast::shell::{clock::SessionClock, replay::play};
use boardcast_core::{
    event::EventKind,
    game::pgn::write_pgn,
    publish::{
        Qos,
        board::FeedSettings,
        render::Language,
        topics::{BoardPath, Topics},
    },
    reconstruct::ReconstructorConfig,
    replay::{Capture, Replayed, publications, read_capture, replay_capture},
    session::Output,
};

/// Replays sensor captures through the daemon and writes the games as PGN
/// and the arbiter alerts as JSON Lines.
///
/// Captures are files in capture format v1 (see docs/capture-format.md) or
/// folders, of which every `*.jsonl` file is replayed in name order (but
/// for the labels and the index `boardcast synth` writes beside its
/// captures: `*.labels.jsonl`, `corpus.jsonl`). A bad
/// capture is reported with its file and line; what came before the bad
/// line is still replayed, and so are the other captures. The exit code is
/// 0 when every capture was read whole, 1 otherwise.
///
/// Games and alerts are written as each capture finishes, in the captures'
/// order, so a season of recordings needs the memory of a few captures,
/// and `--jobs` replays several at once with the same bytes out.
#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// Capture files, or folders of `*.jsonl` captures.
    #[arg(required = true, value_name = "CAPTURE")]
    captures: Vec<PathBuf>,
    /// Replay as fast as possible in virtual time (the default).
    #[arg(long, conflicts_with = "speed")]
    fast: bool,
    /// Replay at N times the recorded speed (1 = real time), all captures at
    /// once as boards in a hall; the output is the same as with --fast.
    #[arg(long, value_name = "N")]
    speed: Option<f64>,
    /// Write the games here (PGN) instead of to standard output.
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// Write the alerts here (JSON Lines) instead of to standard error as
    /// readable lines.
    #[arg(long, value_name = "FILE")]
    alerts: Option<PathBuf>,
    /// Write what the live daemon would have published over MQTT here (JSON
    /// Lines: time, topic, retain, QoS, payload), as board <name> of event
    /// "replay" round "1", with no public delay unless --public-delay-s.
    #[arg(long, value_name = "FILE")]
    mqtt: Option<PathBuf>,
    /// With --mqtt: how far the public tree is behind.
    #[arg(long, value_name = "SECONDS", default_value_t = 0, requires = "mqtt")]
    public_delay_s: u64,
    /// Replay N captures at once (default: one per core). The output is the
    /// same whatever N; without --speed only.
    #[arg(long, value_name = "N", conflicts_with = "speed")]
    jobs: Option<usize>,
    /// Print every event (moves made, completed, amended, retracted, clock,
    /// status, alerts) and every decoding problem to standard error as it
    /// happens.
    #[arg(long)]
    trace: bool,
}

pub(crate) fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    if let Some(speed) = args.speed
        && !(speed.is_finite() && speed > 0.0)
    {
        bail!("--speed must be a positive number such as 1 (real time) or 10, not {speed}");
    }
    if args.jobs == Some(0) {
        bail!("--jobs must be at least 1 (the number of captures replayed at once)");
    }
    let files = capture_files(&args.captures)?;
    let config = ReconstructorConfig::default();
    let mut sink = Sink::open(&args)?;
    let render = Render {
        trace: args.trace && args.speed.is_none(),
        alerts_file: args.alerts.is_some(),
        mqtt: args.mqtt.as_ref().map(|_| args.public_delay_s * 1000),
    };
    match args.speed {
        None => {
            let jobs = args.jobs.unwrap_or_else(|| thread::available_parallelism().map_or(1, |n| n.get()));
            in_order(&files, jobs, |file| render.capture(file, read(file), &config), |done| sink.take(done))?;
        }
        Some(speed) => {
            // A hall replayed at recorded pace: every board at once, so
            // every capture is read first.
            let mut captures = Vec::new();
            for file in &files {
                match read(file) {
                    Ok((capture, lossy)) => captures.push((file.clone(), capture, lossy)),
                    Err(note) => sink.take(Done { failed: true, notes: note, ..Done::default() })?,
                }
            }
            let headers: Vec<_> =
                captures.iter().map(|(file, c, lossy)| (file.clone(), read_notes(file, c, *lossy))).collect();
            for (file, capture, _) in &captures {
                if let Some(mqtt) = render.mqtt {
                    sink.take(Done { mqtt: mqtt_lines(capture, &config, mqtt), ..Done::default() })
                        .with_context(|| format!("replaying {}", file.display()))?;
                }
            }
            let replayed = replay_paced(captures.into_iter().map(|(_, c, _)| c).collect(), &config, speed, args.trace)?;
            for ((_, (notes, failed)), replayed) in headers.into_iter().zip(replayed) {
                let mut done = render.replayed(&replayed);
                done.notes = notes;
                done.failed = failed;
                sink.take(done)?;
            }
        }
    }
    sink.finish()
}

/// A capture file's text, read whole. Bytes that are not UTF-8 (a damaged
/// disk, a tool that wrote Latin-1) do not cost the whole capture: they
/// become U+FFFD, and the line that holds them is reported by the reader
/// like any other damaged line.
fn read(file: &Path) -> Result<(Capture, bool), String> {
    let bytes = fs::read(file).map_err(|e| format!("boardcast: {}: cannot read: {e}\n", file.display()))?;
    let (text, lossy) = match String::from_utf8_lossy(&bytes) {
        std::borrow::Cow::Borrowed(text) => (std::borrow::Cow::Borrowed(text), false),
        owned => (owned, true),
    };
    read_capture(&text)
        .map(|capture| (capture, lossy))
        .map_err(|e| format!("boardcast: {}: {e}; capture skipped\n", file.display()))
}

/// What is said on standard error about a capture read with a problem, and
/// whether the exit status must say so.
fn read_notes(file: &Path, capture: &Capture, lossy: bool) -> (String, bool) {
    let mut notes = String::new();
    if lossy {
        notes.push_str(&format!("boardcast: {}: bytes that are not UTF-8 were replaced\n", file.display()));
    }
    if let Some(error) = &capture.error {
        notes.push_str(&format!(
            "boardcast: {}: {error}; replaying the {} records before it\n",
            file.display(),
            capture.records.len()
        ));
    }
    (notes, lossy || capture.error.is_some())
}

/// One capture's share of the output, rendered by a worker and written by
/// [`Sink`] in the order of the captures.
#[derive(Debug, Default)]
struct Done {
    /// Problems reading the capture, for standard error.
    notes: String,
    /// The exit status must be 1.
    failed: bool,
    /// Events traced, or alerts as readable lines, for standard error.
    stderr: String,
    /// Alerts as JSON Lines, for `--alerts`.
    alerts: String,
    /// The games.
    pgn: String,
    /// The publications, for `--mqtt`.
    mqtt: String,
}

/// How a capture's outputs are turned into text.
struct Render {
    /// Every event to standard error (`--trace` without `--speed`).
    trace: bool,
    /// Alerts go to the `--alerts` file rather than standard error.
    alerts_file: bool,
    /// `--mqtt`, with the public delay in milliseconds.
    mqtt: Option<u64>,
}

impl Render {
    /// Reads, replays and renders one capture (a worker's whole job).
    fn capture(&self, file: &Path, read: Result<(Capture, bool), String>, config: &ReconstructorConfig) -> Done {
        let (capture, lossy) = match read {
            Ok(read) => read,
            Err(notes) => return Done { notes, failed: true, ..Done::default() },
        };
        let (notes, failed) = read_notes(file, &capture, lossy);
        let mqtt = self.mqtt.map(|delay| mqtt_lines(&capture, config, delay)).unwrap_or_default();
        let mut done = self.replayed(&replay_capture(capture, config));
        done.notes = notes;
        done.failed = failed;
        done.mqtt = mqtt;
        done
    }

    fn replayed(&self, replayed: &Replayed) -> Done {
        let mut done = Done::default();
        let board = &replayed.header.board;
        for output in &replayed.outputs {
            if self.trace {
                done.stderr.push_str(&trace_line(board, output));
            }
            if let Output::Event(event) = output
                && let EventKind::Alert(alert) = &event.kind
            {
                if self.alerts_file {
                    done.alerts.push_str(
                        &boardcast_core::publish::payload::alert_line(alert, board, event.game, event.seq).to_string(),
                    );
                    done.alerts.push('\n');
                } else if !self.trace {
                    done.stderr.push_str(&format!("{board} game {}: {alert}\n", event.game));
                }
            }
        }
        for game in &replayed.games {
            write_pgn(game, &mut done.pgn);
        }
        done
    }
}

/// What the live daemon would have published for a capture, as JSON Lines.
fn mqtt_lines(capture: &Capture, config: &ReconstructorConfig, public_delay_ms: u64) -> String {
    let settings = FeedSettings {
        topics: Topics::new("boardcast", "replay"),
        boot: "replay".into(),
        languages: Language::ALL.to_vec(),
    };
    let board = BoardPath::new("replay", "1", &capture.header.board);
    let mut lines = String::new();
    for published in publications(capture, config, settings, board, public_delay_ms) {
        let p = &published.publication;
        let line = serde_json::json!({
            "t_ms": published.t_ms,
            "topic": p.topic,
            "retain": p.retain,
            "qos": if p.qos == Qos::AtLeastOnce { 1 } else { 0 },
            "payload": p.payload,
        });
        lines.push_str(&line.to_string());
        lines.push('\n');
    }
    lines
}

/// Where the output goes, written capture by capture so that a season of
/// recordings needs no more memory than its largest capture.
struct Sink {
    pgn: Option<(PathBuf, BufWriter<File>)>,
    alerts: Option<(PathBuf, BufWriter<File>)>,
    mqtt: Option<(PathBuf, BufWriter<File>)>,
    failed: bool,
}

impl Sink {
    fn open(args: &ReplayArgs) -> anyhow::Result<Self> {
        let create = |path: &Option<PathBuf>| -> anyhow::Result<Option<(PathBuf, BufWriter<File>)>> {
            path.as_ref()
                .map(|path| {
                    File::create(path)
                        .map(|file| (path.clone(), BufWriter::new(file)))
                        .with_context(|| format!("creating {}", path.display()))
                })
                .transpose()
        };
        Ok(Self { pgn: create(&args.pgn)?, alerts: create(&args.alerts)?, mqtt: create(&args.mqtt)?, failed: false })
    }

    fn take(&mut self, done: Done) -> anyhow::Result<()> {
        self.failed |= done.failed;
        if !done.notes.is_empty() || !done.stderr.is_empty() {
            let mut stderr = io::stderr().lock();
            let _ = stderr.write_all(done.notes.as_bytes());
            let _ = stderr.write_all(done.stderr.as_bytes());
        }
        for (target, text) in [(&mut self.mqtt, &done.mqtt), (&mut self.alerts, &done.alerts)] {
            if let Some((path, file)) = target {
                file.write_all(text.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
            }
        }
        match &mut self.pgn {
            Some((path, file)) => {
                file.write_all(done.pgn.as_bytes()).with_context(|| format!("writing {}", path.display()))?
            }
            None if !done.pgn.is_empty() => super::out::write_all(done.pgn.as_bytes()),
            None => {}
        }
        Ok(())
    }

    fn finish(self) -> anyhow::Result<ExitCode> {
        for (path, mut file) in [self.mqtt, self.alerts, self.pgn].into_iter().flatten() {
            file.flush().with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(if self.failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
    }
}

/// Runs `work` on every file with `jobs` threads and hands the results to
/// `emit` in the files' order. Workers run at most a few captures ahead of
/// the one being written, so memory stays that of a few captures however
/// many there are; with one job nothing is spawned.
fn in_order<W, E>(files: &[PathBuf], jobs: usize, work: W, mut emit: E) -> anyhow::Result<()>
where
    W: Fn(&Path) -> Done + Sync,
    E: FnMut(Done) -> anyhow::Result<()>,
{
    // A panic is a broken invariant; it must not leave the writer waiting
    // for a capture that will never come, nor lose the other captures.
    let guarded = |file: &Path| {
        panic::catch_unwind(AssertUnwindSafe(|| work(file))).unwrap_or_else(|_| Done {
            notes: format!(
                "boardcast: {}: internal error while replaying; capture skipped (please report it)\n",
                file.display()
            ),
            failed: true,
            ..Done::default()
        })
    };
    if jobs <= 1 || files.len() <= 1 {
        return files.iter().try_for_each(|file| emit(guarded(file)));
    }
    struct Shared {
        written: usize,
        ready: BTreeMap<usize, Done>,
        stop: bool,
    }
    let ahead = jobs * 2;
    let next = AtomicUsize::new(0);
    let shared = Mutex::new(Shared { written: 0, ready: BTreeMap::new(), stop: false });
    let changed = Condvar::new();
    let lock = || shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    thread::scope(|scope| {
        for _ in 0..jobs.min(files.len()) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(i) else { break };
                    let mut state = lock();
                    while i >= state.written + ahead && !state.stop {
                        state = changed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
                    }
                    if state.stop {
                        break;
                    }
                    drop(state);
                    let done = guarded(file);
                    lock().ready.insert(i, done);
                    changed.notify_all();
                }
            });
        }
        let result = (0..files.len()).try_for_each(|i| {
            let mut state = lock();
            let done = loop {
                if let Some(done) = state.ready.remove(&i) {
                    break done;
                }
                state = changed.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
            };
            drop(state);
            let result = emit(done);
            lock().written = i + 1;
            changed.notify_all();
            result
        });
        if result.is_err() {
            lock().stop = true;
            changed.notify_all();
        }
        result
    })
}

/// Plays every capture at once through the async driver, at `speed` times
/// recorded speed, tracing events as they happen if asked.
fn replay_paced(
    captures: Vec<Capture>,
    config: &ReconstructorConfig,
    speed: f64,
    trace_events: bool,
) -> anyhow::Result<Vec<Replayed>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .context("starting the replay's event loop")?;
    runtime.block_on(async {
        let clock = SessionClock::start(speed);
        let mut tasks = Vec::new();
        for capture in captures {
            let (tx, mut rx) = mpsc::unbounded_channel();
            let config = config.clone();
            let header = capture.header.clone();
            let board = header.board.clone();
            let session = tokio::spawn(async move { play(&header, capture.records, config, clock, tx).await });
            let collector = tokio::spawn(async move {
                let mut outputs = Vec::new();
                while let Some(output) = rx.recv().await {
                    if trace_events {
                        trace(&board, &output);
                    }
                    outputs.push(output);
                }
                outputs
            });
            tasks.push((capture.header, capture.error, session, collector));
        }
        let mut replayed = Vec::new();
        for (header, error, session, collector) in tasks {
            let session = session.await.context("a replay task failed")?;
            let outputs = collector.await.context("a replay task failed")?;
            let records = 0;
            replayed.push(Replayed { header, outputs, games: session.into_games(), error, records });
        }
        Ok(replayed)
    })
}

fn trace(board: &str, output: &Output) {
    let _ = io::stderr().lock().write_all(trace_line(board, output).as_bytes());
}

fn trace_line(board: &str, output: &Output) -> String {
    match output {
        Output::Event(event) => format!("{board}: {event}\n"),
        Output::Notice(notice) => format!("{board}: {} {}\n", notice.t, notice.kind),
    }
}

/// Whether `path` is one of the files `boardcast synth` writes beside its
/// captures (what the Laws expect, and the index): replaying a folder it
/// made must not call them bad captures. Named explicitly, they are read
/// as captures (and refused as such).
fn is_synth_sidecar(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    name.ends_with(".labels.jsonl") || name == "corpus.jsonl"
}

/// The capture files named, with folders expanded to their `*.jsonl` files.
fn capture_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = fs::read_dir(path)
                .with_context(|| format!("reading the folder {}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file())
                .filter(|p| !is_synth_sidecar(p))
                .collect();
            if found.is_empty() {
                bail!("the folder {} holds no *.jsonl captures", path.display());
            }
            found.sort();
            files.extend(found);
        } else if path.exists() {
            files.push(path.clone());
        } else {
            bail!("{}: no such file or folder", path.display());
        }
    }
    Ok(files)
}
