//! A simulated DGT board, sans-I/O: it answers the host's commands as a
//! real board does and, once the host has put it in an update mode, sends
//! the field updates and clock messages of a scripted game. `boardcast
//! simulate` puts it behind a pseudo-terminal; tests and the demo use it in
//! place of hardware.
//!
//! Like a real board it starts idle (it sends nothing until told to), sends
//! clock messages only in the UPDATE and UPDATE_NICE modes, and answers a
//! board-dump request with the board as it is now, whatever happened while
//! nobody was listening.
//!
//! Its clock is a DGT 3000 unless told otherwise ([`DgtSim::set_clock_version`]):
//! it answers the version request with major version 2, shows the text of
//! an ASCII command (`0x0C`) until END (`0x03`) brings the times back, and
//! acknowledges both. A DGT XL (major version 1) acknowledges an ASCII
//! command with an error and shows nothing.

use super::SimulatedBoard;
use std::collections::VecDeque;

use boardcast_core::protocol::dgt::{
    clock::{BwTime, ClockAck, ClockTimes},
    command::{ClockText, Command},
    frame::{Framed, Framer},
    message::Message,
};
use boardcast_core::sensor::{Cell, ClockReading, ClockSide, Picture, SensorEvent};

/// What the board sends by itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
    /// Nothing.
    #[default]
    Idle,
    /// Field updates.
    UpdateBoard,
    /// Field updates and clock messages.
    Update,
}

/// A simulated board.
#[derive(Clone, Debug)]
pub struct DgtSim {
    mode: Mode,
    /// The board in its own orientation (as it reports it).
    picture: Picture,
    /// The clock's last message, if a clock is attached.
    clock: Option<ClockTimes>,
    serial: String,
    version: (u8, u8),
    /// The clock's version as its acknowledgement carries it (major in the
    /// high nibble).
    clock_version: u8,
    /// What the clock shows instead of the times, if anything.
    clock_text: Option<ClockText>,
    /// The display White's time is on, for scripts of decoded events.
    white_side: ClockSide,
    /// Bytes from the host not yet understood.
    host: Vec<u8>,
    /// Bytes to send to the host.
    out: VecDeque<u8>,
    /// Splits scripted raw bytes into messages.
    script: Framer,
}

impl DgtSim {
    /// A board with nothing on it yet.
    pub fn new(serial: impl Into<String>, white_side: ClockSide) -> Self {
        Self {
            mode: Mode::Idle,
            picture: Picture::empty(),
            clock: None,
            serial: serial.into(),
            version: (1, 2),
            clock_version: 0x21,
            clock_text: None,
            white_side,
            host: Vec::new(),
            out: VecDeque::new(),
            script: Framer::new(),
        }
    }

    /// Makes the clock another model: `0x21` a DGT 3000 (the default),
    /// `0x11` a DGT XL.
    pub fn set_clock_version(&mut self, version: u8) {
        self.clock_version = version;
    }

    /// The text the clock shows instead of the times (all eight
    /// characters), or `None` when it shows the times.
    pub fn displayed_text(&self) -> Option<&str> {
        self.clock_text.as_ref().map(ClockText::as_str)
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Reset => self.mode = Mode::Idle,
            Command::SendUpdateBoard => self.mode = Mode::UpdateBoard,
            Command::SendUpdate | Command::SendUpdateNice => self.mode = Mode::Update,
            Command::SendBoard => self.send(&Message::BoardDump(Box::new(self.picture.clone()))),
            Command::SendVersion => self.send(&Message::Version { major: self.version.0, minor: self.version.1 }),
            Command::SendSerialNumber | Command::SendLongSerialNumber => {
                self.send(&Message::SerialNumber(self.serial.clone()));
            }
            Command::SendClock => {
                let times = self.clock.unwrap_or(ClockTimes::from_reading(0, 0, None));
                let times =
                    if self.clock.is_some() { times } else { ClockTimes { status: ClockTimes::NO_CLOCK, ..times } };
                self.send(&Message::Clock(BwTime::Times(times)));
            }
            Command::SendBatteryStatus => self.send(&Message::Battery { percent: 100 }),
            Command::ClockVersion => self.ack(0x09),
            Command::ClockEnd => {
                self.clock_text = None;
                self.ack(0x03);
            }
            Command::ClockText(text) if self.clock_version >> 4 == 2 => {
                self.clock_text = Some(text);
                self.ack(0x0C);
            }
            Command::ClockText(_) => self.ack_with(0x40, 0x0C),
        }
    }

    /// The clock acknowledges a command (only in the update modes, as a
    /// real board).
    fn ack(&mut self, command: u8) {
        self.ack_with(0x10, command);
    }

    /// An acknowledgement: `status` 0x10 done, 0x40 error.
    fn ack_with(&mut self, status: u8, command: u8) {
        if self.mode == Mode::Update && self.clock.is_some() {
            self.send(&Message::Clock(BwTime::Ack(ClockAck([status, command, self.clock_version, 0]))));
        }
    }

    fn field(&mut self, square: shakmaty::Square, cell: Cell) {
        if self.picture.set(square, cell) != cell && self.mode != Mode::Idle {
            self.send(&Message::FieldUpdate { square, cell });
        }
    }

    fn clock_times(&mut self, times: ClockTimes) {
        let changed = self.clock != Some(times);
        self.clock = Some(times);
        if changed && self.mode == Mode::Update {
            self.send(&Message::Clock(BwTime::Times(times)));
        }
    }

    fn send(&mut self, message: &Message) {
        let mut bytes = Vec::new();
        message.encode(&mut bytes);
        self.out.extend(bytes);
    }
}

