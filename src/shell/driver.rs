//! The driver: the one task that owns a board's session. It takes inputs
//! (bytes, sensor events, the port opening and closing, each with its
//! session time), fires the session's deadlines when they come, hands every
//! output to the board's sinks, and hands what the session wants sent to
//! the port.
//!
//! Live boards and replayed captures feed the same [`Input`] type, and the
//! driver always brings the session up to an input's time before handing
//! it in, firing every deadline before it at that deadline's own time. That
//! makes a replay at any speed produce exactly what `replay --fast` does.
//!
//! What consumes the outputs is a list of [`Outlet`]s: each a core
//! [`Sink`] (the MQTT feed, the PGN writer's changes, the announcer, the
//! log, the mirror line…) whose items a [`Forward`] hands to wherever they
//! go (the publisher, the PGN writer, the speaker…). The driver does not
//! know which outputs a board has: each configuration section builds its
//! own outlet (`cmd/daemon/board.rs`).
//!
//! The capture comes first: every input is handed to the recorder before
//! the session sees it, and the outputs it leads to wait until the recorder
//! says the record is written, so that a daemon killed at any moment has
//! never published or written more than its captures hold.

use tokio::{
    sync::{mpsc, oneshot},
    time::{Instant, sleep_until},
};

use super::{clock::SessionClock, record::ToRecorder};
use boardcast_core::{
    capture::{LinkChange, Record, RecordBody},
    operator::Command,
    pair::Line,
    protocol::{BoardInfo, link::LinkEvent},
    sensor::SensorEvent,
    session::{BoardSession, NoticeKind, Output},
    sink::{AnySink, Games, Sink},
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
    /// What the board told outside its bytes (a Bluetooth LE board's
    /// battery, from BlueZ). Not recorded: no capture record holds it.
    Info(BoardInfo),
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

/// Something that consumes a board's outputs, as the driver holds it: a
/// sink, and where what it hands on goes.
pub trait Outlet: AnySink + Send {
    /// Resolves once everything this outlet has handed on so far has taken
    /// effect (the PGN writer has written it); `None` when there is nothing
    /// to wait for. An operator told "done" finds the change in the files.
    fn settled(&mut self) -> Option<oneshot::Receiver<()>> {
        None
    }
}

/// A core [`Sink`] whose items are handed on, after every batch, by
/// `send` (usually into a channel to the task that acts on them).
pub struct Forward<S: Sink> {
    sink: S,
    send: Box<dyn FnMut(S::Item) + Send>,
    settle: Option<Box<dyn FnMut() -> Option<oneshot::Receiver<()>> + Send>>,
}

impl<S: Sink> Forward<S> {
    /// `sink`, its items handed to `send`.
    pub fn new(sink: S, send: impl FnMut(S::Item) + Send + 'static) -> Self {
        Self { sink, send: Box::new(send), settle: None }
    }

    /// `sink`, its items sent into `to` (a closed receiver means nobody
    /// listens any more: the board still runs to the end).
    pub fn to(sink: S, to: mpsc::UnboundedSender<S::Item>) -> Self
    where
        S::Item: Send + 'static,
    {
        Self::new(sink, move |item| {
            let _ = to.send(item);
        })
    }

    /// Says how to learn that what was handed on has taken effect
    /// ([`Outlet::settled`]).
    #[must_use]
    pub fn settled_by(mut self, settle: impl FnMut() -> Option<oneshot::Receiver<()>> + Send + 'static) -> Self {
        self.settle = Some(Box::new(settle));
        self
    }
}

impl<S: Sink> AnySink for Forward<S> {
    fn handle(&mut self, output: &Output, games: Games<'_>) {
        self.sink.handle_output(output, games);
    }

    fn end_batch(&mut self, games: Games<'_>) {
        self.sink.flush(games);
        while let Some(item) = self.sink.poll_item() {
            (self.send)(item);
        }
    }
}

impl<S: Sink + Send> Outlet for Forward<S> {
    fn settled(&mut self) -> Option<oneshot::Receiver<()>> {
        self.settle.as_mut().and_then(|settle| settle())
    }
}

/// Where the driver sends what the session produces.
#[derive(Default)]
pub struct Outlets {
    /// What to send to the board (live boards only).
    pub to_port: Option<mpsc::UnboundedSender<ToPort>>,
    /// The capture: every input the session is given (bytes, events,
    /// commands) is recorded here before it is handed in, so that the
    /// capture holds exactly what the session saw, in that order.
    pub record: Option<mpsc::UnboundedSender<ToRecorder>>,
    /// What consumes the outputs, each in turn.
    pub sinks: Vec<Box<dyn Outlet>>,
    /// Where a calibration the board learnt (`calibrate`) is written
    /// (Certabo boards of a live daemon).
    pub calibration_file: Option<std::path::PathBuf>,
}

impl Outlets {
    /// Adds an outlet.
    pub fn push(&mut self, outlet: impl Outlet + 'static) {
        self.sinks.push(Box::new(outlet));
    }
}

/// Runs `session` until `inputs` closes, handing what it produces to
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
    // An operator's answer waits until what the command did has gone out.
    let mut answering: Option<(oneshot::Sender<Answer>, Result<String, String>)> = None;
    // `calibrate` is answered once the board's reports made a calibration
    // (or did not) and it is written.
    let mut calibrating: Option<oneshot::Sender<Answer>> = None;
    // The sinks say what the board is before anything happens (a board
    // that is never plugged in is still published as such).
    let _ = flush(&mut session, &mut outlets, last);
    loop {
        let deadline = session.poll_timeout();
        let wake = deadline.map_or_else(far_future, |t| clock.instant_of(t));
        let mut recorded = None;
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
                let t = input.t;
                let mut record = |body: RecordBody| recorded = to_recorder(&outlets, Record { t, body });
                match input.body {
                    InputBody::Rx(bytes) => {
                        record(RecordBody::Rx(bytes.clone()));
                        session.handle_bytes(t, &bytes);
                    }
                    InputBody::Event(event) => {
                        record(RecordBody::Event(event.clone()));
                        session.handle_sensor(t, &event);
                    }
                    InputBody::Command { command, reply } => {
                        record(RecordBody::Command(command.clone()));
                        let answer = session.handle_command(t, &command);
                        // The answer goes to the operator as words.
                        match (reply, answer) {
                            (Some(reply), Ok(_)) if command == Command::Calibrate => calibrating = Some(reply),
                            (reply, answer) => {
                                answering = reply.map(|reply| (reply, answer.map_err(|e| e.to_string())));
                            }
                        }
                    }
                    InputBody::Connected => {
                        record(RecordBody::Link(LinkChange::Connected));
                        session.handle_connected(t);
                    }
                    InputBody::Disconnected => {
                        record(RecordBody::Link(LinkChange::Disconnected));
                        session.handle_disconnected(t);
                    }
                    InputBody::Mirror(line) => session.handle_mirror(t, line),
                    InputBody::Info(info) => session.handle_board_info(t, info),
                }
                t
            }
            () = sleep_until(wake), if deadline.is_some() => {
                let deadline = deadline.expect("checked by the guard");
                session.handle_timeout(deadline);
                deadline
            }
        };
        // The capture first: nothing the input led to goes out before the
        // input is in the capture (a closed recorder answers at once).
        if let Some(written) = recorded {
            let _ = written.await;
        }
        last = last.max(now);
        let learnt = flush(&mut session, &mut outlets, now);
        if let Some(learnt) = learnt {
            let said = super::calibrate::write(learnt, outlets.calibration_file.as_deref()).await;
            if let Some(reply) = calibrating.take() {
                let _ = reply.send(Answer { said, written: None });
            }
        }
        if let Some((reply, said)) = answering.take() {
            let written = settled(&mut outlets);
            let _ = reply.send(Answer { said, written });
        }
    }
    session.advance_to(last);
    session.handle_end(last);
    let _ = flush(&mut session, &mut outlets, last);
    session
}

