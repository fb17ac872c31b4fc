//! The record of one game: its start, every ply with its status and clock,
//! and its result. The one place where the game's history is kept; every
//! output (PGN, move events, publications) is rendered from it.

use std::fmt;

use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, KnownOutcome, Move, Piece, Position, Role, Square, san::SanPlus,
    uci::UciMove, zobrist::Zobrist64,
};

use crate::time::Timestamp;

/// Room for this many plies is made when a game starts: most games are
/// shorter, and a list grown one step at a time would copy every position
/// in it each time.
const PLIES_RESERVED: usize = 128;

/// One game on one board.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// Which game on this board (1 for the first).
    pub number: u32,
    /// PGN tags from the capture or configuration, in order.
    pub tags: Vec<(String, String)>,
    /// The position the game started from.
    pub start: Chess,
    /// Standard or Chess960 castling.
    pub castling_mode: CastlingMode,
    /// Whether the game started from a position other than the standard
    /// one (Chess960, or a wrong initial position that was played anyway).
    pub set_up: bool,
    /// The plies so far.
    pub plies: Vec<Ply>,
    /// The result, once known.
    pub result: Option<GameResult>,
    /// When the game started (the start position settled on the board).
    pub(crate) started_at: Timestamp,
    /// Zobrist hash of the start position and of the position after each
    /// ply, for repetitions (9.2.2: same side to move, pieces, castling and
    /// en-passant possibilities).
    hashes: Vec<u64>,
}

/// One half-move.
#[derive(Clone, Debug)]
pub struct Ply {
    /// The move played.
    pub mv: PlyMove,
    /// The move in standard English algebraic notation.
    pub san: Notation,
    /// Who moved.
    pub(crate) mover: Color,
    /// The position after the move.
    pub after: Chess,
    /// Made (on the board) or completed (clock pressed, game ended, or the
    /// next move made).
    pub status: MoveStatus,
    /// When the board first showed the move.
    pub made_at: Timestamp,
    /// When the move was completed.
    pub(crate) completed_at: Option<Timestamp>,
    /// When the mover pressed the clock for this move, if they did.
    pub(crate) pressed_at: Option<Timestamp>,
    /// The mover's remaining time after the move, in milliseconds.
    pub clock_ms: Option<u64>,
    /// The move was not seen on its own but filled in from a later board
    /// (rules.md R10).
    pub inferred: bool,
    /// Inferred together with other plies that the board showed only the
    /// end of, and another order of the same moves leads there too: the
    /// position after them is certain, their order is not.
    pub order_uncertain: bool,
    /// Entered by the operator (from the scoresheet), not seen on the board.
    pub(crate) entered: bool,
}

/// What moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlyMove {
    /// A legal move.
    Legal(Move),
    /// An illegal move that stands because the opponent answered it in
    /// rapid or blitz without adequate supervision (A.5.2).
    Illegal(IllegalMove),
}

/// An illegal move as the board showed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllegalMove {
    /// The piece that moved.
    pub piece: Piece,
    /// Where it came from, if one square lost a piece of the mover.
    pub(crate) from: Option<Square>,
    /// Where it went, if one square gained it.
    pub(crate) to: Option<Square>,
    /// It went to a square where an opponent's piece stood.
    pub(crate) capture: bool,
}

/// A move as written on a scoresheet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notation {
    /// A legal move in SAN with its check or mate suffix.
    San(SanPlus),
    /// An illegal move, written as SAN would write it if it were legal
    /// (`Ke3`, `exd6`), or `--` when the board does not show one piece
    /// going from one square to another.
    Illegal(IllegalMove),
}

/// Whether a move is final.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveStatus {
    /// The board shows it; the mover may still take it back (before the
    /// clock is pressed). Displays must show it as provisional (6.12).
    Made,
    /// Completed (6.2.1).
    Completed,
}

/// A game's result and how it came about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameResult {
    /// Who won, or a draw.
    pub outcome: KnownOutcome,
    /// Why.
    pub termination: Termination,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    /// 5.1.1.
    Checkmate,
    /// 5.2.1.
    Stalemate,
    /// 5.2.2: neither side can mate by any series of legal moves
    /// (insufficient material, or a blockade proved dead).
    DeadPosition,
    /// 9.6.1.
    FivefoldRepetition,
    /// 9.6.2.
    SeventyFiveMoves,
    /// 6.9: a flag fell.
    TimeForfeit,
    /// 6.9: a flag fell but the opponent cannot mate.
    TimeForfeitDraw,
    /// III.3.1: both flags fell and which fell first cannot be told.
    BothFlagsFallen,
    /// The players put both kings on the centre squares.
    ResultGesture,
    /// A player resigned (5.1.2), as the operator entered it.
    Resignation,
    /// The players agreed (5.2.3), as the operator entered it.
    Agreement,
    /// A player forfeited, as the operator entered it.
    Forfeit,
    /// Entered by the operator for another reason (the arbiter's decision).
    Operator,
}

