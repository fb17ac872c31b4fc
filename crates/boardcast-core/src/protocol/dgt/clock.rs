//! The BWTIME message (`0x8D`): an attached DGT clock's displays, or the
//! clock's answer to a command.
//!
//! Seven data bytes. When byte 0 or byte 3 has `0xA` in its low nibble the
//! message is an acknowledgement; otherwise bytes 0–2 are the right display
//! and bytes 3–5 the left one (hours in the low nibble of the first byte,
//! then BCD minutes and seconds), and byte 6 is the status.
//!
//! Which clock runs is taken from status bit 0 (running) and bit 1 (the lever
//! is up on the right, so the right clock runs). Bits 3 and 4 are documented
//! differently by different versions of DGT's header and are not used; the
//! real recordings in `tests/fixtures/dgt-real/` agree with this reading.

use crate::sensor::{ClockDisplay, ClockReading, ClockSide};

/// A decoded BWTIME message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BwTime {
    /// The clock's displays.
    Times(ClockTimes),
    /// The clock acknowledges a command or reports a button.
    Ack(ClockAck),
    /// All seven bytes zero: sent by some firmware after a clock command;
    /// carries nothing.
    Empty,
}

/// Both displays and the status of a DGT clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockTimes {
    /// The left display.
    pub left: DgtDisplay,
    /// The right display.
    pub right: DgtDisplay,
    /// Byte 6: bit 0 running, bit 1 right lever up, bit 2 battery low,
    /// bit 5 no clock connected.
    pub status: u8,
}

/// One display of a DGT clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DgtDisplay {
    /// Hours, 0–9.
    pub(crate) hours: u8,
    /// Minutes, 0–59.
    pub(crate) minutes: u8,
    /// Seconds, 0–59.
    pub(crate) seconds: u8,
    /// The flag has fallen and the clock is blocked at zero.
    pub(crate) blocked: bool,
    /// The time-per-move indicator (Fischer or Bronstein) is on.
    pub(crate) per_move: bool,
    /// The display shows a fallen flag (the clock may still run, e.g. into
    /// the next period).
    pub(crate) flag: bool,
}

/// The four bytes of a clock acknowledgement, rebuilt from the seven data
/// bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockAck(pub [u8; 4]);

impl ClockAck {
    /// The button pressed, when the clock reports one (`0x31` back … `0x35`
    /// OK).
    #[cfg(test)]
    pub(crate) fn button(self) -> Option<u8> {
        (self.0[1] == 0x88).then_some(self.0[3])
    }
}

