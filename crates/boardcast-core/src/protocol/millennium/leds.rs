//! The Millennium board's 81 LEDs: one on each corner of the 9 × 9 grid of
//! square corners, so that a square is lit by its four corners and two
//! neighbouring squares share two of them.
//!
//! Numbering (the ChessLink document, in its own coordinates, which are
//! the board's own orientation here): LED 1 is the a8 corner, LED 9 the a1
//! corner, LED 73 the h8 corner and LED 81 the h1 corner; counting from 0,
//! LED `9c + r` sits on corner column `c` (0 = outer edge of the a-file …
//! 8 = outer edge of the h-file) and corner row `r` (0 = outer edge of rank
//! 8 … 8 = outer edge of rank 1).
//!
//! Each LED gets an 8-bit code, played MSB first, one bit per slot, over
//! and over: `0xFF` is steadily on, `0x00` off.

use shakmaty::Square;

use crate::protocol::Lights;

/// How many LEDs a board has.
pub const LED_COUNT: usize = 81;

/// The code of an LED lit steadily.
pub const STEADY: u8 = 0xFF;

/// The code of a blinking LED: two slots on, two off.
pub(crate) const BLINKING: u8 = 0xCC;

/// The slot time, in units of 4.096 ms: 30 makes a slot 123 ms, so that
/// [`BLINKING`] is on for a quarter of a second and off for as long (2 Hz,
/// hard to miss and not frantic).
pub const SLOT_TIME: u8 = 30;

/// What every LED shows: the parameters of an `L` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LedPattern {
    /// The slot time, in units of 4.096 ms.
    pub(crate) slot_time: u8,
    /// One code per LED, LED 1 first.
    pub codes: [u8; LED_COUNT],
}

impl LedPattern {
    /// Every LED off.
    pub const DARK: Self = Self { slot_time: SLOT_TIME, codes: [0; LED_COUNT] };

    /// The pattern that shows `lights`: the four corners of each steady
    /// square on, of each blinking square blinking. Where a blinking and a
    /// steady square share a corner, the corner blinks: a square to put
    /// right matters more than the last move.
    pub(crate) fn for_lights(lights: &Lights) -> Self {
        let mut pattern = Self::DARK;
        for (squares, code) in [(lights.steady, STEADY), (lights.blinking, BLINKING)] {
            for square in squares {
                for led in corners(square) {
                    pattern.codes[led] = code;
                }
            }
        }
        pattern
    }

    /// Whether every LED is off (an `X` command says that more briefly).
    pub(crate) fn is_dark(&self) -> bool {
        self.codes.iter().all(|&c| c == 0)
    }
}

/// The four LEDs (counting from 0) on the corners of `square`.
pub fn corners(square: Square) -> [usize; 4] {
    let column = usize::from(square.file());
    // Corner rows count down from rank 8's outer edge.
    let row = 7 - usize::from(square.rank());
    let top_left = 9 * column + row;
    [top_left, top_left + 1, top_left + 9, top_left + 10]
}

#[cfg(test)]
mod tests {
    use shakmaty::Bitboard;

    use super::*;

    /// LED numbers as the document counts them (from 1).
    fn numbers(square: Square) -> [usize; 4] {
        corners(square).map(|led| led + 1)
    }

    #[test]
    fn squares_are_lit_by_their_four_corners() {
        assert_eq!(numbers(Square::A8), [1, 2, 10, 11]);
        assert_eq!(numbers(Square::A1), [8, 9, 17, 18], "LED 9 is the a1 corner");
        assert_eq!(numbers(Square::H8), [64, 65, 73, 74], "LED 73 is the h8 corner");
        assert_eq!(numbers(Square::H1), [71, 72, 80, 81], "LED 81 is the h1 corner");
        // Neighbours share an edge's two LEDs.
        assert_eq!(numbers(Square::E4)[2..], numbers(Square::F4)[..2]);
    }

    #[test]
    fn blinking_wins_a_shared_corner() {
        let lights = Lights { steady: Bitboard::from(Square::E2), blinking: Bitboard::from(Square::E3) };
        let pattern = LedPattern::for_lights(&lights);
        let [e2_top, e2_bottom, ..] = corners(Square::E2);
        assert_eq!(pattern.codes[e2_top], BLINKING, "the corner e2 shares with e3");
        assert_eq!(pattern.codes[e2_bottom], STEADY);
        assert_eq!(pattern.codes.iter().filter(|&&c| c != 0).count(), 6);
        assert!(LedPattern::for_lights(&Lights::default()).is_dark());
    }
}
