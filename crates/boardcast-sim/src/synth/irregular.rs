//! Irregularities injected into real games, and the labels that say what the
//! Laws expect an arbiter to be told about each: the ground truth against
//! which the alerts are measured (docs/alerts.md, "The alert corpus").
//!
//! The plan is made before the hands play, from the game's moves and the
//! style (some irregularities need a clock), so it is deterministic from the
//! seed like everything else the generator does.

use shakmaty::{Bitboard, CastlingSide, Chess, Color, Move, Position, Role, Square, attacks};

use super::{Rng, SourceGame, Style};
use boardcast_core::{alert::AlertKind, game::Tempo};

/// One irregular action, made by the hands at a ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injection {
    /// 4.3.1: the mover lifts an own piece that could move, holds it for
    /// `hold_ms`, puts it back and then plays the game's move with another.
    TouchOwn {
        /// The piece touched.
        square: Square,
        /// How long it is off its square.
        hold_ms: u64,
    },
    /// 4.3.2: the mover lifts an opponent's piece that could be captured,
    /// puts it back, then plays a move that does not capture it.
    TouchOpponent {
        /// The piece touched.
        square: Square,
        /// How long it is off its square.
        hold_ms: u64,
    },
    /// 4.4.2: castling with the rook lifted first.
    RookBeforeKing {
        /// The rook is put down on its square before the king is lifted
        /// (otherwise both are in the air together for a while).
        rook_down_first: bool,
        /// How long after the rook the king is lifted.
        lead_ms: u64,
    },
    /// 7.5.1: the moving piece goes to a square it cannot reach, the clock
    /// is pressed; then the position is put back and the clock pressed back
    /// for the offender, who plays the game's move.
    IllegalMove {
        /// Where the piece is put.
        to: Square,
        /// The position is put back before the clock is pressed back.
        restore_first: bool,
    },
    /// 7.5.3: the player to move presses the clock without a move; the
    /// opponent presses it back.
    ClockWithoutMove,
    /// 7.4.1: a piece of the side not to move is lifted for `hold_ms` and
    /// put back while the opponent thinks.
    Displaced {
        /// The piece lifted.
        square: Square,
        /// How long it is off its square.
        hold_ms: u64,
    },
    /// 4.7: the piece is released on a square on its way, stands there, and
    /// is moved on along the same line to the game's square.
    ReleasedOnLine {
        /// Where it stands.
        stop: Square,
        /// How long it stands.
        stand_ms: u64,
    },
    /// 4.7: the piece is released on another square it could go to, then
    /// moved to the game's square.
    ReleasedElsewhere {
        /// Where it stands.
        stop: Square,
        /// How long it stands.
        stand_ms: u64,
    },
    /// 7.5.2: a promoting pawn is left on the last rank and the clock
    /// pressed; the queen is put there afterwards.
    PawnNotReplaced,
}

/// What the Laws expect an arbiter to be told: one line of a labels file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// The kind of alert expected.
    pub kind: AlertKind,
    /// Half-moves completed when the irregular action began.
    pub ply: usize,
    /// Whom it concerns.
    pub side: Color,
    /// The squares concerned.
    pub squares: Vec<Square>,
    /// How it was made physically (`short_touch`, `on_line`, …), for
    /// figures per variation.
    pub variant: &'static str,
}

impl Label {
    /// The label as one JSON object (a line of a labels file).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "kind": self.kind.code(),
            "article": self.kind.article(),
            "ply": self.ply,
            "side": if self.side == Color::White { "white" } else { "black" },
            "squares": self.squares.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "variant": self.variant,
        })
    }
}

