//! One board's publications: what its session's outputs mean for the
//! topics of docs/mqtt.md. Sans-I/O: outputs and the game records go in,
//! [`Item`]s come out; the wall-clock time of each event is the session's
//! start time plus the event's session time, so the same capture always
//! gives the same payloads.
//!
//! Move and alert messages go out as their events come. The retained
//! topics (state, PGN, summary entry) describe the board as a whole, so
//! they are built once per batch of outputs, when the feed (a [`Sink`]) is
//! flushed:
//! a batch that fills in three moves gives three move messages and one
//! state.

use std::{collections::VecDeque, sync::Arc};

use serde_json::Value;
use shakmaty::{Chess, EnPassantMode, Position, fen::Fen, uci::UciMove};

use super::{
    Item, Publication, Qos,
    payload::{
        self, AcknowledgedPayload, AlertFields, AlertPayload, BoardStatusPayload, Clock, ClockPayload, Display,
        Envelope, LastMove, MovePayload, PgnPayload, Place, Players, Replaces, StateGame, StatePayload, SummaryEntry,
        SummaryGame,
    },
    render::{Language, color_name, localized, translate},
    spoken::{spoken, spoken_illegal},
    topics::{BoardPath, BoardTopic, Topics, Tree},
};
use crate::{
    event::{BoardStatus, ClockState, Event, EventKind, MoveInfo},
    game::{GameRecord, MoveStatus, Notation, PlyMove, pgn::to_pgn},
    protocol::BoardInfo,
    session::{NoticeKind, Output},
    sink::{Games, Sink},
    time::Timestamp,
};

/// What every board's feed shares.
#[derive(Clone, Debug)]
pub struct FeedSettings {
    /// Topic names.
    pub topics: Topics,
    /// This run of the daemon (changes at every start).
    pub boot: Arc<str>,
    /// The languages move payloads are rendered in.
    pub languages: Vec<Language>,
}

/// Whether the board's port is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Connection {
    Unknown,
    Connected,
    Disconnected,
}

impl Connection {
    const fn name(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Connected => "connected",
            Self::Disconnected => "disconnected",
        }
    }
}

/// What the board said of its clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClockKind {
    /// No clock on the board's cable.
    Absent,
    /// A clock, of another or an unknown model.
    Attached,
    /// A DGT 3000, which can show text (`clock-text`).
    Dgt3000,
}

impl ClockKind {
    const fn name(self) -> &'static str {
        match self {
            Self::Absent => "none",
            Self::Attached => "attached",
            Self::Dgt3000 => "dgt3000",
        }
    }
}

/// One board's publications.
#[derive(Debug)]
pub struct BoardFeed {
    settings: FeedSettings,
    /// The board's configured name.
    name: String,
    /// The recording session the games belong to (the capture's name):
    /// the same after the daemon resumes them, unlike the boot id.
    session: String,
    path: BoardPath,
    /// Wall-clock milliseconds since 1970 at session time zero.
    epoch_ms: i64,
    clock: Option<(ClockState, Timestamp)>,
    status: BoardStatus,
    connection: Connection,
    serial: Option<String>,
    firmware: Option<String>,
    battery: Option<u8>,
    /// The board's family and configured device (see [`BoardFeed::describe`]).
    family: Option<String>,
    port: Option<String>,
    /// When the current connection state began (`None` while unknown).
    connection_t: Option<Timestamp>,
    /// What the board said of its clock.
    clock_kind: Option<ClockKind>,
    /// When the board's connection, serial number, firmware or battery
    /// last changed, and when its `sync` did: the board status topic tells
    /// them apart, since only the second is the game's (the hub delays it).
    status_t: Timestamp,
    sync_t: Timestamp,
    /// The topic the bridge status went to under the board's name, before
    /// its serial number was known (cleared once it is).
    status_under_name: bool,
    /// The latest event: game, seq and time.
    last: Option<(u32, u64, Timestamp)>,
    /// The state, PGN or board status need publishing at the next flush.
    state_dirty: bool,
    pgn_dirty: bool,
    board_status_dirty: bool,
    /// A visually impaired player's board mirroring this game board's game
    /// (Laws appendix D): only its connection and sync are published, in
    /// its board status; the game is the game board's.
    mirror_of: Option<String>,
    /// Assigned in the console rather than configured.
    assigned: bool,
    /// The tags the latest `tags_changed` carried: while no game is on the
    /// board (after `next_round`), those of its next game, whose players
    /// the state names at once rather than when the game begins.
    next_tags: Vec<(String, String)>,
    out: VecDeque<Item>,
}

