//! One board's session: its protocol decoder and its reconstructor, driven
//! by the same inputs whether the bytes come from a serial port or a
//! capture. This is the object the async shell owns for each board.
//!
//! Lost bytes: a field update lost on the line leaves the picture wrong
//! until the board's next whole-board message (the DGT link asks for one
//! after every loss; it comes within a tenth of a second unless the line
//! damages it too). The reconstructor is told of the loss and accuses
//! nobody until that message comes (see `Reconstructor::handle_lost_bytes`);
//! the field updates meanwhile are still used, which keeps the order of
//! moves and the touches they show. The rule depends only on the bytes, so
//! a replayed capture behaves exactly as the live board did.

use std::collections::VecDeque;

use crate::{
    alert::{Alert, AlertKind},
    capture::{CaptureHeader, LinkChange, Record, RecordBody},
    event::{BoardStatus, Event, EventKind},
    game::{GameRecord, MoveStatus, Termination},
    pair::{Line, Pair, PairSettings},
    protocol::{
        BoardDecoder, BoardInfo, BoardLink, DecodeProblem, Decoded, Lights, Protocol,
        dgt::{
            command::ClockText,
            display::{ClockDisplayMode, ClockDisplaySettings},
        },
        link::{LinkConfig, LinkEvent},
    },
    reconstruct::{GameSetup, Reconstructor, ReconstructorConfig},
    sensor::{Cell, SensorEvent},
    sink::{AnySink, Games},
    time::Timestamp,
};
use shakmaty::{Position, Role, Square};

/// What a session produces.
#[derive(Clone, Debug)]
pub enum Output {
    /// A game event (moves, alerts, results, clock, status).
    Event(Event),
    /// Something about the board or its bytes, not about the game.
    Notice(Notice),
}

/// Something about the board or its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    /// When.
    pub t: Timestamp,
    /// What.
    pub kind: NoticeKind,
}

/// What a notice says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoticeKind {
    /// Bytes the decoder could not use.
    Decode(DecodeProblem),
    /// What the board says about itself.
    Board(BoardInfo),
    /// The connection to the board opened.
    Connected,
    /// The connection to the board closed (unplugged, or the port failed).
    Disconnected,
    /// What the link to a live board noticed (silence, identity).
    Link(LinkEvent),
    /// The end of `calibrate`: the calibration learnt from the board's
    /// reports (tag → piece letter, in use from now on), or why none was
    /// made (the one in use stays).
    Calibrated(Result<Vec<(String, char)>, String>),
}

impl std::fmt::Display for NoticeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Decode(problem) => write!(f, "{problem}"),
            Self::Board(BoardInfo::Version(v)) => write!(f, "board firmware {v}"),
            Self::Board(BoardInfo::Serial(s)) => write!(f, "board serial number {s}"),
            Self::Board(BoardInfo::Trademark(t)) => write!(f, "board says {:?}", t.trim()),
            Self::Board(BoardInfo::Battery(p)) => write!(f, "board battery {p}%"),
            Self::Board(BoardInfo::ClockAbsent) => f.write_str("no clock connected to the board"),
            Self::Board(BoardInfo::ClockAck(ack)) => write!(f, "clock acknowledged {ack:02x?}"),
            Self::Board(BoardInfo::Acknowledge(ack)) => write!(f, "board awaits the acknowledgement {ack:02x}"),
            Self::Connected => f.write_str("connected"),
            Self::Disconnected => f.write_str("disconnected"),
            Self::Link(LinkEvent::Silent) => f.write_str("the board has gone silent"),
            Self::Link(LinkEvent::Identified { serial, version }) => {
                f.write_str("board identified")?;
                if let Some(serial) = serial {
                    write!(f, ": serial {serial}")?;
                }
                if let Some(version) = version {
                    write!(f, "{} firmware {version}", if serial.is_some() { "," } else { ":" })?;
                }
                Ok(())
            }
            Self::Link(LinkEvent::ClockCommandDropped(c)) => write!(f, "the clock did not acknowledge {c}"),
            Self::Calibrated(Ok(entries)) => {
                write!(f, "calibrated from the board's reports: {} pieces learnt", entries.len())
            }
            Self::Calibrated(Err(why)) => write!(f, "not calibrated: {why}"),
            Self::Link(LinkEvent::ClockShowsNoText) => f.write_str(
                "clock_display is on but the clock is not a DGT 3000 (a DGT XL shows no text): nothing is shown",
            ),
        }
    }
}

