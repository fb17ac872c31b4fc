//! The records LiveChess's clients read, with LiveChess's keys and no
//! others: clients map them straight onto fixed types (a Python client's
//! dataclasses fail on a key they do not know, and on one missing). Every
//! key is always sent; a value LiveChess may leave out is `null`.
//!
//! Where the keys come from (docs/livechess.md, "Shapes"): the dataclasses
//! of the `livechess` operator helper on PyPI, the record types and
//! recorded messages of a Go client library, and the LiveChess Cloud
//! readers of broadcast sites.

// The fields are LiveChess's keys, each described in docs/livechess.md.
#![allow(missing_docs)]

use serde::Serialize;
use shakmaty::{CastlingMode, Chess, Color, EnPassantMode, Position, fen::Fen};

use shakmaty::KnownOutcome;

use crate::game::{GameRecord, Termination};

/// `/api/v1.0/tournaments`: one tournament.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct TournamentSummary {
    pub(crate) uuid: String,
    pub(crate) description: String,
    pub(crate) rounds: u32,
}

/// `/api/v1.0/tournament/{uuid}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tournament {
    pub(crate) uuid: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) location: Option<String>,
    pub(crate) country: Option<String>,
    pub(crate) rounds: u32,
    /// Board *n* of a round is `eboards[n-1]`.
    pub(crate) eboards: Vec<String>,
}

/// An e-board's state, as LiveChess names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum State {
    /// The board is read.
    Active,
    /// The board is not read (its port is closed, or was never opened).
    Inactive,
}

/// `/api/v1.0/eboards`: one e-board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct EBoard {
    pub(crate) serialnr: String,
    /// The port's name (`ttyACM0`).
    pub(crate) source: Option<String>,
    pub(crate) state: Option<State>,
    /// `"84%"` for a board that reports its battery.
    pub(crate) battery: Option<String>,
    pub(crate) comment: Option<String>,
    /// The FEN piece placement the board shows.
    pub board: Option<String>,
    pub(crate) flipped: bool,
    pub(crate) clock: Option<Clock>,
}

/// A clock reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Clock {
    /// White's seconds left.
    pub(crate) white: u64,
    /// Black's seconds left.
    pub(crate) black: u64,
    /// `true` while White's clock runs, `false` while Black's, `null` when
    /// stopped.
    pub(crate) run: Option<bool>,
    /// When the reading was taken, ms since 1970.
    pub(crate) time: i64,
}

/// A player.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Player {
    pub(crate) fname: Option<String>,
    pub(crate) mname: Option<String>,
    pub(crate) lname: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) federation: Option<String>,
    pub(crate) gender: Option<String>,
    pub(crate) fideid: Option<String>,
}

impl Player {
    /// The player of `color` from a game's PGN tags (`White "Carlsen,
    /// Magnus"`, `WhiteTitle`, `WhiteFed`, `WhiteFideId`).
    pub(crate) fn from_tags(tags: &[(String, String)], color: Color) -> Self {
        let side = if color == Color::White { "White" } else { "Black" };
        let tag = |suffix: &str| {
            let name = format!("{side}{suffix}");
            tags.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.trim().to_owned())
                .filter(|v| !v.is_empty() && v != "?" && v != "-")
        };
        let (fname, lname) = match tag("") {
            // "Lastname, Firstname", as the PGN standard and pairing
            // programs write it.
            Some(name) => match name.split_once(',') {
                Some((last, first)) => {
                    (Some(first.trim().to_owned()).filter(|f| !f.is_empty()), Some(last.trim().to_owned()))
                }
                None => (None, Some(name)),
            },
            None => (None, None),
        };
        Self {
            fname,
            mname: None,
            lname,
            title: tag("Title"),
            federation: tag("Fed"),
            gender: None,
            fideid: tag("FideId"),
        }
    }
}

/// A game's result as LiveChess says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub(crate) enum ResultValue {
    /// 1-0.
    Whitewin,
    /// 0-1.
    Blackwin,
    /// ½-½.
    Draw,
    /// 1-0, Black forfeited.
    Whiteforfait,
    /// 0-1, White forfeited.
    Blackforfait,
}

impl ResultValue {
    /// The result of `game`, if it has one.
    pub(crate) fn of(game: &GameRecord) -> Option<Self> {
        let result = game.result?;
        let forfeit = result.termination == Termination::Forfeit;
        Some(match (result.outcome, forfeit) {
            (KnownOutcome::Decisive { winner: Color::White }, false) => Self::Whitewin,
            (KnownOutcome::Decisive { winner: Color::Black }, false) => Self::Blackwin,
            (KnownOutcome::Decisive { winner: Color::White }, true) => Self::Whiteforfait,
            (KnownOutcome::Decisive { winner: Color::Black }, true) => Self::Blackforfait,
            (KnownOutcome::Draw, _) => Self::Draw,
        })
    }

    /// The PGN result (`1-0`, `0-1`, `1/2-1/2`).
    pub(crate) const fn pgn(self) -> &'static str {
        match self {
            Self::Whitewin | Self::Whiteforfait => "1-0",
            Self::Blackwin | Self::Blackforfait => "0-1",
            Self::Draw => "1/2-1/2",
        }
    }
}

