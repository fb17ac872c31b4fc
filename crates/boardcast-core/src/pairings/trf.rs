//! The FIDE Tournament Report File, TRF16: the player lines (`001`) with
//! their fixed columns, and the pairings of each round derived from them.
//!
//! A player line, by column (from 1, both ends included):
//!
//! | columns | field |
//! |---|---|
//! | 1-3 | `001` |
//! | 5-8 | starting rank |
//! | 10 | sex |
//! | 11-13 | title (`GM`, `WIM`, …; older reports `g`, `m`, `wg`) |
//! | 15-47 | name, `Lastname, Firstname` |
//! | 49-52 | FIDE rating |
//! | 54-56 | federation |
//! | 58-68 | FIDE id |
//! | 70-79 | birth date |
//! | 81-84 | points |
//! | 86-89 | rank |
//! | 92-95, 97, 99 | round 1: the opponent's starting rank (`0000` none), the colour (`w`, `b`, `-`), the result |
//! | 102-105, 107, 109 | round 2, and so on every ten columns |
//!
//! A report has no board numbers. Boards are numbered as pairing programs
//! number them (FIDE C.04.2): the pair whose better-placed player has the
//! higher score before the round first; then the higher sum of the two
//! scores; then the pair holding the better starting rank. Checked against
//! a real round in the tests (tests/fixtures/pairings).

use std::{cmp::Reverse, collections::BTreeMap};

use super::{Pairing, PairingsError, Player, title};

/// A player line of a report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrfPlayer {
    /// The starting rank (the number the round blocks name).
    pub(crate) start_rank: u32,
    /// Name, title, rating, federation, id.
    pub(crate) player: Player,
    /// The line it is on, from 1.
    pub line: usize,
    rounds: Vec<Entry>,
}

/// One round block of a player line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    /// The opponent's starting rank; 0 for none.
    opponent: u32,
    /// `w`, `b`, `-` or a blank.
    colour: char,
    /// `1`, `0`, `=`, `+`, `-`, `W`, `D`, `L`, `H`, `F`, `U`, `Z` or a blank
    /// (not played yet: the pairings of a coming round).
    result: char,
}

/// Results of a round without a game: the byes.
const BYES: [char; 4] = ['H', 'F', 'U', 'Z'];
/// Every result a round block may hold.
const RESULTS: &str = "10=+-WDLHFUZ ";

impl Entry {
    /// Whether the block is a game against an opponent.
    fn is_game(self) -> bool {
        self.opponent > 0 && matches!(self.colour, 'w' | 'b') && !BYES.contains(&self.result)
    }

    /// Half-points it gave: a win, a forfeit win, a full-point or
    /// pairing-allocated bye are 2; a draw or a half-point bye 1.
    fn half_points(self) -> u32 {
        match self.result {
            '1' | '+' | 'W' | 'F' | 'U' => 2,
            '=' | 'D' | 'H' => 1,
            _ => 0,
        }
    }
}

/// A tournament report: its name and its players.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tournament {
    /// The name (line `012`), if given.
    pub name: Option<String>,
    /// The players by starting rank.
    pub players: BTreeMap<u32, TrfPlayer>,
}

impl Tournament {
    /// How many rounds the player lines have blocks for.
    pub fn rounds(&self) -> usize {
        self.players.values().map(|p| p.rounds.len()).max().unwrap_or(0)
    }

