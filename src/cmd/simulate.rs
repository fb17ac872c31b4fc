//! `boardcast simulate`: a capture played as a live board behind a
//! pseudo-terminal, or as a Bluetooth LE board on the mock BlueZ.

use std::{fs, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::{Context, bail};
use clap::{Args, ValueEnum, builder::TypedValueParser};
use tokio_util::sync::CancellationToken;

use boardcast::shell::simulate::{BluetoothBoard, SimulateSettings, run as simulate, run_bluetooth};
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
///
/// With --bluetooth ADDRESS it plays a Bluetooth LE board instead (a family
/// with Bluetooth LE: the capture's own, or --protocol for a capture of
/// events) on the MOCK BlueZ only: a real BlueZ cannot stand in for a
/// board. Start the mock first (python3 -m dbusmock --system -t
/// bluez_gatt.py on a private D-Bus, DBUS_SYSTEM_BUS_ADDRESS pointing at it;
/// docs/boards.md, "Try a Bluetooth family without the board"). The board
/// is added with its family's service, the capture starts once a host has
/// connected and started notifications, and what the host writes is
/// answered as the board does.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The board family to simulate [default: dgt; with --bluetooth, the
    /// capture's family].
    #[arg(long, value_parser = live_protocols())]
    protocol: Option<Protocol>,
    /// The capture to play (protocol `dgt` or `events`).
    #[arg(long, value_name = "FILE")]
    capture: PathBuf,
    /// Where to link the board's device (e.g. /tmp/board1).
    #[arg(long, value_name = "PATH", required_unless_present = "bluetooth")]
    link: Option<PathBuf>,
    /// Play a Bluetooth LE board at this address (AA:BB:CC:DD:EE:FF) on
    /// the mock BlueZ, instead of a board behind a pseudo-terminal.
    #[arg(long, value_name = "ADDRESS", conflicts_with_all = ["link", "unplug_at", "noise"])]
    bluetooth: Option<String>,
    /// With --bluetooth: the name the board advertises [default: the
    /// family's, e.g. "Chessnut"].
    #[arg(long, value_name = "NAME", requires = "bluetooth")]
    name: Option<String>,
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
    let protocol = match (args.protocol, &args.bluetooth) {
        (Some(protocol), _) => protocol,
        (None, None) => Protocol::DGT,
        (None, Some(_)) if capture.header.protocol != Protocol::EVENTS => capture.header.protocol,
        (None, Some(_)) => bail!(
            "{} holds decoded events, which play as any Bluetooth LE family: say which with --protocol {}",
            args.capture.display(),
            boardcast_core::protocol::names_of(|family| family.bluetooth.is_some())
        ),
    };
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
        link: args.link.clone().unwrap_or_default(),
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
        let linger = Duration::from_secs(3);
        if let Some(address) = &args.bluetooth {
            let bluetooth = protocol.family().and_then(|family| family.bluetooth.as_ref());
            let name = args.name.clone().or_else(|| bluetooth.map(|b| b.name_contains.to_owned())).unwrap_or_default();
            let on = BluetoothBoard { address: address.clone(), name: name.clone() };
            eprintln!(
                "boardcast: simulating board {:?} as a {protocol} board over Bluetooth LE at {address} ({name:?})",
                capture.header.board
            );
            run_bluetooth(&capture.header, capture.records, settings, &on, linger, shutdown)
                .await
                .with_context(|| format!("simulating a Bluetooth LE board at {address}"))
        } else {
            let link = args.link.clone().unwrap_or_default();
            eprintln!("boardcast: simulating board {:?} at {}", capture.header.board, link.display());
            simulate(&capture.header, capture.records, settings, linger, shutdown)
                .await
                .with_context(|| format!("simulating a board at {}", link.display()))
        }
    })?;
    if unplug_at.is_some() {
        eprintln!("boardcast: {} square(s) changed while the cable was out", simulated.squares_changed_while_unplugged);
    }
    Ok(ExitCode::SUCCESS)
}
