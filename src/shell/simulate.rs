//! `boardcast simulate`: a capture played as a live board behind a
//! pseudo-terminal, at recorded speed or faster, answering the daemon's
//! commands byte for byte as the board would; optionally pulling the cable
//! out for a while, as a player's foot does. A Bluetooth LE family's board
//! can be played on the mock BlueZ instead ([`run_bluetooth`]).

mod line;

use std::{path::PathBuf, time::Duration};

use tokio::time::{Instant, sleep, sleep_until};
use tokio_util::sync::CancellationToken;

use self::line::{Heard, Line};
use super::{ble::peripheral::Peripheral, clock::SessionClock, pty::Pty};
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody},
    protocol::{Protocol, names_of},
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
    /// Where to link the pseudo-terminal's device (not used on Bluetooth).
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
    let board = board_of(header, &settings)?;
    let line = Line::Pty(Pty::open(&settings.link)?);
    play(board, line, records, settings, linger, shutdown).await
}

/// A Bluetooth LE board to play on the mock BlueZ.
#[derive(Clone, Debug)]
pub struct BluetoothBoard {
    /// Its address (`AA:BB:CC:DD:EE:FF`).
    pub address: String,
    /// The name it advertises.
    pub name: String,
}

/// Plays `records` as a Bluetooth LE board of `settings.protocol` on the
/// mock BlueZ (the system bus, or `DBUS_SYSTEM_BUS_ADDRESS`): the board is
/// added with its family's service, its bytes are notified once a host has
/// connected and listens, and what the host writes is answered as the
/// family's board does (a ChessUp drops a host that does not acknowledge).
/// The capture's time starts as [`run`]'s does. A cable's unplugging and
/// noise do not apply.
///
/// # Errors
///
/// A family without Bluetooth LE; no mock BlueZ on the bus.
pub async fn run_bluetooth(
    header: &CaptureHeader,
    records: Vec<Record>,
    settings: SimulateSettings,
    on: &BluetoothBoard,
    linger: Duration,
    shutdown: CancellationToken,
) -> std::io::Result<Simulated> {
    let Some(bluetooth) = settings.protocol.family().and_then(|family| family.bluetooth.as_ref()) else {
        return Err(std::io::Error::other(format!(
            "a {} board does not speak Bluetooth LE: choose {}",
            settings.protocol.name(),
            names_of(|family| family.bluetooth.is_some())
        )));
    };
    let board = board_of(header, &settings)?;
    let peripheral = Peripheral::add(&on.address, &on.name, bluetooth).await.map_err(std::io::Error::other)?;
    eprintln!("boardcast: the board is on the mock BlueZ; waiting for a host to connect and start its notifications");
    let settings = SimulateSettings { unplug_at: None, replug_after: None, noise: 0.0, ..settings };
    play(board, Line::Ble(Box::new(peripheral)), records, settings, linger, shutdown).await
}

/// The simulated board for a capture, with its serial number.
fn board_of(header: &CaptureHeader, settings: &SimulateSettings) -> std::io::Result<Box<dyn SimulatedBoard>> {
    let serial = settings.serial.clone().unwrap_or_else(|| serial_of(&header.board));
    simulator(settings.protocol, &serial, settings.white_side).ok_or_else(|| {
        std::io::Error::other("a board of protocol \"events\" cannot be simulated: choose a board family")
    })
}