/// Hands `record` to the recorder, with a marker behind it that is
/// answered once it is written; `None` when the board is not recorded.
fn to_recorder(outlets: &Outlets, record: Record) -> Option<oneshot::Receiver<()>> {
    let recorder = outlets.record.as_ref()?;
    let (written, answer) = oneshot::channel();
    recorder.send(ToRecorder::Record(record)).ok()?;
    recorder.send(ToRecorder::Written(written)).ok()?;
    Some(answer)
}

/// Passes on everything the session has to send and to say; returns what
/// a `calibrate` came to, if it ended now.
fn flush(
    session: &mut BoardSession,
    outlets: &mut Outlets,
    now: Timestamp,
) -> Option<Result<Vec<(String, char)>, String>> {
    if let Some(port) = &outlets.to_port {
        while let Some(bytes) = session.poll_transmit(now) {
            let _ = port.send(ToPort::Send(bytes));
        }
    }
    let mut silent = SilentWatch(false, None);
    let mut sinks: Vec<&mut dyn AnySink> = Vec::with_capacity(outlets.sinks.len() + 1);
    sinks.push(&mut silent);
    sinks.extend(outlets.sinks.iter_mut().map(|outlet| &mut **outlet as &mut dyn AnySink));
    session.pump(&mut sinks);
    if silent.0
        && let Some(port) = &outlets.to_port
    {
        let _ = port.send(ToPort::Reconnect);
    }
    silent.1
}

