//! What one board publishes: `state`, `moves`, `clock`, `pgn`, an
//! acknowledgement on `alerts`, and its `…/boards/<serial>/status`
//! (docs/mqtt.md). Built by [`BoardFeed`](crate::publish::board::BoardFeed).

use serde::Serialize;

use super::{Clock, Display, Envelope, Place, Players};

/// `…/<board>/state`: the whole picture of the board, self-contained (a
/// display that joins late needs nothing else). Docs/mqtt.md, "`state`".
#[derive(Clone, Debug, Serialize)]
pub struct StatePayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// `event`, `round`.
    #[serde(flatten)]
    pub place: Place<'a>,
    /// The latest event's game; absent before the board's first event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game: Option<u32>,
    /// The latest event's `seq`; absent before the board's first event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// `connected`, `disconnected` or `unknown`.
    pub connection: &'static str,
    /// `awaiting_start`, `in_sync` or `out_of_sync`.
    pub status: &'static str,
    /// The squares where board and game differ (empty unless out of sync).
    pub out_of_sync_squares: Vec<String>,
    /// The latest clock reading, or `null`.
    pub clock: Option<Clock>,
    /// The position; `null` before the first game.
    pub fen: Option<String>,
    /// What only a game has (`turn` … `last_move`); absent before the
    /// first game.
    #[serde(flatten)]
    pub record: Option<StateGame<'a>>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: &'static str,
    /// How the game ended, or `null`; absent before the first game.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub termination: Option<Option<&'static str>>,
    /// While no game is on the board (a round started, its game not yet
    /// begun): the players of its next game, as `players`; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_players: Option<Players<'a>>,
}

/// The fields of `state` a game has.
#[derive(Clone, Debug, Serialize)]
pub struct StateGame<'a> {
    /// `white` or `black`: who is to move.
    pub turn: &'static str,
    /// Plies on the record.
    pub ply: usize,
    /// Plies completed (article 6.12): the last move is only made while
    /// `ply` is greater.
    pub completed_plies: usize,
    /// White's name when known, else `null`.
    pub white: Option<&'a str>,
    /// Black's name when known, else `null`.
    pub black: Option<&'a str>,
    /// The last move on the record, or `null`.
    pub last_move: Option<LastMove>,
    /// Both players: name, title, rating, federation, FIDE id.
    pub players: Players<'a>,
    /// For each ply, the mover's clock after it, or `null` where it was
    /// not read (a move only made has none yet).
    pub clocks_ms: Vec<Option<u64>>,
    /// For each ply, the time its mover took: from the opponent's press of
    /// the clock to the mover's own (without presses, between the moves
    /// shown on the board); `null` for the first ply.
    pub spent_ms: Vec<Option<u64>>,
}

/// `state`'s `last_move`.
#[derive(Clone, Debug, Serialize)]
pub struct LastMove {
    /// Its half-move number, from 1.
    pub ply: usize,
    /// Who moved.
    pub color: &'static str,
    /// The move in SAN.
    pub san: String,
    /// The move in UCI.
    pub uci: String,
    /// `made` or `completed`.
    pub status: &'static str,
    /// An illegal move that stood (A.5.2).
    pub illegal: bool,
    /// Filled in from a later board rather than seen.
    pub inferred: bool,
    /// The move in each display language.
    pub display: Display,
    /// The move as spoken (appendix D.2.1).
    pub spoken: String,
    /// The mover's clock after the move, or `null`.
    pub clock_ms: Option<u64>,
    /// The time the mover took, or `null`.
    pub spent_ms: Option<u64>,
}

