//! Time controls: the PGN `TimeControl` tag, and whether a game is standard,
//! rapid or blitz under FIDE Laws A.1 and B.1.

use std::{fmt, str::FromStr};

/// A time control: one or more periods.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// The periods in order; the last one lasts until the end of the game.
    pub(crate) periods: Vec<Period>,
}

/// One period of a time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Period {
    /// Moves to complete in this period; `None` for the rest of the game.
    pub(crate) moves: Option<u32>,
    /// Time for the period in seconds.
    pub(crate) seconds: u64,
    /// Time added for each move, in seconds (Fischer increment).
    pub(crate) increment_seconds: u64,
}

/// Standard, rapid or blitz: which Laws apply to illegal moves and penalties.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tempo {
    /// More than 60 minutes per player (the Competition Rules).
    Standard,
    /// More than 10 and less than 60 minutes per player (Appendix A).
    Rapid,
    /// 10 minutes or less per player (Appendix B).
    Blitz,
}

impl Tempo {
    /// `"standard"`, `"rapid"` or `"blitz"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard",
            Self::Rapid => "rapid",
            Self::Blitz => "blitz",
        }
    }
}

impl fmt::Display for Tempo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl TimeControl {
    /// The tempo by A.1 and B.1: the time allotted plus 60 times the
    /// increment, per player. Periods after the first add their time too, so
    /// "40 moves in 90 minutes, then 30 minutes" is standard.
    pub fn tempo(&self) -> Tempo {
        let total: u64 = self.periods.iter().map(|p| p.seconds).sum::<u64>()
            + 60 * self.periods.first().map_or(0, |p| p.increment_seconds);
        if total <= 600 {
            Tempo::Blitz
        } else if total < 3600 {
            Tempo::Rapid
        } else {
            Tempo::Standard
        }
    }

    /// The moves a player must have completed by the end of period
    /// `period` (0-based), counted from the start of the game; `None` for
    /// the last period (or beyond), whose end loses on time by itself.
    pub(crate) fn quota_by_end_of(&self, period: usize) -> Option<u32> {
        if period + 1 >= self.periods.len() {
            return None;
        }
        self.periods[..=period].iter().map(|p| p.moves).sum()
    }
}

/// A `TimeControl` text this daemon cannot read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot read time control {0:?} (expected PGN form such as \"5400+30\", \"40/5400:1800+30\", or \"15 min/game + 10 sec/move\")"
)]
pub struct ParseTimeControlError(pub String);

impl FromStr for TimeControl {
    type Err = ParseTimeControlError;

    /// Reads the PGN form (`300+2`, `40/5400:1800+30`, `*180` is not
    /// supported) and the free text DGT LiveChess writes
    /// (`15 min/game + 10 sec/move`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = || ParseTimeControlError(text.to_owned());
        let trimmed = text.trim();
        if trimmed.contains("min") {
            return parse_words(trimmed).ok_or_else(err);
        }
        let periods = trimmed.split(':').map(parse_period).collect::<Option<Vec<_>>>().ok_or_else(err)?;
        if periods.is_empty() {
            return Err(err());
        }
        Ok(Self { periods })
    }
}

fn parse_period(text: &str) -> Option<Period> {
    let (moves, rest) = match text.split_once('/') {
        Some((moves, rest)) => (Some(moves.trim().parse().ok()?), rest),
        None => (None, text),
    };
    let (seconds, increment) = match rest.split_once('+') {
        Some((s, i)) => (s, Some(i)),
        None => (rest, None),
    };
    Some(Period {
        moves,
        seconds: seconds.trim().parse().ok()?,
        increment_seconds: increment.map_or(Some(0), |i| i.trim().parse().ok())?,
    })
}

/// "15 min/game + 10 sec/move", "90 min + 30 sec": minutes, then an
/// optional increment in seconds.
fn parse_words(text: &str) -> Option<TimeControl> {
    let number_before = |word: &str| -> Option<u64> {
        let at = text.find(word)?;
        text[..at].split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty())?.parse().ok()
    };
    let minutes = number_before("min")?;
    let increment = if text.contains("sec") { number_before("sec")? } else { 0 };
    Some(TimeControl { periods: vec![Period { moves: None, seconds: minutes * 60, increment_seconds: increment }] })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc(text: &str) -> TimeControl {
        text.parse().unwrap()
    }

    #[test]
    fn reads_pgn_and_livechess_forms() {
        assert_eq!(tc("300+2").periods, vec![Period { moves: None, seconds: 300, increment_seconds: 2 }]);
        assert_eq!(
            tc("40/5400+30:1800+30").periods,
            vec![
                Period { moves: Some(40), seconds: 5400, increment_seconds: 30 },
                Period { moves: None, seconds: 1800, increment_seconds: 30 }
            ]
        );
        assert_eq!(
            tc("15 min/game + 10 sec/move").periods,
            vec![Period { moves: None, seconds: 900, increment_seconds: 10 }]
        );
        assert_eq!(tc("90 min").periods, vec![Period { moves: None, seconds: 5400, increment_seconds: 0 }]);
        for bad in ["", "?", "-", "abc", "40/", "*180", "300+x"] {
            assert!(bad.parse::<TimeControl>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn classifies_by_a1_and_b1() {
        assert_eq!(tc("180+2").tempo(), Tempo::Blitz); // 3 + 2 min = 5 min
        assert_eq!(tc("600").tempo(), Tempo::Blitz); // exactly 10 minutes is blitz
        assert_eq!(tc("300+5").tempo(), Tempo::Blitz); // 300 s + 60 × 5 s = 10 min
        assert_eq!(tc("300+6").tempo(), Tempo::Rapid); // 11 min
        assert_eq!(tc("900+10").tempo(), Tempo::Rapid); // 15 + 10 = 25 min
        assert_eq!(tc("3000+10").tempo(), Tempo::Standard); // 50 + 10 = 60 min is not rapid
        assert_eq!(tc("40/5400+30:1800+30").tempo(), Tempo::Standard);
    }

    #[test]
    fn knows_the_period_and_its_move_quota() {
        let classical = tc("40/5400+30:20/3600+30:900+30");
        assert_eq!(classical.quota_by_end_of(0), Some(40));
        assert_eq!(classical.quota_by_end_of(1), Some(60));
        assert_eq!(classical.quota_by_end_of(2), None);
        assert_eq!(tc("300+2").quota_by_end_of(0), None);
    }
}
