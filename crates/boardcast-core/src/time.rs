//! Time as the core sees it: a number of microseconds since the start of a
//! session (for a capture, its `t_us`).
//!
//! The sans-I/O core never reads a clock. Every input arrives with the time it
//! happened, and timers are expressed as deadlines in the same unit, so live
//! boards, captures replayed at any speed and tests in virtual time all run
//! the same code with the same results. A `std::time::Instant` cannot be built
//! from a number read back from a capture, which is why this is a plain
//! newtype.

use std::{fmt, ops::Add, time::Duration};

/// A point in time: microseconds since the start of the session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The start of the session.
    pub const ZERO: Self = Self(0);

    /// A timestamp `us` microseconds after the start of the session.
    pub const fn from_micros(us: u64) -> Self {
        Self(us)
    }

    /// A timestamp `ms` milliseconds after the start of the session.
    pub const fn from_millis(ms: u64) -> Self {
        Self(ms * 1000)
    }

    /// Microseconds since the start of the session.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// The time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Self) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Timestamp {
    type Output = Self;

    fn add(self, rhs: Duration) -> Self {
        // Saturate rather than panic: a deadline past the end of time is
        // simply never reached. (Seconds and sub-second micros rather than
        // `as_micros`, whose 128-bit division is measurable here: deadlines
        // are computed for every sensor event.)
        let us = rhs.as_secs().saturating_mul(1_000_000).saturating_add(u64::from(rhs.subsec_micros()));
        Self(self.0.saturating_add(us))
    }
}

impl fmt::Display for Timestamp {
    /// Seconds with millisecond precision, e.g. `12.345s`: what an arbiter
    /// reads in an alert.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1_000_000, (self.0 / 1000) % 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_durations_and_saturates() {
        let t = Timestamp::from_millis(1500);
        assert_eq!(t + Duration::from_millis(250), Timestamp::from_micros(1_750_000));
        assert_eq!(t + Duration::new(2, 999_999_999), Timestamp::from_micros(4_499_999));
        assert_eq!(Timestamp::from_micros(u64::MAX - 1) + Duration::from_secs(1), Timestamp::from_micros(u64::MAX));
        assert_eq!(Timestamp::from_millis(2).saturating_since(Timestamp::from_millis(5)), Duration::ZERO);
    }

    #[test]
    fn displays_seconds_with_milliseconds() {
        assert_eq!(Timestamp::from_micros(12_345_678).to_string(), "12.345s");
    }
}
