//! Live latency: from the last byte of a DGT field update written to a
//! board's pseudo-terminal to the move event leaving the core, through the
//! daemon's real path (tokio-serial port task, driver, decoder,
//! reconstructor, output channel).
//!
//! A simulated board (the same one `boardcast simulate` runs) plays whole
//! games one ply at a time: the squares a move empties, then the squares it
//! fills, as field updates; the time of the last byte of the last update is
//! taken when the write returns, and the time of the move event when it
//! comes out of the driver's output channel. The next ply waits for that
//! event, so one measurement never queues behind another.
//!
//! Moves that could still be on their way when the board first shows them
//! (a rook that may slide on, a pawn pushed one square) are judged only
//! once the board has been still for `settle_ms`, on purpose (docs/
//! reconstruction.md); for those the settle time is subtracted and the rest
//! reported separately.
//!
//! Run: `cargo bench --bench latency` (about a minute; `-- --games N` for
//! more or fewer games).

use boardcast_sim::board::SimulatedBoard;
use std::{path::PathBuf, time::Duration};

use boardcast::shell::{
    clock::SessionClock,
    driver::{Forward, Outlets, drive},
    port::{self, Locate, PortChannels, PortSettings},
    pty::Pty,
};
use boardcast_core::{
    event::EventKind,
    protocol::{Protocol, link::LinkConfig},
    reconstruct::{GameSetup, ReconstructorConfig},
    sensor::{Cell, ClockSide, SensorEvent},
    session::{BoardSession, Output},
    sink::EveryOutput,
};
use boardcast_sim::{
    board::DgtSim,
    synth::{SourceGame, read_games},
};
use shakmaty::{Board, Position, Square};
use tokio::{
    sync::{mpsc, oneshot},
    time::Instant,
};
use tokio_util::sync::CancellationToken;

/// What the board task is asked to do.
enum ToBoard {
    /// Put these squares as they are now, one field update each, and say
    /// when the last byte was written.
    Squares(Vec<(Square, Cell)>, oneshot::Sender<Instant>),
}