impl BoardFeed {
    /// The feed of board `name`, published under `path`, whose recording
    /// session `session` started at `epoch_ms` (wall clock).
    pub fn new(settings: FeedSettings, name: &str, path: BoardPath, epoch_ms: i64, session: &str) -> Self {
        Self {
            settings,
            name: name.to_owned(),
            session: session.to_owned(),
            path,
            epoch_ms,
            clock: None,
            status: BoardStatus::AwaitingStart,
            connection: Connection::Unknown,
            serial: None,
            firmware: None,
            battery: None,
            family: None,
            port: None,
            connection_t: None,
            clock_kind: None,
            status_t: Timestamp::ZERO,
            sync_t: Timestamp::ZERO,
            status_under_name: false,
            last: None,
            state_dirty: true,
            pgn_dirty: false,
            board_status_dirty: false,
            mirror_of: None,
            assigned: false,
            next_tags: Vec::new(),
            out: VecDeque::new(),
        }
    }

    /// Says what the board is for its status (the console's hall view):
    /// its family and, when the configuration names one, its device.
    pub fn describe(&mut self, family: &str, port: Option<&str>) {
        self.family = Some(family.to_owned());
        self.port = port.map(str::to_owned);
        self.board_status_dirty = true;
    }

    /// The board was assigned in the operator console (its status says
    /// so, for the console to offer Un-assign).
    pub fn assigned(&mut self) {
        self.assigned = true;
        self.board_status_dirty = true;
    }

    /// Makes this the feed of a board mirroring `game_board`'s game: no
    /// state, moves, PGN, clock, alerts or summary entry of its own (the
    /// PGN and feed are the game's, once), only its board status, which
    /// names the game board.
    pub fn mirror_of(&mut self, game_board: &str) {
        self.mirror_of = Some(game_board.to_owned());
        self.state_dirty = false;
        self.pgn_dirty = false;
        self.board_status_dirty = true;
    }

