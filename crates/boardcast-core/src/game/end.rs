//! How a game ends on the board (FIDE articles 5, 6.9 and 9), and which
//! draws a player could claim.

use shakmaty::{Color, KnownOutcome, Position};

use super::{
    dead::{self, Budget, Verdict},
    record::{GameRecord, GameResult, Termination},
};

#[cfg(test)]
/// The result the position after the last ply forces, if any: checkmate
/// (5.1.1), stalemate (5.2.1), a dead position (5.2.2: insufficient
/// material, or a blockade proved dead by [`dead::verdict_after`] within
/// [`Budget::PER_MOVE`]), fivefold repetition (9.6.1) or the 75-move rule
/// (9.6.2).
pub(crate) fn forced_result(record: &GameRecord) -> Option<GameResult> {
    forced_result_with(record, !record.position().legal_moves().is_empty())
}

/// [`forced_result`] for a caller that knows whether the position has legal
/// moves.
pub(crate) fn forced_result_with(record: &GameRecord, has_moves: bool) -> Option<GameResult> {
    let pos = record.position();
    let draw = |termination| Some(GameResult { outcome: KnownOutcome::Draw, termination });
    if !has_moves && pos.is_check() {
        let winner = !pos.turn();
        return Some(GameResult { outcome: KnownOutcome::Decisive { winner }, termination: Termination::Checkmate });
    }
    if !has_moves {
        return draw(Termination::Stalemate);
    }
    if pos.is_insufficient_material() {
        return draw(Termination::DeadPosition);
    }
    // Any other dead position: only a proof ends the game; undecided
    // within the budget, it goes on.
    let before = record.plies.len().checked_sub(1).map(|last| record.position_before(last));
    if dead::verdict_after(before, pos, Budget::PER_MOVE) == Verdict::Dead {
        return draw(Termination::DeadPosition);
    }
    if record.repetitions() >= 5 {
        return draw(Termination::FivefoldRepetition);
    }
    // 75 moves by each side: 150 half-moves without capture or pawn move.
    // A mate on the last of them is caught above.
    if pos.halfmoves() >= 150 {
        return draw(Termination::SeventyFiveMoves);
    }
    None
}

/// A draw a player may claim in the current position (information for the
/// arbiter; the game goes on).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Claimable {
    /// 9.2: the same position for at least the third time.
    ThreefoldRepetition,
    /// 9.3: the last 50 moves by each side without capture or pawn move.
    FiftyMoves,
}

/// The draws claimable in the position after the last ply.
pub(crate) fn claimable(record: &GameRecord) -> impl Iterator<Item = Claimable> {
    let threefold = (record.repetitions() >= 3).then_some(Claimable::ThreefoldRepetition);
    let fifty = (record.position().halfmoves() >= 100).then_some(Claimable::FiftyMoves);
    threefold.into_iter().chain(fifty)
}

/// The result when `flagged`'s flag falls (6.9): a loss, unless the
/// opponent cannot mate by any legal sequence, which is a draw.
pub(crate) fn flag_result(record: &GameRecord, flagged: Color) -> GameResult {
    if record.position().has_insufficient_material(!flagged) {
        GameResult { outcome: KnownOutcome::Draw, termination: Termination::TimeForfeitDraw }
    } else {
        GameResult { outcome: KnownOutcome::Decisive { winner: !flagged }, termination: Termination::TimeForfeit }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, Chess, fen::Fen, san::San};

    use super::*;
    use crate::time::Timestamp;

    fn record(fen: &str, sans: &str) -> GameRecord {
        let start: Chess = fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap();
        let mut record = GameRecord::new(1, start, CastlingMode::Standard, true, Timestamp::ZERO);
        for san in sans.split_whitespace() {
            let m = san.parse::<San>().unwrap().to_move(record.position()).unwrap();
            record.push(m, Timestamp::ZERO, false);
        }
        record
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn checkmate_stalemate_and_dead_positions_end_the_game() {
        let mate = forced_result(&record(START, "f3 e5 g4 Qh4")).unwrap();
        assert_eq!(
            mate,
            GameResult {
                outcome: KnownOutcome::Decisive { winner: Color::Black },
                termination: Termination::Checkmate
            }
        );
        let stalemate = forced_result(&record("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", "Qf7")).unwrap();
        assert_eq!(stalemate.termination, Termination::Stalemate);
        let dead = forced_result(&record("7k/8/8/8/8/8/8/N5Kb w - - 0 1", "Kxh1")).unwrap();
        assert_eq!(dead, GameResult { outcome: KnownOutcome::Draw, termination: Termination::DeadPosition });
        assert_eq!(forced_result(&record(START, "e4 e5")), None);
    }

    #[test]
    fn a_blockade_that_nobody_can_break_is_a_dead_position() {
        // d3-d4 closes the chain: the kings can never get past it and
        // nobody can ever mate.
        let closing = "4k3/8/8/1p1p1p1p/1P3P1P/3P4/8/4K3 w - - 0 1";
        let dead = forced_result(&record(closing, "d4")).unwrap();
        assert_eq!(dead, GameResult { outcome: KnownOutcome::Draw, termination: Termination::DeadPosition });
        // One move earlier the d-pawn could still move: the game goes on.
        assert_eq!(forced_result(&record(closing, "")), None);
    }

    #[test]
    fn fivefold_repetition_and_the_75_move_rule_end_the_game() {
        let shuffle = "Nf3 Nf6 Ng1 Ng8 ".repeat(4);
        let record4 = record(START, &shuffle);
        assert_eq!(record4.repetitions(), 5);
        assert_eq!(forced_result(&record4).unwrap().termination, Termination::FivefoldRepetition);
        let three = record(START, &"Nf3 Nf6 Ng1 Ng8 ".repeat(2));
        assert_eq!(forced_result(&three), None);
        assert_eq!(claimable(&three).collect::<Vec<_>>(), vec![Claimable::ThreefoldRepetition]);

        let seventy_five = record("7k/8/8/8/8/8/R7/K7 w - - 149 100", "Rb2");
        assert_eq!(forced_result(&seventy_five).unwrap().termination, Termination::SeventyFiveMoves);
        let fifty = record("7k/8/8/8/8/8/R7/K7 w - - 99 60", "Rb2");
        assert_eq!(forced_result(&fifty), None);
        assert_eq!(claimable(&fifty).collect::<Vec<_>>(), vec![Claimable::FiftyMoves]);
        // A mate on the 75th move is a win (9.6.2).
        let mate = record("7k/8/6K1/8/8/8/8/R7 w - - 149 100", "Ra8#");
        assert_eq!(forced_result(&mate).unwrap().termination, Termination::Checkmate);
    }

    #[test]
    fn a_flag_falls_to_a_loss_unless_the_opponent_cannot_mate() {
        let rook_vs_king = record("7k/8/8/8/8/8/8/R6K w - - 0 1", "");
        assert_eq!(flag_result(&rook_vs_king, Color::Black).termination, Termination::TimeForfeit);
        assert_eq!(flag_result(&rook_vs_king, Color::White).termination, Termination::TimeForfeitDraw);
    }
}
