//! Reading games from PGN (and bare SAN lines) for the generator.

use std::{io, ops::ControlFlow};

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::{CastlingMode, Chess, KnownOutcome, Move, Outcome, Position, fen::Fen};

/// A game to turn into sensor events.
#[derive(Clone, Debug)]
pub struct SourceGame {
    /// The PGN tags.
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub start: Chess,
    /// Whether the game is Chess960.
    pub chess960: bool,
    /// The moves.
    pub moves: Vec<Move>,
    /// The result written in the PGN, if any.
    pub result: Option<KnownOutcome>,
}

impl SourceGame {
    /// The value of a tag.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// A PGN text that does not give playable games.
#[derive(Debug, thiserror::Error)]
pub enum ReadGamesError {
    /// The text could not be read.
    #[error("reading the PGN: {0}")]
    Io(#[from] io::Error),
    /// A move that is not legal in its game.
    #[error("game {game}: move {ply} ({san}) is not legal")]
    IllegalMove {
        /// The game (1-based).
        game: usize,
        /// The ply (1-based).
        ply: usize,
        /// The move as written.
        san: String,
    },
    /// A `FEN` tag that is not a position.
    #[error("game {game}: bad FEN tag {fen:?}")]
    BadFen {
        /// The game (1-based).
        game: usize,
        /// The tag's value.
        fen: String,
    },
}

/// Every game of a PGN text. Variations and comments are skipped.
///
/// # Errors
///
/// When a game has an illegal move or a bad `FEN` tag.
pub fn read_games(pgn: &str) -> Result<Vec<SourceGame>, ReadGamesError> {
    let mut reader = Reader::new(io::Cursor::new(pgn.as_bytes()));
    let mut games = Vec::new();
    while let Some(game) = reader.read_game(&mut Collect { game: games.len() + 1 })? {
        games.push(game?);
    }
    Ok(games)
}

/// Games written as one line of SAN moves each (no tags, no numbers).
///
/// # Errors
///
/// When a move is not legal.
pub fn read_san_lines(text: &str) -> Result<Vec<SourceGame>, ReadGamesError> {
    let mut games = Vec::new();
    for (index, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let mut pos = Chess::default();
        let mut moves = Vec::new();
        for (ply, token) in line.split_whitespace().enumerate() {
            let illegal = || ReadGamesError::IllegalMove { game: index + 1, ply: ply + 1, san: token.to_owned() };
            let san: SanPlus = token.parse().map_err(|_| illegal())?;
            let m = san.san.to_move(&pos).map_err(|_| illegal())?;
            pos.play_unchecked(m);
            moves.push(m);
        }
        games.push(SourceGame { tags: Vec::new(), start: Chess::default(), chess960: false, moves, result: None });
    }
    Ok(games)
}

struct Collect {
    game: usize,
}

struct Movetext {
    tags: Vec<(String, String)>,
    pos: Chess,
    start: Chess,
    chess960: bool,
    moves: Vec<Move>,
    result: Option<KnownOutcome>,
    error: Option<ReadGamesError>,
}

impl Visitor for Collect {
    type Tags = Vec<(String, String)>;
    type Movetext = Movetext;
    type Output = Result<SourceGame, ReadGamesError>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(Vec::new())
    }

    fn tag(&mut self, tags: &mut Self::Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<Self::Output> {
        tags.push((String::from_utf8_lossy(name).into_owned(), value.decode_utf8_lossy().into_owned()));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let get = |name: &str| tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let chess960 = get("Variant").is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("960") || v.contains("fischerandom") || v.contains("fischer random")
        });
        let mode = if chess960 { CastlingMode::Chess960 } else { CastlingMode::Standard };
        let start = match get("FEN") {
            None => Chess::default(),
            Some(fen) => match fen.parse::<Fen>().ok().and_then(|f| f.into_position(mode).ok()) {
                Some(pos) => pos,
                None => return ControlFlow::Break(Err(ReadGamesError::BadFen { game: self.game, fen })),
            },
        };
        ControlFlow::Continue(Movetext {
            tags,
            pos: start.clone(),
            start,
            chess960,
            moves: Vec::new(),
            result: None,
            error: None,
        })
    }

    fn san(&mut self, movetext: &mut Self::Movetext, san: SanPlus) -> ControlFlow<Self::Output> {
        if movetext.error.is_some() {
            return ControlFlow::Continue(());
        }
        match san.san.to_move(&movetext.pos) {
            Ok(m) => {
                movetext.pos.play_unchecked(m);
                movetext.moves.push(m);
            }
            Err(_) => {
                movetext.error = Some(ReadGamesError::IllegalMove {
                    game: self.game,
                    ply: movetext.moves.len() + 1,
                    san: san.to_string(),
                })
            }
        }
        ControlFlow::Continue(())
    }

    fn begin_variation(&mut self, _movetext: &mut Self::Movetext) -> ControlFlow<Self::Output, pgn_reader::Skip> {
        ControlFlow::Continue(pgn_reader::Skip(true))
    }

    fn outcome(&mut self, movetext: &mut Self::Movetext, outcome: Outcome) -> ControlFlow<Self::Output> {
        movetext.result = outcome.known();
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, movetext: Self::Movetext) -> Self::Output {
        if let Some(error) = movetext.error {
            return Err(error);
        }
        Ok(SourceGame {
            tags: movetext.tags,
            start: movetext.start,
            chess960: movetext.chess960,
            moves: movetext.moves,
            result: movetext.result,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_moves_results_and_chess960() {
        let games = read_games(
            "[White \"A\"]\n[Result \"1-0\"]\n\n1. e4 {c} e5 (1... c5) 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n\
             [Variant \"Fischerandom\"]\n[FEN \"rbnnqkbr/pppppppp/8/8/8/8/PPPPPPPP/RBNNQKBR w HAha - 0 1\"]\n\n1. d4 d5 2. f3 f6 3. Nd3 c6 *\n",
        )
        .unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].tag("White"), Some("A"));
        assert_eq!(games[0].moves.len(), 7);
        assert_eq!(games[0].result, Some(KnownOutcome::Decisive { winner: shakmaty::Color::White }));
        assert!(games[1].chess960);
        assert_eq!(games[1].moves.len(), 6);
        assert_eq!(games[1].result, None);
        let bad = read_games("1. e4 e4 *").unwrap_err();
        assert_eq!(bad.to_string(), "game 1: move 2 (e4) is not legal");
    }
}
