//! The legal moves of a position, as the operator console's board needs
//! them to let an operator enter a move by dragging it: for each square
//! the squares its piece may go to (chessground's `dests`), and each move's
//! SAN, which the `moves` command takes. The rules are shakmaty's: the
//! browser never generates a move itself, so the console and the daemon
//! cannot disagree on what is legal.

use std::collections::BTreeMap;

use serde::Serialize;
use shakmaty::{CastlingMode, Chess, Color, Move, Position, Role, fen::Fen, san::San};

use crate::operator::CommandError;

/// A position's legal moves in the shapes the console's board uses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LegalMoves {
    /// Whose move it is: `white` or `black`.
    pub turn: &'static str,
    /// Whether the position was read with Chess960's castling (the king
    /// goes to the rook's square to castle).
    pub chess960: bool,
    /// From-square → the squares a piece there may move to, by name
    /// (`"e2": ["e3", "e4"]`): what chessground's `movable.dests` wants.
    pub dests: BTreeMap<String, Vec<String>>,
    /// Each move by its squares (`e2e4`; with the promotion piece's letter
    /// for a promotion, `e7e8q`) → its SAN.
    pub san: BTreeMap<String, String>,
    /// Whether the game is over in this position (mate, stalemate, or
    /// material no one can mate with): nothing to drag then.
    pub game_over: bool,
}

/// The position a FEN describes, read as `set_position` reads it: with
/// Chess960 castling when `chess960`, and also when the castling rights
/// name rooks a standard game cannot have (a Chess960 FEN given without
/// saying so).
///
/// # Errors
///
/// The FEN is not one ([`CommandError::NotAFen`]) or describes a position
/// no game can go on from ([`CommandError::IllegalPosition`]).
pub fn position(fen: &str, chess960: bool) -> Result<(Chess, CastlingMode), CommandError> {
    let parsed: Fen = fen.trim().parse().map_err(|e: shakmaty::fen::ParseFenError| CommandError::NotAFen {
        fen: fen.to_owned(),
        reason: e.to_string(),
    })?;
    let illegal = |e: shakmaty::PositionError<Chess>| CommandError::IllegalPosition {
        fen: fen.to_owned(),
        reason: e.to_string(),
    };
    if chess960 {
        return parsed.into_position(CastlingMode::Chess960).map(|p| (p, CastlingMode::Chess960)).map_err(illegal);
    }
    match parsed.clone().into_position(CastlingMode::Standard) {
        Ok(p) => Ok((p, CastlingMode::Standard)),
        Err(standard) => parsed
            .into_position(CastlingMode::Chess960)
            .map(|p| (p, CastlingMode::Chess960))
            .map_err(|_| illegal(standard)),
    }
}

/// The legal moves of the position `fen` (see [`position`] for `chess960`).
///
/// In standard chess a castling is offered both as the king's two-square
/// step (`e1g1`) and as the king onto its rook (`e1h1`), the two ways an
/// operator may drag it; in Chess960 only the second, which cannot be
/// mistaken for a king's ordinary move.
///
/// # Errors
///
/// As for [`position`].
pub fn legal_moves(fen: &str, chess960: bool) -> Result<LegalMoves, CommandError> {
    let (pos, mode) = position(fen, chess960)?;
    let mut dests: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut san = BTreeMap::new();
    let mut add = |from: String, to: String, promotion: Option<Role>, words: String| {
        let key = format!("{from}{to}{}", promotion.map(|r| r.char().to_string()).unwrap_or_default());
        let targets = dests.entry(from).or_default();
        if !targets.contains(&to) {
            targets.push(to);
        }
        san.insert(key, words);
    };
    for m in pos.legal_moves() {
        let words = San::from_move(&pos, m).to_string();
        let from = m.from().map(|s| s.to_string()).unwrap_or_default();
        if let Move::Castle { king, rook } = m {
            if let Some(side) = m.castling_side().filter(|_| mode == CastlingMode::Standard) {
                add(from.clone(), side.king_to(pos.turn()).to_string(), None, words.clone());
            }
            add(king.to_string(), rook.to_string(), None, words);
        } else {
            add(from, m.to().to_string(), m.promotion(), words);
        }
    }
    // Sorted, so that the same position always gets the same answer.
    dests.values_mut().for_each(|targets| targets.sort());
    Ok(LegalMoves {
        turn: if pos.turn() == Color::White { "white" } else { "black" },
        chess960: mode == CastlingMode::Chess960,
        game_over: pos.is_game_over(),
        dests,
        san,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn the_start_position_has_twenty_moves_from_ten_squares() {
        let legal = legal_moves(START, false).unwrap();
        assert_eq!(legal.turn, "white");
        assert_eq!(legal.san.len(), 20);
        assert_eq!(legal.dests.len(), 10);
        assert_eq!(legal.dests["e2"], ["e3", "e4"]);
        assert_eq!(legal.dests["g1"].len(), 2);
        assert_eq!(legal.san["g1f3"], "Nf3");
        assert!(!legal.chess960 && !legal.game_over);
    }

    #[test]
    fn castling_can_be_dragged_two_squares_or_onto_the_rook_and_a_promotion_is_one_key_per_piece() {
        let fen = "r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1";
        let legal = legal_moves(fen, false).unwrap();
        assert_eq!(legal.san["e1g1"], "O-O");
        assert_eq!(legal.san["e1h1"], "O-O");
        assert_eq!(legal.san["e1c1"], "O-O-O");
        assert_eq!(legal.san["e1a1"], "O-O-O");
        for (key, san) in [("b7b8q", "b8=Q"), ("b7b8n", "b8=N"), ("b7a8r", "bxa8=R"), ("b7a8b", "bxa8=B")] {
            assert_eq!(legal.san[key], san, "{key}");
        }
        // One destination per square, however many pieces it may become.
        assert_eq!(legal.dests["b7"], ["a8", "b8"]);
    }

    #[test]
    fn chess960_castling_goes_onto_the_rook_only() {
        // King on b1, rooks on a1 and h1: castling short takes the king to g1.
        let fen = "rk5r/pppppppp/8/8/8/8/PPPPPPPP/RK5R w HAha - 0 1";
        let legal = legal_moves(fen, true).unwrap();
        assert!(legal.chess960);
        assert_eq!(legal.san["b1h1"], "O-O");
        assert!(!legal.san.contains_key("b1g1"), "{:?}", legal.san);
        // The same FEN not said to be Chess960: its castling rights say so.
        assert!(legal_moves(fen, false).unwrap().chess960);
    }

    #[test]
    fn a_mate_has_no_moves_and_bad_fens_say_what_is_wrong() {
        let mate = legal_moves("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", false).unwrap();
        assert!(mate.game_over && mate.dests.is_empty());
        let not_a_fen = legal_moves("hello", false).unwrap_err();
        assert!(matches!(not_a_fen, CommandError::NotAFen { .. }), "{not_a_fen}");
        // Two white kings: a FEN, but no game goes on from it.
        let illegal = legal_moves("4k3/8/8/8/8/8/8/K3K3 w - - 0 1", false).unwrap_err();
        assert!(matches!(illegal, CommandError::IllegalPosition { .. }), "{illegal}");
        assert!(illegal.to_string().contains("not a legal position"), "{illegal}");
    }
}