/// Plays the records on `board`, reached through `line`.
async fn play(
    board: Box<dyn SimulatedBoard>,
    line: Line,
    records: Vec<Record>,
    settings: SimulateSettings,
    linger: Duration,
    shutdown: CancellationToken,
) -> std::io::Result<Simulated> {
    let mut sim = Simulation {
        board,
        powered: SessionClock::start(1.0),
        line: Some(line),
        clock: None,
        paused: None,
        unplug_at: None,
        replug_at: None,
        records: records.into_iter().peekable(),
        end: None,
        rng: boardcast_sim::Rng::new(0x5eed),
        simulated: Simulated::default(),
        settings,
        lit_leds: 0,
    };
    // The board as the capture begins: its first moment's records (a
    // Bluetooth board's first message comes cut over notifications a few
    // milliseconds apart; a host asking at once must see all of it).
    while let Some(record) = sim.records.next_if(|r| r.t < FIRST_MOMENT) {
        play_record(sim.board.as_mut(), &record);
    }
    loop {
        sim.start_when_read();
        let wake = sim.next_wake(linger);
        tokio::select! {
            () = shutdown.cancelled() => return Ok(sim.simulated),
            heard = heard(sim.line.as_mut()) => match heard? {
                Heard::Bytes(bytes) => sim.handle_host_bytes(&bytes),
                // Nobody has the port open: wait a little rather than spin.
                Heard::Nobody => {
                    sim.handle_unread();
                    sleep(Duration::from_millis(20)).await;
                }
                Heard::Left => {
                    sim.board.handle_unplugged();
                    sim.handle_unread();
                }
                Heard::Changed => {
                    if !sim.line.as_ref().is_some_and(Line::host_present) {
                        sim.handle_unread();
                    }
                }
            },
            () = sleep_until(wake.unwrap_or_else(far_future)) => {
                if sim.handle_wake(Instant::now())? {
                    return Ok(sim.simulated);
                }
            }
        }
        if let Some(bytes) = poll_transmit_noisy(sim.board.as_mut(), sim.settings.noise, &mut sim.rng)
            && let Some(line) = &sim.line
        {
            // Unplugged, the bytes go nowhere.
            line.send(&bytes).await?;
        }
        if sim.board.drops_host()
            && let Some(line) = &sim.line
            && line.drop_host().await?
        {
            eprintln!("boardcast: the board dropped its host, which did not acknowledge what it said");
            sim.board.handle_unplugged();
        }
    }
}

/// A simulated board playing a capture behind its pseudo-terminal.
struct Simulation {
    board: Box<dyn SimulatedBoard>,
    /// The board's own time (boards that stream send their reports on it),
    /// from power-on.
    powered: SessionClock,
    /// The pseudo-terminal or Bluetooth link; `None` while unplugged.
    line: Option<Line>,
    /// The game's time: it starts when the host first asks for updates, so
    /// that a daemon started a moment later still sees it from the
    /// beginning.
    clock: Option<SessionClock>,
    /// The game's time when it was paused for want of a reader.
    paused: Option<Timestamp>,
    unplug_at: Option<Instant>,
    replug_at: Option<Instant>,
    records: std::iter::Peekable<std::vec::IntoIter<Record>>,
    /// When the simulation ends (the capture played, and `linger` over).
    end: Option<Instant>,
    rng: boardcast_sim::Rng,
    simulated: Simulated,
    settings: SimulateSettings,
    /// How many of the board's LEDs the host has lit (said on standard
    /// error when it changes: what a person beside the board would see).
    lit_leds: usize,
}

impl Simulation {
    /// The game's time starts (at power-on, or when the host first asks).
    fn start_clock(&mut self) {
        self.clock = Some(SessionClock::start(self.settings.speed));
        self.unplug_at = self.settings.unplug_at.map(|d| Instant::now() + d);
    }

    /// A board that sends by itself (or that the host has started) begins,
    /// or goes on after a pause, once a program reads it.
    fn start_when_read(&mut self) {
        if self.board.sends_updates() && self.line.as_ref().is_some_and(Line::host_present) {
            if self.clock.is_none() {
                self.start_clock();
            }
            if let Some(at) = self.paused.take() {
                self.clock = Some(SessionClock::resume_at(at, self.settings.speed));
            }
        }
    }