/// What a board's lights show (boards with LEDs: Millennium, Certabo).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LightsMode {
    /// Nothing.
    Off,
    /// The squares to put right when the board is out of sync.
    Errors,
    /// Those, and the last move's squares.
    #[default]
    MovesAndErrors,
}

/// A board's decoder and reconstructor, and for a live board the link that
/// talks to it.
#[derive(Debug)]
pub struct BoardSession {
    decoder: Option<Box<dyn BoardDecoder>>,
    reconstructor: Reconstructor,
    link: Option<Box<dyn BoardLink>>,
    lights: LightsMode,
    clock_display: ClockDisplayMode,
    /// Until when every LED is lit (`identify`).
    identify_until: Option<Timestamp>,
    /// Until when a calibration is learnt from the board's reports
    /// (`calibrate`), if one is.
    calibrating_until: Option<Timestamp>,
    /// The last move offered to the clock's display: its index in the game
    /// and when it was made (a new game starts again at index 0).
    clock_shown: Option<(usize, Timestamp)>,
    /// The comparison with a visually impaired player's board mirroring
    /// this board's game (appendix D), on the game board's session only.
    pair: Option<Pair>,
    /// The connection lost, and when it came back: what the board shows
    /// next says whether moves went missing meanwhile (`board_gap`).
    outage: Option<Outage>,
    /// Events already judged for the outage, to go out before anything
    /// else: those the reconstructor had queued when the port opened or
    /// closed (deadlines that came first) belong to the state before it.
    judged: VecDeque<Event>,
    notices: VecDeque<Notice>,
}

/// A lost connection to the board.
#[derive(Clone, Copy, Debug)]
struct Outage {
    /// When the port closed.
    lost: Timestamp,
    /// When it opened again.
    back: Option<Timestamp>,
}

/// How long after the board is back a board no move explains is blamed on
/// the outage: its whole board comes within a second, the reconstructor
/// then waits `out_of_sync_ms` (2 s) and, for a king on a centre square,
/// `gesture_hold_ms` (2 s) more. Later, it is a board knocked over, not
/// the outage.
const OUTAGE_JUDGED_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

impl BoardSession {
    /// A session for a board speaking `protocol` (a replay: nothing is sent
    /// to the board).
    pub fn new(protocol: Protocol, config: ReconstructorConfig, setup: GameSetup) -> Self {
        let mut reconstructor = Reconstructor::new(config, setup);
        // Boards that answer a request for the whole board (live, or the
        // answer recorded in a capture) are asked before a player is blamed.
        reconstructor.set_board_answers(protocol.answers_board_request());
        Self {
            decoder: protocol.decoder(),
            reconstructor,
            link: None,
            lights: LightsMode::default(),
            clock_display: ClockDisplayMode::default(),
            identify_until: None,
            calibrating_until: None,
            clock_shown: None,
            pair: None,
            outage: None,
            judged: VecDeque::new(),
            notices: VecDeque::new(),
        }
    }

    /// Makes this the game board of a pair: its game is compared with the
    /// mirror board's ([`BoardSession::handle_mirror`]), and `boards_diverge`
    /// is raised in its game when they differ for too long.
    pub fn pair_with_mirror(&mut self, settings: PairSettings) {
        self.pair = Some(Pair::new(settings));
    }

    /// The mirror board's game changed (its [`Line`]).
    pub fn handle_mirror(&mut self, now: Timestamp, line: Line) {
        if let Some(pair) = &mut self.pair {
            pair.handle_mirror(now, line);
        }
        self.follow_pair(now);
    }

    /// Hands this board's game to the pair's comparison and its alerts to
    /// the game's events (after every input: cheap when nothing changed).
    fn follow_pair(&mut self, now: Timestamp) {
        let Some(pair) = &mut self.pair else { return };
        pair.handle_game(now, self.reconstructor.game());
        while let Some(alert) = pair.poll_alert() {
            self.reconstructor.push_alert(now, alert);
        }
    }

    /// A session for a live board: it also says what to send to the board
    /// ([`BoardSession::poll_transmit`]) and notices when it goes silent.
    pub fn live(protocol: Protocol, config: ReconstructorConfig, setup: GameSetup, link: LinkConfig) -> Self {
        let mut session = Self::new(protocol, config, setup);
        session.link = protocol.family().map(|family| (family.link)(link));
        session
    }

