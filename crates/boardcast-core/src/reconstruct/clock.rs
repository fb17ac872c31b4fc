//! Following the clock: which display is White's, what each reading means
//! for the players, and when a clock was pressed or a flag fell.

use shakmaty::{ByColor, Color};

use crate::{
    event::ClockState,
    sensor::{ClockReading, ClockSide},
};

/// What a clock reading changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClockChanges {
    /// Who pressed the clock: their clock stopped and the opponent's
    /// started.
    pub(crate) pressed: Option<Color>,
    /// Whose flag fell with this reading.
    pub(crate) flag_fell: ByColor<bool>,
}

/// The clock as the reconstructor follows it.
#[derive(Clone, Debug, Default)]
pub(crate) struct ClockTracker {
    /// Which display is White's, configured or learned.
    white_side: Option<ClockSide>,
    /// The last reading by colour.
    state: Option<ClockState>,
    /// Flags already reported.
    flags: ByColor<bool>,
}

impl ClockTracker {
    /// A tracker that knows White's display, or will learn it.
    pub(super) fn new(white_side: Option<ClockSide>) -> Self {
        Self { white_side, ..Self::default() }
    }

    /// The last reading by colour, once known.
    pub(crate) fn state(&self) -> Option<ClockState> {
        self.state
    }

    /// Whether the clock runs (so that moves are completed by pressing it).
    pub(crate) fn running(&self) -> bool {
        self.state.is_some_and(|s| s.running.is_some())
    }

    /// Forgets flags and presses for a new game; the mapping of displays to
    /// colours is kept only if it was configured.
    pub(crate) fn new_game(&mut self, configured: Option<ClockSide>) {
        self.white_side = configured;
        self.flags = ByColor::default();
    }

    /// Takes a reading. `to_move` is who has the move in the game and
    /// `plies` how many plies it has (`None` before a game starts); they are
    /// how the daemon learns which display is White's: the clock that runs
    /// while White is to make the first move, or the other one once White
    /// has made it.
    ///
    /// Returns the reading by colour (once the displays are known) and what
    /// changed.
    pub(crate) fn handle(
        &mut self,
        reading: &ClockReading,
        game: Option<(Color, usize)>,
    ) -> (Option<ClockState>, ClockChanges) {
        let (state, flags) = match *reading {
            ClockReading::ByColor { white_ms, black_ms, running } => {
                (ClockState { white_ms, black_ms, running }, ByColor { white: white_ms == 0, black: black_ms == 0 })
            }
            ClockReading::BySide { left, right, running } => {
                if self.white_side.is_none()
                    && let (Some(side), Some((to_move, plies))) = (running, game)
                    && plies <= 1
                {
                    self.white_side = Some(if to_move == Color::White { side } else { side.other() });
                }
                let Some(white_side) = self.white_side else {
                    return (None, ClockChanges::default());
                };
                let (white, black) = if white_side == ClockSide::Left { (left, right) } else { (right, left) };
                let running = running.map(|side| if side == white_side { Color::White } else { Color::Black });
                (
                    ClockState { white_ms: white.ms, black_ms: black.ms, running },
                    ByColor { white: white.flag || white.ms == 0, black: black.flag || black.ms == 0 },
                )
            }
        };
        let mut changes = ClockChanges::default();
        if let Some(previous) = self.state
            && let (Some(before), Some(after)) = (previous.running, state.running)
            && before != after
        {
            changes.pressed = Some(before);
        }
        for color in Color::ALL {
            changes.flag_fell[color] = flags[color] && !self.flags[color];
            self.flags[color] = flags[color];
        }
        self.state = Some(state);
        (Some(state), changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensor::ClockDisplay;

    fn sides(left_s: u64, right_s: u64, running: Option<ClockSide>) -> ClockReading {
        ClockReading::BySide {
            left: ClockDisplay { ms: left_s * 1000, flag: false },
            right: ClockDisplay { ms: right_s * 1000, flag: false },
            running,
        }
    }

    #[test]
    fn learns_whites_display_from_the_clock_running_before_the_first_move() {
        let mut clock = ClockTracker::new(None);
        assert_eq!(clock.handle(&sides(180, 180, None), Some((Color::White, 0))).0, None);
        let (state, changes) = clock.handle(&sides(179, 180, Some(ClockSide::Left)), Some((Color::White, 0)));
        assert_eq!(state, Some(ClockState { white_ms: 179_000, black_ms: 180_000, running: Some(Color::White) }));
        assert_eq!(changes, ClockChanges::default());
        let (state, changes) = clock.handle(&sides(181, 180, Some(ClockSide::Right)), Some((Color::Black, 1)));
        assert_eq!(state.unwrap().running, Some(Color::Black));
        assert_eq!(changes.pressed, Some(Color::White));
    }

    #[test]
    fn learns_it_from_the_clock_started_after_whites_first_move() {
        let mut clock = ClockTracker::new(None);
        let (state, _) = clock.handle(&sides(180, 180, Some(ClockSide::Left)), Some((Color::Black, 1)));
        assert_eq!(state.unwrap().running, Some(Color::Black));
        assert_eq!(state.unwrap().white_ms, 180_000);
    }

    #[test]
    fn reports_each_flag_once() {
        let mut clock = ClockTracker::new(Some(ClockSide::Right));
        let (_, changes) = clock.handle(&sides(0, 5, Some(ClockSide::Left)), Some((Color::Black, 30)));
        assert_eq!(changes.flag_fell, ByColor { white: false, black: true });
        let (_, changes) = clock.handle(&sides(0, 4, Some(ClockSide::Left)), Some((Color::Black, 30)));
        assert_eq!(changes, ClockChanges::default());
        let by_color = ClockReading::ByColor { white_ms: 0, black_ms: 0, running: None };
        let (_, changes) = clock.handle(&by_color, None);
        assert_eq!(changes.flag_fell, ByColor { white: true, black: false });
    }
}
