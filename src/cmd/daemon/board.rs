//! One board's tasks, from start to shutdown: its session (new, or resumed
//! from its capture), the port, the driver (with the board's MQTT feed),
//! the recorder, its PGN and its log lines.

use std::{path::PathBuf, time::Duration};

use tokio::sync::mpsc;
use tracing::{Instrument, Span, error, info, warn};

use boardcast::{
    config::{Board, FindBoard, Pairing},
    shell::{
        clock::SessionClock,
        driver::{GamesChanged, Input, InputBody, Outlets, drive},
        port::{self, Locate, PortChannels, PortSettings},
        record,
        speech::{SpeakerSettings, speak, tap},
    },
};
use boardcast_core::{
    capture::{CaptureHeader, Record},
    livechess::board::BoardWatch,
    pair::Line,
    publish::{announcer::Announcer, board::BoardFeed},
    session::{BoardSession, Output, setup_from_header},
};

use super::{BoardHandle, Boards, Shared, log::log_outputs, pgn::PgnUpdate, recover};

/// How long the next board waits at most for the publisher to catch up
/// with a resumed board's past.
const PAST_PUBLISHED_WAIT: Duration = Duration::from_secs(5);

/// How a board's session begins.
struct Begun {
    session: BoardSession,
    clock: SessionClock,
    /// Wall-clock milliseconds at session time zero.
    epoch_ms: i64,
    /// The recording session's name (the capture's file name).
    session_id: String,
    /// Outputs of a resumed session's past, to publish again.
    past: Vec<Output>,
    /// A resumed board's turn to resume, held until the publisher has
    /// caught up with its past.
    turn: Option<tokio::sync::SemaphorePermit<'static>>,
    recorder: Option<mpsc::UnboundedSender<Record>>,
    recorder_task: Option<tokio::task::JoinHandle<()>>,
}