fn main() {
    let games_wanted =
        std::env::args().skip_while(|a| a != "--games").nth(1).and_then(|n| n.parse().ok()).unwrap_or(4usize);
    let text = std::fs::read_to_string(format!(
        "{}/tests/fixtures/games/livechess-vestland-round1.pgn",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the vendored games");
    let games: Vec<SourceGame> = read_games(&text).expect("they parse").into_iter().take(games_wanted).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    let config = ReconstructorConfig::default();
    let settle = config.settle;
    let (mut at_once, mut settled) = (Vec::new(), Vec::new());
    for (i, game) in games.iter().enumerate() {
        let (a, s) = runtime.block_on(measure_game(game, i, config.clone()));
        at_once.extend(a);
        settled.extend(s);
    }
    println!(
        "latency, last byte of the field update written -> move event out of the core ({} games, {} moves)",
        games.len(),
        at_once.len() + settled.len()
    );
    report("moves judged at once", &mut at_once);
    report(&format!("moves judged after settle_ms ({} ms subtracted)", settle.as_millis()), &mut settled);
    println!("physical floor: one 5-byte field update takes 5.2 ms to cross a 9600-baud line");
}

fn report(what: &str, samples: &mut [Duration]) {
    if samples.is_empty() {
        println!("{what}: none");
        return;
    }
    samples.sort();
    let pick = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "{what}: n={}, p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
        samples.len(),
        us(pick(0.5)),
        us(pick(0.99)),
        us(pick(1.0))
    );
}

/// Plays one game through a pseudo-terminal into a live session and
/// returns the latencies of moves judged at once and of settled moves
/// (settle time subtracted).
async fn measure_game(game: &SourceGame, index: usize, config: ReconstructorConfig) -> (Vec<Duration>, Vec<Duration>) {
    let settle = config.settle;
    let link = std::env::temp_dir().join(format!("boardcast-latency-{}-{index}", std::process::id()));
    let shutdown = CancellationToken::new();
    let (to_board, board_rx) = mpsc::unbounded_channel();
    let board = tokio::spawn(board_task(link.clone(), board_rx, shutdown.clone()));
    // Give the pseudo-terminal a moment to exist before the port opens it.
    while !link.exists() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }

    let clock = SessionClock::start(1.0);
    let session = BoardSession::live(Protocol::DGT, config, GameSetup::default(), LinkConfig::default());
    let (inputs_tx, inputs_rx) = mpsc::channel(256);
    let (to_port_tx, to_port_rx) = mpsc::unbounded_channel();
    let (outputs_tx, mut outputs) = mpsc::unbounded_channel();
    let (events_tx, _events_rx) = mpsc::unbounded_channel();
    let settings =
        PortSettings { locate: Locate::Path(link.clone()), baud: 9600, reconnect_max: Duration::from_millis(100) };
    let channels = PortChannels { inputs: inputs_tx, from_driver: to_port_rx, recorder: None, events: events_tx };
    let port = tokio::spawn(port::run(settings, channels, clock, shutdown.clone()));
    let mut outlets = Outlets { to_port: Some(to_port_tx), ..Outlets::default() };
    outlets.push(Forward::to(EveryOutput::default(), outputs_tx));
    let driver = tokio::spawn(drive(session, inputs_rx, outlets, clock));

    // The daemon starts the board and sees the start position.
    loop {
        match outputs.recv().await.expect("the driver runs") {
            Output::Event(e) if matches!(e.kind, EventKind::GameStarted { .. }) => break,
            _ => {}
        }
    }
    let (mut at_once, mut settled) = (Vec::new(), Vec::new());
    let mut pos = game.start.clone();
    for &m in &game.moves {
        let before = pos.board().clone();
        pos.play_unchecked(m);
        let (written_tx, written_rx) = oneshot::channel();
        to_board.send(ToBoard::Squares(changes(&before, pos.board()), written_tx)).expect("the board runs");
        let written = written_rx.await.expect("written");
        let made = loop {
            match tokio::time::timeout(Duration::from_secs(3), outputs.recv()).await {
                Ok(Some(Output::Event(e))) if matches!(e.kind, EventKind::MoveMade(_)) => break Instant::now(),
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => panic!("no move event for {m} in game {index}"),
            }
        };
        let latency = made - written;
        if latency >= settle {
            settled.push(latency - settle);
        } else {
            at_once.push(latency);
        }
        // Players take more than a moment between moves.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    shutdown.cancel();
    let _ = port.await;
    let _ = driver.await;
    let _ = board.await;
    (at_once, settled)
}

/// The field updates a move makes, as hands make them: every square it
/// empties first (the captured piece, the piece lifted), then every square
/// it fills.
fn changes(before: &Board, after: &Board) -> Vec<(Square, Cell)> {
    let cell = |board: &Board, sq: Square| board.piece_at(sq).map_or(Cell::Empty, Cell::Piece);
    let mut lifts = Vec::new();
    let mut places = Vec::new();
    for sq in Square::ALL {
        let (was, is) = (cell(before, sq), cell(after, sq));
        if was == is {
            continue;
        }
        if was != Cell::Empty {
            lifts.push((sq, Cell::Empty));
        }
        if is != Cell::Empty {
            places.push((sq, is));
        }
    }
    lifts.extend(places);
    lifts
}

/// The simulated board behind the pseudo-terminal: answers the daemon and
/// sends the squares it is given.
async fn board_task(link: PathBuf, mut orders: mpsc::UnboundedReceiver<ToBoard>, shutdown: CancellationToken) {
    let pty = Pty::open(&link).expect("a pseudo-terminal");
    let mut board = DgtSim::new("00001", ClockSide::Left);
    board
        .handle_script_event(&SensorEvent::Board(Box::new(boardcast_core::sensor::Picture::from_board(&Board::new()))));
    let mut buf = [0u8; 256];
    loop {
        tokio::select! {
            read = pty.read(&mut buf) => {
                if let Ok(Some(n)) = read {
                    board.handle_host_bytes(&buf[..n]);
                } else {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            order = orders.recv() => match order {
                Some(ToBoard::Squares(squares, written)) => {
                    let mut last = Instant::now();
                    for (i, (square, cell)) in squares.iter().enumerate() {
                        if i > 0 {
                            // A hand takes a moment from one square to the next.
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                        board.handle_script_event(&SensorEvent::Square { square: *square, cell: *cell });
                        while let Some(bytes) = board.poll_transmit() {
                            pty.write_all(&bytes).await.expect("the daemon reads");
                        }
                        last = Instant::now();
                    }
                    let _ = written.send(last);
                }
                None => return,
            },
            () = shutdown.cancelled() => return,
        }
        while let Some(bytes) = board.poll_transmit() {
            let _ = pty.write_all(&bytes).await;
        }
    }
}
