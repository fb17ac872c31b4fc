//! Pieces of the side not to move taken off their squares and put back
//! (7.4.1, 4.2.1): the board shows the position again, so nothing stays out
//! of sync, but the arbiter is told which piece was off, where and for how
//! long.

use shakmaty::{Position, Square};

use super::{
    Reconstructor,
    describe::describe_cell,
    touch::{captured_square, describe_duration},
};
use crate::{
    alert::{AlertKind, side_name},
    sensor::Cell,
    time::Timestamp,
};

impl Reconstructor {
    /// `square` was just filled with `cell` (already logged): if it is a
    /// piece of the side not to move that had left that very square for
    /// `touch_min` or longer, alert.
    pub(super) fn check_put_back(&mut self, now: Timestamp, square: Square, cell: Cell) {
        let Cell::Piece(piece) = cell else { return };
        let Some(game) = self.phase.playing().filter(|p| p.readings.lines.is_none()) else { return };
        let pos = &game.known.pos;
        if piece.color == pos.turn() || pos.board().piece_at(square) != Some(piece) {
            return;
        }
        // The mover may still adjust the piece of a move not yet completed.
        if game.record.pending().is_some_and(|p| p.mover == piece.color) {
            return;
        }
        // A piece the side to move could capture: its hand, touching it,
        // is the likelier reading; the move tells (4.3.2, `touch.rs`).
        if game.known.moves().any(|m| captured_square(m) == Some(square)) {
            return;
        }
        let Some(up) = self.log.put_back_since(square, piece) else { return };
        let off = now.saturating_since(up);
        if off < self.config.touch_min {
            return;
        }
        let to_move = pos.turn();
        let message = format!(
            "the {} on {square} was off its square for {} and put back while {} was to move: only the player having the move may adjust pieces (4.2.1); a player displaced a piece (7.4.1)",
            describe_cell(cell),
            describe_duration(off),
            side_name(to_move),
        );
        self.alert(up, AlertKind::DisplacedPiece, Some(piece.color), message, vec![square], up);
    }
}
