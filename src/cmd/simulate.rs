//! `boardcast simulate`: a capture played as a live DGT board behind a
//! pseudo-terminal.

use std::{fs, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum, builder::TypedValueParser};
use tokio_util::sync::CancellationToken;

use boardcast::shell::simulate::{SimulateSettings, run as simulate};
use boardcast_core::{protocol::Protocol, replay::read_capture, sensor::ClockSide};

/// Plays a capture as a live board (DGT by default; Millennium, Certabo or
/// Sentio with --protocol): creates a pseudo-terminal, links its device at
/// --link, answers the daemon's commands byte for byte as such a board
/// does, and sends what the capture says the board showed, at recorded
/// speed (or --speed N times faster). Point `boardcast run` (a board with
/// `port = "<link>"`) or any software for that board at the link.
///
/// A capture of raw bytes plays only on a board of its own family; a
/// capture of decoded events (`boardcast synth`) on any. The capture starts
/// playing when the daemon first asks the board for updates (a board that
/// streams by itself: at once); until then the board stands as the capture
/// begins. Runs until the capture has been played (and a few seconds more),
/// or Ctrl-C.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The board family to simulate.
    #[arg(long, default_value = "dgt", value_parser = live_protocols())]
    protocol: Protocol,
    /// The capture to play (protocol `dgt` or `events`).
    #[arg(long, value_name = "FILE")]
    capture: PathBuf,
    /// Where to link the board's device (e.g. /tmp/board1).
    #[arg(long, value_name = "PATH")]
    link: PathBuf,
    /// Play at N times the recorded speed.
    #[arg(long, value_name = "N", default_value_t = 1.0)]
    speed: f64,
    /// Pull the cable out this many seconds after the capture starts
    /// playing.
    #[arg(long, value_name = "SECONDS")]
    unplug_at: Option<f64>,
    /// Plug it back in this many seconds after pulling it out (default 2).
    #[arg(long, value_name = "SECONDS", requires = "unplug_at")]
    replug_after: Option<f64>,
    /// For captures of decoded events: which clock display shows White's
    /// time.
    #[arg(long, value_enum, default_value_t = Side::Left)]
    white_clock: Side,
    /// Simulate a noisy cable: the chance (0 to 1) that line noise comes
    /// before what the board sends, and that it loses its end. For testing
    /// that the daemon resynchronises.
    #[arg(long, value_name = "P", default_value_t = 0.0)]
    noise: f64,
    /// The serial number the board gives (default: the digits of the
    /// capture's board name, as five digits: `board-12` → 00012).
    #[arg(long, value_name = "DIGITS")]
    board_serial: Option<String>,
    /// Stop the game while no program has the board open, and go on when
    /// one asks for updates again (for testing a daemon's restart without
    /// losing anything; a real board plays on).
    #[arg(long)]
    pause_while_unread: bool,
}

/// The board families a board can be simulated of (every live family),
/// offered by name in `--help`.
fn live_protocols() -> impl TypedValueParser<Value = Protocol> {
    clap::builder::PossibleValuesParser::new(Protocol::LIVE.map(Protocol::name))
        .try_map(|name| name.parse::<Protocol>())
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Side {
    Left,
    Right,
}

pub(crate) fn run(args: SimulateArgs) -> anyhow::Result<ExitCode> {
    if !(args.speed.is_finite() && args.speed > 0.0) {
        bail!("--speed must be a positive number such as 1 (real time) or 10, not {}", args.speed);
    }
    let seconds = |name: &str, value: Option<f64>| -> anyhow::Result<Option<Duration>> {
        match value {
            Some(s) if !(s.is_finite() && s >= 0.0) => bail!("{name} must be a number of seconds, not {s}"),
            Some(s) => Ok(Some(Duration::from_secs_f64(s))),
            None => Ok(None),
        }
    };
    if !(0.0..=1.0).contains(&args.noise) {
        bail!("--noise must be a chance between 0 and 1, not {}", args.noise);
    }
    let unplug_at = seconds("--unplug-at", args.unplug_at)?;
    let replug_after = seconds("--replug-after", args.replug_after)?.or(unplug_at.map(|_| Duration::from_secs(2)));
    let text = fs::read_to_string(&args.capture).with_context(|| format!("reading {}", args.capture.display()))?;
    let capture = read_capture(&text).with_context(|| format!("{}", args.capture.display()))?;
    if let Some(error) = &capture.error {
        eprintln!(
            "boardcast: {}: {error}; simulating the {} records before it",
            args.capture.display(),
            capture.records.len()
        );
    }
    let protocol = args.protocol;
    if capture.header.protocol != Protocol::EVENTS && capture.header.protocol != protocol {
        bail!(
            "{} holds raw bytes of a {} board, which only a {} board can play (--protocol {}); a capture of decoded events (`boardcast synth`) plays on any board",
            args.capture.display(),
            capture.header.protocol,
            capture.header.protocol,
            capture.header.protocol
        );
    }
    let settings = SimulateSettings {
        protocol,
        link: args.link.clone(),
        speed: args.speed,
        unplug_at,
        replug_after,
        white_side: match args.white_clock {
            Side::Left => ClockSide::Left,
            Side::Right => ClockSide::Right,
        },
        noise: args.noise,
        serial: args.board_serial.clone(),
        pause_while_unread: args.pause_while_unread,
    };
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the event loop")?;
    let simulated = runtime.block_on(async {
        let shutdown = CancellationToken::new();
        let on_signal = shutdown.clone();
        tokio::spawn(async move {
            super::signals::wait().await;
            on_signal.cancel();
        });
        eprintln!("boardcast: simulating board {:?} at {}", capture.header.board, args.link.display());
        simulate(&capture.header, capture.records, settings, Duration::from_secs(3), shutdown)
            .await
            .with_context(|| format!("simulating a board at {}", args.link.display()))
    })?;
    if unplug_at.is_some() {
        eprintln!("boardcast: {} square(s) changed while the cable was out", simulated.squares_changed_while_unplugged);
    }
    Ok(ExitCode::SUCCESS)
}