/// One board, from start to shutdown; `Err` when its driver failed (the
/// supervisor then starts it again, and its game resumes from the capture).
pub(super) async fn run_board(board: Board, shared: Shared) -> Result<(), String> {
    let locate = match &board.find {
        FindBoard::Port(path) => Locate::Path(path.clone()),
        FindBoard::Serial(serial) => {
            info!("looking for the DGT board with serial number {serial} on the serial ports");
            Locate::Serial { serial: serial.clone(), extra_ports: shared.extra_ports.clone() }
        }
    };
    let Begun { session, clock, epoch_ms, session_id, past, turn, recorder, recorder_task } =
        begin(&board, &shared).await;

    let (inputs_tx, inputs_rx) = mpsc::channel(256);
    let (to_port_tx, to_port_rx) = mpsc::unbounded_channel();
    let (outputs_tx, outputs_rx) = mpsc::unbounded_channel();
    let (games_tx, mut games_rx) = mpsc::unbounded_channel::<GamesChanged>();
    let (events_tx, events_rx) = mpsc::unbounded_channel();

    // A visually impaired player's board mirroring another board's game
    // (appendix D): read, recorded and compared, but the PGN and the feed
    // are the game board's.
    let mirror_of = match &board.pair {
        Some(Pairing::MirrorOf { game }) => Some(game.clone()),
        _ => None,
    };
    // A resumed game's PGN is written, and its feed published again, before
    // the board speaks (subscribers drop what they already have by seq).
    let label = board.path.board.clone();
    if !past.is_empty() && mirror_of.is_none() {
        let _ = shared.pgn.send(PgnUpdate::new(label.clone(), session.reconstructor().games().cloned().collect()));
    }
    let feed = shared.feed.as_ref().map(|feed| {
        let mut board_feed =
            BoardFeed::new(feed.settings.clone(), &board.name, board.path.clone(), epoch_ms, &session_id);
        if let Some(game) = &mirror_of {
            board_feed.mirror_of(game);
        }
        for output in &past {
            board_feed.handle_output(output, session.reconstructor());
        }
        board_feed.flush(session.reconstructor());
        while let Some(item) = board_feed.poll_item() {
            let _ = feed.items.send(item);
        }
        (board_feed, feed.items.clone())
    });
    // The next board resumes once the publisher has caught up with this
    // one's past: a hundred boards' pasts at once (every move of every
    // game so far) waited in the publisher together, and the allocator
    // kept the peak for the rest of the day (RELIABILITY.md, "Long day").
    // This board goes on meanwhile: its own moves must not wait. A broker
    // that is away holds nobody up for long.
    if let (Some(turn), Some(feed)) = (turn, &shared.feed) {
        let (caught, caught_up) = tokio::sync::oneshot::channel();
        if feed.marks.send(caught).is_ok() {
            tokio::spawn(async move {
                let _ = tokio::time::timeout(PAST_PUBLISHED_WAIT, caught_up).await;
                drop(turn);
            });
        }
    }
    // The board as LiveChess shows it, from its past too (a resumed game's
    // clock and moves); a mirror board's game is its game board's.
    let livechess = shared.livechess.as_ref().filter(|_| mirror_of.is_none()).map(|snapshots| {
        let mut watch = BoardWatch::new(super::livechess::identity(&board), epoch_ms);
        for output in &past {
            watch.handle_output(output);
        }
        (watch, snapshots.clone())
    });
    let speech = speech(&board, &shared, outputs_rx, &past);
    // Everything the capture produced (a clock reading a second: tens of
    // thousands after a few hours) is not needed once published again;
    // kept until the board stops, it grew every restart's memory with the
    // length of the day.
    drop(past);

    let port_settings = PortSettings { locate, baud: board.protocol.baud(), reconnect_max: shared.reconnect_max };
    // Operator commands reach the board's session through its inputs.
    shared.boards.lock().expect("not poisoned").insert(
        board.name.clone(),
        BoardHandle {
            inputs: inputs_tx.clone(),
            clock,
            number: boardcast_core::pairings::board_number(&board.path.board),
        },
    );
    let recorder_for_driver = recorder.clone();
    let mirror = mirror_of.as_ref().map(|game| {
        let (lines_tx, lines_rx) = mpsc::unbounded_channel();
        tokio::spawn(forward_mirror(game.clone(), shared.boards.clone(), lines_rx).instrument(Span::current()));
        lines_tx
    });
    let channels = PortChannels { inputs: inputs_tx, from_driver: to_port_rx, recorder, events: events_tx };
    // The port stops on shutdown, or when this board's driver failed.
    let stop_port = shared.shutdown.child_token();
    let mut port = tokio::spawn(port::run(port_settings, channels, clock, stop_port.clone()));
    let outlets = Outlets {
        outputs: outputs_tx,
        to_port: Some(to_port_tx),
        games: mirror_of.is_none().then_some(games_tx),
        feed,
        record: recorder_for_driver,
        mirror,
        livechess,
    };
    let mut driver = tokio::spawn(drive(session, inputs_rx, outlets, clock));
    let log = tokio::spawn(log_outputs(speech.outputs, events_rx, shared.reconnect_max).instrument(Span::current()));
    let pgn = shared.pgn.clone();
    let pgn_label = label.clone();
    let pgn_forward = tokio::spawn(async move {
        while let Some(GamesChanged { games, written }) = games_rx.recv().await {
            let _ = pgn.send(PgnUpdate { board: pgn_label.clone(), games, written });
        }
    });

    // Normally the port stops first (shutdown) and closes the driver's
    // inputs, so the driver ends and hands back the session with every
    // game. A driver that ends first has failed (a panic: a bug).
    let driver_result = tokio::select! {
        _ = &mut port => {
            // Nothing more reaches the driver: it ends with the session.
            shared.boards.lock().expect("not poisoned").remove(&board.name);
            driver.await
        }
        result = &mut driver => {
            shared.boards.lock().expect("not poisoned").remove(&board.name);
            stop_port.cancel();
            let _ = port.await;
            result
        }
    };
    let result = match driver_result {
        Ok(session) => {
            let _ = pgn_forward.await;
            if mirror_of.is_none() {
                let _ = shared.pgn.send(PgnUpdate::new(label, session.into_games()));
            }
            Ok(())
        }
        Err(failure) => {
            let why = if failure.is_panic() {
                let payload = failure.into_panic();
                let text = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                format!("the board's driver panicked: {text} (a bug: please report it with the board's capture)")
            } else {
                format!("the board's driver stopped: {failure}")
            };
            error!("{why}; the games written so far are kept");
            Err(why)
        }
    };
    let _ = log.await;
    if let Some((speaker, timeout)) = speech.speaker {
        // What waits to be said gets one announcement's time, not more:
        // shutting down is not held up by a queue of stale moves.
        let abort = speaker.abort_handle();
        if tokio::time::timeout(timeout, speaker).await.is_err() {
            abort.abort();
        }
    }
    if let Some(recorder) = recorder_task {
        let _ = recorder.await;
    }
    result
}

