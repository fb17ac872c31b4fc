//! A simulated Millennium board, sans-I/O: it answers the host's commands
//! as a real board does and reports a scripted game by the rules of its
//! register 2. `boardcast simulate` puts it behind a pseudo-terminal; tests
//! use it in place of hardware.
//!
//! What it simplifies, on purpose:
//! - It says nothing until the host has sent a command it understands, so
//!   that a scripted game starts when somebody listens.
//! - In the default reporting mode (register 2 = 0) a real board sends its
//!   status on every scan, changed or not, about 24 times a second. The
//!   simulation sends it only when something changed, at most once per scan
//!   time (register 1; about 41 ms by default): the same information
//!   without the flood.
//! - Reporting on change (3) sends the status at once; the debounce of the
//!   values 4 to 7 is not simulated (a script's changes are already what
//!   the sensors settled on).
//! - Timed reports (2) come every N × 4.096 ms, N from register 3 (none
//!   while it is 0).
//! - `T` (reset) puts the LEDs out and is not answered; the three seconds a
//!   real board takes to start again are not simulated.
//!
//! Registers live in the board's E2ROM, so they survive the cable being
//! pulled; the LEDs do not.

use super::SimulatedBoard;
use std::{collections::VecDeque, time::Duration};

use shakmaty::Square;

use boardcast_core::protocol::millennium::{
    command::{Command, REG_REPORT_INTERVAL, REG_REPORTING, REG_SCAN_TIME, REPORT_EVERY_SCAN, REPORT_TIMED},
    frame::{Framed, Framer, Speaker},
    leds::LedPattern,
    reply::Reply,
};
use boardcast_core::{
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// A simulated Millennium board.
#[derive(Clone, Debug)]
pub struct MillenniumSim {
    /// The board in its own orientation (as it reports it).
    picture: Picture,
    registers: [u8; 256],
    version: (u8, u8),
    leds: LedPattern,
    /// The host has sent a command the board understood.
    host_spoke: bool,
    /// The picture changed since the board last sent its status.
    changed: bool,
    /// The board's time, as last told.
    now: Timestamp,
    /// When the board last sent its status by itself.
    last_report: Timestamp,
    /// Finds commands in the host's bytes.
    host: Framer,
    /// Finds replies in scripted raw bytes.
    script: Framer,
    /// Bytes to send to the host.
    out: VecDeque<u8>,
}

impl MillenniumSim {
    /// A board with nothing on it yet: a Performance (firmware 1.8), with
    /// its registers as they leave the factory.
    pub fn new(_serial: impl Into<String>, _white_side: ClockSide) -> Self {
        // A Millennium board has neither a serial number to tell nor a
        // clock: both arguments are for other families.
        let mut registers = [0; 256];
        registers[usize::from(REG_SCAN_TIME)] = 20;
        Self {
            picture: Picture::empty(),
            registers,
            version: (1, 8),
            leds: LedPattern::DARK,
            host_spoke: false,
            changed: false,
            now: Timestamp::ZERO,
            last_report: Timestamp::ZERO,
            host: Framer::new(Speaker::Host),
            script: Framer::new(Speaker::Board),
            out: VecDeque::new(),
        }
    }

    /// What the LEDs show.
    pub fn leds(&self) -> &LedPattern {
        &self.leds
    }

    /// A register's value.
    pub fn register(&self, address: u8) -> u8 {
        self.registers[usize::from(address)]
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::SendStatus => self.send_status(),
            Command::SendVersion => self.send(&Reply::Version { major: self.version.0, minor: self.version.1 }),
            Command::WriteRegister { address, value } => {
                self.registers[usize::from(address)] = value;
                self.send(&Reply::RegisterWritten { address, value });
            }
            Command::ReadRegister { address } => {
                self.send(&Reply::RegisterRead { address, value: self.register(address) });
            }
            Command::SetLeds(pattern) => {
                self.leds = pattern;
                self.send(&Reply::LedsSet);
            }
            Command::PutOutLeds => {
                self.leds = LedPattern::DARK;
                self.send(&Reply::LedsOut);
            }
            Command::Reset => self.leds = LedPattern::DARK,
        }
    }

    fn show(&mut self, picture: &Picture) {
        let mut changed = false;
        for square in Square::ALL {
            changed |= self.picture.set(square, picture.get(square)) != picture.get(square);
        }
        if changed {
            self.picture_changed();
        }
    }

    fn set(&mut self, square: Square, cell: Cell) {
        if self.picture.set(square, cell) != cell {
            self.picture_changed();
        }
    }

    fn picture_changed(&mut self) {
        self.changed = true;
        if self.host_spoke && self.reporting() > REPORT_TIMED {
            self.send_status();
        }
    }

    /// Register 2's reporting mode (its low three bits).
    fn reporting(&self) -> u8 {
        self.register(REG_REPORTING) & 0x07
    }

    /// The time between two scans (register 1, in units of 2.048 ms;
    /// values below 15 mean the default, 20).
    fn scan_time(&self) -> Duration {
        let units = match self.register(REG_SCAN_TIME) {
            units @ 15.. => units,
            _ => 20,
        };
        Duration::from_micros(2048 * u64::from(units))
    }

    fn send_status(&mut self) {
        self.changed = false;
        self.send(&Reply::Status(Box::new(self.picture.clone())));
    }

    fn send(&mut self, reply: &Reply) {
        self.out.extend(reply.encode());
    }
}

