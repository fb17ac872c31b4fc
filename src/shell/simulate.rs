//! `boardcast simulate`: a capture played as a live board behind a
//! pseudo-terminal, at recorded speed or faster, answering the daemon's
//! commands byte for byte as the board would; optionally pulling the cable
//! out for a while, as a player's foot does.

use std::{path::PathBuf, time::Duration};

use tokio::time::{Instant, sleep, sleep_until};
use tokio_util::sync::CancellationToken;

use super::{clock::SessionClock, pty::Pty};
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody},
    protocol::Protocol,
    sensor::ClockSide,
    time::Timestamp,
};
use boardcast_sim::board::{SimulatedBoard, poll_transmit_noisy, simulator};

/// How to simulate.
#[derive(Clone, Debug)]
pub struct SimulateSettings {
    /// The board family to simulate (a capture of raw bytes can only be
    /// played by a board of its own family; a capture of decoded events by
    /// any).
    pub protocol: Protocol,
    /// Where to link the pseudo-terminal's device.
    pub link: PathBuf,
    /// Times the recorded speed (1 = real time).
    pub speed: f64,
    /// Pull the cable out this long after the game starts (real time; the
    /// game starts when the host first asks the board for updates).
    pub unplug_at: Option<Duration>,
    /// Plug it back in this long after pulling it out.
    pub replug_after: Option<Duration>,
    /// The display White's time is on (for captures of decoded events).
    pub white_side: ClockSide,
    /// A noisy cable: the chance that line noise comes before a write, and
    /// that a write loses its end (0 for a clean cable).
    pub noise: f64,
    /// The board's serial number (default: from the capture's board name).
    pub serial: Option<String>,
    /// Stop the game while no program has the board's device open, and go
    /// on when one asks for updates again (a replay that waits for a
    /// restarted daemon, rather than a board that plays on).
    pub pause_while_unread: bool,
}

/// What happened while simulating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Simulated {
    /// Squares that changed while the cable was out (what the daemon could
    /// only learn from the board dump after reconnecting).
    pub squares_changed_while_unplugged: usize,
}

