//! Operator commands: what the operator (or an arbiter through the
//! operator) tells the daemon that no board can show. Starting the next
//! round, entering a resignation or an agreed draw, taking back a wrongly
//! recorded move, filling in moves from the scoresheet, naming the piece a
//! pawn was promoted to (which an occupancy-only board cannot see), setting
//! the position or the players, turning the board, acknowledging an alert.
//!
//! A command is an input like a sensor event: it reaches a board's session
//! through its driver, is recorded in the board's capture (so a replay or a
//! restart applies it at the same moment), and its effects go out as
//! ordinary events (a move taken back is `retracted`, a result `ended`):
//! history is corrected explicitly, never silently rewritten.
//!
//! The JSON form is the same on MQTT (`<root>/v1/bridges/<id>/commands`,
//! docs/operator.md), in `boardcast ctl`, and in captures:
//! `{"command": "set_result", "result": "1-0", "reason": "resignation"}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Tags one `set_tags` sets at most.
pub(crate) const MAX_TAGS: usize = 64;
/// The longest tag name, round, result, piece or move.
pub(crate) const MAX_NAME_CHARS: usize = 64;
/// The longest tag value.
pub(crate) const MAX_TAG_VALUE_CHARS: usize = 1024;
/// The longest FEN.
pub(crate) const MAX_FEN_CHARS: usize = 128;
/// Boards one `next_round` names pairings for at most.
pub(crate) const MAX_PAIRINGS: usize = 1000;
/// The longest serial number, player or account in `assign_board`.
pub(crate) const MAX_ASSIGN_TEXT_CHARS: usize = 100;
/// Moves one `moves` command enters at most.
pub(crate) const MAX_MOVES: usize = 600;