/// A BWTIME message whose fields are out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("clock message with an impossible time ({0})")]
pub struct BadClockMessage(pub &'static str);

impl BwTime {
    /// Decodes the seven data bytes.
    ///
    /// # Errors
    ///
    /// When the message is shorter than seven bytes or a time field is not a
    /// valid time.
    pub(crate) fn decode(d: &[u8]) -> Result<Self, BadClockMessage> {
        let d: &[u8; 7] = d.get(..7).and_then(|d| d.try_into().ok()).ok_or(BadClockMessage("fewer than 7 bytes"))?;
        if d.iter().all(|&b| b == 0) {
            return Ok(Self::Empty);
        }
        if d[0] & 0x0F == 0x0A || d[3] & 0x0F == 0x0A {
            return Ok(Self::Ack(ClockAck([
                (d[1] & 0x7F) | ((d[3] << 3) & 0x80),
                (d[2] & 0x7F) | ((d[3] << 2) & 0x80),
                (d[4] & 0x7F) | ((d[0] << 3) & 0x80),
                (d[5] & 0x7F) | ((d[0] << 2) & 0x80),
            ])));
        }
        Ok(Self::Times(ClockTimes { right: display(&d[0..3])?, left: display(&d[3..6])?, status: d[6] }))
    }

    /// The seven data bytes of this message.
    pub fn encode(&self) -> [u8; 7] {
        match self {
            Self::Empty => [0; 7],
            Self::Ack(ClockAck(a)) => [
                0x0A | ((a[2] >> 3) & 0x10) | ((a[3] >> 2) & 0x20),
                a[0] & 0x7F,
                a[1] & 0x7F,
                0x0A | ((a[0] >> 3) & 0x10) | ((a[1] >> 2) & 0x20),
                a[2] & 0x7F,
                a[3] & 0x7F,
                0,
            ],
            Self::Times(t) => {
                let [r0, r1, r2] = t.right.encode();
                let [l0, l1, l2] = t.left.encode();
                [r0, r1, r2, l0, l1, l2, t.status]
            }
        }
    }
}

impl ClockTimes {
    /// Status bit: the clock runs.
    pub(crate) const RUNNING: u8 = 0x01;
    /// Status bit: the lever is up on the right, so the right clock runs.
    pub const RIGHT_RUNS: u8 = 0x02;
    /// Status bit: the battery is low.
    pub const BATTERY_LOW: u8 = 0x04;
    /// Status bit: no clock is connected; the times mean nothing.
    pub const NO_CLOCK: u8 = 0x20;

    /// Whether a clock is connected (the times are meaningful).
    pub(crate) const fn connected(&self) -> bool {
        self.status & Self::NO_CLOCK == 0
    }

    /// Which clock runs, `None` when stopped.
    pub(crate) const fn running(&self) -> Option<ClockSide> {
        if self.status & Self::RUNNING == 0 {
            None
        } else if self.status & Self::RIGHT_RUNS != 0 {
            Some(ClockSide::Right)
        } else {
            Some(ClockSide::Left)
        }
    }

    /// The reading as the core sees it.
    pub fn reading(&self) -> ClockReading {
        ClockReading::BySide { left: self.left.display(), right: self.right.display(), running: self.running() }
    }

    /// The message a clock would send for `reading` (used by the simulated
    /// board). Times are rounded down to whole seconds and capped at 9:59:59,
    /// as the clock shows them.
    pub fn from_reading(left_ms: u64, right_ms: u64, running: Option<ClockSide>) -> Self {
        let status = match running {
            None => 0,
            Some(ClockSide::Left) => Self::RUNNING,
            Some(ClockSide::Right) => Self::RUNNING | Self::RIGHT_RUNS,
        };
        Self { left: DgtDisplay::from_ms(left_ms), right: DgtDisplay::from_ms(right_ms), status }
    }
}

impl DgtDisplay {
    /// The display for a remaining time.
    pub(crate) fn from_ms(ms: u64) -> Self {
        let secs = (ms / 1000).min(9 * 3600 + 59 * 60 + 59);
        Self {
            hours: (secs / 3600) as u8,
            minutes: (secs / 60 % 60) as u8,
            seconds: (secs % 60) as u8,
            flag: ms == 0,
            ..Self::default()
        }
    }

    /// Remaining time in milliseconds.
    pub(crate) fn ms(&self) -> u64 {
        (u64::from(self.hours) * 3600 + u64::from(self.minutes) * 60 + u64::from(self.seconds)) * 1000
    }

    /// The display as the core sees it.
    pub(crate) fn display(&self) -> ClockDisplay {
        ClockDisplay { ms: self.ms(), flag: self.flag || self.blocked }
    }

    fn encode(&self) -> [u8; 3] {
        let flags = if self.blocked { 0x10 } else { 0 }
            | if self.per_move { 0x20 } else { 0 }
            | if self.flag { 0x40 } else { 0 };
        [self.hours | flags, to_bcd(self.minutes), to_bcd(self.seconds)]
    }
}

fn display(d: &[u8]) -> Result<DgtDisplay, BadClockMessage> {
    let hours = d[0] & 0x0F;
    if hours > 9 {
        return Err(BadClockMessage("hours above 9"));
    }
    Ok(DgtDisplay {
        hours,
        minutes: from_bcd(d[1]).filter(|&m| m < 60).ok_or(BadClockMessage("minutes not 00 to 59"))?,
        seconds: from_bcd(d[2]).filter(|&s| s < 60).ok_or(BadClockMessage("seconds not 00 to 59"))?,
        blocked: d[0] & 0x10 != 0,
        per_move: d[0] & 0x20 != 0,
        flag: d[0] & 0x40 != 0,
    })
}

fn from_bcd(b: u8) -> Option<u8> {
    let (hi, lo) = (b >> 4, b & 0x0F);
    (hi < 10 && lo < 10).then_some(hi * 10 + lo)
}

const fn to_bcd(v: u8) -> u8 {
    ((v / 10) << 4) | (v % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_worked_example_from_a_real_recording() {
        // 8D 00 0A 20 03 02 20 03 01 09: right 0:03:02, left 0:03:01, both
        // with the time-per-move indicator, left clock running.
        let BwTime::Times(t) = BwTime::decode(&[0x20, 0x03, 0x02, 0x20, 0x03, 0x01, 0x09]).unwrap() else {
            panic!("not a times message")
        };
        assert_eq!(t.right.ms(), 182_000);
        assert_eq!(t.left.ms(), 181_000);
        assert!(t.left.per_move && t.right.per_move);
        assert_eq!(t.running(), Some(ClockSide::Left));
        assert!(t.connected());
        let status_right = ClockTimes { status: 0x13, ..t };
        assert_eq!(status_right.running(), Some(ClockSide::Right));
        assert_eq!(ClockTimes { status: 0x08, ..t }.running(), None);
    }

    #[test]
    fn tells_acks_and_empty_messages_from_times() {
        assert_eq!(BwTime::decode(&[0; 7]), Ok(BwTime::Empty));
        // A button press (ack1 = 0x88, ack3 = 0x33 run/pause).
        let ack = BwTime::Ack(ClockAck([0x10, 0x88, 0x00, 0x33]));
        let bytes = ack.encode();
        assert_eq!(BwTime::decode(&bytes), Ok(ack));
        let BwTime::Ack(a) = ack else { unreachable!() };
        assert_eq!(a.button(), Some(0x33));
    }

    #[test]
    fn rejects_impossible_times() {
        assert_eq!(BwTime::decode(&[0x0B, 0, 0, 0, 0, 0, 1]), Err(BadClockMessage("hours above 9")));
        assert_eq!(BwTime::decode(&[0x00, 0x60, 0, 0, 0, 0, 1]), Err(BadClockMessage("minutes not 00 to 59")));
        assert_eq!(BwTime::decode(&[0x00, 0x00, 0x5A, 0, 0, 0, 1]), Err(BadClockMessage("seconds not 00 to 59")));
        assert_eq!(BwTime::decode(&[0x00, 0x00]), Err(BadClockMessage("fewer than 7 bytes")));
    }

    #[test]
    fn encodes_what_it_decodes() {
        let times = ClockTimes::from_reading(5_399_999, 61_000, Some(ClockSide::Right));
        let msg = BwTime::Times(times);
        assert_eq!(BwTime::decode(&msg.encode()), Ok(msg));
        assert_eq!(times.left.ms(), 5_399_000);
        assert_eq!(times.right.ms(), 61_000);
    }
}
