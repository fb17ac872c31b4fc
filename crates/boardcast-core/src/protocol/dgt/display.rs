//! The DGT 3000's display as a place for text, sans-I/O: when a move (or
//! an operator's message) may be shown in place of the times, and when the
//! times come back.
//!
//! The rule that comes first: a player's time is never hidden when they may
//! need it. Text is shown only when all of these hold, and otherwise not at
//! all (nothing is queued for later):
//! - the board is configured to show it (`clock_display = "moves"`);
//! - the clock said it is a DGT 3000 (its version acknowledgement has major
//!   version 2). A DGT XL has no text display and an unknown clock may be
//!   one: nothing is shown on either;
//! - a time reading has come since the connection opened, and neither
//!   display shows a fallen flag or `min_remaining` (60 s) or less. With a
//!   minute or less left a player plays on the increment and watches every
//!   second; that is also where an arbiter looks for the flag;
//! - no text is on the display, and the times have been back for at least
//!   `show_for` since the last one: in fast play (moves less than 2 s
//!   apart) a move is skipped rather than the times kept hidden, so the
//!   times are on the display at least half of the time;
//! - and it stays for `show_for` (2 s) only: then END puts the times back.
//!   A reading that breaks the rule while text is shown puts them back at
//!   once.
//!
//! The clock keeps counting underneath; the display only shows something
//! else for a moment.

use std::{collections::VecDeque, time::Duration};

use super::command::{ClockText, Command};
use crate::{
    protocol::{BoardInfo, Decoded},
    sensor::{ClockReading, SensorEvent},
    time::Timestamp,
};

/// How long after END it goes once more.
const END_AGAIN_AFTER: Duration = Duration::from_secs(1);

/// What a board's clock shows besides the times (configuration key
/// `clock_display`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClockDisplayMode {
    /// Only the times (the clock is left alone).
    #[default]
    Off,
    /// Each move once it is completed, and the operator's messages.
    Moves,
}

/// When and for how long text is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockDisplaySettings {
    /// Whether anything is shown.
    pub mode: ClockDisplayMode,
    /// How long text stays before the times come back.
    pub show_for: Duration,
    /// Nothing is shown while either display has this much or less.
    pub min_remaining: Duration,
}

impl Default for ClockDisplaySettings {
    fn default() -> Self {
        Self {
            mode: ClockDisplayMode::Off,
            show_for: Duration::from_millis(2000),
            min_remaining: Duration::from_secs(60),
        }
    }
}

/// Which clock is attached, as far as it told.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ClockModel {
    /// It has not answered the version request (yet).
    #[default]
    Unknown,
    /// A DGT 3000: eight characters of text.
    Dgt3000,
    /// Another clock (a DGT XL): times and segments only.
    Other,
}

/// The clock display's state on one connection.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClockTextDisplay {
    settings: ClockDisplaySettings,
    model: ClockModel,
    /// Both displays' remaining time and whether either flag fell, as last
    /// read.
    last_reading: Option<(u64, u64, bool)>,
    /// Text is on the display until then.
    shown_until: Option<Timestamp>,
    /// When the times were last put back.
    times_back_at: Option<Timestamp>,
    /// When END goes once more: a lost END would leave the text up for
    /// the rest of the game, and a second END on a clock showing its times
    /// changes nothing.
    end_again_at: Option<Timestamp>,
    /// How many times the clock was asked for its version on this
    /// connection.
    version_asks: u8,
    /// Clock commands for the link to send, in order.
    commands: VecDeque<Command>,
}

impl ClockTextDisplay {
    /// A display driven by `settings`.
    pub(crate) fn new(settings: ClockDisplaySettings) -> Self {
        Self { settings, ..Self::default() }
    }

    /// Changes the settings (on a connection that is already open, the
    /// clock is asked what it is).
    pub(crate) fn set_settings(&mut self, settings: ClockDisplaySettings) {
        let was_off = self.settings.mode == ClockDisplayMode::Off;
        self.settings = settings;
        if was_off {
            self.ask_version();
        }
    }

