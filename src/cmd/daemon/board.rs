//! One board's tasks, from start to shutdown: its session (new, or resumed
//! from its capture), the port, the driver, the recorder, and the outlets
//! that consume the board's outputs, each built by the part of the daemon
//! its configuration section belongs to (the log here, the PGN writer's in
//! `pgn.rs`, the MQTT feed's in `feed.rs`, the speaker's in `speech.rs`, a
//! mirror board's line here).

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use tokio::{sync::mpsc, task::JoinHandle};
use tracing::{Instrument, Span, error, info, warn};

use boardcast::{
    config::{Board, FindBoard, Pairing},
    shell::{
        ble::{self, link::BleSettings},
        clock::SessionClock,
        driver::{Forward, Input, InputBody, Outlets, drive},
        port::{self, Locate, PortChannels, PortSettings},
        record::{self, ToRecorder},
    },
};
use boardcast_core::{
    capture::CaptureHeader,
    operator::Command,
    pair::{Line, LineWatch},
    session::{BoardSession, Output, setup_from_header},
    sink::{EveryOutput, Games},
    time::Timestamp,
};

use super::{BoardHandle, Boards, Shared, log::log_outputs, pgn::PgnUpdate, recover, speech};

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
    recorder: Option<mpsc::UnboundedSender<ToRecorder>>,
    recorder_task: Option<JoinHandle<()>>,
    /// The operator's round and players from the board's last capture,
    /// whose games were all over, and that capture: applied again as the
    /// new session's first command.
    carried: Option<(PathBuf, BTreeMap<String, String>)>,
}

/// What a board's outlets start from.
pub(super) struct Start<'a> {
    /// The board's configuration.
    pub(super) board: &'a Board,
    /// Its games as they stand (a resumed board's, or none yet).
    pub(super) games: Games<'a>,
    /// A resumed session's outputs so far, to hand on again.
    pub(super) past: &'a [Output],
    /// Wall-clock milliseconds at session time zero.
    pub(super) epoch_ms: i64,
    /// The recording session's name (the capture's file name).
    pub(super) session_id: &'a str,
}

/// The tasks that act on what the board's outlets hand on, awaited when
/// the board stops.
struct Behind {
    log: JoinHandle<()>,
    speaker: Option<speech::Speaker>,
}

