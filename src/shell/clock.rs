//! Session time against the machine's clock.
//!
//! The core counts time in [`Timestamp`]s from the start of a session. A live
//! board's session starts when the daemon opens the port; a replayed
//! capture's session starts at its `t_us = 0`, and may run faster than real
//! time. This is the only place that converts between the two, so that
//! `tokio::time::pause` works in tests and a replay at 10× speed fires every
//! deadline at a tenth of its real delay.

use std::time::Duration;

use tokio::time::Instant;

use boardcast_core::time::Timestamp;

/// Maps session time to the machine's clock.
#[derive(Clone, Copy, Debug)]
pub struct SessionClock {
    /// The machine's instant at session time `offset`.
    origin: Instant,
    /// The session time at `origin` (zero unless a session is resumed).
    offset: Timestamp,
    speed: f64,
}

impl SessionClock {
    /// Session time zero is now, and runs at `speed` times real time.
    ///
    /// # Panics
    ///
    /// If `speed` is not a positive finite number (the command line checks
    /// it first).
    pub fn start(speed: f64) -> Self {
        Self::resume_at(Timestamp::ZERO, speed)
    }

    /// Session time is `now` now, and runs at `speed` times real time (a
    /// session rebuilt from its capture goes on from its own time, however
    /// long ago it started: even from before the machine booted, which an
    /// `Instant` cannot express).
    ///
    /// # Panics
    ///
    /// If `speed` is not a positive finite number.
    pub fn resume_at(now: Timestamp, speed: f64) -> Self {
        assert!(speed.is_finite() && speed > 0.0, "speed must be positive, not {speed}");
        Self { origin: Instant::now(), offset: now, speed }
    }

    /// The session time now.
    pub fn now(&self) -> Timestamp {
        let real = self.origin.elapsed();
        self.offset + Duration::from_secs_f64(real.as_secs_f64() * self.speed)
    }

    /// The machine's instant at which session time `t` comes (now, for a
    /// time before the session was resumed).
    pub fn instant_of(&self, t: Timestamp) -> Instant {
        let since = t.saturating_since(self.offset);
        self.origin + Duration::from_secs_f64(since.as_secs_f64() / self.speed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn ten_times_speed_runs_session_time_ten_times_faster() {
        let clock = SessionClock::start(10.0);
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(clock.now(), Timestamp::from_millis(5000));
        assert_eq!(clock.instant_of(Timestamp::from_millis(2000)), clock.origin + Duration::from_millis(200));
    }

    #[tokio::test(start_paused = true)]
    async fn a_resumed_session_goes_on_from_its_own_time() {
        let hours = Timestamp::from_millis(5 * 3_600_000);
        let clock = SessionClock::resume_at(hours, 1.0);
        tokio::time::advance(Duration::from_millis(250)).await;
        assert_eq!(clock.now(), hours + Duration::from_millis(250));
        assert_eq!(clock.instant_of(Timestamp::from_millis(1000)), clock.origin, "the past comes at once");
        assert_eq!(clock.instant_of(hours + Duration::from_secs(1)), clock.origin + Duration::from_secs(1));
    }
}
