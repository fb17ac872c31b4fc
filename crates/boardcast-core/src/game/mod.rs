//! The game: its record, how it ends, its time control, and its PGN.

pub mod dead;
pub(crate) mod end;
pub mod pgn;
pub mod record;
pub mod time_control;

pub use record::{GameRecord, GameResult, IllegalMove, MoveStatus, Notation, Ply, PlyMove, Termination};
pub use time_control::{Tempo, TimeControl};
