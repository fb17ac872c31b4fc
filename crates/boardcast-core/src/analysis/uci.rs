//! The Universal Chess Interface, as lines of text: what the daemon says to
//! an engine ([`Command`]) and what it makes of the engine's answers
//! ([`EngineLine`], [`Search`]). No process, no pipe: the shell writes the
//! lines and hands back the ones it reads, so a whole conversation runs in
//! a unit test.
//!
//! Only what analysis for spectators needs is understood: the engine's
//! name, the handshake (`uciok`, `readyok`), `info` lines with a score and
//! a principal variation, and `bestmove`. Everything else an engine says
//! (`option`, `info string`, `currmove` progress) is [`EngineLine::Other`]:
//! engines differ in what they chatter, and none of it is an error.

use std::fmt;

use shakmaty::{CastlingMode, Chess, Color, Position, fen::Fen, san::SanPlus, uci::UciMove};

/// A line for the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `uci`: the engine introduces itself and ends with `uciok`.
    Uci,
    /// `setoption name … value …`.
    SetOption {
        /// The option's name (`Threads`, `Hash`).
        name: String,
        /// Its value.
        value: String,
    },
    /// `ucinewgame`: forget what the last positions taught the hash table.
    NewGame,
    /// `isready`: answered by `readyok` once the engine has done what it
    /// was told.
    IsReady,
    /// `position fen …`.
    Position {
        /// The position (the move history is not needed for an evaluation
        /// of the position itself).
        fen: String,
    },
    /// `go movetime …` or `go nodes …`.
    Go(Budget),
    /// `stop`: answer with the best move found so far.
    Stop,
    /// `quit`.
    Quit,
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Uci => f.write_str("uci"),
            Self::SetOption { name, value } => write!(f, "setoption name {name} value {value}"),
            Self::NewGame => f.write_str("ucinewgame"),
            Self::IsReady => f.write_str("isready"),
            Self::Position { fen } => write!(f, "position fen {fen}"),
            Self::Go(Budget::MoveTime { ms }) => write!(f, "go movetime {ms}"),
            Self::Go(Budget::Nodes { nodes }) => write!(f, "go nodes {nodes}"),
            Self::Stop => f.write_str("stop"),
            Self::Quit => f.write_str("quit"),
        }
    }
}

/// How long an engine thinks about one position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// This many milliseconds.
    MoveTime {
        /// Milliseconds.
        ms: u64,
    },
    /// This many nodes (the same depth of analysis on a slow machine and a
    /// fast one, in different times).
    Nodes {
        /// Nodes searched.
        nodes: u64,
    },
}

/// A score from the point of view the engine gives it in; published as
/// `{"cp": n}` or `{"mate": n}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Score {
    /// Centipawns.
    Cp(i32),
    /// Mate in this many moves (negative: being mated).
    Mate(i32),
}

impl Score {
    /// The score seen from White's side, from one seen from the side to
    /// move (UCI's convention).
    pub fn for_white(self, to_move: Color) -> Self {
        match (self, to_move) {
            (score, Color::White) => score,
            (Self::Cp(cp), Color::Black) => Self::Cp(-cp),
            (Self::Mate(n), Color::Black) => Self::Mate(-n),
        }
    }
}

/// The fields of an `info` line that analysis uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// `depth`.
    pub depth: Option<u32>,
    /// `multipv` (1 when absent).
    pub multipv: Option<u32>,
    /// `score cp …` or `score mate …`, from the side to move.
    pub score: Option<Score>,
    /// The score is only a bound (`lowerbound`, `upperbound`): the search
    /// was interrupted in the middle of an iteration.
    pub bound: bool,
    /// `nodes`.
    pub nodes: Option<u64>,
    /// `pv`: the moves in UCI.
    pub pv: Vec<String>,
}

/// A line from the engine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineLine {
    /// `id name …`.
    Name(String),
    /// `uciok`.
    UciOk,
    /// `readyok`.
    ReadyOk,
    /// `info …`.
    Info(Info),
    /// `bestmove …` (`None` for `bestmove (none)`: no legal move).
    BestMove(Option<String>),
    /// Anything else (options, `info string`, authors, blank lines).
    Other,
}

/// What went wrong reading an engine's line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UciError {
    /// A field that must be followed by a number was not.
    #[error("the engine said {line:?}: `{field}` is followed by {found:?}, not a number")]
    NotANumber {
        /// The whole line.
        line: String,
        /// The field (`depth`, `cp`…).
        field: &'static str,
        /// What followed it.
        found: String,
    },
    /// `score` followed by neither `cp` nor `mate`.
    #[error("the engine said {line:?}: `score` is followed by {found:?}, not `cp` or `mate`")]
    BadScore {
        /// The whole line.
        line: String,
        /// What followed `score`.
        found: String,
    },
    /// The search ended without a score (an engine that never said `info
    /// … score`).
    #[error("the engine's search ended with bestmove but no score: is it a UCI chess engine?")]
    NoScore,
    /// A position that cannot be searched.
    #[error("the position {fen:?} cannot be analysed: {why}")]
    BadPosition {
        /// The position.
        fen: String,
        /// Why not.
        why: String,
    },
}