/// `…/<board>/moves`: one move event. Docs/mqtt.md, "`moves`".
#[derive(Clone, Debug, Serialize)]
pub struct MovePayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// `event`, `round`.
    #[serde(flatten)]
    pub place: Place<'a>,
    /// Which game of the session, from 1.
    pub game: u32,
    /// The event's place in the game's sequence.
    pub seq: u64,
    /// `made`, `completed`, `amended` or `retracted`.
    pub kind: &'static str,
    /// Half-move number, from 1.
    pub ply: usize,
    /// Who moved.
    pub color: &'static str,
    /// The move (for `retracted`: the move taken back).
    pub san: String,
    /// The move in UCI.
    pub uci: &'a str,
    /// An illegal move that stood (A.5.2).
    pub illegal: bool,
    /// Not seen on its own but filled in from a later board.
    pub inferred: bool,
    /// Its order with a neighbouring move could not be seen (R10).
    pub order_uncertain: bool,
    /// The position after this event (for `retracted`: the position the
    /// move was taken back to).
    pub fen: String,
    /// The move in each language of `mqtt.languages` (rules.md N2).
    pub display: Display,
    /// The announcement of appendix D.2.1 (rules.md N3).
    pub spoken: String,
    /// `amended` only: the move replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaces: Option<Replaces>,
    /// `completed` only: the mover's remaining time after the move, or
    /// `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_ms: Option<Option<u64>>,
}

/// `moves`' `replaces`: the move an `amended` replaced.
#[derive(Clone, Debug, Serialize)]
pub struct Replaces {
    /// In SAN.
    pub san: String,
    /// In UCI.
    pub uci: String,
}

/// `…/<board>/clock`: the clock, at every change. Docs/mqtt.md, "`clock`".
#[derive(Clone, Debug, Serialize)]
pub struct ClockPayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// Which game of the session.
    pub game: u32,
    /// The reading's place in the game's sequence.
    pub seq: u64,
    /// The reading (`null` never in practice: a clock event has one).
    pub clock: Option<Clock>,
}

/// `…/<board>/pgn`: the current game, exactly as the board's PGN file.
/// Docs/mqtt.md, "`pgn`".
#[derive(Clone, Debug, Serialize)]
pub struct PgnPayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// `event`, `round`.
    #[serde(flatten)]
    pub place: Place<'a>,
    /// Which game of the session.
    pub game: u32,
    /// The game as PGN.
    pub pgn: String,
}

/// `…/<board>/alerts` when an operator marks an alert as dealt with
/// (docs/operator.md, `ack`).
#[derive(Clone, Debug, Serialize)]
pub struct AcknowledgedPayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// The acknowledgement's game.
    pub game: u32,
    /// The acknowledgement's place in the game's sequence.
    pub seq: u64,
    /// `acknowledged`.
    pub kind: &'static str,
    /// The acknowledged alert's `game`.
    pub alert_game: u32,
    /// The acknowledged alert's `seq`.
    pub alert_seq: u64,
}

/// `bridges/<id>/boards/<serial>/status`: one board's connection.
/// Docs/mqtt.md, "Bridge and board status".
#[derive(Clone, Debug, Serialize)]
pub struct BoardStatusPayload<'a> {
    /// `schema`, `boot`, `session`, `ts_ms`, `board`.
    #[serde(flatten)]
    pub envelope: Envelope<'a>,
    /// The board's serial number, once it has told it, else `null`.
    pub serial: Option<&'a str>,
    /// `connected`, `disconnected` or `unknown`.
    pub connection: &'static str,
    /// `awaiting_start`, `in_sync` or `out_of_sync`.
    pub sync: &'static str,
    /// The board's firmware version, once told, else `null`.
    pub firmware: Option<&'a str>,
    /// The battery's charge; `null` for boards on a cable.
    pub battery_percent: Option<u8>,
    /// The game board's name for a visually impaired player's board that
    /// mirrors its game, else `null`.
    pub mirror_of: Option<&'a str>,
    /// The board's label in topics and PGN file names (its board number).
    pub label: &'a str,
    /// The board's family (`dgt`, `millennium`, `certabo`, …), once the
    /// daemon was told it, else `null`.
    pub family: Option<&'a str>,
    /// The device the board is read from when the configuration names it,
    /// else `null` (a board found by its serial number).
    pub port: Option<&'a str>,
    /// When the current `connection` began (wall-clock milliseconds), or
    /// `null` while it is `unknown`.
    pub connected_since_ms: Option<i64>,
    /// The clock the board reports: `dgt3000`, `attached` (a clock of
    /// another or unknown model), `none`, or `null` before it said.
    pub clock: Option<&'static str>,
    /// Whether the board was assigned in the operator console (kept in the
    /// bridge's state file), so that the console offers to un-assign it;
    /// `false` for a board of the configuration file.
    pub assigned: bool,
}
