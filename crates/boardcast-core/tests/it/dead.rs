//! Dead positions (5.2.2) against a published set: the test vectors of the
//! Chess Unwinnability Analyzer (`tests/fixtures/dead/`, see SOURCE.md),
//! 1,800 positions labelled by who can still mate. The rule that matters:
//! no position in which either side can mate is ever called dead, since
//! that would end a live game. Positions the analyser cannot decide within
//! the per-move budget stay undecided (the game goes on); the counts are
//! printed so that a change of method shows.

use boardcast_core::game::dead::{Budget, Verdict, verdict};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen};

const VECTORS: &str = include_str!("../../../../tests/fixtures/dead/cha-test-vector.txt");

/// A labelled position: whether the set calls it dead (`--`), and the
/// position.
struct Labelled {
    line: usize,
    dead: bool,
    fen: String,
    pos: Chess,
}

fn vectors() -> (Vec<Labelled>, usize) {
    let mut unreadable = 0;
    let mut out = Vec::new();
    for (index, line) in VECTORS.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (label, fen) = line.split_once(' ').expect("a label and a FEN");
        assert!(["--", "W-", "-B", "WB"].contains(&label), "line {}: label {label}", index + 1);
        let parsed: Fen = fen.parse().unwrap_or_else(|e| panic!("line {}: {e}", index + 1));
        // The set has positions with more pieces than promotions could
        // give: unreachable in a game, but still a test of soundness. Any
        // other position the move generator refuses is counted, not tested.
        let pos = match parsed.into_position::<Chess>(CastlingMode::Standard) {
            Ok(pos) => Some(pos),
            Err(e) => e.ignore_too_much_material().ok(),
        };
        match pos {
            Some(pos) => out.push(Labelled { line: index + 1, dead: label == "--", fen: fen.to_string(), pos }),
            None => unreadable += 1,
        }
    }
    (out, unreadable)
}

#[test]
fn no_position_that_can_be_won_is_called_dead_and_dead_ones_are_found() {
    let (vectors, unreadable) = vectors();
    let mut dead = [0usize; 3];
    let mut alive = [0usize; 3];
    let mut wrong = Vec::new();
    for v in &vectors {
        let got = verdict(&v.pos, Budget::PER_MOVE);
        let slot = match got {
            Verdict::Dead => 0,
            Verdict::Alive => 1,
            Verdict::Unknown => 2,
        };
        if v.dead {
            dead[slot] += 1;
            if got == Verdict::Alive {
                wrong.push(format!("line {}: {} is labelled dead but a mate was found", v.line, v.fen));
            }
        } else {
            alive[slot] += 1;
            if got == Verdict::Dead {
                wrong.push(format!("line {}: {} can be won but was called dead", v.line, v.fen));
            }
        }
    }
    eprintln!(
        "dead positions: {} labelled dead: {} proved dead, {} undecided; {} labelled winnable: {} proved alive, {} undecided; {unreadable} unreadable",
        dead.iter().sum::<usize>(),
        dead[0],
        dead[2],
        alive.iter().sum::<usize>(),
        alive[1],
        alive[2],
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A floor, so that a change that proves fewer shows: 324 on the day
    // this was written.
    assert!(dead[0] >= 320, "only {} dead positions proved", dead[0]);
}

/// The simple class: kings and pawns only, every pawn blocked head-on by a
/// pawn. Every such position the set calls dead is proved dead.
#[test]
fn every_dead_blockade_of_kings_and_pawns_is_proved() {
    let (vectors, _) = vectors();
    let mut simple = 0;
    for v in vectors.iter().filter(|v| v.dead) {
        let board = v.pos.board();
        let pawns = board.pawns();
        let locked = (pawns & board.white()).shift(8) & !pawns | (pawns & board.black()).shift(-8) & !pawns;
        if (board.occupied() & !pawns & !board.kings()).is_empty() && pawns.any() && locked.is_empty() {
            simple += 1;
            assert_eq!(verdict(&v.pos, Budget::PER_MOVE), Verdict::Dead, "line {}: {}", v.line, v.fen);
        }
    }
    assert!(simple >= 10, "the set has {simple} such positions");
    eprintln!("kings-and-pawns blockades: {simple}, all proved dead");
}
