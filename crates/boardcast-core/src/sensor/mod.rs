//! What a board's sensors report, independent of the board family: the
//! vocabulary between the protocol decoders and the move reconstructor.
//!
//! A board reports squares (which piece, or only "occupied", or empty) and,
//! when a clock is attached, the clock's displays. Decoders turn bytes into
//! [`SensorEvent`]s; the reconstructor turns sensor events into moves.

mod picture;

pub use picture::{Cell, ParsePictureError, Picture};

use shakmaty::{Color, Square};

/// One observation from a board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SensorEvent {
    /// The whole board (a board dump, or a capture's `board` record).
    /// Boxed: whole boards are rare and a picture is large, while square
    /// and clock events stream by the thousand.
    Board(Box<Picture>),
    /// One square changed.
    Square {
        /// The square, in the board's own orientation (a1 as the board
        /// reports it; the reconstructor corrects a board turned 180°).
        square: Square,
        /// What the square holds now.
        cell: Cell,
    },
    /// A reading of the attached clock.
    Clock(ClockReading),
}

/// A reading of a chess clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockReading {
    /// Times already attributed to the players (captures of decoded events).
    ByColor {
        /// White's remaining time in milliseconds.
        white_ms: u64,
        /// Black's remaining time in milliseconds.
        black_ms: u64,
        /// Whose clock runs, `None` when the clock is stopped.
        running: Option<Color>,
    },
    /// Times as the clock shows them, left and right display (a DGT clock
    /// seen through the board). Which display is White's is decided by the
    /// reconstructor, from configuration or from which clock runs when White
    /// makes the first move.
    BySide {
        /// The left display.
        left: ClockDisplay,
        /// The right display.
        right: ClockDisplay,
        /// Which clock runs, `None` when the clock is stopped.
        running: Option<ClockSide>,
    },
}

/// One display of a clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClockDisplay {
    /// Remaining time in milliseconds.
    pub ms: u64,
    /// The clock shows that this side's flag has fallen.
    pub flag: bool,
}

/// A side of the clock as the players see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockSide {
    /// The left display.
    Left,
    /// The right display.
    Right,
}

impl ClockSide {
    /// The other side.
    pub const fn other(self) -> Self {
        match self {
            Self::Left => Self::Right,
            Self::Right => Self::Left,
        }
    }

    /// `"left"` or `"right"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Right => "right",
        }
    }
}
