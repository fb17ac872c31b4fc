//! `boardcast calibrate`: learns which RFID tag is which piece of a Certabo
//! board's set, from the board's own reports of a known set-up, and writes
//! the calibration file a board's `calibration = "…"` names.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::ExitCode,
    time::Duration,
};

use anyhow::{Context, anyhow, bail};
use clap::Args;
use shakmaty::{Color, Piece, Role};
use tokio::io::AsyncReadExt;
use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, StopBits};

use boardcast::{
    config::FindBoard,
    shell::{files::write_atomic, holders::holders},
};
use boardcast_core::protocol::certabo::{
    Calibration, CalibrationError,
    calibration::{MIN_REPORTS, Tags},
    line::{Line, LineReader, OCCUPANCY_NUMBERS, TAG_NUMBERS},
};

use super::settings;

/// What to tell the user to do.
const SETUP: &str =
    "place the pieces in the start position plus a spare black queen on d6 and a spare white queen on d3";

/// Calibrates a Certabo board: learns the RFID tag of every piece of its
/// set. Before running it, place the pieces in the start position plus a
/// spare black queen on d6 and a spare white queen on d3. The board is
/// read until its reports agree (a second or so), and the calibration is
/// written as JSON (`{"tag": "piece letter", …}`) to --out, or to the file
/// the board's `calibration` key names.
///
/// Give either --port, or --config and --board to take the port (and the
/// calibration file) from the configuration. Stop `boardcast run` first:
/// the port is opened exclusively.
///
/// A calibration knows only the pieces it was shown: pieces from outside
/// the set (a third queen, an extra rook for an under-promotion) read as
/// unknown until their tags are added to the file by hand.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("where").required(true).args(["port", "config"]))]
pub(crate) struct CalibrateArgs {
    /// The board's serial port (e.g. /dev/ttyUSB0).
    #[arg(long, value_name = "PATH")]
    port: Option<PathBuf>,
    /// A configuration file: the board's port and calibration file are
    /// taken from it.
    #[arg(long, value_name = "FILE", requires = "board")]
    config: Option<PathBuf>,
    /// The board's name in the configuration.
    #[arg(long, value_name = "NAME", requires = "config")]
    board: Option<String>,
    /// Where to write the calibration (default: the board's `calibration`
    /// file in the configuration).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// How many reports must agree (at least 7).
    #[arg(long, value_name = "N", default_value_t = 10)]
    reports: usize,
    /// Give up after this many seconds without a good calibration.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    wait_s: u64,
}

