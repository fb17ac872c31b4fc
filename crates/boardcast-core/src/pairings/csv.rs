//! Pairings as a simple CSV: a header naming the columns, then one board a
//! line. The columns (any order, any case, `_`, `-` and spaces ignored, so
//! `White Elo` is `white_elo`):
//!
//! `board`, `white`, `black` (required); `white_elo`, `black_elo`,
//! `white_title`, `black_title`, `white_fide_id`, `black_fide_id`,
//! `white_fed`, `black_fed`, `round` (optional).
//!
//! Fields are separated by `,`, `;` or a tab (whichever the header uses), and
//! may be quoted with `"` (a `""` inside is one `"`). Empty lines and lines
//! starting with `#` are skipped.

use std::collections::BTreeMap;

use super::{Pairing, PairingsError, Player, title};

/// The columns a CSV may have, by their written-out name.
const COLUMNS: [&str; 12] = [
    "board",
    "round",
    "white",
    "black",
    "white_elo",
    "black_elo",
    "white_title",
    "black_title",
    "white_fide_id",
    "black_fide_id",
    "white_fed",
    "black_fed",
];

/// A header name in the form of [`COLUMNS`], if it is one.
fn column(name: &str) -> Option<&'static str> {
    let squeezed: String =
        name.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).collect::<String>().to_ascii_lowercase();
    let squeezed = match squeezed.as_str() {
        "whiterating" => "whiteelo".to_owned(),
        "blackrating" => "blackelo".to_owned(),
        "whitefederation" => "whitefed".to_owned(),
        "blackfederation" => "blackfed".to_owned(),
        _ => squeezed,
    };
    COLUMNS.into_iter().find(|c| c.replace('_', "") == squeezed)
}

/// Reads the rows, each with its round (if the file has that column).
pub(super) fn parse(text: &str) -> Result<Vec<(Option<String>, Pairing)>, PairingsError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let Some((header_line, header)) = lines.next() else {
        return Err(PairingsError::Unknown);
    };
    let separator = [',', ';', '\t'].into_iter().max_by_key(|s| header.matches(*s).count()).unwrap_or(',');
    let names = fields(header, separator);
    if !names.iter().any(|name| column(name).is_some()) {
        // Not a header at all: not a pairings CSV.
        return Err(PairingsError::Unknown);
    }
    let mut index: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let Some(known) = column(name) else {
            return Err(PairingsError::Field {
                line: header_line,
                field: format!("column {}", i + 1),
                value: name.clone(),
                expected: format!("one of {}", COLUMNS.join(", ")),
            });
        };
        index.insert(known, i);
    }
    if !["board", "white", "black"].iter().all(|c| index.contains_key(c)) {
        return Err(PairingsError::Unknown);
    }
    let mut rows: Vec<(Option<String>, Pairing)> = Vec::new();
    let mut seen: BTreeMap<(Option<String>, u32), usize> = BTreeMap::new();
    for (line, text) in lines {
        let values = fields(text, separator);
        let get = |name: &str| index.get(name).and_then(|i| values.get(*i)).map_or("", |v| v.trim());
        let bad = |name: &str, expected: &str| PairingsError::Field {
            line,
            field: format!("column {name}"),
            value: get(name).to_owned(),
            expected: expected.to_owned(),
        };
        let board: u32 =
            get("board").parse().ok().filter(|b| *b > 0).ok_or_else(|| bad("board", "a board number from 1"))?;
        let player = |colour: &str| -> Result<Player, PairingsError> {
            let name = get(colour);
            if name.is_empty() {
                return Err(bad(colour, "the player's name"));
            }
            let rating_column = format!("{colour}_elo");
            let rating = match get(&rating_column) {
                "" => None,
                text => Some(text.parse::<u16>().map_err(|_| bad(&rating_column, "a rating (digits), or empty"))?),
            };
            let id_column = format!("{colour}_fide_id");
            let fide_id = match get(&id_column) {
                "" => None,
                text => Some(text.parse::<u64>().map_err(|_| bad(&id_column, "a FIDE id (digits), or empty"))?),
            };
            let title_column = format!("{colour}_title");
            let written = get(&title_column);
            let title = title(written);
            if title.is_none() && !written.is_empty() {
                return Err(bad(&title_column, "GM, IM, FM, CM, WGM, WIM, WFM, WCM, or empty"));
            }
            let fed_column = format!("{colour}_fed");
            let federation = get(&fed_column);
            if !federation.is_empty() && (federation.len() != 3 || !federation.chars().all(|c| c.is_ascii_alphabetic()))
            {
                return Err(bad(&fed_column, "three letters (NOR), or empty"));
            }
            Ok(Player {
                name: name.to_owned(),
                title,
                rating: rating.filter(|r| *r > 0),
                federation: Some(federation.to_ascii_uppercase()).filter(|f| !f.is_empty()),
                fide_id: fide_id.filter(|id| *id > 0),
            })
        };
        let round = Some(get("round").to_owned()).filter(|r| index.contains_key("round") && !r.is_empty());
        if let Some(first) = seen.insert((round.clone(), board), line) {
            return Err(PairingsError::Conflict { line, what: format!("board {board} is on line {first} already") });
        }
        rows.push((round, Pairing { board, white: player("white")?, black: player("black")? }));
    }
    Ok(rows)
}

/// A line's fields: split at `separator` outside quotes, quotes removed.
fn fields(line: &str, separator: char) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        let field = fields.last_mut().expect("never empty");
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            '"' => quoted = !quoted,
            c if c == separator && !quoted => fields.push(String::new()),
            c => field.push(c),
        }
    }
    fields.into_iter().map(|f| f.trim().to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_keep_their_commas() {
        assert_eq!(fields(r#"1,"Carlsen, Magnus","say ""hi""""#, ','), ["1", "Carlsen, Magnus", "say \"hi\""]);
        assert_eq!(fields("1;A;B", ';'), ["1", "A", "B"]);
    }

    #[test]
    fn headers_are_read_loosely_and_unknown_ones_refused() {
        assert_eq!(column("White Elo"), Some("white_elo"));
        assert_eq!(column("BlackFideId"), Some("black_fide_id"));
        assert_eq!(column("white-rating"), Some("white_elo"));
        assert_eq!(column("whtie"), None);
        let error = parse("board,white,whtie\n1,A,B\n").unwrap_err();
        assert!(error.to_string().starts_with("line 1: column 3 \"whtie\": one of board"), "{error}");
    }
}