impl SimulatedBoard for DgtSim {
    /// Whether the host has put the board in an update mode (rather than
    /// only asking who it is).
    fn sends_updates(&self) -> bool {
        self.mode != Mode::Idle
    }
    /// The board as it is now.
    fn picture(&self) -> &Picture {
        &self.picture
    }
    /// Bytes the host sent.
    fn handle_host_bytes(&mut self, bytes: &[u8]) {
        self.host.extend_from_slice(bytes);
        loop {
            match Command::parse(&self.host) {
                Some((command, len)) => {
                    self.host.drain(..len);
                    self.command(command);
                }
                None if self.host.first().is_some_and(|&b| b == 0x2B) => {
                    // A clock message we do not know, or not complete yet:
                    // wait for its length byte and skip it whole.
                    let Some(&size) = self.host.get(1) else { break };
                    let total = usize::from(size) + 2;
                    if self.host.len() < total {
                        break;
                    }
                    self.host.drain(..total);
                    self.ack(0x0A);
                }
                None if self.host.is_empty() => break,
                None => {
                    // Not a command this board knows: ignored, as a real
                    // board does.
                    self.host.remove(0);
                }
            }
        }
    }
    /// Raw bytes the real board sent, as a `dgt` capture recorded them:
    /// field updates and clock messages are sent on (if the mode says so);
    /// replies to the recorded host's requests (board dumps, version,
    /// serial) are not, but what they say is kept.
    fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.script.push(bytes);
        while let Some(item) = self.script.next_item() {
            let Framed::Frame(frame) = item else { continue };
            let Ok(message) = Message::parse(&frame) else { continue };
            match message {
                Message::FieldUpdate { square, cell } => self.field(square, cell),
                Message::Clock(BwTime::Times(times)) => self.clock_times(times),
                Message::BoardDump(picture) => self.picture = *picture,
                Message::SerialNumber(serial) => self.serial = serial,
                Message::Version { major, minor } => self.version = (major, minor),
                _ => {}
            }
        }
    }
    /// A decoded sensor event, as an `events` capture recorded it.
    fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => {
                for sq in shakmaty::Square::ALL {
                    if self.picture.get(sq) != board.get(sq) {
                        self.field(sq, board.get(sq));
                    }
                }
            }
            &SensorEvent::Square { square, cell } => self.field(square, cell),
            SensorEvent::Clock(ClockReading::ByColor { white_ms, black_ms, running }) => {
                let (left, right) =
                    if self.white_side == ClockSide::Left { (*white_ms, *black_ms) } else { (*black_ms, *white_ms) };
                let side = |c: shakmaty::Color| {
                    if c == shakmaty::Color::White { self.white_side } else { self.white_side.other() }
                };
                self.clock_times(ClockTimes::from_reading(left, right, running.map(side)));
            }
            SensorEvent::Clock(ClockReading::BySide { left, right, running }) => {
                self.clock_times(ClockTimes::from_reading(left.ms, right.ms, *running));
            }
        }
    }
    /// Time passes (a DGT board sends only when something changes).
    fn handle_timeout(&mut self, _now: boardcast_core::time::Timestamp) {}
    /// When to call [`DgtSim::handle_timeout`] next: never.
    fn poll_timeout(&self) -> Option<boardcast_core::time::Timestamp> {
        None
    }
    /// The bytes to send to the host, if any.
    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() {
            return None;
        }
        Some(self.out.drain(..).collect())
    }
    /// The cable was pulled: the board powers down and comes back idle.
    fn handle_unplugged(&mut self) {
        self.mode = Mode::Idle;
        self.clock_text = None;
        self.host.clear();
        self.out.clear();
    }
}

