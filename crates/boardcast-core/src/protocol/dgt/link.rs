//! The host's side of a DGT board connection, sans-I/O: what to send after
//! connecting, how to notice a board that went quiet, and the rule that the
//! clock takes one command at a time.
//!
//! After every (re)connection a board is in bus mode or idle and must be
//! told what to do: the link sends UPDATE_NICE (field changes, and clock
//! times when they change), asks for the version and serial number, and
//! asks for a whole board dump so that the picture starts right. When
//! nothing arrives for `keepalive_after`, it asks for the serial number (any
//! board answers that); when nothing arrives for `silent_after` either, it
//! reports the board silent so that the shell reconnects. When bytes were
//! lost (the decoder resynchronised), it asks for a fresh board dump, and
//! asks again (up to three times) if none comes.
//!
//! A DGT 3000 may show the last move for a moment ([`super::display`]
//! decides when); its commands go through the same one-at-a-time clock
//! queue as every clock command.

use std::collections::VecDeque;

use super::{
    command::{ClockText, Command},
    display::{ClockDisplayMode, ClockDisplaySettings, ClockModel, ClockTextDisplay},
};
use crate::protocol::link::{
    retry::BoardRequest,
    settings::{LinkConfig, LinkEvent},
    watchdog::{Watch, Watchdog},
};
use crate::protocol::{BoardLink, ClockMessages};
use crate::{
    protocol::{BoardInfo, DecodeProblem, Decoded},
    time::Timestamp,
};

/// The host side of one DGT board connection.
#[derive(Clone, Debug, Default)]
pub struct DgtLink {
    config: LinkConfig,
    connected: bool,
    /// Notices a board that went quiet.
    watchdog: Watchdog,
    /// Commands waiting to be sent, in order.
    outgoing: VecDeque<Command>,
    /// Clock commands waiting for the clock.
    clock_queue: VecDeque<Command>,
    /// The clock command sent and not yet acknowledged: when, and how many
    /// times it was sent.
    clock_pending: Option<(Command, Timestamp, u8)>,
    /// The board dump asked for (after lost bytes, or before blaming) and
    /// not received yet.
    dump: BoardRequest,
    version: Option<String>,
    serial: Option<String>,
    /// Text on a DGT 3000's display.
    display: ClockTextDisplay,
    events: VecDeque<LinkEvent>,
}

impl DgtLink {
    /// A link that is not connected yet.
    pub fn new(config: LinkConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// Queues a command for the clock (sent when the clock is free).
    pub fn send_clock_command(&mut self, command: Command) {
        self.clock_queue.push_back(command);
    }

    /// The next command to send, if any.
    pub fn poll_command(&mut self, now: Timestamp) -> Option<Command> {
        if !self.connected {
            return None;
        }
        if let Some(command) = self.outgoing.pop_front() {
            return Some(command);
        }
        self.clock_queue.extend(std::iter::from_fn(|| self.display.poll_command()));
        if self.clock_pending.is_none()
            && let Some(command) = self.clock_queue.pop_front()
        {
            self.clock_pending = Some((command, now, 1));
            return Some(command);
        }
        None
    }

    /// The board's serial number, once it told.
    pub fn serial(&self) -> Option<&str> {
        self.serial.as_deref()
    }

    /// The board's firmware version, once it told.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }
}

impl BoardLink for DgtLink {
    /// The port is open: queue the start-up sequence.
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.watchdog.handle_rx(now);
        self.outgoing.clear();
        self.clock_pending = None;
        self.dump.clear();
        self.outgoing.extend([
            Command::SendUpdateNice,
            Command::SendVersion,
            Command::SendSerialNumber,
            Command::SendBoard,
        ]);
        self.display.handle_connected();
    }

    /// The port closed.
    fn handle_disconnected(&mut self) {
        self.connected = false;
        self.outgoing.clear();
        self.clock_pending = None;
    }

    /// Bytes arrived (whatever they mean).
    fn handle_rx(&mut self, now: Timestamp) {
        self.watchdog.handle_rx(now);
    }