/// Passes a mirror board's game to the session of the game board it
/// mirrors, stamped with that board's session time. The game board's
/// current run gets it: one started again (after a failure) is given the
/// latest line at once, not only at the mirror's next move.
async fn forward_mirror(game: String, boards: Boards, mut lines: mpsc::UnboundedReceiver<Line>) {
    let mut latest: Option<Line> = None;
    let mut delivered_to: Option<mpsc::Sender<Input>> = None;
    let mut check = tokio::time::interval(Duration::from_millis(500));
    loop {
        let fresh = tokio::select! {
            line = lines.recv() => match line {
                Some(line) => {
                    latest = Some(line);
                    true
                }
                None => break,
            },
            _ = check.tick() => false,
        };
        let Some(line) = &latest else { continue };
        let Some(handle) = boards.lock().expect("not poisoned").get(&game).cloned() else { continue };
        if fresh || !delivered_to.as_ref().is_some_and(|d| d.same_channel(&handle.inputs)) {
            let input = Input { t: handle.clock.now(), body: InputBody::Mirror(line.clone()) };
            if handle.inputs.send(input).await.is_ok() {
                delivered_to = Some(handle.inputs);
            }
        }
    }
}

/// The board's outputs as the log reads them, and its speaker if it speaks.
struct Speech {
    outputs: mpsc::UnboundedReceiver<Output>,
    speaker: Option<(tokio::task::JoinHandle<()>, std::time::Duration)>,
}

/// Starts the board's speaker when `[speech]` names it: its announcer
/// taps the outputs on their way to the log. A resumed game's `past` is
/// known to the announcer but not said again.
fn speech(board: &Board, shared: &Shared, outputs: mpsc::UnboundedReceiver<Output>, past: &[Output]) -> Speech {
    let Some((settings, language)) = shared.speech.as_ref().and_then(|s| Some((s, s.language_of(board)?))) else {
        return Speech { outputs, speaker: None };
    };
    let mut announcer = Announcer::new(language);
    for output in past {
        if let Output::Event(event) = output {
            announcer.handle_event(event);
        }
    }
    while announcer.poll_announcement().is_some() {}
    info!("announcing completed moves and results in {} with {:?}", language.code(), settings.command);
    let (texts_tx, texts_rx) = mpsc::unbounded_channel();
    let (next_tx, next_rx) = mpsc::unbounded_channel();
    tokio::spawn(tap(outputs, next_tx, announcer, texts_tx));
    let speaker_settings = SpeakerSettings {
        command: settings.command.clone(),
        max_queue: settings.max_queue,
        timeout: settings.timeout,
        board: board.name.clone(),
        language: language.code(),
    };
    let speaker = tokio::spawn(speak(speaker_settings, texts_rx).instrument(Span::current()));
    Speech { outputs: next_rx, speaker: Some((speaker, settings.timeout)) }
}

/// The board's session: its game in progress resumed from its newest
/// capture when there is one, or a new session with a new capture.
async fn begin(board: &Board, shared: &Shared) -> Begun {
    let mut reconstruction = shared.reconstruction.clone();
    reconstruction.white_clock = board.white_clock;
    if let Some(rotated) = board.rotated_board {
        reconstruction.rotated_board = rotated;
    }
    if let Some(dir) = &shared.recording
        && let Some(found) = recover::find(dir, board, &reconstruction, shared.link).await
    {
        match record::append(&found.path).await {
            Ok(writer) => {
                let game = found.resumed.session.reconstructor().game();
                info!(
                    "resuming game {} ({} plies) from {} ({} records)",
                    game.map_or(0, |g| g.number),
                    game.map_or(0, |g| g.plies.len()),
                    found.path.display(),
                    found.resumed.records
                );
                let (recorder, recorder_task) = spawn_recorder(found.path.clone(), writer);
                let mut session = found.resumed.session;
                session.set_lights(board.leds);
                session.set_clock_display(board.clock_display);
                pair(&mut session, board);
                return Begun {
                    turn: Some(found.turn),
                    clock: SessionClock::resume_at(found.now, 1.0),
                    epoch_ms: found.started_ms,
                    session_id: session_id(&found.path),
                    past: found.resumed.outputs,
                    session,
                    recorder: Some(recorder),
                    recorder_task: Some(recorder_task),
                };
            }
            Err(failure) => warn!(
                "cannot add to {}: {failure}; starting a new capture (the game there is not resumed)",
                found.path.display()
            ),
        }
    }
    // The games are set up from the same header the capture gets, so that
    // replaying the capture gives the same tags, rules and calibration.
    let mut header = capture_header(board, shared);
    header.calibration = calibration(board).await;
    let mut session = BoardSession::live(board.protocol, reconstruction, setup_from_header(&header), shared.link);
    if let Err(why) = session.set_calibration(&header.calibration) {
        warn!("{why}");
    }
    session.set_lights(board.leds);
    session.set_clock_display(board.clock_display);
    pair(&mut session, board);
    let (recorder, recorder_task, session_id) = match start_recording(board, &header, shared).await {
        Some((tx, task, path)) => (Some(tx), Some(task), session_id(&path)),
        None => (None, None, format!("{}-{}", board.name, shared.file_stamp)),
    };
    Begun {
        session,
        clock: shared.clock,
        epoch_ms: shared.epoch_ms,
        session_id,
        past: Vec::new(),
        turn: None,
        recorder,
        recorder_task,
    }
}