/// One board, from start to shutdown; `Err` when its driver failed (the
/// supervisor then starts it again, and its game resumes from the capture).
pub(super) async fn run_board(board: Board, shared: Shared) -> Result<(), String> {
    let family = board.protocol.family().expect("a configured board is of a family (`events` is refused)");
    let locate = match &board.find {
        FindBoard::Port(path) => Ok(Locate::Path(path.clone())),
        FindBoard::Serial(serial) => {
            info!("looking for the {} with serial number {serial} on the serial ports", family.title);
            Ok(Locate::Serial { family, serial: serial.clone(), extra_ports: shared.extra_ports.clone() })
        }
        FindBoard::Bluetooth(target) => {
            info!("looking for the {} {target} through BlueZ", family.title);
            Err(BleSettings { target: target.clone(), family, reconnect_max: shared.reconnect_max })
        }
    };
    let Begun { session, clock, epoch_ms, session_id, past, turn, recorder, recorder_task, carried } =
        begin(&board, &shared).await;
    let (inputs_tx, inputs_rx) = mpsc::channel(256);
    if let Some((path, tags)) = carried {
        carry_over(&inputs_tx, clock.now(), &path, tags);
    }
    let (to_port_tx, to_port_rx) = mpsc::unbounded_channel();
    let (events_tx, events_rx) = mpsc::unbounded_channel();
    let mut outlets = Outlets {
        to_port: Some(to_port_tx),
        record: recorder.clone(),
        sinks: Vec::new(),
        calibration_file: board.calibration.clone(),
    };
    let behind = {
        // The view of the games is not to be held across an await.
        let start = Start { board: &board, games: session.games(), past: &past, epoch_ms, session_id: &session_id };
        outlets_of(&start, &shared, turn, &mut outlets, events_rx)
    };
    // Everything the capture produced (a clock reading a second: tens of
    // thousands after a few hours) is not needed once handed to the
    // outlets; kept until the board stops, it grew every restart's memory
    // with the length of the day.
    drop(past);

    // Operator commands reach the board's session through its inputs.
    shared.boards.lock().expect("not poisoned").insert(
        board.name.clone(),
        BoardHandle {
            inputs: inputs_tx.clone(),
            clock,
            number: boardcast_core::pairings::board_number(&board.path.board),
        },
    );
    let channels = PortChannels { inputs: inputs_tx, from_driver: to_port_rx, recorder, events: events_tx };
    // The port stops on shutdown, or when this board's driver failed.
    let stop_port = shared.shutdown.child_token();
    // A Bluetooth LE board's link stands where a serial board's port does.
    let mut port = match locate {
        Ok(locate) => {
            let settings = PortSettings { locate, baud: board.protocol.baud(), reconnect_max: shared.reconnect_max };
            tokio::spawn(port::run(settings, channels, clock, stop_port.clone()))
        }
        Err(ble) => tokio::spawn(ble::link::run(ble, channels, clock, stop_port.clone())),
    };
    let mut driver = tokio::spawn(drive(session, inputs_rx, outlets, clock));

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
            if !is_mirror(&board) {
                let _ = shared.pgn.send(PgnUpdate::new(board.path.board.clone(), session.into_games()));
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
    let _ = behind.log.await;
    if let Some(speaker) = behind.speaker {
        speaker.finish().await;
    }
    if let Some(recorder) = recorder_task {
        let _ = recorder.await;
    }
    result
}

/// Applies the operator's round and players of the board's last capture
/// (`path`, whose games are all over) to the new session, as its first
/// operator command: recorded like any other, so that a replay of the new
/// capture and the next restart see them too, and published as the feed's
/// move to that round.
fn carry_over(
    inputs: &mpsc::Sender<Input>,
    now: Timestamp,
    path: &std::path::Path,
    mut tags: BTreeMap<String, String>,
) {
    let said: Vec<String> = tags.iter().map(|(k, v)| format!("{k} {v:?}")).collect();
    info!("carried over from {}: {}", path.display(), said.join(", "));
    let command = match tags.remove("Round") {
        Some(round) if !round.trim().is_empty() => Command::NextRound { round, tags, pairings: BTreeMap::new() },
        Some(_) | None => Command::SetTags { tags },
    };
    // A fresh channel has room: the driver reads it before any byte.
    let _ = inputs.try_send(Input { t: now, body: InputBody::Command { command, reply: None } });
}

/// Whether the board mirrors another board's game (appendix D): read,
/// recorded and compared, but the PGN and the feed are the game board's.
fn is_mirror(board: &Board) -> bool {
    matches!(board.pair, Some(Pairing::MirrorOf { .. }))
}

/// The board's outlets, each from its own section of the configuration: the
/// log (always), the PGN writer's changes (unless the board mirrors another
/// board's game), the MQTT feed (`[mqtt]`), the LiveChess API's e-board
/// (`[livechess]`), the speaker (`[speech]`), and a mirror board's line to
/// its game board. A resumed board's past is handed
/// to each first: the feed publishes it again (subscribers drop what they
/// already have by seq), the PGN is written again, the speaker knows it
/// without saying it.
fn outlets_of(
    start: &Start<'_>,
    shared: &Shared,
    turn: Option<tokio::sync::SemaphorePermit<'static>>,
    outlets: &mut Outlets,
    port_events: mpsc::UnboundedReceiver<port::PortEvent>,
) -> Behind {
    let board = start.board;
    let label = board.path.board.clone();
    let (log_tx, log_rx) = mpsc::unbounded_channel();
    outlets.push(Forward::to(EveryOutput::default(), log_tx));
    let log = tokio::spawn(log_outputs(log_rx, port_events, shared.reconnect_max).instrument(Span::current()));
    match &board.pair {
        Some(Pairing::MirrorOf { game }) => {
            let (lines_tx, lines_rx) = mpsc::unbounded_channel();
            tokio::spawn(forward_mirror(game.clone(), shared.boards.clone(), lines_rx).instrument(Span::current()));
            outlets.push(Forward::to(LineWatch::default(), lines_tx));
        }
        _ => {
            if !start.past.is_empty() {
                let _ = shared.pgn.send(PgnUpdate::new(label.clone(), start.games.all().cloned().collect()));
            }
            outlets.push(super::pgn::outlet(label, shared.pgn.clone()));
        }
    }
    if let Some(feed) = &shared.feed {
        outlets.push(feed.outlet(start, turn));
    }
    if let Some(positions) = &shared.analysis
        && !is_mirror(board)
    {
        outlets.push(super::analysis::outlet(start, positions));
    }
    if let Some(snapshots) = &shared.livechess
        && !is_mirror(board)
    {
        outlets.push(super::livechess::outlet(start, snapshots.clone()));
    }
    let speaker = speech::outlet(start, shared.speech.as_ref()).map(|(outlet, speaker)| {
        outlets.push(outlet);
        speaker
    });
    Behind { log, speaker }
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

/// The board's session: its game in progress resumed from its newest
/// capture when there is one, or a new session with a new capture.
async fn begin(board: &Board, shared: &Shared) -> Begun {
    let mut reconstruction = shared.reconstruction.clone();
    reconstruction.white_clock = board.white_clock;
    if let Some(rotated) = board.rotated_board {
        reconstruction.rotated_board = rotated;
    }
    let found = match &shared.recording {
        Some(dir) => recover::find(dir, board, &reconstruction, shared.link).await,
        None => None,
    };
    let mut carried = None;
    match found {
        Some(recover::Found::Over { path, tags, .. }) => carried = Some((path, tags)).filter(|(_, t)| !t.is_empty()),
        Some(recover::Found::InProgress(found)) => match record::append(&found.path).await {
            Ok(writer) => {
                let game = found.resumed.session.reconstructor().game();
                info!(
                    "resuming game {} ({} plies) from {} ({} records)",
                    game.map_or(0, |g| g.number),
                    game.map_or(0, |g| g.plies.len()),
                    found.path.display(),
                    found.resumed.records
                );
                boardcast::shell::board_files::set_capture(&board.name, &found.path);
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
                    carried: None,
                };
            }
            Err(failure) => warn!(
                "cannot add to {}: {failure}; starting a new capture (the game there is not resumed)",
                found.path.display()
            ),
        },
        None => {}
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
        carried,
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
        if board.protocol.features().calibration {
            warn!(
                "no calibration file: pieces are learned from the start position, and a promotion to a piece that was not on the board then is unknown (`boardcast calibrate`, then calibration = \"…\" in the board's table)"
            );
        }
        return Vec::new();
    };
    let text = match tokio::fs::read_to_string(path).await {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            warn!(
                "no calibration file {} yet: pieces are learned from the start position, and a promotion to a piece that was not on the board then is unknown (the console's Calibrate, `boardcast ctl {} calibrate` or `boardcast calibrate` writes it)",
                path.display(),
                board.name
            );
            return Vec::new();
        }
        read => read,
    };
    let entries = text
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
) -> Option<(mpsc::UnboundedSender<ToRecorder>, JoinHandle<()>, PathBuf)> {
    let dir = shared.recording.as_ref()?;
    let file = format!("{}-{}", boardcast_core::names::component(&board.name), shared.file_stamp);
    match record::create(dir, &file, header).await {
        Ok((path, writer)) => {
            info!("recording to {}", path.display());
            boardcast::shell::board_files::set_capture(&board.name, &path);
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
) -> (mpsc::UnboundedSender<ToRecorder>, JoinHandle<()>) {
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