    /// The port opened: the clock may be another one than before; it is
    /// asked what it is (only when text may be shown: otherwise the clock
    /// is left alone).
    pub(crate) fn handle_connected(&mut self) {
        *self = Self::new(self.settings);
        self.ask_version();
    }

    /// Asks the clock what it is, up to three times a connection: the
    /// link takes any clock message for the end of a clock command, so a
    /// time reading that comes first leaves the question unanswered (and a
    /// board sends no acknowledgement before a clock is attached).
    fn ask_version(&mut self) {
        if self.settings.mode != ClockDisplayMode::Off && self.model == ClockModel::Unknown && self.version_asks < 3 {
            self.version_asks += 1;
            self.commands.push_back(Command::ClockVersion);
        }
    }

    /// Something came from the board: the clock's version, or its times.
    pub(crate) fn handle_decoded(&mut self, decoded: &Decoded) {
        match decoded {
            // ack0 0x10: no error; ack1 0x09: the version; ack2's high
            // nibble is the major version, 2 for a DGT 3000.
            Decoded::Info(BoardInfo::ClockAck([0x10, 0x09, version, _])) => {
                self.model = if version >> 4 == 2 { ClockModel::Dgt3000 } else { ClockModel::Other };
            }
            Decoded::Info(BoardInfo::ClockAbsent) => self.last_reading = None,
            Decoded::Sensor(SensorEvent::Clock(reading)) => {
                self.last_reading = Some(match *reading {
                    ClockReading::BySide { left, right, .. } => (left.ms, right.ms, left.flag || right.flag),
                    ClockReading::ByColor { white_ms, black_ms, .. } => (white_ms, black_ms, false),
                });
                self.ask_version();
                if let Some(planned) = self.shown_until.filter(|_| !self.may_show()) {
                    // END now, and once more when the text would have
                    // gone anyway.
                    self.shown_until = None;
                    self.commands.push_back(Command::ClockEnd);
                    self.end_again_at = Some(planned);
                }
            }
            _ => {}
        }
    }

    /// Whether text may be on the display now (the rule above).
    pub(crate) fn may_show(&self) -> bool {
        let min = u64::try_from(self.settings.min_remaining.as_millis()).unwrap_or(u64::MAX);
        self.settings.mode != ClockDisplayMode::Off
            && self.model == ClockModel::Dgt3000
            && self.last_reading.is_some_and(|(a, b, flag)| !flag && a > min && b > min)
    }

    /// Shows `text` for `show_for`, if the rule allows; returns whether it
    /// will be shown. A text never replaces one still shown (that would
    /// keep the times hidden longer).
    pub(crate) fn show(&mut self, now: Timestamp, text: ClockText) -> bool {
        let rested = self.times_back_at.is_none_or(|t| t + self.settings.show_for <= now);
        if !self.may_show() || self.shown_until.is_some() || !rested {
            return false;
        }
        self.commands.push_back(Command::ClockText(text));
        self.shown_until = Some(now + self.settings.show_for);
        true
    }

    /// Puts the times back when the text has been shown long enough (and
    /// once more a moment later).
    pub(crate) fn handle_timeout(&mut self, now: Timestamp) {
        if self.shown_until.is_some_and(|t| t <= now) {
            self.shown_until = None;
            self.times_back_at = Some(now);
            self.end(now);
        } else if self.end_again_at.is_some_and(|t| t <= now) {
            self.end_again_at = None;
            self.commands.push_back(Command::ClockEnd);
        }
    }

    /// When the times are to come back, if text is shown, or END is to go
    /// once more.
    pub(crate) fn poll_timeout(&self) -> Option<Timestamp> {
        self.shown_until.or(self.end_again_at)
    }

