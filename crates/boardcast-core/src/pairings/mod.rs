//! A round's pairings read from what pairing programs export: board →
//! White and Black, with their ratings, FIDE ids, titles and federations,
//! turned into the PGN tags of the board's games.
//!
//! Two formats are read (docs/delivery.md, "Pairings"):
//! - the FIDE Tournament Report File, TRF16 (`trf.rs`), which Swiss-Manager,
//!   Vega, JaVaFo front ends and others write; it holds every round, and the
//!   boards of a round are numbered as pairing programs number them;
//! - a simple CSV with a header (`csv.rs`), which gives the boards
//!   explicitly, for whatever else a hall uses.
//!
//! Parsing is pure: the text in, pairings or an error naming the line and
//! the field out. Reading the file is the caller's business.

mod csv;
mod trf;

use std::collections::BTreeMap;

pub(crate) use trf::Tournament;

/// One player of a pairing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Player {
    /// The name as the file writes it (`Lastname, Firstname` in TRF16).
    pub name: String,
    /// The FIDE title (`GM`, `IM`, `WGM`, …), if any.
    pub title: Option<String>,
    /// The FIDE rating, if any.
    pub(crate) rating: Option<u16>,
    /// The FIDE federation (`NOR`), if any.
    pub federation: Option<String>,
    /// The FIDE id, if any.
    pub(crate) fide_id: Option<u64>,
}

/// One board of a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// The board number, from 1.
    pub board: u32,
    /// The player with the white pieces.
    pub white: Player,
    /// The player with the black pieces.
    pub black: Player,
}

#[cfg(test)]
/// The tags a pairing sets, in the order a PGN lists them.
pub(crate) const TAGS: [&str; 10] = [
    "White",
    "Black",
    "WhiteElo",
    "BlackElo",
    "WhiteTitle",
    "BlackTitle",
    "WhiteFideId",
    "BlackFideId",
    "WhiteFed",
    "BlackFed",
];

impl Pairing {
    /// The board's PGN tags: every one of [`TAGS`], empty where the file
    /// says nothing, so that a player without a title does not keep the
    /// title of the previous round's player (an empty value removes a tag).
    pub fn tags(&self) -> BTreeMap<String, String> {
        let mut tags = BTreeMap::new();
        for (colour, player) in [("White", &self.white), ("Black", &self.black)] {
            let text = |value: Option<String>| value.unwrap_or_default();
            tags.insert(colour.to_owned(), player.name.clone());
            tags.insert(format!("{colour}Elo"), text(player.rating.map(|r| r.to_string())));
            tags.insert(format!("{colour}Title"), text(player.title.clone()));
            tags.insert(format!("{colour}FideId"), text(player.fide_id.map(|id| id.to_string())));
            tags.insert(format!("{colour}Fed"), text(player.federation.clone()));
        }
        tags
    }
}

/// Why a pairings file could not be read. Every error about the text names
/// its line (from 1) and the field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PairingsError {
    /// A field that is not what its place asks for.
    #[error("line {line}: {field} {value:?}: {expected}")]
    Field {
        /// The line, from 1.
        line: usize,
        /// The field (`rating (columns 49-52)`, `column white_elo`).
        field: String,
        /// The text found.
        value: String,
        /// What is accepted there.
        expected: String,
    },
    /// Two lines that contradict each other (the same player or board
    /// twice, a pairing its opponent's line does not repeat).
    #[error("line {line}: {what}")]
    Conflict {
        /// The later line, from 1.
        line: usize,
        /// What is wrong, in words.
        what: String,
    },
    /// Neither a TRF16 player line nor a CSV header with board, white and
    /// black columns.
    #[error(
        "neither a FIDE tournament report (TRF16, lines starting 001) nor a CSV with a header naming board, white and black"
    )]
    Unknown,
    /// A round the file does not have.
    #[error("the file has no pairings for round {round:?} ({have})")]
    NoSuchRound {
        /// The round asked for.
        round: String,
        /// The rounds it has, in words.
        have: String,
    },
}

/// A pairings file as read: a whole tournament report, or CSV rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pairings {
    /// A TRF16 report: every round's pairings can be derived.
    Trf(Tournament),
    /// CSV rows, each with its round if the file has a `round` column.
    Csv(Vec<(Option<String>, Pairing)>),
}