/// `/api/v1.0/round/{uuid}/{n}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Round {
    pub(crate) nr: u32,
    pub(crate) date: Option<String>,
    pub(crate) pairings: Vec<Pairing>,
}

/// A round's pairing: board `nr`'s game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Pairing {
    pub(crate) nr: u32,
    pub(crate) uuid: String,
    pub(crate) white: Player,
    pub(crate) black: Player,
    pub(crate) live: bool,
    pub(crate) result: Option<ResultValue>,
}

/// `/api/v1.0/game/{uuid}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Game {
    /// The start position's number; 518 for the standard position.
    pub(crate) chess960: u32,
    pub(crate) result: Option<ResultValue>,
    pub(crate) comment: Option<String>,
    pub(crate) clock: Option<Clock>,
    /// `"<SAN> <seconds left>"`.
    pub(crate) moves: Vec<String>,
}

/// A move as LiveChess writes it: the SAN and the mover's seconds left
/// after it, one space between.
pub(crate) fn move_string(san: &str, clock_ms: u64) -> String {
    format!("{san} {}", clock_ms / 1000)
}

/// The moves of `game` as LiveChess writes them: every ply, made ones
/// too (the API is live).
///
/// Every move has a time, as LiveChess's own have: its clients read the
/// last move as `"<SAN> <seconds>"` and fail on one without (the PyPI
/// helper's `tournament`), and take a move without a time for one
/// LiveChess guessed wrongly. A move the mover did not press the clock
/// for (the last before a result gesture, one filled in afterwards) gets
/// the mover's time from `clock` (the board's reading now, `(white_ms,
/// black_ms)`) when it is the last move, else the mover's time after their
/// previous move; a board without a clock gives 0.
pub(crate) fn moves(game: &GameRecord, clock: Option<(u64, u64)>) -> Vec<String> {
    let plies = &game.plies;
    let mut last_known: [Option<u64>; 2] = [None, None];
    plies
        .iter()
        .enumerate()
        .map(|(i, ply)| {
            let side = usize::from(ply.mover == Color::Black);
            let now = clock.map(|(white, black)| if side == 0 { white } else { black });
            let ms =
                ply.clock_ms.or(if i + 1 == plies.len() { now.or(last_known[side]) } else { last_known[side].or(now) });
            if ply.clock_ms.is_some() {
                last_known[side] = ply.clock_ms;
            }
            move_string(&ply.san.to_string(), ms.unwrap_or(0))
        })
        .collect()
}

/// The SAN of every ply of `game`.
pub(crate) fn san_list(game: &GameRecord) -> Vec<String> {
    game.plies.iter().map(|ply| ply.san.to_string()).collect()
}

/// The FEN `game` starts from.
pub(crate) fn start_fen(game: &GameRecord) -> String {
    Fen::from_position(&game.start, EnPassantMode::Legal).to_string()
}

