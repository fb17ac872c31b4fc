//! A small language for sensor streams in virtual time: what hands and a
//! clock do at a table, written move by move, replayed through the real
//! session, with the events and games it produced.

use boardcast_core::{
    alert::{Alert, AlertKind},
    capture::{CaptureHeader, LinkChange, Record, RecordBody},
    event::{BoardStatus, Event, EventKind},
    game::GameRecord,
    protocol::Protocol,
    reconstruct::{GameSetup, ReconstructorConfig},
    replay::Capture,
    sensor::{Cell, ClockReading, Picture, SensorEvent},
    session::{BoardSession, Output},
    time::Timestamp,
};
use shakmaty::{Board, Color, Piece, Square};

/// A sensor stream being written.
pub struct Script {
    t_ms: u64,
    board: Picture,
    events: Vec<(Timestamp, SensorEvent)>,
    /// The clock: white, black, running.
    clock: Option<(u64, u64, Option<Color>)>,
    /// Report every square turned 180° (a board with its connector on the
    /// wrong side).
    rotated: bool,
    /// The port to the board closing and opening again.
    links: Vec<(Timestamp, LinkChange)>,
    /// The cable is out: the board reports nothing.
    away: bool,
}

impl Script {
    /// The standard start position on the board at time 0.
    pub fn new() -> Self {
        Self::from_board(&Board::new())
    }

    /// The standard start position, on a board turned 180°.
    pub fn rotated() -> Self {
        let mut script = Self {
            t_ms: 0,
            board: Picture::from_board(&Board::new()),
            events: Vec::new(),
            clock: None,
            rotated: true,
            links: Vec::new(),
            away: false,
        };
        script.events.push((Timestamp::ZERO, SensorEvent::Board(Box::new(script.board.rotated()))));
        script.wait(500);
        script
    }

    /// A board with this piece placement (FEN's first field, `?` allowed)
    /// at time 0.
    pub fn from_placement(placement: &str) -> Self {
        let board = Picture::from_fen_placement(placement).unwrap();
        let mut script = Self {
            t_ms: 0,
            board: board.clone(),
            events: Vec::new(),
            clock: None,
            rotated: false,
            links: Vec::new(),
            away: false,
        };
        script.events.push((Timestamp::ZERO, SensorEvent::Board(Box::new(board))));
        script.wait(500);
        script
    }

    /// This board at time 0.
    pub fn from_board(board: &Board) -> Self {
        Self::from_placement(&Picture::from_board(board).to_fen_placement())
    }

    /// Lets time pass (the clock runs, readings once a second).
    pub fn wait(&mut self, ms: u64) -> &mut Self {
        let end = self.t_ms + ms;
        while self.clock.is_some() {
            let next = (self.t_ms / 1000 + 1) * 1000;
            if next > end {
                break;
            }
            self.tick(next - self.t_ms);
            self.reading();
        }
        self.tick(end - self.t_ms);
        self
    }

    fn tick(&mut self, ms: u64) {
        self.t_ms += ms;
        if let Some((white, black, running)) = &mut self.clock {
            match running {
                Some(Color::White) => *white = white.saturating_sub(ms),
                Some(Color::Black) => *black = black.saturating_sub(ms),
                None => {}
            }
        }
    }

    fn reading(&mut self) {
        if self.away {
            return;
        }
        if let Some((white_ms, black_ms, running)) = self.clock {
            let reading = ClockReading::ByColor { white_ms, black_ms, running };
            self.events.push((self.now(), SensorEvent::Clock(reading)));
        }
    }