    /// The decoder made sense of something, or reported lost bytes.
    fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded) {
        let model = self.display.model();
        self.display.handle_decoded(decoded);
        if model != ClockModel::Other
            && self.display.model() == ClockModel::Other
            && self.display.settings().mode != ClockDisplayMode::Off
        {
            self.events.push_back(LinkEvent::ClockShowsNoText);
        }
        match decoded {
            Decoded::Info(BoardInfo::Serial(serial)) if self.serial.as_ref() != Some(serial) => {
                self.serial = Some(serial.clone());
                self.events
                    .push_back(LinkEvent::Identified { serial: Some(serial.clone()), version: self.version.clone() });
            }
            Decoded::Info(BoardInfo::Version(version)) => self.version = Some(version.clone()),
            // Any clock message means the clock is free again (DGT's own
            // advice; an acknowledgement, an empty message or times).
            Decoded::Info(BoardInfo::ClockAck(_) | BoardInfo::ClockAbsent)
            | Decoded::Sensor(crate::sensor::SensorEvent::Clock(_)) => {
                self.clock_pending = None;
            }
            // A field update may have been lost: the picture can no longer
            // be trusted, so ask for the whole board (once: more lost bytes
            // before it comes need no second dump).
            // (The guard records the request: it holds only when none was
            // waiting.)
            Decoded::Problem(DecodeProblem::Garbage { .. } | DecodeProblem::BadMessage(_))
                if self.dump.after_lost_bytes(now) =>
            {
                self.outgoing.push_back(Command::SendBoard);
            }
            Decoded::Sensor(crate::sensor::SensorEvent::Board(_)) => self.dump.clear(),
            _ => {}
        }
    }

    /// Acts on deadlines that have come.
    fn handle_timeout(&mut self, now: Timestamp) {
        if !self.connected {
            return;
        }
        self.display.handle_timeout(now);
        match self.watchdog.handle_timeout(now, &self.config) {
            Some(Watch::Silent) => self.events.push_back(LinkEvent::Silent),
            Some(Watch::KeepAlive) => self.outgoing.push_back(Command::SendSerialNumber),
            None => {}
        }
        if let Some((command, sent, tries)) = self.clock_pending
            && sent + self.config.clock_ack_within <= now
        {
            if tries >= 3 {
                self.clock_pending = None;
                self.events.push_back(LinkEvent::ClockCommandDropped(format!("{command:?}")));
            } else {
                self.clock_pending = Some((command, now, tries + 1));
                self.outgoing.push_back(command);
            }
        }
        if self.dump.handle_timeout(now, self.config.dump_within) {
            self.outgoing.push_back(Command::SendBoard);
        }
    }

    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        self.poll_command(now).map(Command::bytes)
    }

    /// When to call [`DgtLink::handle_timeout`] next.
    fn poll_timeout(&self) -> Option<Timestamp> {
        if !self.connected {
            return None;
        }
        let watchdog = self.watchdog.poll_timeout(&self.config);
        let clock = self.clock_pending.map(|(_, sent, _)| sent + self.config.clock_ack_within);
        let dump = self.dump.poll_timeout(self.config.dump_within);
        let display = self.display.poll_timeout();
        Some([clock, dump, display].into_iter().flatten().fold(watchdog, Timestamp::min))
    }

    /// The next thing to report, if any.
    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    /// The reconstructor is about to blame a player on the picture it has
    /// (a press without a move, a board out of sync): ask for the whole
    /// board first, so that a field update lost on the line is not taken
    /// for the player's doing.
    fn request_board(&mut self, now: Timestamp) {
        if self.dump.before_blame(now) {
            self.outgoing.push_back(Command::SendBoard);
        }
    }

    /// A DGT board's clock may be a DGT 3000, which shows text (a DGT XL
    /// shows none: the link says so when it learns which it is).
    fn clock_mut(&mut self) -> Option<&mut dyn ClockMessages> {
        Some(self)
    }
}

impl ClockMessages for DgtLink {
    /// What the clock shows besides the times.
    fn set_clock_display(&mut self, settings: ClockDisplaySettings) {
        self.display.set_settings(settings);
    }