    /// The pairings of round `n` (from 1), in board order. Byes (no
    /// opponent, `H`, `F`, `U`, `Z`) give no board; a forfeit (`+`, `-`)
    /// was paired, and keeps its board.
    ///
    /// # Errors
    ///
    /// A pairing its opponent's line does not repeat with the other colour,
    /// or an opponent without a line.
    pub fn round(&self, n: usize) -> Result<Vec<Pairing>, PairingsError> {
        let entry = |p: &TrfPlayer| p.rounds.get(n - 1).copied().filter(|e| e.is_game());
        let mut pairs = Vec::new();
        for player in self.players.values() {
            let Some(mine) = entry(player) else { continue };
            let Some(other) = self.players.get(&mine.opponent) else {
                return Err(PairingsError::Conflict {
                    line: player.line,
                    what: format!(
                        "round {n}: player {} plays {}, who has no player line",
                        player.start_rank, mine.opponent
                    ),
                });
            };
            let theirs = entry(other);
            let expected = if mine.colour == 'w' { 'b' } else { 'w' };
            if theirs.map(|e| (e.opponent, e.colour)) != Some((player.start_rank, expected)) {
                return Err(PairingsError::Conflict {
                    line: player.line.max(other.line),
                    what: format!(
                        "round {n}: player {} plays {} with {}, but player {}'s line does not say so",
                        player.start_rank,
                        other.start_rank,
                        if mine.colour == 'w' { "White" } else { "Black" },
                        other.start_rank
                    ),
                });
            }
            if mine.colour == 'w' {
                pairs.push((player, other));
            }
        }
        let before = |p: &TrfPlayer| -> u32 { p.rounds.iter().take(n - 1).map(|e| e.half_points()).sum() };
        pairs.sort_by_key(|(white, black)| {
            let (w, b) = (before(white), before(black));
            (Reverse(w.max(b)), Reverse(w + b), white.start_rank.min(black.start_rank))
        });
        Ok(pairs
            .into_iter()
            .zip(1..)
            .map(|((white, black), board)| Pairing { board, white: white.player.clone(), black: black.player.clone() })
            .collect())
    }
}

/// Reads a report: the `012` name and the `001` player lines; every other
/// line is left alone.
pub(super) fn parse(text: &str) -> Result<Tournament, PairingsError> {
    let mut tournament = Tournament::default();
    // A report's lines end with CR (TRF16, remark 1), often CR LF.
    let lines: Vec<&str> = if text.contains('\n') { text.split('\n').collect() } else { text.split('\r').collect() };
    for (i, line) in lines.into_iter().enumerate() {
        let line = line.trim_end_matches('\r');
        let number = i + 1;
        if let Some(name) = line.strip_prefix("012 ") {
            tournament.name = Some(name.trim().to_owned()).filter(|n| !n.is_empty());
        } else if line.starts_with("001 ") {
            let player = player_line(number, line)?;
            if let Some(first) = tournament.players.get(&player.start_rank) {
                return Err(PairingsError::Conflict {
                    line: number,
                    what: format!("starting rank {} is on line {} already", player.start_rank, first.line),
                });
            }
            tournament.players.insert(player.start_rank, player);
        }
    }
    if tournament.players.is_empty() {
        return Err(PairingsError::Unknown);
    }
    Ok(tournament)
}

