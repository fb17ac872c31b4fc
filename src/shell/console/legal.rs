//! `GET /api/legal?fen=FEN[&chess960=1]`: the legal moves of a position
//! for the console's board (chessground's `dests` and each move's SAN),
//! computed by the core with shakmaty (`boardcast_core::legal`), so that
//! the page never decides itself what is legal. Also how the page checks a
//! FEN before it offers `set_position`.

use hyper::StatusCode;
use serde_json::{Value, json};

use crate::shell::http::percent_decoded;

/// The status and JSON answer for the request's query string: 200 with
/// the moves, or 400 with what is wrong (`{"error": …}`).
pub fn answer(query: Option<&str>) -> (StatusCode, Value) {
    let mut fen = None;
    let mut chess960 = false;
    for pair in query.unwrap_or_default().split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        // A form encodes a space as `+`, which no FEN contains.
        let Some(value) = percent_decoded(&value.replace('+', " ")) else {
            return (StatusCode::BAD_REQUEST, json!({"error": format!("{name}: a malformed %-escape")}));
        };
        match name {
            "fen" => fen = Some(value),
            "chess960" => chess960 = matches!(value.as_str(), "1" | "true"),
            _ => {}
        }
    }
    let Some(fen) = fen.filter(|f| !f.trim().is_empty()) else {
        return (
            StatusCode::BAD_REQUEST,
            json!({"error": "no position: ask /api/legal?fen=FEN (the FEN %-escaped), with &chess960=1 for a Chess960 game"}),
        );
    };
    if fen.chars().count() > 128 {
        return (StatusCode::BAD_REQUEST, json!({"error": "a FEN is at most 128 characters"}));
    }
    match boardcast_core::legal::legal_moves(&fen, chess960) {
        Ok(moves) => (StatusCode::OK, json!(moves)),
        Err(e) => (StatusCode::BAD_REQUEST, json!({"error": e.to_string()})),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_escaped_fen_is_answered_with_its_moves_and_a_bad_one_with_words() {
        let (status, body) =
            answer(Some("fen=rnbqkbnr%2Fpppppppp%2F8%2F8%2F4P3%2F8%2FPPPP1PPP%2FRNBQKBNR%20b%20KQkq%20-%200%201"));
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["turn"], "black");
        assert_eq!(body["san"]["g8f6"], "Nf6");
        assert_eq!(body["dests"]["e7"], json!(["e5", "e6"]));
        let (status, body) = answer(Some("fen=8%2F8+w"));
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body["error"].as_str().unwrap().contains("is not a FEN"), "{body}");
        let (status, body) = answer(None);
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body["error"].as_str().unwrap().contains("/api/legal?fen="), "{body}");
    }
}