impl SimulatedBoard for MillenniumSim {
    fn lit_leds(&self) -> Option<usize> {
        Some(self.leds.codes.iter().filter(|&&code| code != 0).count())
    }

    /// Whether the host has spoken to the board (it then reports by the
    /// rules of register 2).
    fn sends_updates(&self) -> bool {
        self.host_spoke
    }
    /// The board as it is now.
    fn picture(&self) -> &Picture {
        &self.picture
    }
    /// Bytes the host sent. Commands with a wrong parity or block check
    /// are ignored, as a real board ignores them.
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        self.host.push(bytes);
        while let Some(item) = self.host.next_item() {
            let Framed::Frame(frame) = item else { continue };
            let Ok(command) = Command::parse(&frame) else { continue };
            if !self.host_spoke {
                self.host_spoke = true;
                self.last_report = self.now;
            }
            self.command(command);
        }
    }
    /// Raw bytes a real board sent, as a `millennium` capture recorded
    /// them: what its statuses show happens on this board (and is reported
    /// by this board's rules); its version is taken over.
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.script.push(bytes);
        let mut replies = Vec::new();
        while let Some(item) = self.script.next_item() {
            let Framed::Frame(frame) = item else { continue };
            if let Ok(reply) = Reply::parse(&frame) {
                replies.push(reply);
            }
        }
        for reply in replies {
            match reply {
                Reply::Status(picture) => self.show(&picture),
                Reply::Version { major, minor } => self.version = (major, minor),
                _ => {}
            }
        }
    }
    /// A decoded sensor event, as an `events` capture recorded it. Clock
    /// readings are ignored: a Millennium board has no clock.
    fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(picture) => self.show(picture),
            &SensorEvent::Square { square, cell } => self.set(square, cell),
            SensorEvent::Clock(_) => {}
        }
    }
    /// Time passes (the board's own time, from power-on): scans and timed
    /// reports.
    fn handle_timeout(&mut self, now: Timestamp) {
        self.now = now;
        if self.poll_timeout().is_some_and(|due| due <= now) {
            match self.reporting() {
                REPORT_EVERY_SCAN => self.send_status(),
                REPORT_TIMED => self.send(&Reply::Status(Box::new(self.picture.clone()))),
                _ => {}
            }
            self.last_report = now;
        }
    }
    /// When to call [`MillenniumSim::handle_timeout`] next.
    fn poll_timeout(&self) -> Option<Timestamp> {
        if !self.host_spoke {
            return None;
        }
        match self.reporting() {
            REPORT_EVERY_SCAN if self.changed => Some(self.last_report + self.scan_time()),
            REPORT_TIMED if self.register(REG_REPORT_INTERVAL) > 0 => {
                let interval = Duration::from_micros(4096 * u64::from(self.register(REG_REPORT_INTERVAL)));
                Some(self.last_report + interval)
            }
            _ => None,
        }
    }
    /// Bytes to send to the host.
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() { None } else { Some(self.out.drain(..).collect()) }
    }
    /// The cable was pulled: the board powers down, and comes back with its
    /// registers but with its LEDs out, waiting for the host.
    fn handle_unplugged(&mut self) {
        self.out.clear();
        self.host = Framer::new(Speaker::Host);
        self.host_spoke = false;
        self.leds = LedPattern::DARK;
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::BoardDecoder;
    use shakmaty::Color;

    use super::*;
    use boardcast_core::protocol::{Decoded, millennium::MillenniumDecoder};

    fn decode(bytes: &[u8]) -> Vec<Decoded> {
        let mut decoder = MillenniumDecoder::new();
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    fn start() -> Picture {
        Picture::from_board(&shakmaty::Board::new())
    }

    fn board(picture: &Picture) -> Decoded {
        Decoded::Sensor(SensorEvent::Board(Box::new(picture.clone())))
    }

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    #[test]
    fn stays_quiet_until_spoken_to_then_reports_every_change() {
        let mut sim = MillenniumSim::new("x", ClockSide::Left);
        sim.handle_script_event(&SensorEvent::Board(Box::new(start())));
        assert_eq!(sim.poll_transmit(), None);
        assert!(!sim.sends_updates());
        let mut host = Command::SendVersion.encode();
        host.extend(Command::WriteRegister { address: 2, value: 4 }.encode());
        host.extend(Command::SendStatus.encode());
        sim.handle_host_bytes(&host);
        assert!(sim.sends_updates());
        assert_eq!(
            decode(&sim.poll_transmit().unwrap()),
            [Decoded::Info(boardcast_core::protocol::BoardInfo::Version("1.8".into())), board(&start())],
            "the register acknowledgement is passed over"
        );
        assert_eq!(sim.register(2), 4);
        sim.handle_script_event(&SensorEvent::Square { square: Square::E2, cell: Cell::Empty });
        let mut lifted = start();
        lifted.set(Square::E2, Cell::Empty);
        assert_eq!(decode(&sim.poll_transmit().unwrap()), [board(&lifted)]);
        sim.handle_script_event(&SensorEvent::Clock(boardcast_core::sensor::ClockReading::ByColor {
            white_ms: 1,
            black_ms: 1,
            running: None,
        }));
        assert_eq!(sim.poll_transmit(), None, "no clock on a Millennium board");
        assert_eq!(sim.poll_timeout(), None, "nothing to wait for when reporting on change");
    }

    #[test]
    fn in_the_default_mode_reports_a_change_at_the_next_scan() {
        let mut sim = MillenniumSim::new("x", ClockSide::Left);
        sim.handle_script_event(&SensorEvent::Board(Box::new(start())));
        sim.handle_timeout(ms(1000));
        sim.handle_host_bytes(&Command::SendVersion.encode());
        sim.poll_transmit();
        // The host has never had the board: it comes with the first scan.
        assert_eq!(sim.poll_timeout(), Some(Timestamp::from_micros(1_040_960)));
        sim.handle_timeout(Timestamp::from_micros(1_040_960));
        assert_eq!(decode(&sim.poll_transmit().unwrap()), [board(&start())]);
        assert_eq!(sim.poll_timeout(), None, "nothing changed since");
        sim.handle_script_event(&SensorEvent::Square { square: Square::E2, cell: Cell::Empty });
        sim.handle_script_event(&SensorEvent::Square { square: Square::E4, cell: Cell::Piece(Color::White.pawn()) });
        assert_eq!(sim.poll_transmit(), None, "not before the scan");
        assert_eq!(sim.poll_timeout(), Some(Timestamp::from_micros(1_081_920)));
        sim.handle_timeout(Timestamp::from_micros(1_081_920));
        let sent = decode(&sim.poll_transmit().unwrap());
        assert!(matches!(&sent[..], [Decoded::Sensor(SensorEvent::Board(p))] if p.get(Square::E4).is_occupied()));
        assert_eq!(sim.poll_timeout(), None);
    }

    #[test]
    fn sends_timed_reports_when_told_to() {
        let mut sim = MillenniumSim::new("x", ClockSide::Left);
        let mut host = Command::WriteRegister { address: 3, value: 250 }.encode();
        host.extend(Command::WriteRegister { address: 2, value: 2 }.encode());
        sim.handle_host_bytes(&host);
        sim.poll_transmit();
        assert_eq!(sim.poll_timeout(), Some(ms(1024)));
        sim.handle_timeout(ms(1024));
        assert_eq!(decode(&sim.poll_transmit().unwrap()), [board(&Picture::empty())]);
        assert_eq!(sim.poll_timeout(), Some(ms(2048)));
    }

    #[test]
    fn keeps_its_leds_and_registers_and_ignores_damaged_commands() {
        let mut sim = MillenniumSim::new("x", ClockSide::Left);
        let mut pattern = LedPattern::DARK;
        pattern.codes[40] = 0xFF;
        let mut damaged = Command::WriteRegister { address: 2, value: 1 }.encode();
        damaged[3] ^= 0x80;
        sim.handle_host_bytes(&damaged);
        assert_eq!((sim.sends_updates(), sim.register(2)), (false, 0), "a damaged command is not obeyed");
        sim.handle_host_bytes(&Command::SetLeds(pattern).encode());
        assert_eq!(sim.leds(), &pattern);
        sim.handle_host_bytes(&Command::ReadRegister { address: 1 }.encode());
        let replies = sim.poll_transmit().unwrap();
        assert_eq!(replies, [Reply::LedsSet.encode(), Reply::RegisterRead { address: 1, value: 20 }.encode()].concat());
        sim.handle_host_bytes(&Command::WriteRegister { address: 2, value: 4 }.encode());
        sim.handle_host_bytes(&Command::Reset.encode());
        assert_eq!(sim.leds(), &LedPattern::DARK);
        sim.handle_unplugged();
        assert!(!sim.sends_updates());
        assert_eq!(sim.register(2), 4, "E2ROM survives");
        assert_eq!(sim.poll_transmit(), None);
    }

    #[test]
    fn plays_a_recorded_boards_statuses() {
        let mut sim = MillenniumSim::new("x", ClockSide::Left);
        sim.handle_host_bytes(&Command::WriteRegister { address: 2, value: 3 }.encode());
        sim.poll_transmit();
        let mut lifted = start();
        lifted.set(Square::G1, Cell::Empty);
        let mut script = Reply::Version { major: 2, minor: 3 }.encode();
        script.extend(Reply::Status(Box::new(start())).encode());
        script.extend(Reply::LedsSet.encode());
        script.extend(Reply::Status(Box::new(lifted.clone())).encode());
        script.extend(Reply::Status(Box::new(lifted.clone())).encode());
        sim.handle_script_bytes(&script[..30]);
        sim.handle_script_bytes(&script[30..]);
        let lift = Decoded::Sensor(SensorEvent::Square { square: Square::G1, cell: Cell::Empty });
        assert_eq!(decode(&sim.poll_transmit().unwrap()), [board(&start()), lift, board(&lifted)], "changes only");
        sim.handle_host_bytes(&Command::SendVersion.encode());
        assert_eq!(
            decode(&sim.poll_transmit().unwrap()),
            [Decoded::Info(boardcast_core::protocol::BoardInfo::Version("2.3".into()))]
        );
    }
}
