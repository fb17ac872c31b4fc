//! The driver: the one task that owns a board's session. It takes inputs
//! (bytes, sensor events, the port opening and closing, each with its
//! session time), fires the session's deadlines when they come, passes every
//! output on, and hands what the session wants sent to the port.
//!
//! Live boards and replayed captures feed the same [`Input`] type, and the
//! driver always brings the session up to an input's time before handing
//! it in, firing every deadline before it at that deadline's own time. That
//! makes a replay at any speed produce exactly what `replay --fast` does.
//!
//! The board's MQTT feed is computed here too (a sans-I/O [`BoardFeed`]),
//! because it needs the game records as they are right after each batch of
//! outputs; its items go to the publisher task.

use tokio::{
    sync::{mpsc, oneshot},
    time::{Instant, sleep_until},
};

use super::clock::SessionClock;
use boardcast_core::{
    capture::{LinkChange, Record, RecordBody},
    event::EventKind,
    game::GameRecord,
    livechess::board::{BoardWatch, Snapshot},
    operator::Command,
    pair::{Line, LineWatch},
    protocol::link::LinkEvent,
    publish::{Item, board::BoardFeed},
    sensor::SensorEvent,
    session::{BoardSession, NoticeKind, Output},
    time::Timestamp,
};

/// One input for a board's session.
#[derive(Debug)]
pub struct Input {
    /// When it happened, in session time.
    pub t: Timestamp,
    /// What happened.
    pub body: InputBody,
}

/// What happened.
#[derive(Debug)]
pub enum InputBody {
    /// Bytes received from the board.
    Rx(Vec<u8>),
    /// A decoded sensor event (captures of the `events` protocol).
    Event(SensorEvent),
    /// The port opened.
    Connected,
    /// The port closed.
    Disconnected,
    /// The game of the board mirroring this one changed (paired boards,
    /// Laws appendix D). Not recorded: it is the other board's capture's.
    Mirror(Line),
    /// An operator command, and where its answer goes (if anywhere).
    Command {
        /// The command.
        command: Command,
        /// Gets what it did, or why not.
        reply: Option<oneshot::Sender<Answer>>,
    },
}

/// The session's answer to an operator command.
#[derive(Debug)]
pub struct Answer {
    /// What the command did, or why not, in words.
    pub said: Result<String, String>,
    /// Resolves once the PGN writer has written every game the command
    /// changed (`None` when this board writes no PGN): an operator who is
    /// told "done" finds it in the files.
    pub written: Option<oneshot::Receiver<()>>,
}

/// Games that changed, for the PGN writer.
#[derive(Debug)]
pub struct GamesChanged {
    /// The games, as they are now.
    pub games: Vec<GameRecord>,
    /// Told once they (and everything sent before them) are on disk.
    pub written: Option<oneshot::Sender<()>>,
}

impl InputBody {
    /// The input a capture record gives; `None` for bytes that were sent.
    pub fn from_record(body: RecordBody) -> Option<Self> {
        match body {
            RecordBody::Rx(bytes) => Some(Self::Rx(bytes)),
            RecordBody::Event(event) => Some(Self::Event(event)),
            RecordBody::Command(command) => Some(Self::Command { command, reply: None }),
            RecordBody::Link(LinkChange::Connected) => Some(Self::Connected),
            RecordBody::Link(LinkChange::Disconnected) => Some(Self::Disconnected),
            RecordBody::Tx(_) => None,
        }
    }
}

/// What the driver asks of the task that owns the port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToPort {
    /// Send these bytes.
    Send(Vec<u8>),
    /// The board has gone silent: close the port and open it again.
    Reconnect,
}

/// Where the driver sends what the session produces.
#[derive(Debug)]
pub struct Outlets {
    /// Every output, in order.
    pub outputs: mpsc::UnboundedSender<Output>,
    /// What to send to the board (live boards only).
    pub to_port: Option<mpsc::UnboundedSender<ToPort>>,
    /// The games that changed, after each change (for writing PGN): only
    /// those, so that a board with many games (a flood of `set_position`)
    /// costs the same per change as a board with one.
    pub games: Option<mpsc::UnboundedSender<GamesChanged>>,
    /// The board's MQTT feed, and where its items go.
    pub feed: Option<(BoardFeed, mpsc::UnboundedSender<Item>)>,
    /// The capture: every input the session is given (bytes, events,
    /// commands) is recorded here before it is handed in, so that the
    /// capture holds exactly what the session saw, in that order.
    pub record: Option<mpsc::UnboundedSender<Record>>,
    /// A board mirroring another's game: its game, each time it changed,
    /// for the game board's session to compare.
    pub mirror: Option<mpsc::UnboundedSender<Line>>,
    /// The board as DGT LiveChess's API shows it (docs/livechess.md): its
    /// watch sees every output, and its snapshot goes out after each batch
    /// that changed it.
    pub livechess: Option<(BoardWatch, mpsc::UnboundedSender<Snapshot>)>,
}