impl Pairings {
    /// Reads a TRF16 report or a CSV, told apart by their look: a report
    /// has lines starting `001 `, a CSV starts with its header.
    ///
    /// # Errors
    ///
    /// The first line that cannot be read, with the field; or text that is
    /// neither.
    pub fn parse(text: &str) -> Result<Self, PairingsError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if text.lines().any(|l| l.starts_with("001 ") || l.starts_with("012 ")) {
            return trf::parse(text).map(Self::Trf);
        }
        csv::parse(text).map(Self::Csv)
    }

    /// The pairings of `round`, in board order.
    ///
    /// A report gives round `n` (a number from 1); a CSV without a `round`
    /// column is one round, whatever `round` is asked.
    ///
    /// # Errors
    ///
    /// The file has no such round (or no pairing in it), or its round
    /// contradicts itself (see [`Tournament::round`]).
    pub fn round(&self, round: &str) -> Result<Vec<Pairing>, PairingsError> {
        match self {
            Self::Trf(tournament) => {
                let rounds = tournament.rounds();
                let have = || if rounds == 0 { "no round".to_owned() } else { format!("rounds 1 to {rounds}") };
                let n: usize = round
                    .trim()
                    .parse()
                    .ok()
                    .filter(|n| (1..=rounds).contains(n))
                    .ok_or_else(|| PairingsError::NoSuchRound { round: round.to_owned(), have: have() })?;
                let pairings = tournament.round(n)?;
                if pairings.is_empty() {
                    return Err(PairingsError::NoSuchRound { round: round.to_owned(), have: "only byes in it".into() });
                }
                Ok(pairings)
            }
            Self::Csv(rows) => {
                let with_rounds = rows.iter().any(|(r, _)| r.is_some());
                let mut pairings: Vec<Pairing> = rows
                    .iter()
                    .filter(|(r, _)| !with_rounds || r.as_deref().map(str::trim) == Some(round.trim()))
                    .map(|(_, p)| p.clone())
                    .collect();
                if pairings.is_empty() {
                    let mut rounds: Vec<&str> = rows.iter().filter_map(|(r, _)| r.as_deref()).collect();
                    rounds.dedup();
                    return Err(PairingsError::NoSuchRound {
                        round: round.to_owned(),
                        have: if rounds.is_empty() {
                            "no rows".into()
                        } else {
                            format!("rounds {}", rounds.join(", "))
                        },
                    });
                }
                pairings.sort_by_key(|p| p.board);
                Ok(pairings)
            }
        }
    }
}

/// The board number a board's label stands for: the number it ends with
/// (`"3"`, `"board-3"`, `"Board 3"` are board 3). `None` for a label
/// without one.
pub fn board_number(label: &str) -> Option<u32> {
    let digits: String = label.chars().rev().take_while(char::is_ascii_digit).collect();
    let digits: String = digits.chars().rev().collect();
    digits.parse().ok().filter(|n| *n > 0)
}

/// A FIDE title as PGN writes it, from a report's field: the full forms
/// (`GM`, `WIM`) and the one- or two-letter forms of older reports (`g`,
/// `m`, `wg`). `None` for an empty field or anything else.
pub(crate) fn title(field: &str) -> Option<String> {
    let upper = field.trim().to_ascii_uppercase();
    let full = match upper.as_str() {
        "" => return None,
        "G" => "GM",
        "M" => "IM",
        "F" => "FM",
        "C" => "CM",
        "WG" => "WGM",
        "WM" => "WIM",
        "WF" => "WFM",
        "WC" => "WCM",
        "GM" | "IM" | "FM" | "CM" | "WGM" | "WIM" | "WFM" | "WCM" => upper.as_str(),
        _ => return None,
    };
    Some(full.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_numbers_come_from_the_end_of_the_label() {
        assert_eq!(board_number("3"), Some(3));
        assert_eq!(board_number("board-12"), Some(12));
        assert_eq!(board_number("Board 7"), Some(7));
        assert_eq!(board_number("top"), None);
        assert_eq!(board_number("board-0"), None);
    }

    #[test]
    fn titles_are_written_in_full() {
        assert_eq!(title("g").as_deref(), Some("GM"));
        assert_eq!(title("wg").as_deref(), Some("WGM"));
        assert_eq!(title(" IM").as_deref(), Some("IM"));
        assert_eq!(title(""), None);
        assert_eq!(title("x"), None);
    }

    #[test]
    fn a_pairing_sets_every_tag_and_empties_the_unknown() {
        let pairing = Pairing {
            board: 1,
            white: Player { name: "A, B".into(), rating: Some(2400), ..Player::default() },
            black: Player { name: "C, D".into(), title: Some("GM".into()), fide_id: Some(12), ..Player::default() },
        };
        let tags = pairing.tags();
        assert_eq!(tags.len(), TAGS.len());
        assert_eq!(tags["WhiteElo"], "2400");
        assert_eq!(tags["BlackElo"], "");
        assert_eq!(tags["BlackTitle"], "GM");
        assert_eq!(tags["BlackFideId"], "12");
        assert_eq!(tags["WhiteTitle"], "");
    }
}