    /// The port to the board opened.
    pub fn handle_connected(&mut self, now: Timestamp) {
        self.judge_queued();
        self.notices.push_back(Notice { t: now, kind: NoticeKind::Connected });
        if let Some(outage) = &mut self.outage {
            outage.back = Some(now);
        }
        if let Some(link) = &mut self.link {
            link.handle_connected(now);
        }
    }

    /// The port to the board closed. A message cut off by it is dropped;
    /// the game goes on and is compared with the board when it is back.
    pub fn handle_disconnected(&mut self, now: Timestamp) {
        self.judge_queued();
        if let Some(Decoded::Problem(problem)) = self.decoder.as_mut().and_then(|d| d.finish()) {
            self.notices.push_back(Notice { t: now, kind: NoticeKind::Decode(problem) });
        }
        self.notices.push_back(Notice { t: now, kind: NoticeKind::Disconnected });
        if let Some(link) = &mut self.link {
            link.handle_disconnected();
        }
        // A board lost again before it was judged: the outage began at the
        // first loss.
        let lost = self.outage.map_or(now, |o| o.lost);
        self.outage = Some(Outage { lost, back: None });
    }

    /// The next bytes to send to the board, if any.
    pub fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        self.link.as_mut()?.poll_transmit(now)
    }

    /// What the board's lights are to show.
    pub fn set_lights(&mut self, mode: LightsMode) {
        self.lights = mode;
    }

    /// What a DGT 3000 clock shows besides the times, and when
    /// (`protocol::dgt::display`).
    pub fn set_clock_display(&mut self, settings: ClockDisplaySettings) {
        self.clock_display = settings.mode;
        if let Some(clock) = self.link.as_mut().and_then(|link| link.clock_mut()) {
            clock.set_clock_display(settings);
        }
    }

    /// Offers a message from the operator to the clock's display, under the
    /// same rule as moves; returns whether it will be shown.
    pub(crate) fn show_on_clock(&mut self, now: Timestamp, text: &str) -> bool {
        let clock = self.link.as_mut().and_then(|link| link.clock_mut());
        clock.is_some_and(|clock| clock.show_text(now, ClockText::new(text)))
    }

    /// Offers the last move to the clock's display once it is completed
    /// (the clock pressed, or the next move made): then the player to move
    /// sees what was played, and the mover can no longer take it back, so
    /// the clock never shows a move that did not happen.
    fn update_clock_text(&mut self, now: Timestamp) {
        if self.clock_display == ClockDisplayMode::Off {
            return;
        }
        let Some(clock) = self.link.as_mut().and_then(|link| link.clock_mut()) else { return };
        let Some(game) = self.reconstructor.game() else { return };
        let Some((index, ply)) = game.plies.iter().enumerate().rev().find(|(_, p)| p.status == MoveStatus::Completed)
        else {
            return;
        };
        if self.clock_shown == Some((index, ply.made_at)) {
            return;
        }
        self.clock_shown = Some((index, ply.made_at));
        // Only the latest move: one completed by the next move's being made
        // is old news.
        if index + 1 != game.plies.len() {
            return;
        }
        clock.show_text(now, ClockText::new(&clock_move_text(ply)));
    }

    /// Tells the link what the lights show now: the last move's squares
    /// steady, squares to put right blinking, in the board's orientation.
    /// The link sends only what changed.
    fn update_lights(&mut self) {
        let Some(leds) = self.link.as_mut().and_then(|link| link.leds_mut()) else { return };
        let mut lights = Lights::default();
        if self.identify_until.is_some() {
            // `identify`: every square lit, whatever the game shows.
            lights.steady = shakmaty::Bitboard::FULL;
            leds.show(&lights);
            return;
        }
        if self.lights != LightsMode::Off
            && let Some(BoardStatus::OutOfSync { squares }) = self.reconstructor.board_status()
        {
            lights.blinking = squares.iter().copied().collect();
        }
        if self.lights == LightsMode::MovesAndErrors
            && self.reconstructor.board_status().is_some()
            && let Some(ply) = self.reconstructor.game().and_then(|g| g.plies.last())
            && let crate::game::PlyMove::Legal(m) = ply.mv
        {
            let mut squares = shakmaty::Bitboard::EMPTY;
            match m {
                shakmaty::Move::Castle { king, rook } => {
                    let side = shakmaty::CastlingSide::from_queen_side(rook < king);
                    squares.add(king);
                    squares.add(side.king_to(ply.mover));
                    squares.add(rook);
                    squares.add(side.rook_to(ply.mover));
                }
                other => {
                    if let Some(from) = other.from() {
                        squares.add(from);
                    }
                    squares.add(other.to());
                }
            }
            lights.steady = squares;
        }
        if self.reconstructor.rotated() {
            lights.steady = lights.steady.into_iter().map(|sq| sq.flip_vertical().flip_horizontal()).collect();
            lights.blinking = lights.blinking.into_iter().map(|sq| sq.flip_vertical().flip_horizontal()).collect();
        }
        leds.show(&lights);
    }

    /// A session for a capture, set up from its header.
    pub fn for_capture(header: &CaptureHeader, config: ReconstructorConfig) -> Self {
        let mut session = Self::new(header.protocol, config, setup_from_header(header));
        // The header's calibration was checked when it was read.
        let _ = session.set_calibration(&header.calibration);
        session
    }

    /// A Certabo board's calibration (tag → piece); other boards need none.
    ///
    /// # Errors
    ///
    /// An entry that is not a tag and a piece letter.
    pub fn set_calibration(&mut self, entries: &[(String, char)]) -> Result<(), String> {
        match self.decoder.as_mut().and_then(|d| d.calibration_mut()) {
            Some(calibrated) if !entries.is_empty() => calibrated.set_calibration(entries),
            _ => Ok(()),
        }
    }

    /// Something the board tells through another channel than its bytes
    /// (a Bluetooth LE board's battery, as BlueZ reads it), reported as
    /// the board's own report would be. It is in no capture: a replay does
    /// without it.
    pub fn handle_board_info(&mut self, now: Timestamp, info: BoardInfo) {
        self.notices.push_back(Notice { t: now, kind: NoticeKind::Board(info) });
    }

    /// Bytes received from the board.
    pub fn handle_bytes(&mut self, now: Timestamp, bytes: &[u8]) {
        let Some(decoder) = &mut self.decoder else {
            return;
        };
        decoder.handle_bytes(bytes);
        if let Some(link) = &mut self.link
            && !bytes.is_empty()
        {
            link.handle_rx(now);
        }
        while let Some(decoded) = self.decoder.as_mut().and_then(|d| d.poll_decoded()) {
            if let Some(link) = &mut self.link {
                link.handle_decoded(now, &decoded);
            }
            match decoded {
                Decoded::Sensor(event) => self.handle_sensor(now, &event),
                Decoded::Info(info) => self.notices.push_back(Notice { t: now, kind: NoticeKind::Board(info) }),
                Decoded::Problem(problem) => {
                    self.notices.push_back(Notice { t: now, kind: NoticeKind::Decode(problem) });
                    self.reconstructor.handle_lost_bytes(now);
                }
            }
        }
        if let Some(link) = &mut self.link {
            while let Some(event) = link.poll_event() {
                self.notices.push_back(Notice { t: now, kind: NoticeKind::Link(event) });
            }
        }
        if let Some(learnt) = self.decoder.as_mut().and_then(|d| d.calibration_mut()).and_then(|c| c.poll_learnt()) {
            self.calibrating_until = None;
            self.notices.push_back(Notice { t: now, kind: NoticeKind::Calibrated(learnt) });
        }
        self.follow_pair(now);
    }

    /// An operator command; the answer says what it did, or why it could
    /// not be done.
    ///
    /// # Errors
    ///
    /// When the command does not apply (no game in progress, an illegal
    /// move, a result that is not one …): nothing changes then.
    pub fn handle_command(
        &mut self,
        now: Timestamp,
        command: &crate::operator::Command,
    ) -> Result<String, crate::operator::CommandError> {
        if let crate::operator::Command::Identify { text } = command {
            return self.identify(now, text.as_deref());
        }
        if let crate::operator::Command::Calibrate = command {
            return self.calibrate(now);
        }
        if let crate::operator::Command::ClockText { text } = command {
            return if self.show_on_clock(now, text) {
                Ok(format!("{text:?} shown on the clock for a moment"))
            } else {
                Err(crate::operator::CommandError::ClockTextRefused)
            };
        }
        let answer = self.reconstructor.handle_command(now, command);
        self.update_lights();
        self.update_clock_text(now);
        self.follow_pair(now);
        answer
    }

    /// `identify`: a board with LEDs lights them all for a moment; a DGT
    /// 3000 clock shows `text` (the console sends the board's label).
    fn identify(&mut self, now: Timestamp, text: Option<&str>) -> Result<String, crate::operator::CommandError> {
        let has_leds = self.link.as_mut().is_some_and(|link| link.leds_mut().is_some());
        if has_leds {
            self.identify_until = Some(now + crate::operator::IDENTIFY_LIGHTS);
            self.update_lights();
            return Ok(format!("every LED of the board lit for {} s", crate::operator::IDENTIFY_LIGHTS.as_secs()));
        }
        let text = text.filter(|t| !t.trim().is_empty()).unwrap_or("HERE");
        if self.show_on_clock(now, text) {
            Ok(format!("{text:?} shown on the board's DGT 3000 clock for a moment"))
        } else {
            Err(crate::operator::CommandError::CannotIdentify)
        }
    }

    /// `calibrate`: the decoder learns the pieces from the board's next
    /// reports; a [`NoticeKind::Calibrated`] says what came of it, within
    /// [`crate::operator::CALIBRATE_WAIT`].
    fn calibrate(&mut self, now: Timestamp) -> Result<String, crate::operator::CommandError> {
        use crate::protocol::certabo::calibration::MIN_REPORTS;
        let calibrated = self.decoder.as_mut().and_then(|d| d.calibration_mut());
        let Some(calibrated) = calibrated else { return Err(crate::operator::CommandError::CannotCalibrate) };
        calibrated.learn(Some(MIN_REPORTS));
        self.calibrating_until = Some(now + crate::operator::CALIBRATE_WAIT);
        Ok(format!("learning the pieces from the board's next {MIN_REPORTS} reports"))
    }

    /// A decoded sensor event.
    pub fn handle_sensor(&mut self, now: Timestamp, event: &SensorEvent) {
        self.reconstructor.handle_sensor(now, event);
        self.update_lights();
        self.update_clock_text(now);
        self.pass_board_request(now);
        self.follow_pair(now);
    }

    /// The reconstructor wants the whole board before it blames a player.
    fn pass_board_request(&mut self, now: Timestamp) {
        if self.reconstructor.poll_board_request()
            && let Some(link) = &mut self.link
        {
            link.request_board(now);
        }
    }

    /// One capture record. Bytes sent to the board are not replayed.
    pub fn handle_record(&mut self, record: &Record) {
        match &record.body {
            RecordBody::Rx(bytes) => self.handle_bytes(record.t, bytes),
            RecordBody::Tx(_) => {}
            RecordBody::Event(event) => self.handle_sensor(record.t, event),
            RecordBody::Command(command) => {
                let _ = self.handle_command(record.t, command);
            }
            RecordBody::Link(LinkChange::Connected) => self.handle_connected(record.t),
            RecordBody::Link(LinkChange::Disconnected) => self.handle_disconnected(record.t),
        }
    }

    /// Acts on deadlines that have come.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.reconstructor.handle_timeout(now);
        if self.identify_until.is_some_and(|until| until <= now) {
            // The game's lights again.
            self.identify_until = None;
        }
        if self.calibrating_until.is_some_and(|until| until <= now) {
            self.calibrating_until = None;
            if let Some(calibrated) = self.decoder.as_mut().and_then(|d| d.calibration_mut()) {
                calibrated.learn(None);
            }
            let why = format!(
                "too few reports from the board within {} s: is it plugged in and reporting? (the calibration in use stays)",
                crate::operator::CALIBRATE_WAIT.as_secs()
            );
            self.notices.push_back(Notice { t: now, kind: NoticeKind::Calibrated(Err(why)) });
        }
        self.update_lights();
        self.update_clock_text(now);
        self.pass_board_request(now);
        if let Some(link) = &mut self.link {
            link.handle_timeout(now);
            while let Some(event) = link.poll_event() {
                self.notices.push_back(Notice { t: now, kind: NoticeKind::Link(event) });
            }
        }
        if let Some(pair) = &mut self.pair {
            pair.handle_timeout(now);
        }
        self.follow_pair(now);
    }

    /// The stream ended (end of a capture, board gone): a message cut off is
    /// reported and the board is judged as last seen.
    pub fn handle_end(&mut self, now: Timestamp) {
        if let Some(Decoded::Problem(problem)) = self.decoder.as_mut().and_then(|d| d.finish()) {
            self.notices.push_back(Notice { t: now, kind: NoticeKind::Decode(problem) });
        }
        self.reconstructor.handle_end(now);
    }

    /// Brings the session up to `t`: fires every deadline before it, each at
    /// its own time. Live and replay both call this before handing in an
    /// input stamped `t`, which is what makes them behave alike.
    pub fn advance_to(&mut self, t: Timestamp) {
        while let Some(deadline) = self.poll_timeout().filter(|&d| d <= t) {
            self.handle_timeout(deadline);
        }
    }

    /// When to call [`BoardSession::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let link = self.link.as_ref().and_then(|link| link.poll_timeout());
        let pair = self.pair.as_ref().and_then(Pair::poll_timeout);
        [self.reconstructor.poll_timeout(), link, pair, self.identify_until, self.calibrating_until]
            .into_iter()
            .flatten()
            .min()
    }

    /// The next output: notices first, then game events.
    pub fn poll_output(&mut self) -> Option<Output> {
        if let Some(event) = self.judged.pop_front() {
            return Some(Output::Event(event));
        }
        if let Some(notice) = self.notices.pop_front() {
            return Some(Output::Notice(notice));
        }
        let event = self.reconstructor.poll_event()?;
        self.judge_outage(&event);
        Some(Output::Event(event))
    }

    /// Judges the events the reconstructor has queued against the outage
    /// as it stands, before the port's change alters it.
    fn judge_queued(&mut self) {
        while let Some(event) = self.reconstructor.poll_event() {
            self.judge_outage(&event);
            self.judged.push_back(event);
        }
    }

    /// After a lost connection, the board's first verdict: back in sync
    /// (nothing missed, or the moves made meanwhile filled in) ends the
    /// outage quietly; out of sync means moves were played while the board
    /// was away that the daemon cannot infer, and the arbiter is told so
    /// at once (`board_gap`), with what to do. The record keeps every move
    /// up to the loss; the moves the operator enters take it on from there.
    fn judge_outage(&mut self, event: &Event) {
        let Some(Outage { lost, back: Some(back) }) = self.outage else { return };
        if event.t < back {
            return;
        }
        if event.t > back + OUTAGE_JUDGED_WITHIN {
            self.outage = None;
            return;
        }
        let away = back.saturating_since(lost).as_secs_f64();
        let (squares, what, todo) = match &event.kind {
            EventKind::Status(BoardStatus::OutOfSync { squares }) => (
                squares.clone(),
                "a position that up to three moves from the game do not reach: moves played meanwhile are missing \
                 from the record"
                    .to_owned(),
                "enter the missing ones from the scoresheets with the operator command `moves` (boardcast ctl <board> \
                 moves SAN…), and the board is followed again from the position it shows",
            ),
            // The game ended while the board was away, and the players
            // showed the result with the kings: the result stands, but the
            // pieces say that moves are missing before it.
            EventKind::GameEnded(result) if result.termination == Termination::ResultGesture => {
                let squares = self.missed_before_gesture();
                if squares.is_empty() {
                    self.outage = None;
                    return;
                }
                (
                    squares,
                    format!(
                        "the result gesture ({}) on a position the game does not reach: the result is recorded, \
                         but the moves played meanwhile are missing from the record",
                        result.outcome
                    ),
                    "the missing moves are on the players' scoresheets; the PGN stops at the disconnection",
                )
            }
            EventKind::Status(_) | EventKind::GameEnded(_) => {
                self.outage = None;
                return;
            }
            _ => return,
        };
        self.outage = None;
        let names: Vec<String> = squares.iter().map(ToString::to_string).collect();
        let message = format!(
            "the board was disconnected for {away:.1} s and came back showing {what} ({} square(s) differ: {}). The \
             moves up to the disconnection are kept; {todo}",
            names.len(),
            names.join(" ")
        );
        let ply = self.reconstructor.game().map_or(0, GameRecord::completed_plies);
        let alert =
            Alert { kind: AlertKind::BoardGap, ply, side: None, t: event.t, message, squares, evidence: Vec::new() };
        self.reconstructor.push_alert(event.t, alert);
    }

    /// The squares where the board differs from the game's position, the
    /// kings left out (the result gesture moved them).
    fn missed_before_gesture(&self) -> Vec<Square> {
        let Some(game) = self.reconstructor.game() else { return Vec::new() };
        let board = game.position().board();
        let picture = self.reconstructor.picture();
        let king = |sq: Square| {
            board.piece_at(sq).is_some_and(|p| p.role == Role::King)
                || matches!(picture.get(sq), Cell::Piece(p) if p.role == Role::King)
        };
        Square::ALL
            .into_iter()
            .filter(|&sq| !king(sq))
            .filter(|&sq| match picture.get(sq) {
                Cell::Piece(p) => board.piece_at(sq) != Some(p),
                Cell::Occupied => board.piece_at(sq).is_none(),
                Cell::Empty => board.piece_at(sq).is_some(),
            })
            .collect()
    }

    /// The board's games, as sinks see them.
    pub fn games(&self) -> Games<'_> {
        Games::of(&self.reconstructor)
    }

    /// Hands every output waiting to each of `sinks` in turn, then flushes
    /// them: the one loop between a session and what consumes its outputs.
    /// The live driver, `replay --mqtt` and the resume all run it after
    /// every input, so a replay hands on what the hall would have, by
    /// construction.
    pub fn pump(&mut self, sinks: &mut [&mut dyn AnySink]) {
        while let Some(output) = self.poll_output() {
            for sink in sinks.iter_mut() {
                sink.handle(&output, self.games());
            }
        }
        for sink in sinks.iter_mut() {
            sink.end_batch(self.games());
        }
    }

    /// The reconstructor (for the current game and the board picture).
    pub fn reconstructor(&self) -> &Reconstructor {
        &self.reconstructor
    }

    /// Ends the session, returning every game, the current one last.
    pub fn into_games(self) -> Vec<crate::game::GameRecord> {
        self.reconstructor.into_games()
    }
}