/// Runs `session` until `inputs` closes, sending what it produces to
/// `outlets`. Returns the session, so that its games can be taken.
///
/// When `inputs` closes, the session is told the stream ended at the time
/// of the last input (the board as last seen stands; pending deadlines come
/// to pass).
pub async fn drive(
    mut session: BoardSession,
    mut inputs: mpsc::Receiver<Input>,
    mut outlets: Outlets,
    clock: SessionClock,
) -> BoardSession {
    let mut last = Timestamp::ZERO;
    let mut line = LineWatch::default();
    // An operator's answer waits until what the command did has gone out.
    let mut answering: Option<(oneshot::Sender<Answer>, Result<String, String>)> = None;
    // The feed says what the board is before anything happens (a board
    // that is never plugged in is still published as such).
    flush(&mut session, &mut outlets, last);
    pass_line(&session, &outlets, &mut line);
    loop {
        let deadline = session.poll_timeout();
        let wake = deadline.map_or_else(far_future, |t| clock.instant_of(t));
        let now = tokio::select! {
            // Inputs first: when a deadline and an input are both ready
            // (a timer that fired late on a busy machine), an input from
            // before the deadline must be handled first, or a replay at
            // `--speed` could differ from `--fast`. An input after the
            // deadline fires it first anyway (`advance_to`).
            biased;
            input = inputs.recv() => {
                let Some(input) = input else { break };
                session.advance_to(input.t);
                let record = |body: RecordBody| {
                    if let Some(recorder) = &outlets.record {
                        let _ = recorder.send(Record { t: input.t, body });
                    }
                };
                match input.body {
                    InputBody::Rx(bytes) => {
                        record(RecordBody::Rx(bytes.clone()));
                        session.handle_bytes(input.t, &bytes);
                    }
                    InputBody::Event(event) => {
                        record(RecordBody::Event(event.clone()));
                        session.handle_sensor(input.t, &event);
                    }
                    InputBody::Command { command, reply } => {
                        record(RecordBody::Command(command.clone()));
                        let answer = session.handle_command(input.t, &command);
                        // The answer goes to the operator as words.
                        answering = reply.map(|reply| (reply, answer.map_err(|e| e.to_string())));
                    }
                    InputBody::Connected => {
                        record(RecordBody::Link(LinkChange::Connected));
                        session.handle_connected(input.t);
                    }
                    InputBody::Disconnected => {
                        record(RecordBody::Link(LinkChange::Disconnected));
                        session.handle_disconnected(input.t);
                    }
                    InputBody::Mirror(line) => session.handle_mirror(input.t, line),
                }
                input.t
            }
            () = sleep_until(wake), if deadline.is_some() => {
                let deadline = deadline.expect("checked by the guard");
                session.handle_timeout(deadline);
                deadline
            }
        };
        last = last.max(now);
        flush(&mut session, &mut outlets, now);
        pass_line(&session, &outlets, &mut line);
        if let Some((reply, said)) = answering.take() {
            let _ = reply.send(Answer { said, written: written_after(&outlets) });
        }
    }
    session.advance_to(last);
    session.handle_end(last);
    flush(&mut session, &mut outlets, last);
    session
}