/// Why a command was refused; nothing changed on the board. The message
/// says it in words for the operator, with the bad input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// Not a command: unknown, or a field missing or unknown (serde's words).
    #[error(
        "{0} (commands: new_game, next_round, set_result, take_back, moves, promote, set_position, flip, set_tags, acknowledge_alert, clock_text, identify, calibrate, assign_board, unassign_board; docs/operator.md)"
    )]
    Unreadable(String),
    /// A text longer than the bounds of docs/operator.md.
    #[error("{what} is {chars} characters long; at most {max}")]
    TooLong {
        /// What the text is ("the round", "the value of tag White").
        what: String,
        /// Its length in characters.
        chars: usize,
        /// The bound.
        max: usize,
    },
    /// A text with a line break or another control character.
    #[error("{what} contains a line break or another control character")]
    ControlCharacter {
        /// What the text is.
        what: String,
    },
    /// More moves in one `moves` command than allowed.
    #[error("{0} moves in one command; at most {MAX_MOVES}")]
    TooManyMoves(usize),
    /// More tags in one `set_tags` command than allowed.
    #[error("{0} tags in one command; at most {MAX_TAGS}")]
    TooManyTags(usize),
    /// More boards' pairings in one `next_round` than allowed.
    #[error("pairings for {0} boards in one command; at most {MAX_PAIRINGS}")]
    TooManyPairings(usize),
    /// A key of `pairings` that is not a board number.
    #[error("{0:?} is not a board number (1, 2, …) in the pairings")]
    NotABoardNumber(String),
    /// A tag name that is not a PGN tag name.
    #[error("the tag name {0:?} is not a PGN tag name (letters, digits and _ only)")]
    TagName(String),
    /// A tag the daemon keeps itself (Result, FEN, SetUp, Variant).
    #[error("{0} is kept by the daemon itself")]
    KeptTag(String),
    /// `clock_text` that the board's clock cannot show now.
    #[error(
        "the clock shows no text now: clock_display is off, the clock is not a DGT 3000, a player has a minute or less, or it showed text a moment ago (docs/boards.md)"
    )]
    ClockTextRefused,
    /// `assign_board` sent to a board's game: it is the bridge's.
    #[error("assign_board is for the bridge, not a board's game")]
    ForTheBridge,
    /// `identify` on a board that can show itself neither with LEDs nor on
    /// a DGT 3000 clock (or whose clock may not show text now).
    #[error(
        "this board cannot show itself: it has no LEDs the daemon drives (Millennium and Certabo boards have), and no DGT 3000 clock showing text now (clock_display off, another clock, a player with a minute or less, or text shown a moment ago; docs/boards.md)"
    )]
    CannotIdentify,
    /// `calibrate` on a board whose pieces carry no tags to learn.
    #[error(
        "only a Certabo board is calibrated: this board tells its pieces apart by itself (or not at all), so it has no tags to learn (docs/boards.md)"
    )]
    CannotCalibrate,
    /// `next_round` with an empty round.
    #[error("the round is empty")]
    EmptyRound,
    /// Not a result.
    #[error("{0:?} is not a result: 1-0, 0-1 or 1/2-1/2")]
    NotAResult(String),
    /// `set_result 1/2-1/2` with the reason `resignation`.
    #[error("a resignation does not give a draw")]
    DrawnResignation,
    /// No game on the board.
    #[error("no game on this board")]
    NoGame,
    /// The game is over: moves cannot be entered.
    #[error("the game is over (take back or correct the result first)")]
    GameOver,
    /// `take_back` on a game without moves.
    #[error("the game has no move to take back")]
    NothingToTakeBack,
    /// `moves` without moves.
    #[error("no moves given")]
    NoMoves,
    /// A move that is not SAN.
    #[error("{0:?} is not a move in SAN")]
    NotSan(String),
    /// A move that is not legal in the position it would be played in.
    #[error("{san} is not a legal move in {fen}")]
    IllegalMove {
        /// The move as given.
        san: String,
        /// The position.
        fen: String,
    },
    /// Not a FEN.
    #[error("{fen:?} is not a FEN: {reason}")]
    NotAFen {
        /// The FEN as given.
        fen: String,
        /// What is wrong with it (shakmaty's words).
        reason: String,
    },
    /// A FEN of a position that cannot be played from.
    #[error("{fen:?} is not a legal position: {reason}")]
    IllegalPosition {
        /// The FEN as given.
        fen: String,
        /// What is wrong with it (shakmaty's words).
        reason: String,
    },
    /// `promote` with something a pawn cannot become.
    #[error("{0:?} is not a piece a pawn can become: queen, rook, bishop or knight")]
    NotAPromotionPiece(String),
    /// `promote` on a game without a promotion.
    #[error("the game has no promotion")]
    NoPromotion,
    /// `promote` that would make a later move illegal, or meets an illegal
    /// move that stood (the reason in words).
    #[error("{0}")]
    PromotionBreaksGame(String),
}

