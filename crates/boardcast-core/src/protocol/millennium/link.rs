//! The host's side of a Millennium board connection, sans-I/O: what to send
//! after connecting, how to keep a quiet board talking, and what to show on
//! its LEDs.
//!
//! After every (re)connection the link asks for the version (`V`), sets
//! register 2 to report the status whenever it changes, with a debounce of
//! two scans (`W0204`), and asks for the status at once (`S`) so that the
//! picture starts right. Why that register value: the board's default
//! sends a 67-character status on every scan, some 24 times a second,
//! which buries the few that matter and keeps the reconstructor busy for
//! nothing; polling alone (`1`) would add the poll period to every move.
//! Reporting on change costs nothing while the players think. The two-scan
//! debounce (about 82 ms at the default scan time) drops the single-scan
//! glitches of a piece dragged across the sensors before they reach the
//! line, yet is far below the reconstructor's own `settle` and
//! `touch_min`, so no move or touch is delayed noticeably; longer debounces
//! would start to merge the lift and the placement of a quick move, which
//! the touch evidence wants apart. (The register lives in the board's
//! E2ROM, so the value survives power cycles; writing it on every
//! connection keeps a board another program reconfigured working.)
//!
//! A board reporting on change is silent while nobody moves, so silence
//! alone proves nothing: after `keepalive_after` without a byte the link
//! asks for the status, and after `silent_after` it reports the board
//! silent so that the shell reconnects. When bytes were lost (the decoder
//! resynchronised) a status report may have been among them; the status
//! is the whole board, so asking for it once more resynchronises
//! completely. It is asked again (up to three times) if none comes within
//! `dump_within`.
//!
//! The LEDs: [`MillenniumLink::show`] takes the squares to light; an `L`
//! command is sent only when they differ from the last one sent (`X` when
//! nothing is lit). The board answers LED commands with an acknowledgement
//! the decoder does not pass on, so the link paces them instead: one LED
//! command per [`LED_SPACING`], which covers sending the 167 characters of
//! an `L` (44 ms at 38400 baud) and the board's answer. Squares that
//! change meanwhile are merged into the next command, so there is never
//! more than one LED command on its way.

use std::{collections::VecDeque, time::Duration};

use super::{
    command::{Command, REG_REPORTING, REPORT_ON_CHANGE},
    leds::LedPattern,
};
use crate::protocol::{BoardLink, Leds};
use crate::{
    protocol::{
        BoardInfo, Decoded, Lights,
        link::{
            retry::BoardRequest,
            settings::{LinkConfig, LinkEvent},
            watchdog::{Watch, Watchdog},
        },
    },
    sensor::SensorEvent,
    time::Timestamp,
};

/// The value written to register 2: report on change, two-scan debounce.
pub const REPORTING: u8 = REPORT_ON_CHANGE + 1;

/// At most one LED command this often (see the module docs).
pub(crate) const LED_SPACING: Duration = Duration::from_millis(100);

/// The host side of one Millennium board connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct MillenniumLink {
    config: LinkConfig,
    connected: bool,
    /// Notices a board that went quiet.
    watchdog: Watchdog,
    /// Commands waiting to be sent, in order.
    outgoing: VecDeque<Command>,
    /// The status asked for (after lost bytes, or before blaming) and not
    /// received yet.
    status: BoardRequest,
    /// What the LEDs should show.
    lights: Lights,
    /// The LEDs as last commanded; `None` when unknown (a new connection).
    shown: Option<LedPattern>,
    /// No LED command before this time.
    leds_free_at: Option<Timestamp>,
    version: Option<String>,
    events: VecDeque<LinkEvent>,
}

impl MillenniumLink {
    /// A link that is not connected yet.
    pub(crate) fn new(config: LinkConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// The next command to send, if any (what [`Self::poll_transmit`]
    /// encodes).
    pub(crate) fn poll_command(&mut self, now: Timestamp) -> Option<Command> {
        if !self.connected {
            return None;
        }
        if let Some(command) = self.outgoing.pop_front() {
            return Some(command);
        }
        let wanted = LedPattern::for_lights(&self.lights);
        if self.shown == Some(wanted) || self.leds_free_at.is_some_and(|t| now < t) {
            return None;
        }
        self.shown = Some(wanted);
        self.leds_free_at = Some(now + LED_SPACING);
        Some(if wanted.is_dark() { Command::PutOutLeds } else { Command::SetLeds(wanted) })
    }

    #[cfg(test)]
    /// The board's firmware version, once it told.
    pub(crate) fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }
}