/// The irregularities to inject into `game` played with `style`: 3 to 5 of
/// them at plies at least four apart, each kind chosen among those the game
/// offers a place for, with the labels they call for.
pub fn plan(game: &SourceGame, style: &Style, rng: &mut Rng) -> (Vec<(usize, Injection)>, Vec<Label>) {
    let positions = positions(game);
    let clock = style.clock.is_some();
    let stands = game
        .tag("TimeControl")
        .and_then(|t| t.parse::<boardcast_core::game::TimeControl>().ok())
        .is_some_and(|tc| tc.tempo() != Tempo::Standard);
    let mut kinds: Vec<(AlertKind, Way)> = MADE.to_vec();
    // Shuffled, so that every kind gets its share of the scarce places.
    for i in (1..kinds.len()).rev() {
        let j = rng.range(0, i as u64) as usize;
        kinds.swap(i, j);
    }
    let wanted = rng.range(3, 5) as usize;
    let mut chosen: Vec<(usize, Injection)> = Vec::new();
    let mut labels = Vec::new();
    for kind in kinds {
        if chosen.len() == wanted {
            break;
        }
        let free: Vec<usize> = (2..positions.len())
            .filter(|&ply| chosen.iter().all(|&(p, _)| p.abs_diff(ply) >= 4))
            .filter(|&ply| !ends_after(&positions, game, ply))
            .collect();
        let mut options: Vec<(usize, Injection, Vec<Label>)> = Vec::new();
        for &ply in &free {
            let place = Place::new(&positions[ply], game.moves[ply], ply, game, clock, stands);
            if let Some(found) = candidate(kind, &place, rng) {
                options.push((ply, found.0, found.1));
            }
        }
        if options.is_empty() {
            continue;
        }
        let pick = rng.range(0, options.len() as u64 - 1) as usize;
        let (ply, injection, mut made) = options.swap_remove(pick);
        chosen.push((ply, injection));
        labels.append(&mut made);
    }
    chosen.sort_by_key(|&(p, _)| p);
    labels.sort_by_key(|l| l.ply);
    (chosen, labels)
}

/// The position before each move of the game.
fn positions(game: &SourceGame) -> Vec<Chess> {
    let mut pos = game.start.clone();
    let mut out: Vec<Chess> = Vec::with_capacity(game.moves.len());
    let mut before: Option<Chess> = None;
    for &m in &game.moves {
        out.push(pos.clone());
        if super::decided_on_the_board(before.as_ref(), &pos).is_some() {
            break;
        }
        before = Some(pos.clone());
        pos.play_unchecked(m);
    }
    out
}

/// Whether the game is over after the move of `ply` (then no clock is
/// pressed), or the move is the last one played.
fn ends_after(positions: &[Chess], game: &SourceGame, ply: usize) -> bool {
    let mut pos = positions[ply].clone();
    pos.play_unchecked(game.moves[ply]);
    super::decided_on_the_board(Some(&positions[ply]), &pos).is_some() || ply + 1 >= positions.len()
}

/// How an irregularity is made, where its alert can be made more than one
/// way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// The one way.
    Only,
    /// A piece released on the line it moves along, then moved on.
    OnItsLine,
    /// A piece released on another square it could reach, then moved on.
    OnAnotherSquare,
}

/// The irregularities the simulator makes, each by the alert it calls for.
/// The order is the seed's: a plan shuffles this list, so changing it
/// changes every synthesized corpus.
const MADE: [(AlertKind, Way); 9] = [
    (AlertKind::TouchedOwnPiece, Way::Only),
    (AlertKind::TouchedOpponentPiece, Way::Only),
    (AlertKind::RookBeforeKing, Way::Only),
    (AlertKind::IllegalMove, Way::Only),
    (AlertKind::ClockWithoutMove, Way::Only),
    (AlertKind::DisplacedPiece, Way::Only),
    (AlertKind::ReleasedPieceMoved, Way::OnItsLine),
    (AlertKind::ReleasedPieceMoved, Way::OnAnotherSquare),
    (AlertKind::PawnNotReplaced, Way::Only),
];