pub(crate) fn run(args: CalibrateArgs) -> anyhow::Result<ExitCode> {
    if args.reports < MIN_REPORTS {
        bail!("--reports {}: a calibration needs at least {MIN_REPORTS} reports", args.reports);
    }
    let (port, out) = where_to(&args)?;
    let by = holders(&port);
    if !by.is_empty() {
        let names: Vec<String> = by.iter().map(ToString::to_string).collect();
        bail!("{} is in use by {}: stop it first (calibrate before `boardcast run`)", port.display(), names.join(", "));
    }
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the event loop")?;
    eprintln!("boardcast: reading the Certabo board at {}; {SETUP}", port.display());
    let (calibration, reports) = runtime.block_on(read(&port, args.reports, Duration::from_secs(args.wait_s)))?;
    let entries: BTreeMap<String, String> =
        calibration.entries().into_iter().map(|(tag, letter)| (tag, letter.to_string())).collect();
    let mut text = serde_json::to_string_pretty(&entries).context("writing the calibration as JSON")?;
    text.push('\n');
    runtime.block_on(write_atomic(&out, &text)).with_context(|| format!("writing {}", out.display()))?;
    outln!("calibrated {} pieces from {reports} reports, written to {}:", calibration.len(), out.display());
    for color in Color::ALL {
        let counts: Vec<String> = Role::ALL
            .iter()
            .map(|&role| {
                let piece = Piece { color, role };
                let n = entries.values().filter(|l| l.chars().eq([piece.char()])).count();
                format!("{} {n}", piece.char())
            })
            .collect();
        outln!("  {}: {}", if color == Color::White { "white" } else { "black" }, counts.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// The port to read and the file to write.
fn where_to(args: &CalibrateArgs) -> anyhow::Result<(PathBuf, PathBuf)> {
    let (Some(file), Some(name)) = (&args.config, &args.board) else {
        let port = args.port.clone().ok_or_else(|| anyhow!("give --port, or --config and --board"))?;
        let out = args.out.clone().ok_or_else(|| anyhow!("--out FILE: where to write the calibration"))?;
        return Ok((port, out));
    };
    let loaded = settings::load(Some(file))?;
    let boards = loaded.config.boards().map_err(|e| anyhow!("{e} (in {})", file.display()))?;
    let Some(board) = boards.iter().find(|b| &b.name == name) else {
        let names: Vec<&str> = boards.iter().map(|b| b.name.as_str()).collect();
        bail!("{} has no board named {name:?} (its boards: {})", file.display(), names.join(", "));
    };
    if !board.protocol.features().calibration {
        bail!(
            "board {name:?} is a {} board: only {} boards are calibrated",
            board.protocol,
            boardcast_core::protocol::names_of(|f| f.features.calibration)
        );
    }
    let FindBoard::Port(port) = &board.find else {
        bail!("board {name:?} has no port in {}: give --port", file.display());
    };
    let port = args.port.clone().unwrap_or_else(|| port.clone());
    let out = args.out.clone().or_else(|| board.calibration.clone()).ok_or_else(|| {
        anyhow!(
            "board {name:?} has no `calibration = \"…\"` in {}: give --out FILE (and add the key, so that the daemon reads it)",
            file.display()
        )
    })?;
    Ok((port, out))
}

/// Reads reports until the last `window` of them make a calibration, or
/// `wait` has passed. Returns the calibration and how many reports it was
/// made from.
async fn read(port: &Path, window: usize, wait: Duration) -> anyhow::Result<(Calibration, usize)> {
    let mut serial = tokio_serial::new(port.to_string_lossy(), 38_400)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .open_native_async()
        .with_context(|| format!("opening {}", port.display()))?;
    if serial.set_exclusive(true).is_err() {
        bail!("{} is in use by another program: stop it first", port.display());
    }
    let deadline = tokio::time::Instant::now() + wait;
    let mut lines = LineReader::new();
    let mut recent: Vec<Tags> = Vec::new();
    let mut seen = 0usize;
    let mut last_error: Option<CalibrationError> = None;
    let mut buf = [0u8; 1024];
    loop {
        let n = match tokio::time::timeout_at(deadline, serial.read(&mut buf)).await {
            Ok(read) => read.with_context(|| format!("reading {}", port.display()))?,
            Err(_) => break,
        };
        if n == 0 {
            bail!("{} closed (the board was unplugged?)", port.display());
        }
        lines.push(&buf[..n]);
        while let Some(line) = lines.next_line() {
            let Line::Numbers(numbers) = line else { continue };
            if numbers.len() == OCCUPANCY_NUMBERS {
                bail!(
                    "the board at {} is an occupancy-only (Sentio-format) board: it has no tags to calibrate",
                    port.display()
                );
            }
            if numbers.len() != TAG_NUMBERS {
                continue;
            }
            let mut tags: Tags = [[0; 5]; 64];
            for (tag, group) in tags.iter_mut().zip(numbers.chunks_exact(5)) {
                tag.copy_from_slice(group);
            }
            seen += 1;
            recent.push(tags);
            if recent.len() > window {
                recent.remove(0);
            }
            if recent.len() < window {
                continue;
            }
            match Calibration::from_reports(&recent) {
                Ok(calibration) => return Ok((calibration, recent.len())),
                Err(error) => {
                    // Said once per problem: the user is putting it right.
                    if last_error.as_ref() != Some(&error) {
                        eprintln!("boardcast: not yet: {error}");
                    }
                    last_error = Some(error);
                }
            }
        }
    }
    match last_error {
        Some(error) => bail!("no calibration after {} s: {error} ({SETUP})", wait.as_secs()),
        None if seen > 0 => {
            bail!("only {seen} report(s) from the board in {} s; a calibration needs {window}", wait.as_secs())
        }
        None => bail!(
            "no report from a Certabo board at {} in {} s: is it the right port, and the board plugged in? (`boardcast list-ports` shows what answers where)",
            port.display(),
            wait.as_secs()
        ),
    }
}