    /// Shows `text` on a DGT 3000 for a moment, if the display's rule
    /// allows (see [`super::display`]); returns whether it will be shown.
    fn show_text(&mut self, now: Timestamp, text: ClockText) -> bool {
        self.display.show(now, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn sent(link: &mut DgtLink, now: Timestamp) -> Vec<Command> {
        std::iter::from_fn(|| link.poll_command(now)).collect()
    }

    #[test]
    fn starts_a_board_after_every_connection() {
        let mut link = DgtLink::new(LinkConfig::default());
        assert_eq!(sent(&mut link, ms(0)), [], "nothing is sent before the port opens");
        link.handle_connected(ms(0));
        let startup = [Command::SendUpdateNice, Command::SendVersion, Command::SendSerialNumber, Command::SendBoard];
        assert_eq!(sent(&mut link, ms(0)), startup);
        link.handle_disconnected();
        link.handle_connected(ms(5000));
        assert_eq!(sent(&mut link, ms(5000)), startup);
    }

    #[test]
    fn keeps_a_quiet_board_awake_and_reports_a_silent_one() {
        let mut link = DgtLink::new(LinkConfig::default());
        link.handle_connected(ms(0));
        sent(&mut link, ms(0));
        assert_eq!(link.poll_timeout(), Some(ms(2000)));
        link.handle_timeout(ms(2000));
        assert_eq!(sent(&mut link, ms(2000)), [Command::SendSerialNumber]);
        assert_eq!(link.poll_timeout(), Some(ms(6000)));
        // The board answers: quiet again, from then.
        link.handle_rx(ms(2100));
        assert_eq!(link.poll_timeout(), Some(ms(4100)));
        link.handle_timeout(ms(4100));
        sent(&mut link, ms(4100));
        link.handle_timeout(ms(8100));
        assert_eq!(link.poll_event(), Some(LinkEvent::Silent));
        assert_eq!(link.poll_event(), None);
    }

    #[test]
    fn sends_clock_commands_one_at_a_time_and_retries() {
        let mut link = DgtLink::new(LinkConfig::default());
        link.handle_connected(ms(0));
        sent(&mut link, ms(0));
        link.send_clock_command(Command::ClockVersion);
        link.send_clock_command(Command::ClockEnd);
        assert_eq!(sent(&mut link, ms(10)), [Command::ClockVersion]);
        assert_eq!(sent(&mut link, ms(20)), [], "the clock has not answered yet");
        link.handle_rx(ms(1500));
        link.handle_timeout(ms(2010));
        assert_eq!(sent(&mut link, ms(2010)), [Command::ClockVersion], "sent again");
        link.handle_decoded(ms(2500), &Decoded::Info(BoardInfo::ClockAck([0x10, 0x09, 0x21, 0])));
        assert_eq!(sent(&mut link, ms(2500)), [Command::ClockEnd]);
        link.handle_rx(ms(2500));
        link.handle_timeout(ms(4500));
        link.handle_rx(ms(4500));
        link.handle_timeout(ms(6500));
        link.handle_rx(ms(6500));
        link.handle_timeout(ms(8500));
        assert_eq!(link.poll_event(), Some(LinkEvent::ClockCommandDropped("ClockEnd".into())));
    }

    #[test]
    fn asks_for_the_board_after_lost_bytes_until_it_comes() {
        let mut link = DgtLink::new(LinkConfig::default());
        link.handle_connected(ms(0));
        sent(&mut link, ms(0));
        let garbage = Decoded::Problem(DecodeProblem::Garbage { len: 2, reason: "x" });
        link.handle_decoded(ms(100), &garbage);
        link.handle_decoded(ms(200), &garbage);
        assert_eq!(sent(&mut link, ms(200)), [Command::SendBoard], "one dump for a burst of lost bytes");
        // The answer is lost too: asked again after half a second, twice more.
        assert_eq!(link.poll_timeout(), Some(ms(600)));
        link.handle_timeout(ms(600));
        assert_eq!(sent(&mut link, ms(600)), [Command::SendBoard]);
        link.handle_timeout(ms(1100));
        assert_eq!(sent(&mut link, ms(1100)), [Command::SendBoard]);
        link.handle_timeout(ms(1600));
        assert_eq!(sent(&mut link, ms(1600)), [], "three tries, then it gives up");
        // A dump that arrives ends the wait; the next loss asks at once.
        link.handle_decoded(ms(1700), &garbage);
        assert_eq!(sent(&mut link, ms(1700)), [Command::SendBoard]);
        let board = crate::sensor::SensorEvent::Board(Box::default());
        link.handle_decoded(ms(1750), &Decoded::Sensor(board));
        link.handle_decoded(ms(1800), &garbage);
        assert_eq!(sent(&mut link, ms(1800)), [Command::SendBoard]);
    }

    #[test]
    fn learns_the_boards_identity() {
        let mut link = DgtLink::new(LinkConfig::default());
        link.handle_connected(ms(0));
        link.handle_decoded(ms(10), &Decoded::Info(BoardInfo::Version("1.2".into())));
        link.handle_decoded(ms(20), &Decoded::Info(BoardInfo::Serial("03921".into())));
        assert_eq!(
            link.poll_event(),
            Some(LinkEvent::Identified { serial: Some("03921".into()), version: Some("1.2".into()) })
        );
        assert_eq!((link.serial(), link.version()), (Some("03921"), Some("1.2")));
    }
}