/// Whether the link said the board has gone silent (the port is then
/// closed and opened again), and what a `calibrate` came to.
struct SilentWatch(bool, Option<Result<Vec<(String, char)>, String>>);

impl AnySink for SilentWatch {
    fn handle(&mut self, output: &Output, _games: Games<'_>) {
        if let Output::Notice(notice) = output
            && notice.kind == NoticeKind::Link(LinkEvent::Silent)
        {
            self.0 = true;
        }
        if let Output::Notice(notice) = output
            && let NoticeKind::Calibrated(learnt) = &notice.kind
        {
            self.1 = Some(learnt.clone());
        }
    }

    fn end_batch(&mut self, _games: Games<'_>) {}
}

/// A marker behind everything the outlets have handed on, answered once
/// all of it has taken effect; `None` when no outlet has anything to wait
/// for.
fn settled(outlets: &mut Outlets) -> Option<oneshot::Receiver<()>> {
    let waits: Vec<oneshot::Receiver<()>> = outlets.sinks.iter_mut().filter_map(|o| o.settled()).collect();
    match waits.len() {
        0 => None,
        1 => waits.into_iter().next(),
        _ => {
            let (tx, rx) = oneshot::channel();
            tokio::spawn(async move {
                for wait in waits {
                    let _ = wait.await;
                }
                let _ = tx.send(());
            });
            Some(rx)
        }
    }
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
        let session = BoardSession::new(Protocol::DGT, ReconstructorConfig::default(), GameSetup::default());
        let (inputs_tx, inputs_rx) = mpsc::channel(16);
        let (games, mut games_rx) = mpsc::unbounded_channel();
        let mut outlets = Outlets::default();
        outlets.push(Forward::to(boardcast_core::sink::ChangedGames::default(), games));
        let clock = SessionClock::start(1.0);
        let driver = tokio::spawn(drive(session, inputs_rx, outlets, clock));
        const COMMANDS: usize = 8000;
        let counted = tokio::spawn(async move {
            let (mut updates, mut records) = (0usize, 0usize);
            while let Some(changed) = games_rx.recv().await {
                updates += 1;
                records += changed.len();
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

    /// The capture comes first: what an input leads to reaches no sink
    /// before the recorder says the input is written. A recorder that
    /// holds its answer holds the outputs; its answer lets them go.
    #[tokio::test(flavor = "current_thread")]
    async fn outputs_wait_until_the_input_is_in_the_capture() {
        let session = BoardSession::new(Protocol::EVENTS, ReconstructorConfig::default(), GameSetup::default());
        let (inputs_tx, inputs_rx) = mpsc::channel(16);
        let (record_tx, mut record_rx) = mpsc::unbounded_channel();
        let (outputs_tx, mut outputs_rx) = mpsc::unbounded_channel();
        let mut outlets = Outlets { record: Some(record_tx), ..Outlets::default() };
        outlets.push(Forward::to(boardcast_core::sink::EveryOutput::default(), outputs_tx));
        let driver = tokio::spawn(drive(session, inputs_rx, outlets, SessionClock::start(1.0)));
        // What the session says before any input (nothing was recorded).
        tokio::task::yield_now().await;
        while outputs_rx.try_recv().is_ok() {}
        let start = boardcast_core::sensor::Picture::from_board(&shakmaty::Board::new());
        let body = InputBody::Event(SensorEvent::Board(Box::new(start)));
        inputs_tx.send(Input { t: Timestamp::from_millis(5), body }).await.unwrap();
        let Some(ToRecorder::Record(record)) = record_rx.recv().await else { panic!("the input is recorded first") };
        assert!(matches!(record.body, RecordBody::Event(_)));
        let Some(ToRecorder::Written(written)) = record_rx.recv().await else { panic!("then a marker") };
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(outputs_rx.try_recv().is_err(), "nothing goes out before the capture has the input");
        written.send(()).unwrap();
        let output = tokio::time::timeout(std::time::Duration::from_secs(5), outputs_rx.recv()).await;
        assert!(matches!(output, Ok(Some(Output::Event(_)))), "the game starts, once written: {output:?}");
        drop(inputs_tx);
        driver.await.unwrap();
    }
}
