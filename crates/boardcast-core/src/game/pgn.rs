//! PGN: the game record as the standard text that broadcast sites, databases
//! and arbiters read (N1).
//!
//! Seven Tag Roster first (unknown values as `?`), then the capture's other
//! tags, then `Variant`/`SetUp`/`FEN` for Chess960 and set-up positions.
//! Moves are standard English SAN, each completed move followed by
//! `{[%clk h:mm:ss]}` when the clock was read. A move that is only made (the
//! last one, before the clock is pressed) is written to the PGN files (it is
//! on the board, and a later amendment rewrites the file) but not to the PGN
//! delivered to broadcast sites ([`Plies::Completed`]): a relay such as
//! lichess keeps every move it has seen, so a made move replaced before
//! completion would stay there as a variation. An illegal move that stood
//! under A.5.2 is written as a scoresheet would write it, with a comment
//! saying so; PGN readers that check legality stop there, which is the honest
//! outcome. `Termination` holds one of the standard's words (`normal`, `time
//! forfeit`, `abandoned`, `adjudication`); the reason, when the word does not
//! say it, is a comment before the result (`{resignation} 1-0`).

use std::fmt::Write as _;

use shakmaty::{CastlingMode, Color, EnPassantMode, fen::Fen};

use super::record::{GameRecord, MoveStatus, Ply, PlyMove};

const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// Which moves go into a game's PGN.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Plies {
    /// Every move on the record, a made (not yet completed) last one
    /// included: the PGN files and the MQTT feed.
    #[default]
    All,
    /// Completed moves only: PGN delivered to broadcast sites, which never
    /// forget a move they were sent.
    Completed,
}

/// Writes one game as PGN, ending with a blank line.
pub fn write_pgn(record: &GameRecord, out: &mut String) {
    write_pgn_with(record, Plies::All, out);
}

/// Writes one game as PGN with the moves `plies` says, ending with a blank
/// line.
pub fn write_pgn_with(record: &GameRecord, plies: Plies, out: &mut String) {
    let result = record.result.map_or("*", |r| r.pgn());
    for name in ROSTER {
        let value = match name {
            "Result" => result,
            "Date" => record.tag(name).unwrap_or("????.??.??"),
            _ => record.tag(name).unwrap_or("?"),
        };
        push_tag(out, name, value);
    }
    for (name, value) in &record.tags {
        if !ROSTER.contains(&name.as_str()) && !matches!(name.as_str(), "Variant" | "SetUp" | "FEN" | "Termination") {
            push_tag(out, name, value);
        }
    }
    if record.castling_mode == CastlingMode::Chess960 {
        push_tag(out, "Variant", "Chess960");
    }
    if record.set_up {
        push_tag(out, "SetUp", "1");
        let fen = Fen::from_position(&record.start, EnPassantMode::Legal);
        push_tag(out, "FEN", &fen.to_string());
    }
    if let Some(r) = record.result {
        push_tag(out, "Termination", r.termination.pgn_tag());
    }
    out.push('\n');
    let mut line = String::new();
    let emit = |token: &str, line: &mut String, out: &mut String| {
        if !line.is_empty() && line.len() + 1 + token.len() > 79 {
            out.push_str(line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(token);
    };
    let mut after_comment = false;
    let shown = match plies {
        Plies::All => &record.plies[..],
        Plies::Completed => &record.plies[..record.completed_plies()],
    };
    for (index, ply) in shown.iter().enumerate() {
        let (number, side) = record.move_number(index);
        // A Black move gets its number when it does not follow White's
        // move directly (first move of the game, or after a comment).
        let token = match side {
            Color::White => format!("{number}. {}", ply.san),
            Color::Black if index == 0 || after_comment => format!("{number}... {}", ply.san),
            Color::Black => ply.san.to_string(),
        };
        emit(&token, &mut line, out);
        let comment = comment(ply);
        after_comment = comment.is_some();
        if let Some(comment) = comment {
            emit(&comment, &mut line, out);
        }
    }
    // A mate says itself (`#`); other reasons the word leaves out are
    // said in a comment.
    if let Some(r) = record.result
        && r.termination != super::record::Termination::Checkmate
        && r.termination.describe() != r.termination.pgn_tag()
    {
        emit(&format!("{{{}}}", r.termination.describe()), &mut line, out);
    }
    emit(result, &mut line, out);
    out.push_str(&line);
    out.push_str("\n\n");
}

/// The PGN of one game as a string.
pub fn to_pgn(record: &GameRecord) -> String {
    let mut out = String::new();
    write_pgn(record, &mut out);
    out
}

fn comment(ply: &Ply) -> Option<String> {
    let mut parts = Vec::new();
    if let (Some(ms), MoveStatus::Completed) = (ply.clock_ms, ply.status) {
        let secs = ms / 1000;
        parts.push(format!("[%clk {}:{:02}:{:02}]", secs / 3600, secs / 60 % 60, secs % 60));
    }
    if ply.entered {
        parts.push("entered by the operator".to_owned());
    } else if ply.order_uncertain {
        parts.push("inferred, order uncertain".to_owned());
    } else if ply.inferred {
        parts.push("inferred".to_owned());
    }
    if let PlyMove::Illegal(_) = ply.mv {
        parts.push("illegal move, stands under A.5.2 (answered by the opponent)".to_owned());
    }
    (!parts.is_empty()).then(|| format!("{{{}}}", parts.join(" ")))
}

/// One tag pair on its own line, whatever the tag came from (a command,
/// the configuration, a capture): the value's `\\` and `"` escaped and its
/// control characters (a newline would end the tag and could start a
/// forged game) written as spaces; a name keeps only the characters a PGN
/// symbol may have, and a tag whose name keeps none is left out.
fn push_tag(out: &mut String, name: &str, value: &str) {
    let name: String =
        name.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '#' | '=' | ':' | '-')).collect();
    if name.is_empty() {
        return;
    }
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            c if c.is_control() => escaped.push(' '),
            c => escaped.push(c),
        }
    }
    let _ = writeln!(out, "[{name} \"{escaped}\"]");
}