/// A move of the game where an irregularity could be made, and what it
/// offers.
struct Place<'a> {
    /// The position before the move.
    pos: &'a Chess,
    /// The move.
    m: Move,
    ply: usize,
    game: &'a SourceGame,
    /// The players press a clock.
    clock: bool,
    /// An illegal move answered stands (rapid and blitz, A.5.2).
    stands: bool,
    legals: shakmaty::MoveList,
    /// The squares the move's own pieces leave.
    moved: Bitboard,
    /// The opponent's pieces some legal move captures.
    capturable: Bitboard,
}

impl<'a> Place<'a> {
    fn new(pos: &'a Chess, m: Move, ply: usize, game: &'a SourceGame, clock: bool, stands: bool) -> Self {
        let legals = pos.legal_moves();
        let moved = match m {
            Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
            _ => m.from().map_or(Bitboard::EMPTY, Bitboard::from),
        };
        let capturable: Bitboard = legals.iter().filter_map(victim).collect();
        Self { pos, m, ply, game, clock, stands, legals, moved, capturable }
    }

    fn mover(&self) -> Color {
        self.pos.turn()
    }

    /// The label of an alert this place calls for.
    fn label(&self, kind: AlertKind, side: Color, squares: Vec<Square>, variant: &'static str) -> Label {
        Label { kind, ply: self.ply, side, squares, variant }
    }
}

/// The square of the piece a move captures.
fn victim(mv: &Move) -> Option<Square> {
    match *mv {
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        _ => mv.capture().map(|_| mv.to()),
    }
}

/// The injection `made` at `place`, with the labels it calls for; `None`
/// when the place offers none.
fn candidate(made: (AlertKind, Way), place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    match made {
        (AlertKind::TouchedOwnPiece, _) => touched_own(place, rng),
        (AlertKind::TouchedOpponentPiece, _) => touched_opponent(place, rng),
        (AlertKind::RookBeforeKing, _) => rook_before_king(place, rng),
        (AlertKind::IllegalMove, _) if place.clock => illegal_move(place, rng),
        (AlertKind::ClockWithoutMove, _) if place.clock && place.ply >= 1 => Some((
            Injection::ClockWithoutMove,
            vec![place.label(AlertKind::ClockWithoutMove, place.mover(), Vec::new(), "pressed_back")],
        )),
        (AlertKind::DisplacedPiece, _) => displaced(place, rng),
        (AlertKind::ReleasedPieceMoved, Way::OnItsLine) => released_on_line(place, rng),
        (AlertKind::ReleasedPieceMoved, _) => released_elsewhere(place, rng),
        (AlertKind::PawnNotReplaced, _) if place.clock => pawn_not_replaced(place),
        _ => None,
    }
}

/// 4.3.1: an own piece that could move is lifted and put back, then
/// another moves.
fn touched_own(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let mover = place.mover();
    let own: Vec<Square> = (place.pos.board().by_color(mover) & !place.moved)
        .into_iter()
        .filter(|&sq| place.legals.iter().any(|l| l.from() == Some(sq)))
        .collect();
    let square = *pick(rng, &own)?;
    let short = rng.chance(0.4);
    let hold_ms = if short { rng.range(300, 500) } else { rng.range(600, 2000) };
    let variant = if short { "short_touch" } else { "touch" };
    Some((
        Injection::TouchOwn { square, hold_ms },
        vec![place.label(AlertKind::TouchedOwnPiece, mover, vec![square], variant)],
    ))
}

/// 4.3.2: an opponent's piece that could be captured is lifted and put
/// back, then not captured.
fn touched_opponent(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let theirs: Vec<Square> = place.capturable.into_iter().filter(|&sq| Some(sq) != victim(&place.m)).collect();
    let square = *pick(rng, &theirs)?;
    let hold_ms = rng.range(300, 1500);
    Some((
        Injection::TouchOpponent { square, hold_ms },
        vec![place.label(AlertKind::TouchedOpponentPiece, place.mover(), vec![square], "touch")],
    ))
}

