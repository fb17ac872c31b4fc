//! Settings of the move reconstructor, and what it must know about the game
//! before it starts.

use std::time::Duration;

use shakmaty::Chess;

use crate::{game::Tempo, sensor::ClockSide};

/// How the reconstructor judges time. Every value has a default that suits
/// DGT boards over USB; Bluetooth boards scan at about half speed and want
/// `settle` doubled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconstructorConfig {
    /// How long the board must stay unchanged before a position that could
    /// still be a piece on its way (a sliding piece, a pawn pushed one
    /// square) is judged. Also hides sensor flicker shorter than this.
    pub settle: Duration,
    /// How long a piece must be off its square to count as touched for
    /// touch-move alerts, and as displaced when a piece of the side not to
    /// move is put back (shorter lifts are taken for sensor flicker).
    pub touch_min: Duration,
    /// How long a piece must stand still on a square of its way for going
    /// on along the same line to count as moving a released piece (4.7)
    /// rather than a slow slide (docs/alerts.md has the measurements).
    pub release_min: Duration,
    /// How long the board may show something no legal move explains before
    /// it is published as out of sync (covers the king-then-rook pause of
    /// castling and similar half-done moves).
    pub out_of_sync_after: Duration,
    /// How long both kings must stand on the centre squares to be taken as
    /// the result gesture.
    pub gesture_hold: Duration,
    /// How long after a clock press the board may still be showing the move
    /// (a board scans its squares one after another, a clock is polled a few
    /// times a second) before the press is judged as made without a move.
    pub press_grace: Duration,
    /// Without a clock: how long a made move must stand unchanged to count
    /// as completed.
    pub quiet_completion: Duration,
    /// The longest run of moves filled in when the board shows a position
    /// several moves ahead (R10).
    pub fill_in_plies: usize,
    /// What to do with a board turned 180°.
    pub rotated_board: RotatedBoard,
    /// What to do when the board is several moves ahead and the same moves
    /// in different orders lead there.
    pub uncertain_order: UncertainOrder,
    /// Which clock display is White's.
    pub white_clock: WhiteClock,
}

impl Default for ReconstructorConfig {
    fn default() -> Self {
        Self {
            settle: Duration::from_millis(300),
            touch_min: Duration::from_millis(250),
            release_min: Duration::from_millis(1000),
            out_of_sync_after: Duration::from_millis(2000),
            gesture_hold: Duration::from_millis(2000),
            press_grace: Duration::from_millis(1000),
            quiet_completion: Duration::from_secs(10),
            fill_in_plies: 3,
            rotated_board: RotatedBoard::Flip,
            uncertain_order: UncertainOrder::Wait,
            white_clock: WhiteClock::Auto,
        }
    }
}

/// What to do when the start position is seen from the wrong side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RotatedBoard {
    /// Map every square and play on (the board is still a correct board,
    /// only its electronics count from the other side).
    #[default]
    Flip,
    /// Alert and wait until the board is turned.
    Alert,
}

/// What to do when moves the board did not show one by one (R10) can only
/// be filled in in more than one order, all reaching the same position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum UncertainOrder {
    /// Alert and wait for the board or the operator (rules.md R10).
    #[default]
    Wait,
    /// Record one order, marked uncertain, alert, and go on: the position
    /// is certain, and the broadcast keeps going.
    Record,
}

/// Which clock display is White's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WhiteClock {
    /// Learn it: the clock that runs while White is to make the first move.
    #[default]
    Auto,
    /// The left display.
    Left,
    /// The right display.
    Right,
}

impl WhiteClock {
    /// The configured side, if not learned.
    pub(crate) const fn side(self) -> Option<ClockSide> {
        match self {
            Self::Auto => None,
            Self::Left => Some(ClockSide::Left),
            Self::Right => Some(ClockSide::Right),
        }
    }
}

/// What the reconstructor knows about the games it will see on a board.
#[derive(Clone, Debug, Default)]
pub struct GameSetup {
    /// PGN tags for every game (Event, Round, White, Black, TimeControl …).
    pub tags: Vec<(String, String)>,
    /// Games on this board are Chess960: any of the 960 start positions
    /// starts a game.
    pub chess960: bool,
    /// A game starts from this position instead of the standard one
    /// (the capture's `FEN` tag).
    pub start: Option<Chess>,
    /// Standard, rapid or blitz; `None` for standard unless the
    /// `TimeControl` tag says otherwise.
    pub tempo: Option<Tempo>,
    /// Whether the rapid or blitz game is adequately supervised (A.4, B.2):
    /// then an illegal move is corrected even after the opponent answered.
    pub supervised: bool,
}

impl GameSetup {
    /// The tempo: configured, or from the `TimeControl` tag, or standard.
    pub(crate) fn tempo(&self) -> Tempo {
        self.tempo
            .or_else(|| {
                let text = self.tags.iter().find(|(k, _)| k == "TimeControl")?.1.as_str();
                text.parse::<crate::game::TimeControl>().ok().map(|tc| tc.tempo())
            })
            .unwrap_or(Tempo::Standard)
    }

    /// Whether an illegal move that the opponent answers stands (A.5.2,
    /// B.3): rapid and blitz without adequate supervision.
    pub(crate) fn illegal_moves_stand(&self) -> bool {
        self.tempo() != Tempo::Standard && !self.supervised
    }
}