impl EngineLine {
    /// Reads one line the engine printed.
    pub fn parse(line: &str) -> Result<Self, UciError> {
        let mut words = line.split_whitespace();
        Ok(match words.next() {
            Some("id") if words.next() == Some("name") => Self::Name(words.collect::<Vec<_>>().join(" ")),
            Some("uciok") => Self::UciOk,
            Some("readyok") => Self::ReadyOk,
            Some("bestmove") => Self::BestMove(words.next().filter(|m| *m != "(none)").map(str::to_owned)),
            Some("info") => match parse_info(line, words)? {
                Some(info) => Self::Info(info),
                None => Self::Other,
            },
            _ => Self::Other,
        })
    }
}

/// The fields of an `info` line after `info`; `None` for `info string`.
fn parse_info<'a>(line: &str, mut words: impl Iterator<Item = &'a str>) -> Result<Option<Info>, UciError> {
    let mut info = Info::default();
    while let Some(word) = words.next() {
        match word {
            "string" => return Ok(None),
            "depth" => info.depth = Some(number(line, "depth", words.next())?),
            "multipv" => info.multipv = Some(number(line, "multipv", words.next())?),
            "nodes" => info.nodes = Some(number(line, "nodes", words.next())?),
            "score" => match words.next() {
                Some("cp") => info.score = Some(Score::Cp(number(line, "cp", words.next())?)),
                Some("mate") => info.score = Some(Score::Mate(number(line, "mate", words.next())?)),
                other => {
                    return Err(UciError::BadScore { line: line.to_owned(), found: other.unwrap_or("").to_owned() });
                }
            },
            "lowerbound" | "upperbound" => info.bound = true,
            // The rest of the line is the variation.
            "pv" => {
                info.pv = words.by_ref().map(str::to_owned).collect();
            }
            _ => {}
        }
    }
    Ok(Some(info))
}

fn number<T: std::str::FromStr>(line: &str, field: &'static str, word: Option<&str>) -> Result<T, UciError> {
    let word = word.unwrap_or("");
    word.parse().map_err(|_| UciError::NotANumber { line: line.to_owned(), field, found: word.to_owned() })
}

/// What an engine concluded about a position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// The score from White's side.
    pub score: Score,
    /// The depth of the last complete iteration.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
    /// The principal variation in SAN (as far as its moves are legal).
    pub pv: Vec<String>,
    /// The first move of the variation in UCI (the engine's best move).
    pub best_uci: Option<String>,
}

/// One search of one position: the engine's `info` lines in, the
/// [`Evaluation`] out once `bestmove` comes.
#[derive(Clone, Debug)]
pub struct Search {
    position: Chess,
    last: Option<Info>,
}

impl Search {
    /// A search of the position `fen`; an error says what is wrong with it.
    pub fn new(fen: &str) -> Result<Self, UciError> {
        let bad = |why: String| UciError::BadPosition { fen: fen.to_owned(), why };
        let parsed: Fen = fen.parse().map_err(|e: shakmaty::fen::ParseFenError| bad(e.to_string()))?;
        // A set-up position with more material than a game can reach is
        // still a position an engine searches: take it as it is.
        let position = parsed
            .into_position::<Chess>(CastlingMode::Standard)
            .or_else(shakmaty::PositionError::ignore_too_much_material)
            .or_else(shakmaty::PositionError::ignore_impossible_check)
            .map_err(|e| bad(e.to_string()))?;
        Ok(Self { position, last: None })
    }

    /// One line of the engine's; `Some` when the search is over (the line
    /// was `bestmove`).
    pub fn handle_line(&mut self, line: &EngineLine) -> Option<Result<Evaluation, UciError>> {
        match line {
            EngineLine::Info(info) => {
                // Only the main line, and only complete iterations: a bound
                // is the engine's guess in the middle of one.
                if info.multipv.unwrap_or(1) == 1 && info.score.is_some() && !info.bound {
                    let nodes = info.nodes.or(self.last.as_ref().and_then(|l| l.nodes));
                    self.last = Some(Info { nodes, ..info.clone() });
                } else if let (Some(last), Some(nodes)) = (self.last.as_mut(), info.nodes) {
                    last.nodes = Some(nodes);
                }
                None
            }
            EngineLine::BestMove(best) => Some(self.finish(best.as_deref())),
            _ => None,
        }
    }