    /// When something is due next: a record, the cable, the end, the board.
    fn next_wake(&mut self, linger: Duration) -> Option<Instant> {
        let next_record = self
            .clock
            .filter(|_| self.paused.is_none())
            .and_then(|clock| self.records.peek().map(|r| clock.instant_of(r.t)));
        if self.clock.is_some() && self.paused.is_none() && next_record.is_none() && self.end.is_none() {
            self.end = Some(Instant::now() + linger);
        }
        let board_timer = self.board.poll_timeout().map(|t| self.powered.instant_of(t));
        [next_record, self.unplug_at, self.replug_at, self.end, board_timer].into_iter().flatten().min()
    }

    /// The host wrote to the board.
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        self.board.handle_host_bytes(bytes);
        if let Some(lit) = self.board.lit_leds()
            && lit != self.lit_leds
        {
            self.lit_leds = lit;
            eprintln!("boardcast: the host lit {lit} LED(s)");
        }
        if self.clock.is_none() && self.board.sends_updates() {
            self.start_clock();
        }
        if let Some(at) = self.paused.filter(|_| self.board.sends_updates()) {
            self.paused = None;
            self.clock = Some(SessionClock::resume_at(at, self.settings.speed));
        }
    }

    /// Nobody has the port open.
    fn handle_unread(&mut self) {
        if self.settings.pause_while_unread
            && self.paused.is_none()
            && let Some(clock) = self.clock
        {
            self.paused = Some(clock.now());
        }
    }

    /// Something came due: the board's timer, the cable pulled or put
    /// back, the records due played. `true` when the simulation is over.
    fn handle_wake(&mut self, now: Instant) -> std::io::Result<bool> {
        self.board.handle_timeout(self.powered.now());
        if self.unplug_at.is_some_and(|at| now >= at) {
            self.unplug_at = None;
            self.line = None;
            self.board.handle_unplugged();
            self.replug_at = self.settings.replug_after.map(|d| now + d);
        }
        if self.replug_at.is_some_and(|at| now >= at) {
            self.replug_at = None;
            self.line = Some(Line::Pty(Pty::open(&self.settings.link)?));
        }
        let Some(mut running) = self.clock.filter(|_| self.paused.is_none()) else { return Ok(false) };
        if self.settings.pause_while_unread && self.line.as_ref().is_some_and(|l| !l.host_present()) {
            self.paused = Some(running.now());
            return Ok(false);
        }
        // Behind time (a machine under load), the records due are not
        // played all at once: the board would show some positions for no
        // time at all, which a real board never does (the last move and
        // the kings of the result gesture in one report). The game goes on
        // late instead, each record keeping its gap to the one before.
        if let Some(next) = self.records.peek()
            && now.saturating_duration_since(running.instant_of(next.t)) > LATE
        {
            running = SessionClock::resume_at(next.t, self.settings.speed);
            self.clock = Some(running);
        }
        while let Some(record) = self.records.next_if(|r| running.instant_of(r.t) <= now) {
            let before = self.board.picture().clone();
            play_record(self.board.as_mut(), &record);
            if self.line.is_none() {
                self.simulated.squares_changed_while_unplugged += shakmaty::Square::ALL
                    .into_iter()
                    .filter(|&sq| self.board.picture().get(sq) != before.get(sq))
                    .count();
            }
        }
        Ok(self.end.is_some_and(|e| now >= e) && self.replug_at.is_none())
    }
}

/// The capture's first moment: what it records before this is how the
/// board stands before the game starts playing (far shorter than a move).
const FIRST_MOMENT: Timestamp = Timestamp::from_millis(100);

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

async fn heard(line: Option<&mut Line>) -> std::io::Result<Heard> {
    match line {
        Some(line) => line.heard().await,
        None => std::future::pending().await,
    }
}

/// A DGT serial number (five digits) for a capture's board name, unless
/// one is given: the digits in the name (`board-12` → `00012`).
fn serial_of(board: &str) -> String {
    let digits: String = board.chars().filter(char::is_ascii_digit).collect();
    format!("{:0>5}", if digits.is_empty() { "1" } else { &digits })
}