impl Termination {
    /// A short phrase for messages and the PGN `Termination` tag.
    pub(crate) const fn describe(self) -> &'static str {
        match self {
            Self::Checkmate => "checkmate",
            Self::Stalemate => "stalemate",
            Self::DeadPosition => "dead position",
            Self::FivefoldRepetition => "fivefold repetition",
            Self::SeventyFiveMoves => "75-move rule",
            Self::TimeForfeit => "time forfeit",
            Self::TimeForfeitDraw => "flag fell, opponent cannot mate",
            Self::BothFlagsFallen => "both flags fell",
            Self::ResultGesture => "result gesture",
            Self::Resignation => "resignation",
            Self::Agreement => "agreement",
            Self::Forfeit => "forfeit",
            Self::Operator => "entered by the operator",
        }
    }
}

impl Termination {
    /// The PGN `Termination` tag's value, one of the standard's words that
    /// broadcast relays and databases accept: `normal` (the game ended on
    /// the board or by the players), `time forfeit`, `abandoned` (a
    /// forfeit) or `adjudication` (the arbiter's decision). What the word
    /// leaves out goes into a comment ([`Self::describe`]).
    pub(crate) const fn pgn_tag(self) -> &'static str {
        match self {
            Self::Checkmate
            | Self::Stalemate
            | Self::DeadPosition
            | Self::FivefoldRepetition
            | Self::SeventyFiveMoves
            | Self::ResultGesture
            | Self::Resignation
            | Self::Agreement => "normal",
            Self::TimeForfeit | Self::TimeForfeitDraw | Self::BothFlagsFallen => "time forfeit",
            Self::Forfeit => "abandoned",
            Self::Operator => "adjudication",
        }
    }
}

impl GameResult {
    /// The PGN result: `1-0`, `0-1` or `1/2-1/2`.
    pub fn pgn(&self) -> &'static str {
        self.outcome.as_str()
    }
}

impl GameRecord {
    /// A game starting from `start`.
    pub fn new(number: u32, start: Chess, castling_mode: CastlingMode, set_up: bool, started_at: Timestamp) -> Self {
        let hash = hash(&start);
        Self {
            number,
            tags: Vec::new(),
            start,
            castling_mode,
            set_up,
            plies: Vec::with_capacity(PLIES_RESERVED),
            result: None,
            started_at,
            hashes: {
                let mut hashes = Vec::with_capacity(PLIES_RESERVED + 1);
                hashes.push(hash);
                hashes
            },
        }
    }

    /// The moves in UCI notation (Chess960 castling as king takes rook).
    pub fn uci_moves(&self) -> Vec<String> {
        self.plies.iter().map(|p| p.uci(self.castling_mode)).collect()
    }

    /// The position the game is in (after every ply, made or completed).
    pub fn position(&self) -> &Chess {
        self.plies.last().map_or(&self.start, |p| &p.after)
    }

    /// The position before ply `index` (0-based).
    pub(crate) fn position_before(&self, index: usize) -> &Chess {
        if index == 0 { &self.start } else { &self.plies[index - 1].after }
    }

    /// The last ply, if it is only made (not yet completed).
    pub(crate) fn pending(&self) -> Option<&Ply> {
        self.plies.last().filter(|p| p.status == MoveStatus::Made)
    }

    /// Half-moves completed.
    pub(crate) fn completed_plies(&self) -> usize {
        self.plies.iter().rposition(|p| p.status == MoveStatus::Completed).map_or(0, |i| i + 1)
    }

    /// The time the mover of ply `index` (from 0) took for it: from the
    /// opponent's press of the clock to the mover's own, or, where a
    /// press was not seen, from when the board showed the previous move to
    /// when it showed this one. `None` for the first ply (when the clock
    /// was started is not seen).
    pub(crate) fn spent_ms(&self, index: usize) -> Option<u64> {
        let ply = self.plies.get(index)?;
        let before = self.plies.get(index.checked_sub(1)?)?;
        let end = ply.pressed_at.unwrap_or(ply.made_at);
        let start = before.pressed_at.unwrap_or(before.made_at);
        (end >= start).then(|| (end.as_micros() - start.as_micros()) / 1000)
    }