impl Leds for MillenniumLink {
    /// What the board's LEDs should show, in the board's own orientation:
    /// sent by [`Self::poll_transmit`] when it differs from what they show.
    fn show(&mut self, lights: &Lights) {
        self.lights = *lights;
    }
}

impl BoardLink for MillenniumLink {
    fn leds_mut(&mut self) -> Option<&mut dyn Leds> {
        Some(self)
    }

    /// The port is open: queue the start-up sequence.
    fn handle_connected(&mut self, now: Timestamp) {
        self.connected = true;
        self.watchdog.handle_rx(now);
        self.status.clear();
        // Whatever the LEDs showed before is unknown: the first LED command
        // sets them (or puts them out).
        self.shown = None;
        self.leds_free_at = None;
        self.outgoing.clear();
        self.outgoing.extend([
            Command::SendVersion,
            Command::WriteRegister { address: REG_REPORTING, value: REPORTING },
            Command::SendStatus,
        ]);
    }

    /// The port closed.
    fn handle_disconnected(&mut self) {
        self.connected = false;
        self.outgoing.clear();
        self.status.clear();
    }

    /// Bytes arrived (whatever they mean).
    fn handle_rx(&mut self, now: Timestamp) {
        self.watchdog.handle_rx(now);
    }

    /// The decoder made sense of something, or reported lost bytes.
    fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded) {
        match decoded {
            Decoded::Info(BoardInfo::Version(version)) if self.version.as_ref() != Some(version) => {
                self.version = Some(version.clone());
                self.events.push_back(LinkEvent::Identified { serial: None, version: Some(version.clone()) });
            }
            Decoded::Sensor(SensorEvent::Board(_)) => self.status.clear(),
            // A status report may have been lost: ask for the board (once;
            // more lost bytes before it comes need no second request).
            // (The guard records the request: it holds only when none was
            // waiting.)
            Decoded::Problem(_) if self.status.after_lost_bytes(now) => {
                self.outgoing.push_back(Command::SendStatus);
            }
            _ => {}
        }
    }

    /// Acts on deadlines that have come.
    fn handle_timeout(&mut self, now: Timestamp) {
        if !self.connected {
            return;
        }
        match self.watchdog.handle_timeout(now, &self.config) {
            Some(Watch::Silent) => self.events.push_back(LinkEvent::Silent),
            Some(Watch::KeepAlive) => self.outgoing.push_back(Command::SendStatus),
            None => {}
        }
        if self.status.handle_timeout(now, self.config.dump_within) {
            self.outgoing.push_back(Command::SendStatus);
        }
        if self.leds_free_at.is_some_and(|t| t <= now) {
            self.leds_free_at = None;
        }
    }

    /// The next bytes to send (parity and block check applied), if any.
    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        self.poll_command(now).map(|command| command.encode())
    }

    /// When to call [`MillenniumLink::handle_timeout`] next.
    fn poll_timeout(&self) -> Option<Timestamp> {
        if !self.connected {
            return None;
        }
        let watchdog = self.watchdog.poll_timeout(&self.config);
        let status = self.status.poll_timeout(self.config.dump_within);
        // Woken when the LEDs are free again only if a change waits for it.
        let leds = self.leds_free_at.filter(|_| self.shown != Some(LedPattern::for_lights(&self.lights)));
        Some([status, leds].into_iter().flatten().fold(watchdog, Timestamp::min))
    }

    /// The next thing to report.
    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.events.pop_front()
    }

    /// The reconstructor is about to blame a player on the picture it has:
    /// ask for the board's status first.
    fn request_board(&mut self, now: Timestamp) {
        if self.status.before_blame(now) {
            self.outgoing.push_back(Command::SendStatus);
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Bitboard, Square};

    use super::*;
    use crate::protocol::{
        DecodeProblem,
        millennium::leds::{BLINKING, STEADY, corners},
    };

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn sent(link: &mut MillenniumLink, now: Timestamp) -> Vec<Command> {
        std::iter::from_fn(|| link.poll_command(now)).collect()
    }

    fn connected() -> MillenniumLink {
        let mut link = MillenniumLink::new(LinkConfig::default());
        link.handle_connected(ms(0));
        sent(&mut link, ms(0));
        link
    }

    #[test]
    fn starts_a_board_after_every_connection() {
        let mut link = MillenniumLink::new(LinkConfig::default());
        assert_eq!(sent(&mut link, ms(0)), [], "nothing is sent before the port opens");
        link.handle_connected(ms(0));
        let startup = [
            Command::SendVersion,
            Command::WriteRegister { address: 2, value: 4 },
            Command::SendStatus,
            Command::PutOutLeds,
        ];
        assert_eq!(sent(&mut link, ms(0)), startup);
        link.handle_disconnected();
        link.handle_connected(ms(5000));
        assert_eq!(sent(&mut link, ms(5000)), startup, "the LEDs are put out again: their state is unknown");
        assert_eq!(link.poll_transmit(ms(5000)), None, "and nothing more until something happens");
        link.handle_connected(ms(6000));
        assert_eq!(link.poll_transmit(ms(6000)), Some(vec![0xD6, 0xB5, 0xB6]), "V, encoded");
    }

    #[test]
    fn keeps_a_quiet_board_talking_and_reports_a_silent_one() {
        let mut link = connected();
        assert_eq!(link.poll_timeout(), Some(ms(2000)));
        link.handle_timeout(ms(2000));
        assert_eq!(sent(&mut link, ms(2000)), [Command::SendStatus]);
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
    fn asks_for_the_status_after_lost_bytes_until_it_comes() {
        let mut link = connected();
        let garbage = Decoded::Problem(DecodeProblem::Garbage { len: 2, reason: "x" });
        link.handle_decoded(ms(100), &garbage);
        link.handle_decoded(ms(200), &garbage);
        assert_eq!(sent(&mut link, ms(200)), [Command::SendStatus], "one request for a burst of lost bytes");
        assert_eq!(link.poll_timeout(), Some(ms(600)));
        link.handle_timeout(ms(600));
        assert_eq!(sent(&mut link, ms(600)), [Command::SendStatus]);
        link.handle_timeout(ms(1100));
        assert_eq!(sent(&mut link, ms(1100)), [Command::SendStatus]);
        link.handle_timeout(ms(1600));
        assert_eq!(sent(&mut link, ms(1600)), [], "three tries, then it gives up");
        // A status that arrives ends the wait; the next loss asks at once.
        link.handle_decoded(ms(1700), &garbage);
        assert_eq!(sent(&mut link, ms(1700)), [Command::SendStatus]);
        link.handle_decoded(ms(1750), &Decoded::Sensor(SensorEvent::Board(Box::default())));
        link.handle_decoded(ms(1800), &garbage);
        assert_eq!(sent(&mut link, ms(1800)), [Command::SendStatus]);
    }

    #[test]
    fn reports_the_version_once() {
        let mut link = connected();
        link.handle_decoded(ms(10), &Decoded::Info(BoardInfo::Version("1.8".into())));
        link.handle_decoded(ms(20), &Decoded::Info(BoardInfo::Version("1.8".into())));
        assert_eq!(link.poll_event(), Some(LinkEvent::Identified { serial: None, version: Some("1.8".into()) }));
        assert_eq!(link.poll_event(), None);
        assert_eq!(link.version(), Some("1.8"));
    }

    #[test]
    fn lights_squares_when_they_change_one_command_at_a_time() {
        let mut link = connected();
        let e2e4 = Lights { steady: Bitboard::from(Square::E2) | Bitboard::from(Square::E4), ..Lights::default() };
        link.show(&e2e4);
        link.show(&e2e4);
        let [Command::SetLeds(pattern)] = sent(&mut link, ms(150))[..] else { panic!("one L command") };
        for led in corners(Square::E2).into_iter().chain(corners(Square::E4)) {
            assert_eq!(pattern.codes[led], STEADY);
        }
        assert_eq!(pattern.codes.iter().filter(|&&c| c != 0).count(), 8);
        link.show(&e2e4);
        assert_eq!(sent(&mut link, ms(160)), [], "unchanged: nothing sent");
        // Two changes while the last command is on its way: only the
        // latest is sent, once the link is free.
        link.show(&Lights { blinking: Bitboard::from(Square::D7), ..Lights::default() });
        let out_of_sync = Lights { blinking: Bitboard::from(Square::D5), ..Lights::default() };
        link.show(&out_of_sync);
        assert_eq!(sent(&mut link, ms(200)), []);
        assert_eq!(link.poll_timeout(), Some(ms(250)));
        link.handle_timeout(ms(250));
        let [Command::SetLeds(pattern)] = sent(&mut link, ms(250))[..] else { panic!("one L command") };
        assert_eq!(pattern, LedPattern::for_lights(&out_of_sync));
        assert!(corners(Square::D5).iter().all(|&led| pattern.codes[led] == BLINKING));
        // Nothing lit: X.
        link.show(&Lights::default());
        link.handle_timeout(ms(350));
        assert_eq!(sent(&mut link, ms(350)), [Command::PutOutLeds]);
        assert_eq!(link.poll_timeout(), Some(ms(2000)), "only the keep-alive is due");
    }
}