/// 4.4.2: castling begun with the rook.
fn rook_before_king(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let mover = place.mover();
    let Move::Castle { king, rook } = place.m else { return None };
    let side = if rook > king { CastlingSide::KingSide } else { CastlingSide::QueenSide };
    // Only the usual castling, where king and rook both move and
    // neither lands where the other stood.
    if place.game.chess960 || king == side.king_to(mover) || rook == side.rook_to(mover) || side.king_to(mover) == rook
    {
        return None;
    }
    let rook_down_first = rng.chance(0.6);
    let lead_ms = rng.range(500, 1500);
    let variant = if rook_down_first { "rook_put_down_first" } else { "rook_in_hand" };
    Some((
        Injection::RookBeforeKing { rook_down_first, lead_ms },
        vec![place.label(AlertKind::RookBeforeKing, mover, vec![rook, king], variant)],
    ))
}

/// 7.5.1: the piece goes to a square it cannot reach and the clock is
/// pressed.
fn illegal_move(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let Move::Normal { role, from, .. } = place.m else { return None };
    let reach: Bitboard = place.legals.iter().filter(|l| l.from() == Some(from)).map(|l| l.to()).collect();
    let near: Vec<Square> = (!place.pos.board().occupied() & !reach)
        .into_iter()
        .filter(|&sq| sq.distance(from) <= 2 && sq != from)
        .filter(|&sq| role != Role::Pawn || !matches!(sq.rank(), shakmaty::Rank::First | shakmaty::Rank::Eighth))
        // A king on a centre square could be half of the result
        // gesture, which the daemon waits for.
        .filter(|&sq| role != Role::King || !matches!(sq, Square::D4 | Square::E4 | Square::D5 | Square::E5))
        .collect();
    let to = *pick(rng, &near)?;
    let restore_first = rng.chance(0.5);
    let variant = if restore_first { "restored_then_pressed_back" } else { "pressed_back_then_restored" };
    Some((
        Injection::IllegalMove { to, restore_first },
        vec![place.label(AlertKind::IllegalMove, place.mover(), vec![from, to], variant)],
    ))
}

/// 7.4.1: a piece of the side not to move is lifted and put back.
fn displaced(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let mover = place.mover();
    // The piece just moved may still be adjusted by its mover when
    // the move is not completed by a clock.
    let last = place.ply.checked_sub(1).map(|p| place.game.moves[p].to());
    let theirs: Vec<Square> =
        (place.pos.board().by_color(!mover) & !place.capturable).into_iter().filter(|&sq| Some(sq) != last).collect();
    let square = *pick(rng, &theirs)?;
    let hold_ms = rng.range(1000, 2500);
    let variant = if place.clock { "lifted_and_put_back" } else { "lifted_and_put_back_no_clock" };
    Some((
        Injection::Displaced { square, hold_ms },
        vec![place.label(AlertKind::DisplacedPiece, !mover, vec![square], variant)],
    ))
}

/// 4.7: a line piece put down on its way, then moved on.
fn released_on_line(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let Move::Normal { role, from, capture: None, to, promotion: None } = place.m else { return None };
    let line =
        matches!(role, Role::Bishop | Role::Rook | Role::Queen) || (role == Role::Pawn && from.distance(to) == 2);
    let path: Vec<Square> = attacks::between(from, to).into_iter().collect();
    if !line {
        return None;
    }
    let stop = *pick(rng, &path)?;
    let stand_ms = rng.range(1300, 2500);
    Some((
        Injection::ReleasedOnLine { stop, stand_ms },
        vec![place.label(AlertKind::ReleasedPieceMoved, place.mover(), vec![stop, to], "on_line")],
    ))
}