    /// The time the script has reached.
    pub fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.t_ms)
    }

    /// A square changes.
    pub fn set(&mut self, square: &str, cell: Cell) -> &mut Self {
        let sq: Square = square.parse().unwrap();
        self.board.set(sq, cell);
        let reported = if self.rotated { sq.flip_vertical().flip_horizontal() } else { sq };
        if !self.away {
            self.events.push((self.now(), SensorEvent::Square { square: reported, cell }));
        }
        self
    }

    /// The cable is pulled: the port closes and nothing the board sees
    /// reaches the daemon until [`Script::replug`].
    pub fn unplug(&mut self) -> &mut Self {
        self.links.push((self.now(), LinkChange::Disconnected));
        self.away = true;
        self
    }

    /// The cable is put back: the port opens and the board reports itself
    /// whole, as a board asked for its whole board does.
    pub fn replug(&mut self) -> &mut Self {
        self.links.push((self.now(), LinkChange::Connected));
        self.away = false;
        let placement = self.board.to_fen_placement();
        self.dump(&placement)
    }

    /// A piece leaves `square`.
    pub fn lift(&mut self, square: &str) -> &mut Self {
        self.set(square, Cell::Empty)
    }

    /// A piece (FEN letter) is put on `square`.
    pub fn place(&mut self, square: &str, piece: char) -> &mut Self {
        self.set(square, Cell::Piece(Piece::from_char(piece).unwrap()))
    }

    /// The board reports itself whole (a board dump, as after a reconnect)
    /// showing this placement, without the square changes that led there.
    pub fn dump(&mut self, placement: &str) -> &mut Self {
        self.board = Picture::from_fen_placement(placement).unwrap();
        let reported = if self.rotated { self.board.rotated() } else { self.board.clone() };
        self.events.push((self.now(), SensorEvent::Board(Box::new(reported))));
        self
    }

    /// What stands on `square`.
    pub fn at(&self, square: &str) -> Cell {
        self.board.get(square.parse().unwrap())
    }

    /// A move by hand: the piece on the first square lifted, put on the
    /// second 150 ms later (a piece there is replaced, as a capture knocking
    /// it off), then 400 ms pass. `e7e8q` promotes.
    pub fn mv(&mut self, uci: &str) -> &mut Self {
        let (from, to) = (&uci[0..2], &uci[2..4]);
        let Cell::Piece(mut piece) = self.at(from) else { panic!("no piece on {from}") };
        if let Some(p) = uci.chars().nth(4) {
            piece = Piece::from_char(if piece.color == Color::White { p.to_ascii_uppercase() } else { p }).unwrap();
        }
        self.lift(from).wait(150);
        self.set(to, Cell::Piece(piece)).wait(400)
    }

    /// Several moves, each followed by a pause.
    pub fn moves(&mut self, ucis: &str) -> &mut Self {
        for uci in ucis.split_whitespace() {
            self.mv(uci).wait(600);
        }
        self
    }

    /// A clock beside the board: both players have `ms`, White's runs.
    pub fn start_clock(&mut self, ms: u64) -> &mut Self {
        self.clock = Some((ms, ms, None));
        self.reading();
        self.wait(300);
        self.clock = Some((ms, ms, Some(Color::White)));
        self.reading();
        self.wait(300)
    }

    /// `color` presses the clock (adding `increment_ms`).
    pub fn press(&mut self, color: Color, increment_ms: u64) -> &mut Self {
        if let Some((white, black, running)) = &mut self.clock {
            match color {
                Color::White => *white += increment_ms,
                Color::Black => *black += increment_ms,
            }
            *running = Some(!color);
        }
        self.reading();
        self.wait(300)
    }

    /// The clock is set to these times (an arbiter's correction, or a
    /// flag: zero).
    pub fn clock_set(&mut self, white_ms: u64, black_ms: u64, running: Option<Color>) -> &mut Self {
        self.clock = Some((white_ms, black_ms, running));
        self.reading();
        self
    }

    /// Moves with a clock press after each (the mover presses).
    pub fn pressed_moves(&mut self, ucis: &str) -> &mut Self {
        for uci in ucis.split_whitespace() {
            let mover = match self.at(&uci[0..2]) {
                Cell::Piece(p) => p.color,
                _ => panic!("no piece on {}", &uci[0..2]),
            };
            self.mv(uci).press(mover, 0).wait(500);
        }
        self
    }

    /// The sensor stream so far, in order.
    pub fn stream(&self) -> &[(Timestamp, SensorEvent)] {
        &self.events
    }

    /// The stream as a capture of board `board` (`events` protocol), the
    /// port's changes before the sensor events of the same time, as
    /// [`Script::run_with`] applies them; for what is built on captures
    /// (`replay::publications`).
    pub fn capture(&self, board: &str, setup: &GameSetup) -> Capture {
        let mut header = CaptureHeader::new(Protocol::EVENTS, board);
        header.rules = setup.tempo;
        let links = self.links.iter().map(|&(t, change)| Record { t, body: RecordBody::Link(change) });
        let events = self.events.iter().map(|(t, event)| Record { t: *t, body: RecordBody::Event(event.clone()) });
        let mut records: Vec<Record> = links.chain(events).collect();
        // A stable sort: the port's changes stay first at their time.
        records.sort_by_key(|r| r.t);
        Capture { header, records, error: None }
    }

    /// Replays the stream with default settings.
    pub fn run(&self) -> Run {
        self.run_with(ReconstructorConfig::default(), GameSetup::default())
    }

    /// Replays the stream with a game set-up (tags, tempo, Chess960).
    pub fn run_setup(&self, setup: GameSetup) -> Run {
        self.run_with(ReconstructorConfig::default(), setup)
    }

    /// Replays the stream.
    pub fn run_with(&self, config: ReconstructorConfig, setup: GameSetup) -> Run {
        let mut session = BoardSession::new(Protocol::EVENTS, config, setup);
        let mut events = Vec::new();
        let mut last = Timestamp::ZERO;
        let mut links = self.links.iter().peekable();
        for (t, event) in &self.events {
            // The port's changes first, at their time.
            while let Some(&&(at, change)) = links.peek().filter(|(at, _)| at <= t) {
                links.next();
                session.advance_to(at);
                let record = Record { t: at, body: RecordBody::Link(change) };
                session.handle_record(&record);
            }
            session.advance_to(*t);
            session.handle_sensor(*t, event);
            while let Some(output) = session.poll_output() {
                if let Output::Event(e) = output {
                    events.push(e);
                }
            }
            last = *t;
        }
        let end = Timestamp::from_millis(self.t_ms).max(last);
        session.advance_to(end);
        session.handle_end(end);
        while let Some(output) = session.poll_output() {
            if let Output::Event(e) = output {
                events.push(e);
            }
        }
        Run { events, games: session.into_games() }
    }
}