    /// Moves completed by `color`.
    pub(crate) fn moves_by(&self, color: Color) -> u32 {
        self.plies.iter().filter(|p| p.mover == color && p.status == MoveStatus::Completed).count() as u32
    }

    /// Plays a legal move from the current position, as made.
    pub fn push(&mut self, m: Move, at: Timestamp, inferred: bool) -> &Ply {
        let mut after = self.position().clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, m);
        self.push_played(m, san, after, at, inferred)
    }

    /// Records a legal move whose SAN and resulting position the caller has
    /// already worked out (the reconstructor keeps legal moves at hand and
    /// saves generating them again).
    pub(crate) fn push_played(&mut self, m: Move, san: SanPlus, after: Chess, at: Timestamp, inferred: bool) -> &Ply {
        let mover = self.position().turn();
        // Most moves update the hash of the position before (shakmaty
        // declines the others); cheaper than hashing the whole board.
        let before = *self.hashes.last().expect("the start position is always hashed");
        let after_hash = self
            .position()
            .update_zobrist_hash(Zobrist64(before), m, EnPassantMode::Legal)
            .map_or_else(|| hash(&after), |updated| updated.0);
        debug_assert_eq!(after_hash, hash(&after), "an updated hash is the hash of the position after");
        self.hashes.push(after_hash);
        self.plies.push(Ply {
            mv: PlyMove::Legal(m),
            san: Notation::San(san),
            mover,
            after,
            status: MoveStatus::Made,
            made_at: at,
            completed_at: None,
            pressed_at: None,
            clock_ms: None,
            inferred,
            order_uncertain: false,
            entered: false,
        });
        self.plies.last().expect("just pushed")
    }

    /// Records an illegal move that stands, leading to `after`.
    pub(crate) fn push_illegal(&mut self, mv: IllegalMove, after: Chess, at: Timestamp) -> &Ply {
        let mover = self.position().turn();
        self.hashes.push(hash(&after));
        self.plies.push(Ply {
            mv: PlyMove::Illegal(mv),
            san: Notation::Illegal(mv),
            mover,
            after,
            status: MoveStatus::Made,
            made_at: at,
            completed_at: None,
            pressed_at: None,
            clock_ms: None,
            inferred: false,
            order_uncertain: false,
            entered: false,
        });
        self.plies.last().expect("just pushed")
    }

    /// Removes the last ply (a move taken back, or replaced).
    pub(crate) fn pop(&mut self) -> Option<Ply> {
        let ply = self.plies.pop()?;
        self.hashes.pop();
        Some(ply)
    }

    /// Marks the last ply completed at `at`, if it was only made. Returns
    /// whether it changed.
    pub fn complete_last(&mut self, at: Timestamp) -> bool {
        match self.plies.last_mut() {
            Some(ply) if ply.status == MoveStatus::Made => {
                ply.status = MoveStatus::Completed;
                ply.completed_at = Some(at);
                true
            }
            _ => false,
        }
    }

    /// How many times the current position has stood on the board (9.2.2),
    /// counting only positions since the last capture or pawn move.
    pub(crate) fn repetitions(&self) -> usize {
        let current = *self.hashes.last().expect("the start position is always hashed");
        let window = (self.position().halfmoves() as usize + 1).min(self.hashes.len());
        self.hashes[self.hashes.len() - window..].iter().filter(|&&h| h == current).count()
    }

    /// The value of a tag, if set.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The move number and side for ply `index` (0-based), e.g. `(12,
    /// Black)` for 12...Nf6.
    pub(crate) fn move_number(&self, index: usize) -> (u32, Color) {
        let first = self.start.fullmoves().get();
        let offset = usize::from(self.start.turn() == Color::Black);
        let n = index + offset;
        (first + (n / 2) as u32, if n.is_multiple_of(2) { Color::White } else { Color::Black })
    }
}

impl Ply {
    /// The move in UCI (`e2e4`, `e7e8q`; castling as king to its target in
    /// standard chess, king takes rook in Chess960); `0000` for an illegal
    /// move the board could not pin down.
    pub fn uci(&self, mode: CastlingMode) -> String {
        match self.mv {
            PlyMove::Legal(m) => {
                // Written directly rather than through `fmt`: this runs for
                // every move published.
                let mut uci = String::with_capacity(5);
                UciMove::from_move(m, mode).append_to_string(&mut uci);
                uci
            }
            PlyMove::Illegal(IllegalMove { from: Some(from), to: Some(to), .. }) => format!("{from}{to}"),
            PlyMove::Illegal(_) => "0000".to_owned(),
        }
    }