/// 4.7: a piece put down on another square it could reach, then moved on.
fn released_elsewhere(place: &Place<'_>, rng: &mut Rng) -> Option<(Injection, Vec<Label>)> {
    let Move::Normal { role, from, capture: None, to, promotion: None } = place.m else { return None };
    if matches!(role, Role::Pawn | Role::King) {
        return None;
    }
    let others: Vec<Square> = place
        .legals
        .iter()
        .filter(|l| l.from() == Some(from) && l.capture().is_none() && l.to() != to)
        .map(|l| l.to())
        .filter(|&sq| !attacks::aligned(from, to, sq))
        .collect();
    let stop = *pick(rng, &others)?;
    let stand_ms = rng.range(800, 2000);
    Some((
        Injection::ReleasedElsewhere { stop, stand_ms },
        vec![place.label(AlertKind::ReleasedPieceMoved, place.mover(), vec![stop, to], "other_square")],
    ))
}

/// 7.5.2: a promotion pressed with the pawn left on the last rank.
fn pawn_not_replaced(place: &Place<'_>) -> Option<(Injection, Vec<Label>)> {
    let Move::Normal { promotion: Some(Role::Queen), to, .. } = place.m else { return None };
    let mover = place.mover();
    let mut labels = vec![place.label(AlertKind::PawnNotReplaced, mover, vec![to], "pawn_pressed")];
    if place.stands {
        // In rapid and blitz the pawn on its last rank after a
        // completed move is also an irregular position (A.5.4).
        labels.push(place.label(AlertKind::IrregularPosition, mover, Vec::new(), "pawn_pressed"));
    }
    Some((Injection::PawnNotReplaced, labels))
}

fn pick<'a, T>(rng: &mut Rng, items: &'a [T]) -> Option<&'a T> {
    (!items.is_empty()).then(|| rng.pick(items))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::read_games;

    const GAME: &str = "[TimeControl \"900+10\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 5. d3 d6 6. c3 O-O \
                        7. Re1 a6 8. Bb3 Ba7 9. h3 h6 10. Nbd2 Re8 11. Nf1 Be6 12. Bxe6 Rxe6 13. Ng3 d5 *";

    #[test]
    fn a_plan_is_the_same_for_a_seed_and_its_injections_are_apart_and_labelled() {
        let game = &read_games(GAME).unwrap()[0];
        let style = Style::calm();
        for seed in 0..50 {
            let (injections, labels) = plan(game, &style, &mut Rng::new(seed));
            assert_eq!((injections.clone(), labels.clone()), plan(game, &style, &mut Rng::new(seed)));
            assert!((3..=5).contains(&injections.len()), "{injections:?}");
            for pair in injections.windows(2) {
                assert!(pair[1].0 >= pair[0].0 + 4, "{injections:?}");
            }
            for &(ply, _) in &injections {
                assert!(labels.iter().any(|l| l.ply == ply), "{injections:?} {labels:?}");
                assert!(ply >= 2 && ply + 1 < game.moves.len());
            }
        }
        // Castling is there for 4.4.2, and a clock for 7.5.1 and 7.5.3.
        let kinds: std::collections::HashSet<AlertKind> =
            (0..50).flat_map(|seed| plan(game, &style, &mut Rng::new(seed)).1).map(|l| l.kind).collect();
        for kind in [AlertKind::RookBeforeKing, AlertKind::IllegalMove, AlertKind::ClockWithoutMove] {
            assert!(kinds.contains(&kind), "{kind:?} never planned");
        }
    }

    #[test]
    fn a_label_is_one_json_line_with_the_alert_names() {
        let label = Label {
            kind: AlertKind::TouchedOwnPiece,
            ply: 24,
            side: Color::White,
            squares: vec![Square::G1],
            variant: "short_touch",
        };
        assert_eq!(
            label.to_json().to_string(),
            r#"{"kind":"touched_own_piece","article":"4.3.1","ply":24,"side":"white","squares":["g1"],"variant":"short_touch"}"#
        );
    }
}