/// What a stream produced.
pub struct Run {
    /// Every game event, in order.
    pub events: Vec<Event>,
    /// Every game.
    pub games: Vec<GameRecord>,
}

impl Run {
    /// The only game.
    pub fn game(&self) -> &GameRecord {
        assert_eq!(self.games.len(), 1, "one game expected, events:\n{}", self.trace());
        &self.games[0]
    }

    /// The moves of the only game in UCI.
    pub fn uci(&self) -> Vec<String> {
        let game = self.game();
        game.plies.iter().map(|p| p.uci(game.castling_mode)).collect()
    }

    /// The moves of the only game in SAN.
    pub fn san(&self) -> Vec<String> {
        self.game().plies.iter().map(|p| p.san.to_string()).collect()
    }

    /// Every alert.
    pub fn alerts(&self) -> Vec<&Alert> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Alert(a) => Some(a.as_ref()),
                _ => None,
            })
            .collect()
    }

    /// The kinds of every alert, in order.
    pub fn alert_kinds(&self) -> Vec<AlertKind> {
        self.alerts().iter().map(|a| a.kind).collect()
    }

    /// The alerts of one kind.
    pub fn alerts_of(&self, kind: AlertKind) -> Vec<&Alert> {
        self.alerts().into_iter().filter(|a| a.kind == kind).collect()
    }

    /// Every event, one readable line each, clocks left out.
    pub fn trace(&self) -> String {
        self.events
            .iter()
            .filter(|e| !matches!(e.kind, EventKind::Clock(_)))
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Short names of the move events in order: `made e2e4`, `completed 1`,
    /// `amended e2e3>e2e4`, `retracted e2e4`.
    pub fn move_events(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::MoveMade(m) => Some(format!("made {}", m.uci)),
                EventKind::MoveCompleted { ply, .. } => Some(format!("completed {ply}")),
                EventKind::MoveAmended { previous, now } => Some(format!("amended {}>{}", previous.uci, now.uci)),
                EventKind::MoveRetracted { previous } => Some(format!("retracted {}", previous.uci)),
                _ => None,
            })
            .collect()
    }

    /// The board statuses published, in order.
    pub fn statuses(&self) -> Vec<BoardStatus> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Status(s) => Some(s.clone()),
                _ => None,
            })
            .collect()
    }

    /// The result of the only game, as PGN writes it.
    pub fn result(&self) -> &'static str {
        self.game().result.map_or("*", |r| r.pgn())
    }
}