    fn handle_event(&mut self, event: &Event, games: Games<'_>) {
        self.last = Some((event.game, event.seq, event.t));
        if self.mirror_of.is_some() {
            let status = match &event.kind {
                EventKind::GameStarted { .. } => BoardStatus::InSync,
                EventKind::Status(status) => status.clone(),
                _ => return,
            };
            self.set_sync(status, event.t);
            return;
        }
        let game = games.by_number(event.game);
        match &event.kind {
            EventKind::GameStarted { .. } => {
                // A game starts from a board that shows its start position:
                // the reconstructor says nothing more until something goes
                // wrong, so the feed must leave `awaiting_start` here.
                self.set_sync(BoardStatus::InSync, event.t);
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::GameEnded(_) | EventKind::GameClosed => {
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::TagsChanged(tags) => {
                // A board moved to another round (or event) publishes there
                // from now on; what it published before stays where it was.
                let tag = |name: &str| tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
                let event_name = tag("Event").map_or_else(|| self.path.event.clone(), crate::publish::topics::level);
                let round = tag("Round").map_or_else(|| self.path.round.clone(), crate::publish::topics::level);
                self.path = BoardPath { event: event_name, round, board: self.path.board.clone() };
                self.next_tags.clone_from(tags);
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::AlertAcknowledged { game, seq } => {
                let payload = AcknowledgedPayload {
                    envelope: self.envelope(event.t),
                    game: event.game,
                    seq: event.seq,
                    kind: "acknowledged",
                    alert_game: *game,
                    alert_seq: *seq,
                };
                self.publish(BoardTopic::Alerts, payload::to_value(&payload), false, Qos::AtLeastOnce, false);
            }
            EventKind::MoveMade(m) => {
                let payload = self.move_payload(event, "made", m, game, None);
                self.publish(BoardTopic::Moves, payload::to_value(&payload), false, Qos::AtLeastOnce, true);
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::MoveCompleted { ply, clock_ms } => {
                if let Some(info) = game.and_then(|g| ply_info(g, *ply)) {
                    let mut payload = self.move_payload(event, "completed", &info, game, None);
                    payload.clock_ms = Some(*clock_ms);
                    self.publish(BoardTopic::Moves, payload::to_value(&payload), false, Qos::AtLeastOnce, true);
                }
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::MoveAmended { previous, now } => {
                let payload = self.move_payload(event, "amended", now, game, Some(previous));
                self.publish(BoardTopic::Moves, payload::to_value(&payload), false, Qos::AtLeastOnce, true);
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::MoveRetracted { previous } => {
                let payload = self.move_payload(event, "retracted", previous, game, None);
                self.publish(BoardTopic::Moves, payload::to_value(&payload), false, Qos::AtLeastOnce, true);
                self.state_dirty = true;
                self.pgn_dirty = true;
            }
            EventKind::Clock(clock) => {
                self.clock = Some((*clock, event.t));
                self.clock_seen(ClockKind::Attached, event.t);
                let payload = ClockPayload {
                    envelope: self.envelope(event.t),
                    game: event.game,
                    seq: event.seq,
                    clock: self.clock_reading(),
                };
                self.publish(BoardTopic::Clock, payload::to_value(&payload), true, Qos::AtMostOnce, true);
                self.state_dirty = true;
            }
            EventKind::Status(status) => {
                self.set_sync(status.clone(), event.t);
                self.state_dirty = true;
            }
            EventKind::Alert(alert) => {
                let payload = AlertPayload {
                    envelope: self.envelope(event.t),
                    alert: AlertFields::of(alert, None, event.game, event.seq),
                };
                // Alerts are for arbiters: never in the public tree.
                self.publish(BoardTopic::Alerts, payload::to_value(&payload), false, Qos::AtLeastOnce, false);
            }
        }
    }

    /// The board's sync is now `status`, since `t`.
    fn set_sync(&mut self, status: BoardStatus, t: Timestamp) {
        if status.name() != self.status.name() {
            self.sync_t = t;
        }
        self.status = status;
        self.board_status_dirty = true;
    }

    /// The board told `kind` of its clock at `t`: a reading says a clock
    /// is there, but not which model, so it does not undo `dgt3000`.
    fn clock_seen(&mut self, kind: ClockKind, t: Timestamp) {
        let kind = match (self.clock_kind, kind) {
            (Some(ClockKind::Dgt3000), ClockKind::Attached) => ClockKind::Dgt3000,
            (_, kind) => kind,
        };
        if self.clock_kind != Some(kind) {
            self.clock_kind = Some(kind);
            self.status_t = t;
            self.board_status_dirty = true;
        }
    }

    /// The connection is now `connection`, since `t` if it changed.
    fn set_connection(&mut self, connection: Connection, t: Timestamp) {
        if self.connection != connection {
            self.connection = connection;
            self.connection_t = Some(t);
        }
    }

    fn handle_notice(&mut self, notice: &NoticeKind, t: Timestamp) {
        match notice {
            NoticeKind::Connected => self.set_connection(Connection::Connected, t),
            NoticeKind::Disconnected => self.set_connection(Connection::Disconnected, t),
            // ack1 0x09 answers the version request; ack2's high nibble is
            // the major version, 2 for a DGT 3000 (as protocol/dgt/display.rs).
            NoticeKind::Board(BoardInfo::ClockAck([0x10, 0x09, version, _])) => {
                let kind = if version >> 4 == 2 { ClockKind::Dgt3000 } else { ClockKind::Attached };
                return self.clock_seen(kind, t);
            }
            NoticeKind::Board(BoardInfo::ClockAbsent) => return self.clock_seen(ClockKind::Absent, t),
            NoticeKind::Board(BoardInfo::Serial(serial)) => {
                if self.serial.as_ref() == Some(serial) {
                    return;
                }
                if self.status_under_name {
                    // The status was published under the name while the
                    // serial number was unknown: clear that retained topic.
                    let topic = self.settings.topics.board_status(&self.name);
                    self.out.push_back(Item::Publish(Publication::clear(topic)));
                    self.status_under_name = false;
                }
                self.serial = Some(serial.clone());
            }
            NoticeKind::Board(BoardInfo::Version(version)) => self.firmware = Some(version.clone()),
            NoticeKind::Board(BoardInfo::Battery(percent)) => self.battery = Some(*percent),
            _ => return,
        }
        self.status_t = t;
        self.state_dirty = true;
        self.board_status_dirty = true;
    }

    /// Publishes what the outputs since the last flush changed: state, PGN,
    /// the round summary's entry and the board's status.
    fn publish_changes(&mut self, games: Games<'_>) {
        let t = self.last.map_or(Timestamp::ZERO, |(_, _, t)| t);
        if self.mirror_of.is_some() {
            self.state_dirty = false;
            self.pgn_dirty = false;
        }
        if self.state_dirty {
            self.state_dirty = false;
            let game = games.current();
            let state = payload::to_value(&self.state_payload(game, t));
            let entry = payload::to_value(&self.summary_entry(game, t));
            self.publish(BoardTopic::State, state, true, Qos::AtMostOnce, true);
            self.out.push_back(Item::SummaryEntry {
                round: self.path.round_path(),
                board: self.path.board.clone(),
                entry,
            });
        }
        if self.pgn_dirty {
            self.pgn_dirty = false;
            if let Some(game) = games.current() {
                let payload = PgnPayload {
                    envelope: self.envelope(t),
                    place: self.place(),
                    game: game.number,
                    pgn: to_pgn(game),
                };
                self.publish(BoardTopic::Pgn, payload::to_value(&payload), true, Qos::AtMostOnce, true);
            }
        }
        if self.board_status_dirty {
            self.board_status_dirty = false;
            let key = self.serial.clone().unwrap_or_else(|| self.name.clone());
            self.status_under_name = self.serial.is_none();
            // Its time is that of the board's own news, not of the game's
            // latest event (which the public may not see yet); the hub
            // gives it the time of the delayed sync where that is later.
            let payload = payload::to_value(&BoardStatusPayload {
                envelope: self.envelope(self.status_t),
                serial: self.serial.as_deref(),
                connection: self.connection.name(),
                sync: self.status.name(),
                firmware: self.firmware.as_deref(),
                battery_percent: self.battery,
                mirror_of: self.mirror_of.as_deref(),
                assigned: self.assigned,
                label: &self.path.board,
                family: self.family.as_deref(),
                port: self.port.as_deref(),
                connected_since_ms: self.connection_t.map(|t| self.wall_ms(t)),
                clock: self.clock_kind.map(ClockKind::name),
            });
            let topic = self.settings.topics.board_status(&key);
            self.out.push_back(Item::BoardStatus {
                board: self.name.clone(),
                publication: Publication {
                    topic,
                    payload: Some(payload),
                    retain: true,
                    qos: Qos::AtMostOnce,
                    public: false,
                },
                sync_ts_ms: self.wall_ms(self.sync_t),
            });
        }
    }

    /// Publishes `payload` on the board's `topic` (payloads borrow from
    /// the feed, so they come here as values).
    fn publish(&mut self, topic: BoardTopic, payload: Value, retain: bool, qos: Qos, public: bool) {
        let topic = self.settings.topics.board(Tree::Live, &self.path, topic);
        self.out.push_back(Item::Publish(Publication { topic, payload: Some(payload), retain, qos, public }));
    }

    /// The fields every payload has.
    fn envelope(&self, t: Timestamp) -> Envelope<'_> {
        Envelope {
            schema: payload::SCHEMA,
            boot: &self.settings.boot,
            session: &self.session,
            ts_ms: self.wall_ms(t),
            board: &self.name,
        }
    }

    /// Event and round levels of the topic, for consumers reading a
    /// wildcard subscription.
    fn place(&self) -> Place<'_> {
        Place { event: &self.path.event, round: &self.path.round }
    }

    fn wall_ms(&self, t: Timestamp) -> i64 {
        self.epoch_ms + (t.as_micros() / 1000) as i64
    }

    fn clock_reading(&self) -> Option<Clock> {
        self.clock.map(|(clock, t)| Clock {
            white_ms: clock.white_ms,
            black_ms: clock.black_ms,
            running: clock.running.map(color_name),
            read_at_ms: self.wall_ms(t),
        })
    }

    /// A move message: the move, the position after the event, and the move
    /// for people (display languages, spoken).
    fn move_payload<'a>(
        &'a self,
        event: &Event,
        kind: &'static str,
        m: &'a MoveInfo,
        game: Option<&GameRecord>,
        replaces: Option<&MoveInfo>,
    ) -> MovePayload<'a> {
        // The position after the event: for a retraction, the one the move
        // was taken back to.
        let fen = match (kind, game) {
            ("retracted", Some(game)) => fen(game.position()),
            _ => m.fen(),
        };
        let before = game.filter(|g| m.ply >= 1 && m.ply - 1 <= g.plies.len()).map(|g| g.position_before(m.ply - 1));
        let (display, spoken) = self.for_people(m, before);
        MovePayload {
            envelope: self.envelope(event.t),
            place: self.place(),
            game: event.game,
            seq: event.seq,
            kind,
            ply: m.ply,
            color: color_name(m.mover),
            san: m.san.to_string(),
            uci: &m.uci,
            illegal: m.illegal(),
            inferred: m.inferred,
            order_uncertain: m.order_uncertain,
            fen,
            display,
            spoken,
            replaces: replaces.map(|previous| Replaces { san: previous.san.to_string(), uci: previous.uci.clone() }),
            clock_ms: None,
        }
    }

    /// The move in each display language, and spoken.
    fn for_people(&self, m: &MoveInfo, before: Option<&Chess>) -> (Display, String) {
        let legal = before.and_then(|pos| {
            let uci = m.uci.parse::<UciMove>().ok()?;
            uci.to_move(pos).ok().map(|mv| (pos, mv))
        });
        let mut display = Display::default();
        let words = match (&m.san, legal) {
            (Notation::San(_), Some((pos, mv))) => {
                for &language in &self.settings.languages {
                    display.0.push((language.code(), localized(pos, mv, language)));
                }
                spoken(pos, mv)
            }
            (Notation::Illegal(illegal), _) => {
                for &language in &self.settings.languages {
                    display.0.push((language.code(), translate(&m.san.to_string(), language)));
                }
                spoken_illegal(illegal)
            }
            // The move's position is gone (a later batch replaced it):
            // letters from the SAN still translate.
            (Notation::San(_), None) => {
                for &language in &self.settings.languages {
                    display.0.push((language.code(), translate(&m.san.to_string(), language)));
                }
                String::new()
            }
        };
        (display, words)
    }

    /// The whole picture of the board, self-contained (a display that
    /// joins late needs nothing else).
    fn state_payload<'a>(&'a self, game: Option<&'a GameRecord>, t: Timestamp) -> StatePayload<'a> {
        let squares: Vec<String> = match &self.status {
            BoardStatus::OutOfSync { squares } => squares.iter().map(ToString::to_string).collect(),
            _ => Vec::new(),
        };
        let mut payload = StatePayload {
            envelope: self.envelope(t),
            place: self.place(),
            game: self.last.map(|(game, _, _)| game),
            seq: self.last.map(|(_, seq, _)| seq),
            connection: self.connection.name(),
            status: self.status.name(),
            out_of_sync_squares: squares,
            clock: self.clock_reading(),
            fen: None,
            record: None,
            result: "*",
            termination: None,
            next_players: None,
        };
        let Some(game) = game else {
            let next = Players::of(&self.next_tags);
            if next.white.name.is_some() || next.black.name.is_some() {
                payload.next_players = Some(next);
            }
            return payload;
        };
        let position = game.position();
        let last_move = game.plies.last().map(|ply| {
            let index = game.plies.len() - 1;
            let info = crate::event::MoveInfo {
                ply: index + 1,
                mover: ply.mover,
                san: ply.san,
                uci: ply.uci(game.castling_mode),
                after: Box::new(ply.after.clone()),
                inferred: ply.inferred,
                order_uncertain: ply.order_uncertain,
            };
            let (display, spoken) = self.for_people(&info, Some(game.position_before(index)));
            LastMove {
                ply: index + 1,
                color: color_name(ply.mover),
                san: ply.san.to_string(),
                uci: info.uci,
                status: if ply.status == MoveStatus::Completed { "completed" } else { "made" },
                illegal: matches!(ply.mv, PlyMove::Illegal(_)),
                inferred: ply.inferred,
                display,
                spoken,
                clock_ms: ply.clock_ms,
                spent_ms: game.spent_ms(index),
            }
        });
        payload.fen = Some(fen(position));
        payload.record = Some(StateGame {
            turn: color_name(position.turn()),
            ply: game.plies.len(),
            completed_plies: game.completed_plies(),
            white: game.tag("White"),
            black: game.tag("Black"),
            last_move,
            players: Players::of(&game.tags),
            clocks_ms: game.plies.iter().map(|p| p.clock_ms).collect(),
            spent_ms: (0..game.plies.len()).map(|i| game.spent_ms(i)).collect(),
        });
        let (result, termination) = match &game.result {
            Some(result) => (result.pgn(), Some(result.termination.describe())),
            None => ("*", None),
        };
        payload.result = result;
        payload.termination = Some(termination);
        payload
    }

    /// This board's line in the round summary: compact.
    fn summary_entry<'a>(&'a self, game: Option<&'a GameRecord>, t: Timestamp) -> SummaryEntry<'a> {
        SummaryEntry {
            board: &self.name,
            // The board's topic level: a display opens the board by it.
            label: &self.path.board,
            ts_ms: self.wall_ms(t),
            connection: self.connection.name(),
            status: self.status.name(),
            clock: self.clock_reading(),
            record: game.map(|game| SummaryGame {
                game: game.number,
                white: game.tag("White"),
                black: game.tag("Black"),
                fen: fen(game.position()),
                ply: game.plies.len(),
                // Lets an overview mark a move made but not yet completed
                // (6.12), as the board page does.
                completed_plies: game.completed_plies(),
                last_san: game.plies.last().map(|p| p.san.to_string()),
                result: game.result.as_ref().map_or("*", |r| r.pgn()),
                termination: game.result.as_ref().map(|r| r.termination.describe()),
                players: Players::of(&game.tags),
            }),
        }
    }
}

/// The feed is a sink of its board's outputs: moves and alerts are
/// published as their events come, the retained topics once per batch.
impl Sink for BoardFeed {
    type Item = Item;

    fn handle_output(&mut self, output: &Output, games: Games<'_>) {
        match output {
            Output::Event(event) => self.handle_event(event, games),
            Output::Notice(notice) => self.handle_notice(&notice.kind, notice.t),
        }
    }

    fn flush(&mut self, games: Games<'_>) {
        self.publish_changes(games);
    }

    fn poll_item(&mut self) -> Option<Item> {
        self.out.pop_front()
    }
}

/// The published form of ply `ply` (1-based) of `game`, if it has it.
fn ply_info(game: &GameRecord, ply: usize) -> Option<MoveInfo> {
    let p = game.plies.get(ply.checked_sub(1)?)?;
    Some(MoveInfo {
        ply,
        mover: p.mover,
        san: p.san,
        uci: p.uci(game.castling_mode),
        after: Box::new(p.after.clone()),
        inferred: p.inferred,
        order_uncertain: p.order_uncertain,
    })
}

fn fen(position: &Chess) -> String {
    Fen::from_position(position, EnPassantMode::Legal).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        protocol::Protocol,
        reconstruct::{GameSetup, ReconstructorConfig},
        session::{BoardSession, Notice},
    };

    /// The board status of a feed that was told `notices` (milliseconds,
    /// kind), after a flush.
    fn status_after(notices: &[(u64, NoticeKind)]) -> Value {
        let session = BoardSession::new(Protocol::DGT, ReconstructorConfig::default(), GameSetup::default());
        let settings =
            FeedSettings { topics: Topics::new("boardcast", "hall"), boot: "b00t".into(), languages: vec![] };
        let mut feed = BoardFeed::new(settings, "board-3", BoardPath::new("Open", "1", "3"), 1_000_000, "board-3");
        feed.describe("dgt", Some("/dev/ttyACM0"));
        for (ms, kind) in notices {
            let notice = Notice { t: Timestamp::from_millis(*ms), kind: kind.clone() };
            feed.handle_output(&Output::Notice(notice), session.games());
        }
        feed.flush(session.games());
        let mut last = None;
        while let Some(item) = feed.poll_item() {
            if let Item::BoardStatus { publication, .. } = item {
                last = publication.payload;
            }
        }
        last.expect("a board status")
    }

    #[test]
    fn a_board_status_says_what_the_board_is_and_since_when_it_is_connected() {
        let status = status_after(&[
            (2_000, NoticeKind::Connected),
            (3_000, NoticeKind::Connected),
            (4_000, NoticeKind::Board(BoardInfo::ClockAck([0x10, 0x09, 0x21, 0]))),
        ]);
        assert_eq!(status["label"], "3");
        assert_eq!(status["family"], "dgt");
        assert_eq!(status["port"], "/dev/ttyACM0");
        // Connected at 2 s: a second word of the same does not move it.
        assert_eq!(status["connected_since_ms"], 1_002_000);
        assert_eq!(status["clock"], "dgt3000");

        let gone = status_after(&[(2_000, NoticeKind::Connected), (9_000, NoticeKind::Disconnected)]);
        assert_eq!(gone["connection"], "disconnected");
        assert_eq!(gone["connected_since_ms"], 1_009_000);
        assert_eq!(gone["clock"], Value::Null, "the board said nothing of a clock");

        let none = status_after(&[(2_000, NoticeKind::Board(BoardInfo::ClockAbsent))]);
        assert_eq!(none["clock"], "none");
        assert_eq!(none["connected_since_ms"], Value::Null, "the connection is unknown");
        let xl = status_after(&[(2_000, NoticeKind::Board(BoardInfo::ClockAck([0x10, 0x09, 0x11, 0])))]);
        assert_eq!(xl["clock"], "attached");
    }
}