/// What a capture's header says about its games.
pub fn setup_from_header(header: &CaptureHeader) -> GameSetup {
    let mut tags = header.game.clone();
    if header.game_tag("Date").is_none()
        && let Some(date) = header.started_at.as_deref().and_then(pgn_date)
    {
        tags.push(("Date".into(), date));
    }
    let start = header.game_tag("FEN").and_then(|fen| fen.parse::<shakmaty::fen::Fen>().ok()).and_then(|fen| {
        let mode = if header.chess960 { shakmaty::CastlingMode::Chess960 } else { shakmaty::CastlingMode::Standard };
        fen.into_position(mode).ok()
    });
    GameSetup { tags, chess960: header.chess960, start, tempo: header.rules, supervised: header.supervised }
}

/// A move as the clock shows it: `23.Nf3`, `23...Nf3`, or the SAN alone
/// when the move number does not fit in the clock's eight characters.
fn clock_move_text(ply: &crate::game::Ply) -> String {
    move_text(shakmaty::Position::fullmoves(&ply.after).get(), ply.mover, &ply.san.to_string())
}

/// The text for a move `san` by `mover`, the position after it having the
/// full-move number `fullmoves_after`.
fn move_text(fullmoves_after: u32, mover: shakmaty::Color, san: &str) -> String {
    let (number, dots) = match mover {
        shakmaty::Color::White => (fullmoves_after, "."),
        shakmaty::Color::Black => (fullmoves_after.saturating_sub(1), "..."),
    };
    let text = format!("{number}{dots}{san}");
    if text.chars().count() <= 8 { text } else { san.to_owned() }
}