#[cfg(test)]
mod tests {
    use boardcast_core::protocol::BoardDecoder;
    use shakmaty::Square;

    use super::*;
    use boardcast_core::protocol::{Decoded, dgt::DgtDecoder};

    fn decode(bytes: &[u8]) -> Vec<Decoded> {
        let mut decoder = DgtDecoder::new();
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    #[test]
    fn stays_quiet_until_told_and_answers_requests() {
        let mut board = DgtSim::new("03921", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&shakmaty::Board::new()))));
        assert_eq!(board.poll_transmit(), None, "idle: nothing sent");
        board.handle_host_bytes(&[0x4B, 0x4D, 0x45, 0x42]);
        let replies = decode(&board.poll_transmit().unwrap());
        assert_eq!(replies.len(), 3);
        assert!(
            matches!(&replies[2], Decoded::Sensor(SensorEvent::Board(p)) if **p == Picture::from_board(&shakmaty::Board::new()))
        );
        board.handle_script_event(&SensorEvent::Square { square: Square::E2, cell: Cell::Empty });
        assert_eq!(
            decode(&board.poll_transmit().unwrap()),
            [Decoded::Sensor(SensorEvent::Square { square: Square::E2, cell: Cell::Empty })]
        );
    }

    #[test]
    fn forwards_recorded_updates_but_not_recorded_replies() {
        let mut board = DgtSim::new("x", ClockSide::Left);
        board.handle_host_bytes(&[0x4B]);
        let mut script = Vec::new();
        Message::BoardDump(Box::new(Picture::from_board(&shakmaty::Board::new()))).encode(&mut script);
        Message::SerialNumber("12345".into()).encode(&mut script);
        Message::FieldUpdate { square: Square::E2, cell: Cell::Empty }.encode(&mut script);
        Message::Clock(BwTime::Times(ClockTimes::from_reading(180_000, 180_000, Some(ClockSide::Left))))
            .encode(&mut script);
        board.handle_script_bytes(&script[..20]);
        board.handle_script_bytes(&script[20..]);
        let sent = decode(&board.poll_transmit().unwrap());
        assert_eq!(sent.len(), 2, "the field update and the clock: {sent:?}");
        board.handle_host_bytes(&[0x45]);
        assert_eq!(
            decode(&board.poll_transmit().unwrap()),
            [Decoded::Info(boardcast_core::protocol::BoardInfo::Serial("12345".into()))]
        );
    }

    #[test]
    fn a_dgt_3000_shows_text_until_end_and_an_xl_does_not() {
        let mut board = DgtSim::new("x", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Clock(ClockReading::BySide {
            left: boardcast_core::sensor::ClockDisplay { ms: 300_000, flag: false },
            right: boardcast_core::sensor::ClockDisplay { ms: 300_000, flag: false },
            running: None,
        }));
        board.handle_host_bytes(&[0x4B]);
        board.poll_transmit();
        board.handle_host_bytes(&[0x2B, 0x0C, 0x03, 0x0C, 0x65, 0x32, 0x65, 0x34, 0x20, 0x20, 0x20, 0x20, 0x00, 0x00]);
        assert_eq!(board.displayed_text(), Some("e2e4    "));
        assert_eq!(
            decode(&board.poll_transmit().unwrap()),
            [Decoded::Info(boardcast_core::protocol::BoardInfo::ClockAck([0x10, 0x0C, 0x21, 0]))]
        );
        board.handle_host_bytes(&[0x2B, 0x03, 0x03, 0x03, 0x00]);
        assert_eq!(board.displayed_text(), None, "back to the times");
        board.set_clock_version(0x11);
        board.handle_host_bytes(&Command::ClockText(ClockText::new("e4")).bytes());
        assert_eq!(board.displayed_text(), None, "an XL has no text display");
    }

    #[test]
    fn a_board_pulled_out_comes_back_idle_with_the_board_as_it_is() {
        let mut board = DgtSim::new("x", ClockSide::Left);
        board.handle_script_event(&SensorEvent::Board(Box::new(Picture::from_board(&shakmaty::Board::new()))));
        board.handle_host_bytes(&[0x44]);
        board.handle_unplugged();
        board.handle_script_event(&SensorEvent::Square { square: Square::E2, cell: Cell::Empty });
        assert_eq!(board.poll_transmit(), None);
        board.handle_host_bytes(&[0x42]);
        let dump = decode(&board.poll_transmit().unwrap());
        assert!(matches!(&dump[0], Decoded::Sensor(SensorEvent::Board(p)) if p.get(Square::E2) == Cell::Empty));
    }
}