/// Passes on everything the session has to say and to send.
fn flush(session: &mut BoardSession, outlets: &mut Outlets, now: Timestamp) {
    if let Some(port) = &outlets.to_port {
        while let Some(bytes) = session.poll_transmit(now) {
            let _ = port.send(ToPort::Send(bytes));
        }
    }
    let mut changed = std::collections::BTreeSet::new();
    let mut each = |output: Output| {
        match &output {
            Output::Notice(notice) if notice.kind == NoticeKind::Link(LinkEvent::Silent) => {
                if let Some(port) = &outlets.to_port {
                    let _ = port.send(ToPort::Reconnect);
                }
            }
            Output::Event(event) => {
                if changes_games(&event.kind) {
                    changed.insert(event.game);
                }
            }
            Output::Notice(_) => {}
        }
        if let Some((watch, _)) = &mut outlets.livechess {
            watch.handle_output(&output);
        }
        // A closed receiver means nobody listens any more; the session still
        // runs to the end so that its games are complete.
        let _ = outlets.outputs.send(output);
    };
    match &mut outlets.feed {
        Some((feed, items)) => feed.pump(session, each, |item| {
            let _ = items.send(item);
        }),
        None => {
            while let Some(output) = session.poll_output() {
                each(output);
            }
        }
    }
    if let Some((watch, snapshots)) = &mut outlets.livechess
        && let Some(snapshot) = watch.poll(session.reconstructor())
    {
        let _ = snapshots.send(snapshot);
    }
    if !changed.is_empty()
        && let Some(games) = &outlets.games
    {
        let reconstructor = session.reconstructor();
        let games_now = changed.into_iter().filter_map(|n| reconstructor.game_by_number(n)).cloned().collect();
        let _ = games.send(GamesChanged { games: games_now, written: None });
    }
}

/// A marker behind everything already sent to the PGN writer, which it
/// answers once that is written; `None` for a board that writes no PGN.
fn written_after(outlets: &Outlets) -> Option<oneshot::Receiver<()>> {
    let games = outlets.games.as_ref()?;
    let (tx, rx) = oneshot::channel();
    games.send(GamesChanged { games: Vec::new(), written: Some(tx) }).ok()?;
    Some(rx)
}

/// A mirror board's game, to the game board, when it changed.
fn pass_line(session: &BoardSession, outlets: &Outlets, watch: &mut LineWatch) {
    if let Some(mirror) = &outlets.mirror
        && let Some(line) = watch.poll(session.reconstructor().game())
    {
        let _ = mirror.send(line);
    }
}

/// Whether an event changes what a game's PGN says.
fn changes_games(kind: &EventKind) -> bool {
    !matches!(
        kind,
        EventKind::Clock(_) | EventKind::Status(_) | EventKind::Alert(_) | EventKind::AlertAcknowledged { .. }
    )
}

fn far_future() -> Instant {
    Instant::now() + std::time::Duration::from_secs(86_400 * 365)
}

#[cfg(test)]
mod tests {
    use super::*;
    use boardcast_core::{
        operator::Command,
        protocol::Protocol,
        reconstruct::{GameSetup, ReconstructorConfig},
    };

    /// 8 000 `set_position` commands make 8 000 games; what the PGN writer
    /// is handed per command stays constant (counted in game records, not
    /// timed).
    #[tokio::test(flavor = "current_thread")]
    async fn a_flood_of_set_position_costs_the_same_per_command() {
        let session = BoardSession::new(Protocol::Dgt, ReconstructorConfig::default(), GameSetup::default());
        let (inputs_tx, inputs_rx) = mpsc::channel(16);
        let (outputs, _outputs_rx) = mpsc::unbounded_channel();
        let (games, mut games_rx) = mpsc::unbounded_channel();
        let outlets = Outlets {
            outputs,
            to_port: None,
            games: Some(games),
            feed: None,
            record: None,
            mirror: None,
            livechess: None,
        };
        let clock = SessionClock::start(1.0);
        let driver = tokio::spawn(drive(session, inputs_rx, outlets, clock));
        const COMMANDS: usize = 8000;
        let counted = tokio::spawn(async move {
            let (mut updates, mut records) = (0usize, 0usize);
            while let Some(changed) = games_rx.recv().await {
                updates += 1;
                records += changed.games.len();
            }
            (updates, records)
        });
        for i in 0..COMMANDS {
            let fen = format!("4k3/8/8/8/8/8/4P3/4K3 w - - 0 {}", i + 1);
            let t = Timestamp::from_micros(i as u64 * 1000);
            let body = InputBody::Command { command: Command::SetPosition { fen }, reply: None };
            inputs_tx.send(Input { t, body }).await.unwrap();
        }
        drop(inputs_tx);
        let session = driver.await.unwrap();
        assert_eq!(session.reconstructor().games().count(), COMMANDS);
        let (updates, records) = counted.await.unwrap();
        assert!(updates >= COMMANDS);
        assert!(records <= 2 * updates, "{records} game records handed over for {updates} changes");
    }
}