/// `2026.11.21` from `2026-11-21T13:00:00Z`.
fn pgn_date(rfc3339: &str) -> Option<String> {
    let date = rfc3339.get(..10)?;
    let bytes = date.as_bytes();
    let shape = bytes.iter().enumerate().all(|(i, b)| if i == 4 || i == 7 { *b == b'-' } else { b.is_ascii_digit() });
    shape.then(|| date.replace('-', "."))
}

#[cfg(test)]
mod tests {
    use shakmaty::Square;

    use super::*;
    use crate::{
        alert::AlertKind,
        event::EventKind,
        protocol::dgt::{
            clock::{BwTime, ClockTimes},
            message::Message,
        },
        sensor::{Cell, ClockSide, Picture},
    };

    fn bytes(message: &Message) -> Vec<u8> {
        let mut out = Vec::new();
        message.encode(&mut out);
        out
    }

    fn field(square: Square, cell: Cell) -> Vec<u8> {
        bytes(&Message::FieldUpdate { square, cell })
    }

    fn clock(running: Option<ClockSide>) -> Vec<u8> {
        bytes(&Message::Clock(BwTime::Times(ClockTimes::from_reading(300_000, 300_000, running))))
    }

    fn ms(n: u64) -> Timestamp {
        Timestamp::from_millis(n)
    }

