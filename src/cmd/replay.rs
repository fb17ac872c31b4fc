//! `boardcast replay`: recorded captures in, PGN and arbiter alerts out.

use std::{
    fs,
    io::{self, Write},
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, bail};
use clap::Args;
use tokio::sync::mpsc;

use boardcast::{
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
    shell::{clock::SessionClock, replay::play},
};

/// Replays sensor captures through the daemon and writes the games as PGN
/// and the arbiter alerts as JSON Lines.
///
/// Captures are files in capture format v1 (see docs/capture-format.md) or
/// folders, of which every `*.jsonl` file is replayed in name order. A bad
/// capture is reported with its file and line; what came before the bad
/// line is still replayed, and so are the other captures. The exit code is
/// 0 when every capture was read whole, 1 otherwise.
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
    let files = capture_files(&args.captures)?;
    let config = ReconstructorConfig::default();
    let mut failed = false;
    let mut captures: Vec<Capture> = Vec::new();
    for file in &files {
        let capture = fs::read_to_string(file)
            .map_err(|e| format!("cannot read: {e}"))
            .and_then(|text| read_capture(&text).map_err(|e| format!("{e}; capture skipped")));
        match capture {
            Ok(capture) => {
                if let Some(error) = &capture.error {
                    eprintln!(
                        "boardcast: {}: {error}; replaying the {} records before it",
                        file.display(),
                        capture.records.len()
                    );
                    failed = true;
                }
                captures.push(capture);
            }
            Err(message) => {
                eprintln!("boardcast: {}: {message}", file.display());
                failed = true;
            }
        }
    }
    if let Some(path) = &args.mqtt {
        let mut lines = String::new();
        for capture in &captures {
            let settings = FeedSettings {
                topics: Topics::new("boardcast", "replay"),
                boot: "replay".into(),
                languages: Language::ALL.to_vec(),
            };
            let board = BoardPath::new("replay", "1", &capture.header.board);
            for published in publications(capture, &config, settings, board, args.public_delay_s * 1000) {
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
        }
        write_file(path, &lines)?;
    }
    let replayed = match args.speed {
        None => captures.into_iter().map(|c| replay_capture(c, &config)).collect(),
        Some(speed) => replay_paced(captures, &config, speed, args.trace)?,
    };
    let mut pgn = String::new();
    let mut alerts = String::new();
    let stderr = io::stderr();
    for replayed in &replayed {
        let board = &replayed.header.board;
        for output in &replayed.outputs {
            if args.trace && args.speed.is_none() {
                trace(board, output);
            }
            if let Output::Event(event) = output
                && let EventKind::Alert(alert) = &event.kind
            {
                if args.alerts.is_some() {
                    alerts.push_str(&alert.to_json(board, event.game, event.seq).to_string());
                    alerts.push('\n');
                } else if !args.trace {
                    let _ = writeln!(stderr.lock(), "{board} game {}: {alert}", event.game);
                }
            }
        }
        for game in &replayed.games {
            write_pgn(game, &mut pgn);
        }
    }
    match &args.pgn {
        Some(path) => write_file(path, &pgn)?,
        None => super::out::write_all(pgn.as_bytes()),
    }
    if let Some(path) = &args.alerts {
        write_file(path, &alerts)?;
    }
    Ok(if failed { ExitCode::from(1) } else { ExitCode::SUCCESS })
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
    let line = match output {
        Output::Event(event) => format!("{board}: {event}"),
        Output::Notice(notice) => format!("{board}: {} {}", notice.t, notice.kind),
    };
    let _ = writeln!(io::stderr().lock(), "{line}");
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

fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}