    /// END now, and again a moment later.
    fn end(&mut self, now: Timestamp) {
        self.commands.push_back(Command::ClockEnd);
        self.end_again_at = Some(now + END_AGAIN_AFTER);
    }

    /// The next clock command to send.
    pub(crate) fn poll_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// The settings in force.
    pub(crate) fn settings(&self) -> ClockDisplaySettings {
        self.settings
    }

    /// Which clock is attached, as far as known.
    pub(crate) fn model(&self) -> ClockModel {
        self.model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensor::{ClockDisplay as Display, ClockSide};

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    fn moves() -> ClockDisplaySettings {
        ClockDisplaySettings { mode: ClockDisplayMode::Moves, ..ClockDisplaySettings::default() }
    }

    fn reading(left_ms: u64, right_ms: u64) -> Decoded {
        Decoded::Sensor(SensorEvent::Clock(ClockReading::BySide {
            left: Display { ms: left_ms, flag: false },
            right: Display { ms: right_ms, flag: false },
            running: Some(ClockSide::Right),
        }))
    }

    const DGT_3000: Decoded = Decoded::Info(BoardInfo::ClockAck([0x10, 0x09, 0x21, 0]));
    const DGT_XL: Decoded = Decoded::Info(BoardInfo::ClockAck([0x10, 0x09, 0x11, 0]));

    fn commands(display: &mut ClockTextDisplay) -> Vec<Command> {
        std::iter::from_fn(|| display.poll_command()).collect()
    }

    /// A display on a fresh connection whose clock answered `clock` and
    /// read `left_ms`/`right_ms`.
    fn connected(settings: ClockDisplaySettings, clock: &Decoded, left_ms: u64, right_ms: u64) -> ClockTextDisplay {
        let mut display = ClockTextDisplay::new(settings);
        display.handle_connected();
        display.handle_decoded(clock);
        display.handle_decoded(&reading(left_ms, right_ms));
        display
    }

    #[test]
    fn shows_a_move_then_puts_the_times_back() {
        let mut display = connected(moves(), &DGT_3000, 600_000, 590_000);
        assert_eq!(commands(&mut display), [Command::ClockVersion], "the clock is asked what it is");
        assert!(display.show(ms(1000), ClockText::new("1.e4")));
        assert_eq!(commands(&mut display), [Command::ClockText(ClockText::new("1.e4"))]);
        assert_eq!(display.poll_timeout(), Some(ms(3000)));
        display.handle_timeout(ms(2999));
        assert_eq!(commands(&mut display), []);
        display.handle_timeout(ms(3000));
        assert_eq!(commands(&mut display), [Command::ClockEnd]);
        // Once more a second later, in case the first was lost on the line.
        assert_eq!(display.poll_timeout(), Some(ms(4000)));
        display.handle_timeout(ms(4000));
        assert_eq!(commands(&mut display), [Command::ClockEnd]);
        assert_eq!(display.poll_timeout(), None);
    }

    #[test]
    fn in_fast_play_the_times_stay_at_least_as_long_as_a_move_did() {
        let mut display = connected(moves(), &DGT_3000, 600_000, 590_000);
        commands(&mut display);
        assert!(display.show(ms(1000), ClockText::new("1.e4")));
        assert!(!display.show(ms(1500), ClockText::new("1...e5")), "not over a text still shown");
        display.handle_timeout(ms(3000));
        assert!(!display.show(ms(4000), ClockText::new("2.Nf3")), "the times are back for 2 s first");
        assert!(display.show(ms(5000), ClockText::new("2...Nc6")));
        display.handle_timeout(ms(7000));
        let sent = commands(&mut display);
        let text = |s| Command::ClockText(ClockText::new(s));
        assert_eq!(sent, [text("1.e4"), Command::ClockEnd, text("2...Nc6"), Command::ClockEnd]);
    }

    #[test]
    fn shows_nothing_when_off_on_an_xl_or_an_unknown_clock() {
        let mut off = connected(ClockDisplaySettings::default(), &DGT_3000, 600_000, 600_000);
        assert!(!off.show(ms(0), ClockText::new("e4")));
        assert_eq!(commands(&mut off), [], "with the display off the clock is not even asked");
        let mut xl = connected(moves(), &DGT_XL, 600_000, 600_000);
        assert!(!xl.show(ms(0), ClockText::new("e4")));
        assert_eq!(xl.model(), ClockModel::Other);
        assert_eq!(commands(&mut xl), [Command::ClockVersion]);
        let mut silent = connected(moves(), &Decoded::Info(BoardInfo::ClockAck([0x10, 0x0C, 0, 0])), 600_000, 1);
        assert!(!silent.show(ms(0), ClockText::new("e4")), "no version answer: unknown clock");
    }

    #[test]
    fn shows_nothing_when_a_player_is_short_of_time_or_no_time_was_read() {
        // 60 s or less on either display (the player to move or the other).
        for (left, right) in [(60_000, 600_000), (600_000, 60_000), (0, 0)] {
            let mut display = connected(moves(), &DGT_3000, left, right);
            assert!(!display.show(ms(0), ClockText::new("e4")), "{left} {right}");
        }
        assert!(connected(moves(), &DGT_3000, 60_001, 60_001).show(ms(0), ClockText::new("e4")));
        let mut unread = ClockTextDisplay::new(moves());
        unread.handle_connected();
        unread.handle_decoded(&DGT_3000);
        assert!(!unread.show(ms(0), ClockText::new("e4")), "no reading yet");
        // A fallen flag is for the arbiter to see.
        let mut flag = connected(moves(), &DGT_3000, 600_000, 600_000);
        flag.handle_decoded(&Decoded::Sensor(SensorEvent::Clock(ClockReading::BySide {
            left: Display { ms: 600_000, flag: true },
            right: Display { ms: 600_000, flag: false },
            running: None,
        })));
        assert!(!flag.show(ms(0), ClockText::new("e4")));
    }

    #[test]
    fn a_reading_that_breaks_the_rule_puts_the_times_back_at_once() {
        let mut display = connected(moves(), &DGT_3000, 61_500, 600_000);
        commands(&mut display);
        assert!(display.show(ms(0), ClockText::new("e4")));
        display.handle_decoded(&reading(61_000, 600_000));
        assert_eq!(commands(&mut display), [Command::ClockText(ClockText::new("e4"))]);
        display.handle_decoded(&reading(60_000, 600_000));
        assert_eq!(commands(&mut display), [Command::ClockEnd]);
        // Once more when the text would have gone, then nothing.
        assert_eq!(display.poll_timeout(), Some(ms(2000)));
        display.handle_timeout(ms(2000));
        assert_eq!(commands(&mut display), [Command::ClockEnd]);
        assert_eq!(display.poll_timeout(), None, "nothing left to put back");
    }

    #[test]
    fn a_clock_that_does_not_answer_is_asked_again_with_the_next_readings_three_times_in_all() {
        let mut display = ClockTextDisplay::new(moves());
        display.handle_connected();
        for _ in 0..5 {
            display.handle_decoded(&reading(600_000, 600_000));
        }
        assert_eq!(commands(&mut display), [Command::ClockVersion; 3]);
        display.handle_decoded(&DGT_3000);
        display.handle_decoded(&reading(600_000, 600_000));
        assert_eq!(commands(&mut display), [], "answered: not asked again");
        assert!(display.show(ms(0), ClockText::new("e4")));
    }

    #[test]
    fn a_new_connection_forgets_the_clock() {
        let mut display = connected(moves(), &DGT_3000, 600_000, 600_000);
        display.handle_connected();
        display.handle_decoded(&reading(600_000, 600_000));
        assert!(!display.show(ms(0), ClockText::new("e4")), "another clock may be attached now");
    }
}