    /// 1.e4 is made, but the update saying e2 emptied is lost on the line;
    /// White presses the clock. What is published until the second dump
    /// at `dump_at`, and after it.
    fn lost_update(dump_at: Option<u64>) -> Vec<Event> {
        let config = ReconstructorConfig { white_clock: crate::reconstruct::WhiteClock::Left, ..Default::default() };
        let mut session = BoardSession::new(Protocol::DGT, config, GameSetup::default());
        let run = |session: &mut BoardSession, t: u64, data: &[u8]| {
            session.advance_to(ms(t));
            session.handle_bytes(ms(t), data);
        };
        let start = Picture::from_board(&shakmaty::Board::new());
        run(&mut session, 0, &bytes(&Message::BoardDump(Box::new(start.clone()))));
        run(&mut session, 500, &clock(Some(ClockSide::Left)));
        // The update for e2 arrives damaged: its last byte is lost, the
        // next message's header shows it cut short.
        let mut damaged = field(Square::E2, Cell::Empty);
        damaged.pop();
        run(&mut session, 2000, &damaged);
        run(&mut session, 2200, &field(Square::E4, Cell::Piece(shakmaty::Piece::from_char('P').unwrap())));
        run(&mut session, 2500, &clock(Some(ClockSide::Right)));
        if let Some(t) = dump_at {
            let mut after = start;
            after.set(Square::E2, Cell::Empty);
            after.set(Square::E4, Cell::Piece(shakmaty::Piece::from_char('P').unwrap()));
            run(&mut session, t, &bytes(&Message::BoardDump(Box::new(after))));
        }
        session.advance_to(ms(10_000));
        std::iter::from_fn(|| session.poll_output())
            .filter_map(|o| match o {
                Output::Event(e) => Some(e),
                Output::Notice(_) => None,
            })
            .collect()
    }