/// One command for a board.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
pub enum Command {
    /// The game on the board is over as it is (without a result if it has
    /// none); the board waits for the start position of the next.
    NewGame,
    /// The board's next games belong to this round (their `Round` tag, PGN
    /// folder and topics); the game on it now ends as for `new_game`.
    NextRound {
        /// The round, e.g. `"4"`.
        round: String,
        /// Tags of the board's next games, set with the round: the round's
        /// players from its pairings (an empty value removes a tag).
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        tags: BTreeMap<String, String>,
        /// A round's pairings for every board (a request for board `*`):
        /// board number (as text, JSON object keys being text) → its tags. The daemon gives each of its boards the
        /// tags of its number as `tags` (docs/delivery.md, "Pairings");
        /// a board's session never sees this.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        pairings: BTreeMap<String, BTreeMap<String, String>>,
    },
    /// The game's result, by resignation, agreement or forfeit (what no
    /// board shows).
    SetResult {
        /// `1-0`, `0-1` or `1/2-1/2`.
        result: String,
        /// Why.
        #[serde(default)]
        reason: Reason,
    },
    /// Takes back the last move (made or completed): recorded wrongly, or
    /// an illegal move put right by the arbiter (7.5.1).
    TakeBack,
    /// Plays these moves (SAN, from the game position), as the scoresheets
    /// have them: for moves the board could not show or showed in an order
    /// that could not be told apart.
    Moves {
        /// The moves in order.
        san: Vec<String>,
    },
    /// The game's last promotion made this piece, not the one recorded: an
    /// occupancy-only board cannot see the new piece and records a queen.
    /// The move (and the moves after it) are amended.
    Promote {
        /// `queen`, `rook`, `bishop` or `knight` (or `q`, `r`, `b`, `n`).
        piece: String,
    },
    /// The game goes on from this position (FEN): a new game record from
    /// it, the game before it kept as it was.
    SetPosition {
        /// The position.
        fen: String,
    },
    /// The board is turned the other way (its squares are mapped).
    Flip,
    /// Sets PGN tags of the game in progress and of the board's next games
    /// (`White`, `Black`, `Event`, `TimeControl`, …); an empty value removes
    /// a tag.
    SetTags {
        /// Tag names and values.
        tags: BTreeMap<String, String>,
    },
    /// Marks an alert as seen and dealt with by the arbiter.
    AcknowledgeAlert {
        /// The alert's game.
        game: u32,
        /// The alert's `seq`.
        seq: u64,
    },
    /// Shows a message on the board's DGT 3000 clock for a moment, under
    /// the rule that never hides a player's time (docs/boards.md, "Clock
    /// display"). Nothing about the game changes.
    ClockText {
        /// At most eight characters; one the clock cannot show becomes `?`.
        text: String,
    },
    /// The bridge reads a board it found plugged in but not configured
    /// (its `<root>/v1/live/unassigned/<bridge>` list) from now on, named
    /// as the request's `board`, and keeps it in its own state file: the
    /// console of another bridge of the hall assigns a board this way. The
    /// bridge answers it; no board's session ever sees it.
    AssignBoard(Box<Assignment>),
    /// The board shows itself for a moment, to be found in the hall: a
    /// board with LEDs lights them all for [`IDENTIFY_LIGHTS`], a DGT board
    /// with a DGT 3000 clock shows `text` (its label) there. Nothing about
    /// the game changes.
    Identify {
        /// What a DGT 3000 shows (at most eight characters; default
        /// `"HERE"`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// A Certabo board learns which RFID tag is which piece from its next
    /// reports, with the pieces standing in the start position (plus, if
    /// they stand there, spare queens on d6 and d3), starts using it at
    /// once, and the bridge writes it to the board's calibration file. The
    /// answer comes once the reports are in (within
    /// [`CALIBRATE_WAIT`]). Other boards refuse it.
    Calibrate,
    /// The bridge stops reading a board assigned in the console (its
    /// state file's), named as the request's `board`: the board is
    /// plugged in but not assigned again, its games and captures are
    /// kept. The bridge answers it; no board's session ever sees it.
    UnassignBoard {
        /// The console account that un-assigns it (for the log).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
}

/// How long `identify` lights a board's LEDs.
pub const IDENTIFY_LIGHTS: std::time::Duration = std::time::Duration::from_secs(5);

/// How long `calibrate` waits for the board's reports before it gives up.
pub const CALIBRATE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What `assign_board` asks for (boxed: the other commands are small).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assignment {
    /// The board's family (`dgt`, `millennium`, …).
    pub family: String,
    /// The device it was found on; unused when `serial` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// Its serial number, when it tells one: it is found by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Its number or label in the round (`"7"`).
    pub label: String,
    /// The player with the white pieces, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white: Option<String>,
    /// The player with the black pieces, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black: Option<String>,
    /// The console account that assigns it (kept in the state file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// How a result came about, when no board shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A player resigned (5.1.2).
    Resignation,
    /// The players agreed (5.2.3 draw, or a result agreed otherwise).
    Agreement,
    /// A player forfeited (did not come, or was defaulted by the arbiter).
    Forfeit,
    /// Anything else the arbiter decided.
    #[default]
    Arbiter,
}

impl Command {
    /// `set_result`, … (the JSON name).
    pub fn name(&self) -> &'static str {
        match self {
            Self::NewGame => "new_game",
            Self::NextRound { .. } => "next_round",
            Self::SetResult { .. } => "set_result",
            Self::TakeBack => "take_back",
            Self::Moves { .. } => "moves",
            Self::Promote { .. } => "promote",
            Self::SetPosition { .. } => "set_position",
            Self::Flip => "flip",
            Self::SetTags { .. } => "set_tags",
            Self::AcknowledgeAlert { .. } => "acknowledge_alert",
            Self::ClockText { .. } => "clock_text",
            Self::AssignBoard(_) => "assign_board",
            Self::Identify { .. } => "identify",
            Self::Calibrate => "calibrate",
            Self::UnassignBoard { .. } => "unassign_board",
        }
    }

    /// The JSON object.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("commands serialise")
    }