/// One `001` line.
fn player_line(number: usize, line: &str) -> Result<TrfPlayer, PairingsError> {
    let chars: Vec<char> = line.chars().collect();
    let columns = |from: usize, to: usize| -> String {
        chars.iter().skip(from - 1).take(to + 1 - from).collect::<String>().trim().to_owned()
    };
    let bad = |field: &str, from: usize, to: usize, expected: &str| PairingsError::Field {
        line: number,
        field: if from == to { format!("{field} (column {from})") } else { format!("{field} (columns {from}-{to})") },
        value: columns(from, to),
        expected: expected.to_owned(),
    };
    let digits = |from: usize, to: usize| -> Option<Option<u64>> {
        let text = columns(from, to);
        if text.is_empty() {
            Some(None)
        } else if text.chars().all(|c| c.is_ascii_digit()) {
            text.parse().ok().map(Some)
        } else {
            None
        }
    };
    let start_rank = digits(5, 8)
        .flatten()
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| bad("starting rank", 5, 8, "a number from 1"))?;
    let name = columns(15, 47);
    if name.is_empty() {
        return Err(bad("name", 15, 47, "the player's name"));
    }
    let rating = digits(49, 52)
        .ok_or_else(|| bad("rating", 49, 52, "a FIDE rating (digits), or blank"))?
        .and_then(|r| u16::try_from(r).ok())
        .filter(|r| *r > 0);
    let federation = columns(54, 56);
    if !federation.is_empty() && (federation.len() != 3 || !federation.chars().all(|c| c.is_ascii_alphabetic())) {
        return Err(bad("federation", 54, 56, "three letters (NOR), or blank"));
    }
    let fide_id =
        digits(58, 68).ok_or_else(|| bad("FIDE id", 58, 68, "the FIDE id (digits), or blank"))?.filter(|id| *id > 0);
    let mut rounds = Vec::new();
    let mut start = 92;
    while start <= chars.len() {
        let round = rounds.len() + 1;
        let opponent = digits(start, start + 3)
            .ok_or_else(|| {
                bad(&format!("round {round} opponent"), start, start + 3, "a starting rank, or 0000 for none")
            })?
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0);
        let colour = chars.get(start + 4).copied().unwrap_or(' ');
        if !matches!(colour, 'w' | 'b' | '-' | ' ') {
            return Err(bad(&format!("round {round} colour"), start + 5, start + 5, "w, b or -"));
        }
        let result = chars.get(start + 6).copied().unwrap_or(' ');
        if !RESULTS.contains(result) {
            return Err(bad(
                &format!("round {round} result"),
                start + 7,
                start + 7,
                "1, 0, =, +, -, W, D, L, H, F, U, Z, or blank before the game",
            ));
        }
        if opponent > 0 && !BYES.contains(&result) && colour != 'w' && colour != 'b' {
            return Err(bad(&format!("round {round} colour"), start + 5, start + 5, "w or b against an opponent"));
        }
        rounds.push(Entry { opponent, colour, result });
        start += 10;
    }
    // Trailing blocks with nothing in them are no rounds.
    while rounds.last().is_some_and(|e| e.opponent == 0 && e.colour == ' ' && e.result == ' ') {
        rounds.pop();
    }
    Ok(TrfPlayer {
        start_rank,
        player: Player {
            name,
            title: title(&columns(11, 13)),
            rating,
            federation: Some(federation.to_ascii_uppercase()).filter(|f| !f.is_empty()),
            fide_id,
        },
        line: number,
        rounds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A player line from its fields, in their columns.
    pub(super) fn line(rank: u32, title: &str, name: &str, rating: u32, fed: &str, id: u64, rounds: &[&str]) -> String {
        let mut line = format!(
            "001 {rank:>4} w{title:<3} {name:<33} {rating:>4} {fed:<3} {id:>11} {:<10} {:>4} {:>4}  ",
            "", "0.0", 1
        );
        for round in rounds {
            line.push_str(&format!("{round:<10}"));
        }
        line.trim_end().to_owned()
    }

    #[test]
    fn columns_are_read_where_the_format_puts_them() {
        let text = [
            line(1, "GM", "Alpha, Anna", 2500, "NOR", 1234567, &["   2 w 1", "   3 b  "]),
            line(2, "", "Beta, Berit", 0, "", 0, &["   1 b 0", "0000 - H"]),
            line(3, "wg", "Gamma, Gro", 2100, "swe", 7654321, &["0000 - U", "   1 w  "]),
        ]
        .join("\n");
        let tournament = parse(&text).unwrap();
        let first = &tournament.players[&1].player;
        assert_eq!(first.name, "Alpha, Anna");
        assert_eq!(first.title.as_deref(), Some("GM"));
        assert_eq!(first.rating, Some(2500));
        assert_eq!(first.federation.as_deref(), Some("NOR"));
        assert_eq!(first.fide_id, Some(1234567));
        assert_eq!(tournament.players[&2].player, Player { name: "Beta, Berit".into(), ..Player::default() });
        assert_eq!(tournament.players[&3].player.title.as_deref(), Some("WGM"));
        assert_eq!(tournament.rounds(), 2);
        let round2 = tournament.round(2).unwrap();
        assert_eq!(round2.len(), 1, "the half-point bye gives no board");
        assert_eq!((round2[0].white.name.as_str(), round2[0].black.name.as_str()), ("Gamma, Gro", "Alpha, Anna"));
    }
}