    #[test]
    fn lost_bytes_accuse_nobody_until_the_board_dump_shows_what_happened() {
        // The dump comes late (its first answer was lost too), after the
        // press's grace: still no alert, and the move is made and completed.
        let events = lost_update(Some(3900));
        let alerts: Vec<_> = events.iter().filter(|e| matches!(e.kind, EventKind::Alert(_))).collect();
        assert!(alerts.is_empty(), "{alerts:?}");
        let made = events.iter().find_map(|e| match &e.kind {
            EventKind::MoveMade(m) => Some((m.uci.clone(), e.t)),
            _ => None,
        });
        assert_eq!(made, Some(("e2e4".to_owned(), ms(3900))), "made when the dump showed it");
        let completed = events.iter().find(|e| matches!(e.kind, EventKind::MoveCompleted { .. }));
        assert_eq!(completed.map(|e| e.t), Some(ms(3900)), "and completed by the press that waited for it");
    }

    #[test]
    fn without_a_dump_the_board_as_seen_is_judged_once_the_wait_is_over() {
        let events = lost_update(None);
        let alert = events.iter().find_map(|e| match &e.kind {
            EventKind::Alert(a) => Some((a.kind, e.t)),
            _ => None,
        });
        // Judged (after LOST_BYTES_WAIT), as of the press.
        assert_eq!(alert, Some((AlertKind::IllegalMove, ms(2500))));
    }

    #[test]
    fn a_move_for_the_clock_fits_its_eight_characters() {
        use shakmaty::Color::{Black, White};
        assert_eq!(move_text(23, White, "Nf3"), "23.Nf3");
        assert_eq!(move_text(24, Black, "Nf3"), "23...Nf3");
        assert_eq!(move_text(40, White, "exd8=Q+"), "exd8=Q+", "the number does not fit: the move alone");
        assert_eq!(move_text(2, Black, "O-O-O"), "O-O-O", "1...O-O-O is nine");
    }

    #[test]
    fn takes_the_date_from_the_start_time() {
        assert_eq!(pgn_date("2026-11-21T13:00:00Z").as_deref(), Some("2026.11.21"));
        assert_eq!(pgn_date("yesterday"), None);
        let mut header = CaptureHeader::new(Protocol::EVENTS, "b");
        header.started_at = Some("2026-11-21T13:00:00Z".into());
        assert!(setup_from_header(&header).tags.contains(&("Date".into(), "2026.11.21".into())));
        header.game.push(("Date".into(), "2026.01.01".into()));
        assert!(!setup_from_header(&header).tags.contains(&("Date".into(), "2026.11.21".into())));
    }
}