    /// A command from its JSON object; the error says what is wrong in
    /// words for the operator.
    ///
    /// # Errors
    ///
    /// An unknown command, a missing or unknown field.
    pub fn from_json(value: serde_json::Value) -> Result<Self, CommandError> {
        let command: Self = serde_json::from_value(value).map_err(|e| CommandError::Unreadable(e.to_string()))?;
        command.check()?;
        Ok(command)
    }

    /// Whether the command keeps within the bounds of docs/operator.md:
    /// no text that could break the files and messages it ends up in, and
    /// nothing large enough to slow a board down.
    ///
    /// # Errors
    ///
    /// What is out of bounds, in words for the operator.
    pub(crate) fn check(&self) -> Result<(), CommandError> {
        let text = |what: &str, value: &str, max: usize| {
            let chars = value.chars().count();
            if chars > max {
                Err(CommandError::TooLong { what: what.to_owned(), chars, max })
            } else if value.chars().any(char::is_control) {
                Err(CommandError::ControlCharacter { what: what.to_owned() })
            } else {
                Ok(())
            }
        };
        match self {
            Self::NextRound { round, tags, pairings } => {
                text("the round", round, MAX_NAME_CHARS)?;
                if pairings.len() > MAX_PAIRINGS {
                    return Err(CommandError::TooManyPairings(pairings.len()));
                }
                check_tags(tags, &text)?;
                for (board, tags) in pairings {
                    if board_key(board).is_none() {
                        return Err(CommandError::NotABoardNumber(board.clone()));
                    }
                    check_tags(tags, &text)?;
                }
                Ok(())
            }
            Self::SetResult { result, .. } => text("the result", result, MAX_NAME_CHARS),
            Self::Promote { piece } => text("the piece", piece, MAX_NAME_CHARS),
            Self::SetPosition { fen } => text("the FEN", fen, MAX_FEN_CHARS),
            Self::ClockText { text: message } => text("the clock text", message, 8),
            Self::Moves { san } => {
                if san.len() > MAX_MOVES {
                    return Err(CommandError::TooManyMoves(san.len()));
                }
                san.iter().try_for_each(|m| text("a move", m, MAX_NAME_CHARS))
            }
            Self::SetTags { tags } => check_tags(tags, &text),
            Self::AssignBoard(assignment) => {
                let Assignment { family, port, serial, label, white, black, by } = assignment.as_ref();
                text("the family", family, MAX_NAME_CHARS)?;
                text("the board's label", label, MAX_NAME_CHARS)?;
                text("the port", port.as_deref().unwrap_or_default(), MAX_TAG_VALUE_CHARS)?;
                for (what, value) in
                    [("the serial number", serial), ("White", white), ("Black", black), ("the account", by)]
                {
                    text(what, value.as_deref().unwrap_or_default(), MAX_ASSIGN_TEXT_CHARS)?;
                }
                Ok(())
            }
            Self::Identify { text: message } => text("the clock text", message.as_deref().unwrap_or_default(), 8),
            Self::UnassignBoard { by } => text("the account", by.as_deref().unwrap_or_default(), MAX_ASSIGN_TEXT_CHARS),
            Self::NewGame | Self::TakeBack | Self::Flip | Self::Calibrate | Self::AcknowledgeAlert { .. } => Ok(()),
        }
    }
}