    /// Whether this is an illegal move that stood.
    pub fn is_illegal(&self) -> bool {
        matches!(self.mv, PlyMove::Illegal(_))
    }
}

impl fmt::Display for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::San(san) => write!(f, "{san}"),
            Self::Illegal(IllegalMove { piece, from, to: Some(to), capture }) => {
                match (piece.role, from) {
                    (Role::Pawn, Some(from)) if *capture => write!(f, "{}", from.file().char())?,
                    (Role::Pawn, _) => {}
                    (role, _) => write!(f, "{}", role.upper_char())?,
                }
                if *capture {
                    f.write_str("x")?;
                }
                write!(f, "{to}")
            }
            Self::Illegal(_) => f.write_str("--"),
        }
    }
}

fn hash(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

#[cfg(test)]
mod tests {
    use shakmaty::{fen::Fen, san::San};

    use super::*;

    fn play(record: &mut GameRecord, sans: &str) {
        for san in sans.split_whitespace() {
            let m = san.parse::<San>().unwrap().to_move(record.position()).unwrap();
            record.push(m, Timestamp::ZERO, false);
            record.complete_last(Timestamp::ZERO);
        }
    }

    #[test]
    fn counts_repetitions_by_9_2_2() {
        let mut record = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
        assert_eq!(record.repetitions(), 1);
        play(&mut record, "Nf3 Nf6 Ng1 Ng8");
        assert_eq!(record.repetitions(), 2);
        play(&mut record, "Nf3 Nf6 Ng1 Ng8");
        assert_eq!(record.repetitions(), 3);
        play(&mut record, "e4");
        assert_eq!(record.repetitions(), 1);
    }

    #[test]
    fn en_passant_rights_make_positions_differ_only_when_a_capture_is_legal() {
        // After 1.e4 no black pawn can take en passant, so the position after
        // 1.e4 Nf6 2.Ng1?? is not distinguished by the e3 square.
        let mut record = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
        play(&mut record, "e4 Nc6 Nf3 Nb8 Ng1 Nc6 Nf3 Nb8 Ng1");
        assert_eq!(record.repetitions(), 3);
    }

    #[test]
    fn the_time_a_move_took_runs_from_press_to_press_or_else_from_move_to_move() {
        let mut record = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
        let at = Timestamp::from_millis;
        for (san, made_ms) in [("e4", 1_000), ("e5", 5_000), ("Nf3", 9_000)] {
            let m = san.parse::<San>().unwrap().to_move(record.position()).unwrap();
            record.push(m, at(made_ms), false);
        }
        // White pressed 0.4 s after 1.e4; Black's 1...e5 then took from
        // that press to Black's own press, 3.8 s later.
        record.plies[0].pressed_at = Some(at(1_400));
        record.plies[1].pressed_at = Some(at(5_200));
        assert_eq!(record.spent_ms(0), None, "when the clock was started is not seen");
        assert_eq!(record.spent_ms(1), Some(3_800));
        // 2.Nf3 made, its clock not pressed yet: from Black's press to the
        // move shown on the board.
        assert_eq!(record.spent_ms(2), Some(3_800));
        record.plies[1].pressed_at = None;
        assert_eq!(record.spent_ms(2), Some(4_000), "without presses, from move to move");
        assert_eq!(record.spent_ms(3), None);
    }

    #[test]
    fn numbers_moves_from_the_start_position() {
        let record = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
        assert_eq!(record.move_number(0), (1, Color::White));
        assert_eq!(record.move_number(3), (2, Color::Black));
        let fen: Fen = "4k3/8/8/8/8/8/8/R3K3 b Q - 0 40".parse().unwrap();
        let black_first = GameRecord::new(
            1,
            fen.into_position(CastlingMode::Standard).unwrap(),
            CastlingMode::Standard,
            true,
            Timestamp::ZERO,
        );
        assert_eq!(black_first.move_number(0), (40, Color::Black));
        assert_eq!(black_first.move_number(1), (41, Color::White));
    }

    #[test]
    fn writes_illegal_moves_as_a_scoresheet_would() {
        let pawn =
            IllegalMove { piece: Color::White.pawn(), from: Some(Square::E5), to: Some(Square::D6), capture: true };
        assert_eq!(Notation::Illegal(pawn).to_string(), "exd6");
        let king =
            IllegalMove { piece: Color::Black.king(), from: Some(Square::E8), to: Some(Square::E6), capture: false };
        assert_eq!(Notation::Illegal(king).to_string(), "Ke6");
        let lost = IllegalMove { piece: Color::Black.king(), from: None, to: None, capture: false };
        assert_eq!(Notation::Illegal(lost).to_string(), "--");
    }
}
