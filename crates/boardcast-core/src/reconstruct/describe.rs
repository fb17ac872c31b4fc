//! How the reconstructor names moves and squares in alerts and notices:
//! `"Nf3 e5 Nc3"`, `"white knight"`. Kept apart so that the parts that
//! explain themselves (judging, occupancy readings, irregularities) share
//! one wording without depending on each other.

use shakmaty::{Color, Move};

use crate::sensor::Cell;

/// `"Nf3 e5 Nc3"`: moves from `pos` for messages.
pub(super) fn describe_line(pos: &shakmaty::Chess, line: &[Move]) -> String {
    let mut pos = pos.clone();
    let mut out = Vec::new();
    for &m in line {
        out.push(shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
    }
    out.join(" ")
}

/// `"white knight"`, `"empty"`, `"unknown piece"`.
pub(crate) fn describe_cell(cell: Cell) -> String {
    match cell {
        Cell::Empty => "empty".into(),
        Cell::Occupied => "unknown piece".into(),
        Cell::Piece(p) => {
            format!("{} {}", if p.color == Color::White { "white" } else { "black" }, super::touch::role_name(p))
        }
    }
}
