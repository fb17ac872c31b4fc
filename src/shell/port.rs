//! The task that owns a board's serial port: finds it (a configured path,
//! or the port where the board with a configured serial number answers),
//! opens it (exclusively, at the protocol's settings), reads bytes into the
//! driver, writes what the driver asks, and when the port fails or the
//! board goes silent, reports the disconnection and finds and opens it
//! again with back-off. A board found by serial number is looked for afresh
//! at every attempt, because a replugged USB board may come back as another
//! device. It decides nothing about chess.

use std::{path::PathBuf, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    sync::mpsc,
};
use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};
use tokio_util::sync::CancellationToken;

use super::{
    clock::SessionClock,
    driver::{Input, InputBody, ToPort},
    ports::candidates,
    probe::{Probed, probe_family},
    record::Recorded,
};
use boardcast_core::{
    protocol::{Family, probe::Found},
    time::Timestamp,
};

/// Where a board is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Locate {
    /// At this device.
    Path(PathBuf),
    /// On whichever port a board of this family with this serial number
    /// answers (a family whose probe tells the serial number).
    Serial {
        /// The board's family.
        family: &'static Family,
        /// The board's serial number (leading zeros do not matter).
        serial: String,
        /// Ports to probe besides the machine's serial ports.
        extra_ports: Vec<PathBuf>,
    },
}

/// How to open and keep a board's port.
#[derive(Clone, Debug)]
pub struct PortSettings {
    /// Where the board is.
    pub locate: Locate,
    /// Baud rate (DGT: 9600, 8 data bits, no parity, one stop bit).
    pub baud: u32,
    /// The longest wait between two attempts to open it.
    pub reconnect_max: Duration,
}

/// What the port task tells whoever watches it (for logs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortEvent {
    /// The port opened.
    Opened {
        /// The device.
        path: PathBuf,
    },
    /// Opening failed; the next attempt comes after the delay.
    OpenFailed {
        /// Why, as the operating system said.
        error: String,
        /// When the next attempt comes.
        retry_in: Duration,
    },
    /// The port closed: unplugged, failed, or the board went silent.
    Closed {
        /// Why.
        reason: String,
    },
}

/// Everything the port task talks to.
#[derive(Debug)]
pub struct PortChannels {
    /// Inputs for the driver.
    pub inputs: mpsc::Sender<Input>,
    /// What the driver wants sent.
    pub from_driver: mpsc::UnboundedReceiver<ToPort>,
    /// Every byte sent, for the capture (if recording; the driver records
    /// what is received).
    pub recorder: Option<mpsc::UnboundedSender<super::record::ToRecorder>>,
    /// Port events, for logs.
    pub events: mpsc::UnboundedSender<PortEvent>,
}

/// Keeps the port open until `shutdown`, reconnecting as needed.
pub async fn run(settings: PortSettings, mut io: PortChannels, clock: SessionClock, shutdown: CancellationToken) {
    let mut delay = Duration::from_millis(250);
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        let stream = match locate_and_open(&settings).await {
            Ok(stream) => stream,
            Err(error) => {
                let _ = io.events.send(PortEvent::OpenFailed { error, retry_in: delay });
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = shutdown.cancelled() => return,
                }
                delay = (delay * 2).min(settings.reconnect_max);
                continue;
            }
        };
        delay = Duration::from_millis(250);
        let (stream, path) = stream;
        let _ = io.events.send(PortEvent::Opened { path });
        // Anything queued for the previous connection is stale: the session
        // sends the start-up sequence again.
        while io.from_driver.try_recv().is_ok() {}
        if io.inputs.send(Input { t: clock.now(), body: InputBody::Connected }).await.is_err() {
            return;
        }
        let reason = serve(stream, &mut io, &clock, &shutdown).await;
        let _ = io.events.send(PortEvent::Closed { reason: reason.clone() });
        if io.inputs.send(Input { t: clock.now(), body: InputBody::Disconnected }).await.is_err() {
            return;
        }
        if shutdown.is_cancelled() {
            return;
        }
    }
}

/// Finds the board's port and opens it; the error says why not, in words
/// for the log.
async fn locate_and_open(settings: &PortSettings) -> Result<(SerialStream, PathBuf), String> {
    let path = match &settings.locate {
        Locate::Path(path) => path.clone(),
        Locate::Serial { family, serial, extra_ports } => {
            let mut found = None;
            for port in candidates(extra_ports) {
                // Another task of the daemon asking the port (the search
                // for boards not configured) has it for a moment at most.
                let claim = loop {
                    if let Some(claim) = super::probe::claim(&port.path) {
                        break claim;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                };
                if let Probed::Board(Found { serial: Some(answer), .. }) =
                    probe_family(&port.path, PROBE_WAIT, family).await
                    && same_serial(&answer, serial)
                {
                    found = Some((port.path, claim));
                    break;
                }
            }
            let (path, claim) =
                found.ok_or_else(|| format!("no board with serial number {serial} answers on any serial port"))?;
            // Opened while still claimed: the search for boards not
            // configured then finds it held.
            let stream = open(&path, settings.baud).map_err(|e| format!("{}: {e}", path.display()))?;
            drop(claim);
            return Ok((stream, path));
        }
    };
    let stream = open(&path, settings.baud).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((stream, path))
}

/// How long a probe waits for a board's answers (a DGT board answers
/// within a few tens of milliseconds).
const PROBE_WAIT: Duration = Duration::from_millis(600);

/// Whether two serial numbers are the same board's (a DGT board pads with
/// zeros; people often leave them out).
pub fn same_serial(a: &str, b: &str) -> bool {
    a.trim().trim_start_matches('0') == b.trim().trim_start_matches('0')
}

fn open(path: &std::path::Path, baud: u32) -> tokio_serial::Result<SerialStream> {
    let path = path.to_string_lossy();
    let mut stream = tokio_serial::new(path.as_ref(), baud)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .open_native_async()?;
    // Another program opening the board at the same time would steal bytes
    // from it (ModemManager probing a new tty does exactly that).
    stream.set_exclusive(true)?;
    Ok(stream)
}

/// Moves bytes until the port fails, the driver asks to reconnect, or
/// shutdown. Returns why it stopped.
async fn serve(
    mut stream: SerialStream,
    io: &mut PortChannels,
    clock: &SessionClock,
    shutdown: &CancellationToken,
) -> String {
    let mut buf = [0u8; 512];
    loop {
        tokio::select! {
            read = stream.read(&mut buf) => match read {
                Ok(0) => return "the port reported end of file (unplugged?)".into(),
                Ok(n) => {
                    // The driver records what it is given (so the capture
                    // holds the session's inputs in its order).
                    let t = clock.now();
                    let bytes = buf[..n].to_vec();
                    if io.inputs.send(Input { t, body: InputBody::Rx(bytes) }).await.is_err() {
                        return "shutting down".into();
                    }
                }
                Err(error) => return format!("reading failed: {error}"),
            },
            command = io.from_driver.recv() => match command {
                Some(ToPort::Send(bytes)) => {
                    if let Err(error) = stream.write_all(&bytes).await {
                        return format!("writing failed: {error}");
                    }
                    record(io, clock.now(), Recorded::Tx(bytes));
                }
                Some(ToPort::Reconnect) => return "the board went silent".into(),
                None => return "shutting down".into(),
            },
            () = shutdown.cancelled() => return "shutting down".into(),
        }
    }
}

fn record(io: &PortChannels, t: Timestamp, what: Recorded) {
    if let Some(recorder) = &io.recorder {
        let _ = recorder.send(what.at(t).into());
    }
}