/// The start position's Chess960 number (Scharnagl's numbering), 518 for
/// the standard position and for any position that is not a Chess960
/// start.
pub(crate) fn chess960_number(start: &Chess, mode: CastlingMode) -> u32 {
    const STANDARD: u32 = 518;
    if mode == CastlingMode::Standard {
        return STANDARD;
    }
    let board = start.board();
    let mut rank = [None; 8];
    for (file, cell) in rank.iter_mut().enumerate() {
        let square = shakmaty::Square::from_coords(shakmaty::File::new(file as u32), shakmaty::Rank::First);
        *cell = board.piece_at(square).filter(|p| p.color == Color::White).map(|p| p.role);
    }
    use shakmaty::Role::{Bishop, King, Knight, Queen, Rook};
    if rank.iter().any(Option::is_none) {
        return STANDARD;
    }
    let role = |f: usize| rank[f].expect("checked");
    let files = |r: shakmaty::Role| (0..8).filter(move |f| role(*f) == r);
    let bishops: Vec<usize> = files(Bishop).collect();
    let (light, dark) = match bishops.as_slice() {
        [a, b] if a % 2 != b % 2 => {
            if a % 2 == 1 {
                (*a, *b)
            } else {
                (*b, *a)
            }
        }
        _ => return STANDARD,
    };
    let rest: Vec<usize> = (0..8).filter(|f| *f != light && *f != dark).collect();
    let Some(queen) = rest.iter().position(|f| role(*f) == Queen) else { return STANDARD };
    let rest: Vec<usize> = rest.into_iter().filter(|f| role(*f) != Queen).collect();
    let knights: Vec<usize> = rest.iter().enumerate().filter(|(_, f)| role(**f) == Knight).map(|(i, _)| i).collect();
    const PAIRS: [(usize, usize); 10] =
        [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)];
    let Some(n5n) = PAIRS.iter().position(|p| knights.as_slice() == [p.0, p.1]) else { return STANDARD };
    let others: Vec<shakmaty::Role> = rest.iter().map(|f| role(*f)).filter(|r| *r != Knight).collect();
    if others != [Rook, King, Rook] {
        return STANDARD;
    }
    (((n5n * 6 + queen) * 4 + dark / 2) * 4 + (light - 1) / 2) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn keys(value: &Value) -> Vec<&str> {
        value.as_object().unwrap().keys().map(String::as_str).collect()
    }

    /// The keys of each record, in the order LiveChess's clients list
    /// them (the PyPI `livechess` helper's dataclasses, a Go client's
    /// struct tags): no more, no fewer.
    #[test]
    fn records_have_livechess_keys_exactly() {
        let clock = Clock { white: 5676, black: 7190, run: Some(true), time: 1_503_845_105_357 };
        assert_eq!(keys(&json!(clock)), ["white", "black", "run", "time"]);
        let board = EBoard {
            serialnr: "7425".into(),
            source: Some("ttyACM0".into()),
            state: Some(State::Active),
            battery: None,
            comment: None,
            board: Some("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR".into()),
            flipped: false,
            clock: Some(clock),
        };
        let value = json!(board);
        assert_eq!(keys(&value), ["serialnr", "source", "state", "battery", "comment", "board", "flipped", "clock"]);
        assert_eq!(value["state"], "ACTIVE");
        assert_eq!(json!(State::Inactive), "INACTIVE");
        assert_eq!(
            keys(&json!(Player::default())),
            ["fname", "mname", "lname", "title", "federation", "gender", "fideid"]
        );
        let t = Tournament {
            uuid: "u".into(),
            name: "n".into(),
            description: "d".into(),
            location: None,
            country: None,
            rounds: 1,
            eboards: vec![],
        };
        assert_eq!(keys(&json!(t)), ["uuid", "name", "description", "location", "country", "rounds", "eboards"]);
        let s = TournamentSummary { uuid: "u".into(), description: "d".into(), rounds: 1 };
        assert_eq!(keys(&json!(s)), ["uuid", "description", "rounds"]);
        let p = Pairing {
            nr: 1,
            uuid: "u".into(),
            white: Player::default(),
            black: Player::default(),
            live: true,
            result: Some(ResultValue::Whiteforfait),
        };
        assert_eq!(keys(&json!(p)), ["nr", "uuid", "white", "black", "live", "result"]);
        assert_eq!(json!(p)["result"], "WHITEFORFAIT");
        let r = Round { nr: 1, date: None, pairings: vec![p] };
        assert_eq!(keys(&json!(r)), ["nr", "date", "pairings"]);
        let g = Game { chess960: 518, result: None, comment: None, clock: None, moves: vec!["e4 5436".into()] };
        assert_eq!(keys(&json!(g)), ["chess960", "result", "comment", "clock", "moves"]);
        for (value, text) in [
            (ResultValue::Whitewin, "WHITEWIN"),
            (ResultValue::Blackwin, "BLACKWIN"),
            (ResultValue::Draw, "DRAW"),
            (ResultValue::Blackforfait, "BLACKFORFAIT"),
        ] {
            assert_eq!(json!(value), text);
        }
    }

    #[test]
    fn players_come_from_the_pgn_tags() {
        let tags: Vec<(String, String)> = [
            ("White", "Muzychuk, Anna"),
            ("WhiteTitle", "GM"),
            ("WhiteFed", "SLO"),
            ("WhiteFideId", "14111330"),
            ("Black", "Hou Yifan"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        let white = Player::from_tags(&tags, Color::White);
        assert_eq!(white.fname.as_deref(), Some("Anna"));
        assert_eq!(white.lname.as_deref(), Some("Muzychuk"));
        assert_eq!(white.title.as_deref(), Some("GM"));
        assert_eq!(white.federation.as_deref(), Some("SLO"));
        assert_eq!(white.fideid.as_deref(), Some("14111330"));
        let black = Player::from_tags(&tags, Color::Black);
        assert_eq!((black.fname, black.lname.as_deref(), black.title), (None, Some("Hou Yifan"), None));
        assert_eq!(Player::from_tags(&[("White".into(), "?".into())], Color::White), Player::default());
    }

    #[test]
    fn moves_are_san_and_seconds_left() {
        assert_eq!(move_string("e4", 5_436_900), "e4 5436");
    }

    #[test]
    fn chess960_numbers_follow_scharnagl() {
        use shakmaty::{FromSetup, fen::Fen};
        let position = |fen: &str| {
            let setup = fen.parse::<Fen>().unwrap().into_setup();
            Chess::from_setup(setup, CastlingMode::Chess960).unwrap()
        };
        let standard = position("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        assert_eq!(chess960_number(&standard, CastlingMode::Chess960), 518);
        assert_eq!(chess960_number(&standard, CastlingMode::Standard), 518);
        // Position 0 is BBQNNRKR; 959 is RKRNNQBB.
        assert_eq!(
            chess960_number(
                &position("bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1"),
                CastlingMode::Chess960
            ),
            0
        );
        assert_eq!(
            chess960_number(
                &position("rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w CAca - 0 1"),
                CastlingMode::Chess960
            ),
            959
        );
    }
}