/// The board number a key of `next_round`'s `pairings` names.
pub fn board_key(key: &str) -> Option<u32> {
    key.parse().ok().filter(|n| *n > 0)
}

/// Whether tags keep within the bounds: their number, their names (PGN
/// tag names), their values; `text` checks a text's length and characters.
fn check_tags(
    tags: &BTreeMap<String, String>,
    text: &impl Fn(&str, &str, usize) -> Result<(), CommandError>,
) -> Result<(), CommandError> {
    if tags.len() > MAX_TAGS {
        return Err(CommandError::TooManyTags(tags.len()));
    }
    for (name, value) in tags {
        text("a tag name", name, MAX_NAME_CHARS)?;
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(CommandError::TagName(name.clone()));
        }
        text(&format!("the value of tag {name}"), value, MAX_TAG_VALUE_CHARS)?;
    }
    Ok(())
}

impl std::fmt::Display for Command {
    /// `set_result 1-0 (resignation)`, for logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NextRound { round, tags, pairings } => {
                write!(f, "next_round {round}")?;
                if !pairings.is_empty() {
                    write!(f, " with the pairings of {} boards", pairings.len())?;
                }
                if let (Some(white), Some(black)) = (tags.get("White"), tags.get("Black")) {
                    write!(f, ": {white} - {black}")?;
                }
                Ok(())
            }
            Self::SetResult { result, reason } => write!(f, "set_result {result} ({reason:?})"),
            Self::Moves { san } => write!(f, "moves {}", san.join(" ")),
            Self::Promote { piece } => write!(f, "promote {piece}"),
            Self::SetPosition { fen } => write!(f, "set_position {fen}"),
            Self::SetTags { tags } => {
                let tags: Vec<String> = tags.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
                write!(f, "set_tags {}", tags.join(" "))
            }
            Self::AcknowledgeAlert { game, seq } => write!(f, "acknowledge_alert game {game} #{seq}"),
            Self::ClockText { text } => write!(f, "clock_text {text:?}"),
            Self::AssignBoard(assignment) => {
                let Assignment { family, label, port, serial, .. } = assignment.as_ref();
                let at = serial.as_ref().map_or_else(
                    || format!("at {}", port.as_deref().unwrap_or("?")),
                    |serial| format!("serial {serial}"),
                );
                write!(f, "assign_board {family} {at} as {label}")
            }
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn commands_read_and_write_the_documented_json() {
        let result = Command::SetResult { result: "1-0".into(), reason: Reason::Resignation };
        assert_eq!(result.to_json(), json!({"command": "set_result", "result": "1-0", "reason": "resignation"}));
        assert_eq!(Command::from_json(result.to_json()).unwrap(), result);
        assert_eq!(Command::from_json(json!({"command": "take_back"})).unwrap(), Command::TakeBack);
        assert_eq!(
            Command::from_json(json!({"command": "clock_text", "text": "Rd 3 ok"})).unwrap(),
            Command::ClockText { text: "Rd 3 ok".into() }
        );
        let long = Command::from_json(json!({"command": "clock_text", "text": "nine char"})).unwrap_err();
        assert_eq!(long.to_string(), "the clock text is 9 characters long; at most 8");
        let tags = Command::from_json(json!({"command": "set_tags", "tags": {"White": "Carlsen, M."}})).unwrap();
        assert_eq!(tags.to_string(), "set_tags White=\"Carlsen, M.\"");
        assert_eq!(
            Command::from_json(json!({"command": "set_result", "result": "0-1"})).unwrap(),
            Command::SetResult { result: "0-1".into(), reason: Reason::Arbiter }
        );
        assert_eq!(
            Command::from_json(json!({"command": "promote", "piece": "knight"})).unwrap(),
            Command::Promote { piece: "knight".into() }
        );
        let error = Command::from_json(json!({"command": "resign"})).unwrap_err().to_string();
        assert!(error.contains("unknown variant `resign`") && error.contains("commands: new_game"), "{error}");
        let assign = json!({"command": "assign_board", "family": "millennium", "port": "/dev/ttyACM3", "label": "7", "white": "A"});
        let assign = Command::from_json(assign).unwrap();
        assert_eq!(assign.to_string(), "assign_board millennium at /dev/ttyACM3 as 7");
        assert_eq!(Command::from_json(assign.to_json()).unwrap(), assign, "an assignment goes through JSON unchanged");
        let identify = Command::from_json(json!({"command": "identify", "text": "7"})).unwrap();
        assert_eq!(identify, Command::Identify { text: Some("7".into()) });
        assert_eq!(Command::from_json(json!({"command": "identify"})).unwrap(), Command::Identify { text: None });
        assert_eq!(Command::from_json(json!({"command": "calibrate"})).unwrap(), Command::Calibrate);
        assert_eq!(Command::Calibrate.name(), "calibrate");
        let unassign = Command::from_json(json!({"command": "unassign_board", "by": "op"})).unwrap();
        assert_eq!(unassign.name(), "unassign_board");
        let error = Command::from_json(json!({"command": "next_round"})).unwrap_err().to_string();
        assert!(error.contains("missing field `round`"), "{error}");
    }

    #[test]
    fn commands_out_of_bounds_are_refused_with_the_bound() {
        let tags = |name: &str, value: &str| json!({"command": "set_tags", "tags": {name: value}});
        let refused = |value| Command::from_json(value).unwrap_err().to_string();
        assert!(refused(tags("White", "A\n[Event \"x\"]")).contains("line break"));
        assert!(refused(tags("White", &"a".repeat(1025))).contains("1025 characters long; at most 1024"));
        assert!(refused(tags("Whi te", "a")).contains("not a PGN tag name"));
        assert!(refused(tags(&"T".repeat(65), "a")).contains("at most 64"));
        let many: serde_json::Map<String, serde_json::Value> = (0..65).map(|i| (format!("T{i}"), json!("v"))).collect();
        assert!(refused(json!({"command": "set_tags", "tags": many})).contains("65 tags in one command; at most 64"));
        assert!(refused(json!({"command": "set_position", "fen": "8/".repeat(100)})).contains("at most 128"));
        assert!(refused(json!({"command": "next_round", "round": "2\r"})).contains("control character"));
        assert!(refused(json!({"command": "moves", "san": vec!["e4"; 601]})).contains("601 moves"));
        assert!(Command::from_json(tags("White", &"a".repeat(1024))).is_ok());
        assert!(Command::from_json(tags("White", "")).is_ok(), "an empty value removes a tag");
        let paired = json!({"command": "next_round", "round": "2", "pairings": {"1": {"White": "A", "WhiteElo": ""}}});
        let paired = Command::from_json(paired).unwrap();
        assert_eq!(Command::from_json(paired.to_json()).unwrap(), paired, "pairings go through JSON unchanged");
        let not_a_board = json!({"command": "next_round", "round": "2", "pairings": {"top": {"White": "A"}}});
        assert!(refused(not_a_board).contains("\"top\" is not a board number"));
        let bad_tag = json!({"command": "next_round", "round": "2", "pairings": {"1": {"White": "A\nB"}}});
        assert!(refused(bad_tag).contains("line break"));
    }
}