/// A game board mirrored by a visually impaired player's board compares
/// its game with the mirror's (`boards_diverge`).
fn pair(session: &mut BoardSession, board: &Board) {
    if let Some(Pairing::Game(settings)) = &board.pair {
        info!(
            "board {} mirrors this game: boards_diverge when a move is not copied within {} s",
            settings.mirror_board,
            settings.diverge_after.as_secs_f64()
        );
        session.pair_with_mirror(settings.clone());
    }
}

/// The header of a new capture: what the games on the board are.
fn capture_header(board: &Board, shared: &Shared) -> CaptureHeader {
    let mut header = CaptureHeader::new(board.protocol, board.name.clone());
    header.started_at = Some(shared.started_at.clone());
    header.game = board.tags.clone();
    header.chess960 = board.chess960;
    header.rules = board.rules;
    header.supervised = board.supervised;
    header
}

/// A Certabo board's calibration, from the file `boardcast calibrate`
/// wrote (tag → piece letter, as JSON).
async fn calibration(board: &Board) -> Vec<(String, char)> {
    let Some(path) = &board.calibration else {
        if board.protocol == boardcast_core::protocol::Protocol::Certabo {
            warn!(
                "no calibration file: pieces are learned from the start position, and a promotion to a piece that was not on the board then is unknown (`boardcast calibrate`, then calibration = \"…\" in the board's table)"
            );
        }
        return Vec::new();
    };
    let entries = tokio::fs::read_to_string(path)
        .await
        .map_err(|e| e.to_string())
        .and_then(|text| {
            serde_json::from_str::<std::collections::BTreeMap<String, String>>(&text).map_err(|e| e.to_string())
        })
        .and_then(|map| {
            map.into_iter()
                .map(|(tag, letter)| {
                    let mut chars = letter.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => Ok((tag, c)),
                        _ => Err(format!("{letter:?} for tag {tag} is not a piece letter")),
                    }
                })
                .collect::<Result<Vec<_>, _>>()
        });
    match entries {
        Ok(entries) => entries,
        Err(why) => {
            error!(
                "cannot use the calibration {}: {why}; pieces are learned from the start position instead",
                path.display()
            );
            Vec::new()
        }
    }
}

/// A capture's file name without `.jsonl`.
fn session_id(path: &std::path::Path) -> String {
    path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// Creates the board's capture file and starts writing it, if recording.
async fn start_recording(
    board: &Board,
    header: &CaptureHeader,
    shared: &Shared,
) -> Option<(mpsc::UnboundedSender<Record>, tokio::task::JoinHandle<()>, PathBuf)> {
    let dir = shared.recording.as_ref()?;
    let file = format!("{}-{}", boardcast_core::names::component(&board.name), shared.file_stamp);
    match record::create(dir, &file, header).await {
        Ok((path, writer)) => {
            info!("recording to {}", path.display());
            let (tx, task) = spawn_recorder(path.clone(), writer);
            Some((tx, task, path))
        }
        Err(failure) => {
            warn!(
                "cannot record in {}: {failure}; the board is read without recording, and its games cannot be resumed after a crash (fix recording.dir or set recording.enabled = false)",
                dir.display()
            );
            None
        }
    }
}

fn spawn_recorder(
    path: PathBuf,
    writer: tokio::io::BufWriter<tokio::fs::File>,
) -> (mpsc::UnboundedSender<Record>, tokio::task::JoinHandle<()>) {
    let (tx, rx) = mpsc::unbounded_channel();
    // Said when it happens (a full disk mid-game), not at shutdown.
    let task = tokio::spawn(
        async move {
            if let Err(failure) = record::run(&path, writer, rx).await {
                error!(
                    "recording ended with records unwritten: cannot write {}: {failure}; the games are still in the PGN files",
                    path.display()
                );
            }
        }
        .instrument(Span::current()),
    );
    (tx, task)
}