    fn finish(&self, best: Option<&str>) -> Result<Evaluation, UciError> {
        let last = self.last.as_ref().ok_or(UciError::NoScore)?;
        let score = last.score.ok_or(UciError::NoScore)?.for_white(self.position.turn());
        let mut pv = last.pv.clone();
        // The engine's last word is its best move; a variation that starts
        // elsewhere (an iteration cut short) is not the one it chose.
        if let Some(best) = best
            && pv.first().map(String::as_str) != Some(best)
        {
            pv = vec![best.to_owned()];
        }
        let san = to_san(&self.position, &pv);
        let best_uci = pv.first().filter(|_| !san.is_empty()).cloned();
        Ok(Evaluation { score, depth: last.depth.unwrap_or(0), nodes: last.nodes.unwrap_or(0), pv: san, best_uci })
    }
}

/// A variation in UCI as SAN from `position`, as far as its moves are legal
/// there (an engine's variation is legal; a garbled one is cut, not
/// trusted).
pub fn to_san(position: &Chess, uci: &[String]) -> Vec<String> {
    let mut position = position.clone();
    let mut out = Vec::with_capacity(uci.len());
    for text in uci {
        let Ok(parsed) = text.parse::<UciMove>() else { break };
        let Ok(m) = parsed.to_move(&position) else { break };
        out.push(SanPlus::from_move_and_play_unchecked(&mut position, m).to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    /// After 1. e4: Black to move.
    const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

    fn lines(search: &mut Search, text: &str) -> Option<Result<Evaluation, UciError>> {
        text.lines().find_map(|l| search.handle_line(&EngineLine::parse(l).unwrap()))
    }

    #[test]
    fn commands_are_written_as_engines_expect() {
        assert_eq!(Command::Uci.to_string(), "uci");
        assert_eq!(
            Command::SetOption { name: "Hash".into(), value: "64".into() }.to_string(),
            "setoption name Hash value 64"
        );
        assert_eq!(Command::Position { fen: START.into() }.to_string(), format!("position fen {START}"));
        assert_eq!(Command::Go(Budget::MoveTime { ms: 1000 }).to_string(), "go movetime 1000");
        assert_eq!(Command::Go(Budget::Nodes { nodes: 1_000_000 }).to_string(), "go nodes 1000000");
        assert_eq!(Command::IsReady.to_string(), "isready");
        assert_eq!(Command::NewGame.to_string(), "ucinewgame");
        assert_eq!(Command::Stop.to_string(), "stop");
        assert_eq!(Command::Quit.to_string(), "quit");
    }

    #[test]
    fn the_handshake_is_understood_and_chatter_is_not_an_error() {
        assert_eq!(EngineLine::parse("id name Stockfish 16.1").unwrap(), EngineLine::Name("Stockfish 16.1".into()));
        assert_eq!(EngineLine::parse("id author the Stockfish developers").unwrap(), EngineLine::Other);
        assert_eq!(EngineLine::parse("uciok").unwrap(), EngineLine::UciOk);
        assert_eq!(EngineLine::parse("readyok").unwrap(), EngineLine::ReadyOk);
        assert_eq!(
            EngineLine::parse("option name Hash type spin default 16 min 1 max 33554432").unwrap(),
            EngineLine::Other
        );
        assert_eq!(EngineLine::parse("info string NNUE evaluation using nn.nnue enabled").unwrap(), EngineLine::Other);
        assert_eq!(EngineLine::parse("").unwrap(), EngineLine::Other);
        assert_eq!(EngineLine::parse("bestmove e2e4 ponder e7e5").unwrap(), EngineLine::BestMove(Some("e2e4".into())));
        assert_eq!(EngineLine::parse("bestmove (none)").unwrap(), EngineLine::BestMove(None));
    }

    #[test]
    fn an_info_line_gives_its_fields() {
        let line = "info depth 20 seldepth 28 multipv 1 score cp -35 upperbound nodes 1234567 nps 900000 hashfull 300 tbhits 0 time 1371 pv e7e5 g1f3 b8c6";
        let EngineLine::Info(info) = EngineLine::parse(line).unwrap() else { panic!("an info line") };
        assert_eq!(info.depth, Some(20));
        assert_eq!(info.multipv, Some(1));
        assert_eq!(info.score, Some(Score::Cp(-35)));
        assert!(info.bound);
        assert_eq!(info.nodes, Some(1_234_567));
        assert_eq!(info.pv, ["e7e5", "g1f3", "b8c6"]);
        let EngineLine::Info(mate) = EngineLine::parse("info depth 5 score mate -2 pv h7h8").unwrap() else {
            panic!("an info line")
        };
        assert_eq!(mate.score, Some(Score::Mate(-2)));
        assert!(!mate.bound);
    }

    #[test]
    fn malformed_numbers_and_scores_say_what_they_are() {
        let err = EngineLine::parse("info depth x").unwrap_err();
        assert!(err.to_string().contains("`depth` is followed by \"x\""), "{err}");
        let err = EngineLine::parse("info score wdl 10 20 970").unwrap_err();
        assert!(matches!(err, UciError::BadScore { ref found, .. } if found == "wdl"), "{err}");
        assert!(matches!(EngineLine::parse("info score cp").unwrap_err(), UciError::NotANumber { field: "cp", .. }));
    }

    #[test]
    fn scores_are_turned_to_whites_side() {
        assert_eq!(Score::Cp(30).for_white(Color::White), Score::Cp(30));
        assert_eq!(Score::Cp(30).for_white(Color::Black), Score::Cp(-30));
        assert_eq!(Score::Mate(3).for_white(Color::Black), Score::Mate(-3));
        assert_eq!(Score::Mate(-1).for_white(Color::White), Score::Mate(-1));
    }

    #[test]
    fn a_search_ends_with_the_last_complete_iteration_in_san_from_whites_side() {
        let mut search = Search::new(E4).unwrap();
        let out = lines(
            &mut search,
            "info depth 1 seldepth 1 multipv 1 score cp -20 nodes 20 pv e7e5\n\
             info depth 12 seldepth 15 multipv 1 score cp -31 nodes 90000 pv e7e5 g1f3 b8c6 f1b5\n\
             info depth 13 currmove d7d5 currmovenumber 2\n\
             info depth 13 seldepth 16 multipv 1 score cp -10 lowerbound nodes 120000 pv c7c5\n\
             info depth 13 seldepth 16 multipv 2 score cp -50 nodes 121000 pv d7d5\n\
             info nodes 130000 time 1000\n\
             bestmove e7e5 ponder g1f3",
        )
        .expect("bestmove ends the search")
        .unwrap();
        // Black to move and -31 for Black's opponent... the engine's -31 is
        // Black's view: White stands 31 better.
        assert_eq!(out.score, Score::Cp(31));
        assert_eq!(out.depth, 12);
        assert_eq!(out.nodes, 130_000, "the last count of nodes");
        assert_eq!(out.pv, ["e5", "Nf3", "Nc6", "Bb5"]);
        assert_eq!(out.best_uci.as_deref(), Some("e7e5"));
    }

    #[test]
    fn a_best_move_outside_the_variation_replaces_it() {
        let mut search = Search::new(START).unwrap();
        let out =
            lines(&mut search, "info depth 10 score cp 25 nodes 5000 pv d2d4 d7d5\nbestmove e2e4").unwrap().unwrap();
        assert_eq!(out.pv, ["e4"]);
        assert_eq!(out.best_uci.as_deref(), Some("e2e4"));
    }

    #[test]
    fn mates_castling_and_promotions_read_in_san() {
        // White mates in one: Qh5xf7.
        let fen = "r1bqkbnr/pppp1ppp/2n5/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4";
        let mut search = Search::new(fen).unwrap();
        let out = lines(&mut search, "info depth 3 score mate 1 nodes 300 pv h5f7\nbestmove h5f7").unwrap().unwrap();
        assert_eq!(out.score, Score::Mate(1));
        assert_eq!(out.pv, ["Qxf7#"]);
        let castle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(to_san(&Search::new(castle).unwrap().position, &["e1g1".into(), "e8c8".into()]), ["O-O", "O-O-O"]);
        let promote = "8/P6k/8/8/8/8/8/K7 w - - 0 1";
        assert_eq!(to_san(&Search::new(promote).unwrap().position, &["a7a8q".into()]), ["a8=Q"]);
    }

    #[test]
    fn a_garbled_variation_is_cut_where_it_stops_being_legal() {
        let position = Search::new(START).unwrap().position;
        let pv: Vec<String> = ["e2e4", "e7e5", "e4e5", "zz"].map(String::from).into();
        assert_eq!(to_san(&position, &pv), ["e4", "e5"]);
        let mut search = Search::new(START).unwrap();
        let out = lines(&mut search, "info depth 2 score cp 10 pv e2e5\nbestmove e2e5").unwrap().unwrap();
        assert!(out.pv.is_empty());
        assert_eq!(out.best_uci, None, "no best move where the engine's makes no sense");
    }

    #[test]
    fn a_search_without_a_score_is_an_error_and_a_bad_fen_is_refused() {
        let mut search = Search::new(START).unwrap();
        assert_eq!(lines(&mut search, "info string hello\nbestmove e2e4"), Some(Err(UciError::NoScore)));
        assert!(Search::new("not a fen").is_err());
    }
}