/// Plays `records` as a board until the capture ends and `linger` has
/// passed (so that the daemon can read the end), or `shutdown`. The
/// capture's time starts when the host first asks the board for updates
/// (a probe asking only who it is does not start it); until then the board
/// stands as the capture begins.
///
/// # Errors
///
/// When the pseudo-terminal cannot be opened.
pub async fn run(
    header: &CaptureHeader,
    records: Vec<Record>,
    settings: SimulateSettings,
    linger: Duration,
    shutdown: CancellationToken,
) -> std::io::Result<Simulated> {
    let mut simulated = Simulated::default();
    let serial = settings.serial.clone().unwrap_or_else(|| serial_of(&header.board));
    let Some(mut board) = simulator(settings.protocol, &serial, settings.white_side) else {
        return Err(std::io::Error::other("a board of protocol \"events\" cannot be simulated: choose a board family"));
    };
    // The board's own time (boards that stream send their reports on it),
    // from power-on.
    let powered = SessionClock::start(1.0);
    let mut pty = Some(Pty::open(&settings.link)?);
    // The game starts when the host first asks for updates, so that a
    // daemon started a moment later still sees it from the beginning.
    let mut clock: Option<SessionClock> = None;
    // The game's time when it was paused for want of a reader.
    let mut paused: Option<Timestamp> = None;
    let mut unplug_at: Option<Instant> = None;
    let mut replug_at: Option<Instant> = None;
    let mut records = records.into_iter().peekable();
    // The board as the capture begins.
    while let Some(record) = records.next_if(|r| r.t == Timestamp::ZERO) {
        play_record(board.as_mut(), &record);
    }
    let mut buf = [0u8; 256];
    let mut end: Option<Instant> = None;
    let mut rng = boardcast_sim::Rng::new(0x5eed);
    loop {
        // A board that sends by itself (or that the host has started)
        // begins, or goes on after a pause, once a program reads it.
        if board.sends_updates() && pty.as_ref().is_some_and(Pty::host_present) {
            if clock.is_none() {
                clock = Some(SessionClock::start(settings.speed));
                unplug_at = settings.unplug_at.map(|d| Instant::now() + d);
            }
            if let Some(at) = paused.take() {
                clock = Some(SessionClock::resume_at(at, settings.speed));
            }
        }
        let next_record =
            clock.filter(|_| paused.is_none()).and_then(|clock| records.peek().map(|r| clock.instant_of(r.t)));
        if clock.is_some() && paused.is_none() && next_record.is_none() && end.is_none() {
            end = Some(Instant::now() + linger);
        }
        let board_timer = board.poll_timeout().map(|t| powered.instant_of(t));
        let wake = [next_record, unplug_at, replug_at, end, board_timer].into_iter().flatten().min();
        tokio::select! {
            () = shutdown.cancelled() => return Ok(simulated),
            read = read_host(pty.as_ref(), &mut buf) => match read? {
                Some(n) => {
                    board.handle_host_bytes(&buf[..n]);
                    if clock.is_none() && board.sends_updates() {
                        clock = Some(SessionClock::start(settings.speed));
                        unplug_at = settings.unplug_at.map(|d| Instant::now() + d);
                    }
                    if let Some(at) = paused.filter(|_| board.sends_updates()) {
                        paused = None;
                        clock = Some(SessionClock::resume_at(at, settings.speed));
                    }
                }
                // Nobody has the port open: wait a little rather than spin.
                None => {
                    if settings.pause_while_unread && paused.is_none() && let Some(clock) = clock {
                        paused = Some(clock.now());
                    }
                    sleep(Duration::from_millis(20)).await;
                }
            },
            () = sleep_until(wake.unwrap_or_else(far_future)) => {
                let now = Instant::now();
                board.handle_timeout(powered.now());
                if unplug_at.is_some_and(|at| now >= at) {
                    unplug_at = None;
                    pty = None;
                    board.handle_unplugged();
                    replug_at = settings.replug_after.map(|d| now + d);
                }
                if replug_at.is_some_and(|at| now >= at) {
                    replug_at = None;
                    pty = Some(Pty::open(&settings.link)?);
                }
                let Some(mut running) = clock.filter(|_| paused.is_none()) else { continue };
                if settings.pause_while_unread && pty.as_ref().is_some_and(|p| !p.host_present()) {
                    paused = Some(running.now());
                    continue;
                }
                // Behind time (a machine under load), the records due are
                // not played all at once: the board would show some
                // positions for no time at all, which a real board never
                // does (the last move and the kings of the result gesture
                // in one report). The game goes on late instead, each
                // record keeping its gap to the one before.
                if let Some(next) = records.peek()
                    && now.saturating_duration_since(running.instant_of(next.t)) > LATE
                {
                    running = SessionClock::resume_at(next.t, settings.speed);
                    clock = Some(running);
                }
                while let Some(record) = records.next_if(|r| running.instant_of(r.t) <= now) {
                    let before = board.picture().clone();
                    play_record(board.as_mut(), &record);
                    if pty.is_none() {
                        simulated.squares_changed_while_unplugged +=
                            shakmaty::Square::ALL.into_iter().filter(|&sq| board.picture().get(sq) != before.get(sq)).count();
                    }
                }
                if end.is_some_and(|e| now >= e) && replug_at.is_none() {
                    return Ok(simulated);
                }
            }
        }
        if let Some(bytes) = poll_transmit_noisy(board.as_mut(), settings.noise, &mut rng)
            && let Some(pty) = &pty
        {
            // Unplugged, the bytes go nowhere.
            pty.write_all(&bytes).await?;
        }
    }
}

/// How late the next record may be before the game is moved later rather
/// than caught up (timers wake a little late even on an idle machine).
const LATE: Duration = Duration::from_millis(20);

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

fn play_record(board: &mut dyn SimulatedBoard, record: &Record) {
    match &record.body {
        RecordBody::Rx(bytes) => board.handle_script_bytes(bytes),
        RecordBody::Event(event) => board.handle_script_event(event),
        // A board knows nothing of what was sent to it or of the
        // operator's commands (those reach the daemon over MQTT), nor of
        // its port opening and closing.
        RecordBody::Tx(_) | RecordBody::Command(_) | RecordBody::Link(_) => {}
    }
}

async fn read_host(pty: Option<&Pty>, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
    match pty {
        Some(pty) => pty.read(buf).await,
        None => std::future::pending().await,
    }
}

/// A DGT serial number (five digits) for a capture's board name, unless
/// one is given: the digits in the name (`board-12` → `00012`).
fn serial_of(board: &str) -> String {
    let digits: String = board.chars().filter(char::is_ascii_digit).collect();
    format!("{:0>5}", if digits.is_empty() { "1" } else { &digits })
}
