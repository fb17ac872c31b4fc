//! The long day (issue 16, item 6): a whole round at tournament pace on a
//! hall of simulated boards, in accelerated time, read by the real
//! `boardcast run` with its embedded broker, restarted twice midway (once
//! cleanly, once killed). It shows that the daemon's memory, file
//! descriptors and threads stay flat over the day, and that the PGN files,
//! the captures and the feed hold every move played. An arbiter settles
//! what an occupancy-only board cannot tell apart, with `boardcast ctl`,
//! as in a real hall.
//!
//! Not part of `cargo test` (ignored: it runs for minutes). Run it with
//!
//! ```text
//! nice -n 10 cargo test --release -p boardcast --test it longday:: -- --ignored --nocapture
//! ```
//!
//! and size it with `BOARDCAST_LONGDAY_BOARDS` (100), `_SPEED` (60 times
//! real time), `_HOURS` (9 hours of play), `_GAMES` (2 games per board),
//! `_SAMPLE_S` (a sample every 10 s), `_MQTT` (1; 0 for no feed), `_BROKER` (`embedded`, or
//! `mosquitto` started by the test) and `_FAMILIES`
//! (`dgt,millennium,certabo,sentio`, given to the boards in turn). The
//! samples go to `target/tmp/longday/samples.csv`. RELIABILITY.md ("Long
//! day") says what was chosen and why, and records a run.

use std::{
    collections::BTreeSet,
    fmt::Write as _,
    fs,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::support::{
    live::{add_account, pgn_moves, wait},
    mqtt::{Mosquitto, Received, Subscriber, free_port, wait_listening},
};
use boardcast::shell::simulate::{self, SimulateSettings};
use boardcast_core::{
    capture::{Record, RecordBody},
    game::GameRecord,
    protocol::Protocol,
    reconstruct::ReconstructorConfig,
    replay::replay,
    sensor::{Cell, ClockSide, Picture, SensorEvent},
    time::Timestamp,
};
use boardcast_sim::synth::{ClockSettings, SourceGame, Style, header, play, read_games, rng_for};
use shakmaty::{Position, Square, san::SanPlus};
use tokio_util::sync::CancellationToken;

/// The size of the day, from the environment.
#[derive(Clone, Debug)]
struct Size {
    boards: usize,
    speed: f64,
    hours: f64,
    games: usize,
    sample: Duration,
    families: Vec<Protocol>,
    /// The MQTT feed on (to tell the feed's share of the figures: with it
    /// off, nothing is published and the feed is not checked).
    mqtt: bool,
    /// Publish to a Mosquitto started by the test instead of the embedded
    /// broker (to take the broker out of the daemon's figures).
    mosquitto: bool,
}

impl Size {
    fn from_env() -> Self {
        fn var<T: std::str::FromStr>(name: &str, default: T) -> T {
            std::env::var(format!("BOARDCAST_LONGDAY_{name}")).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
        }
        let families = var("FAMILIES", "dgt,millennium,certabo,sentio".to_owned())
            .split(',')
            .map(|f| match f.trim() {
                "dgt" => Protocol::DGT,
                "millennium" => Protocol::MILLENNIUM,
                "certabo" => Protocol::CERTABO,
                "sentio" => Protocol::SENTIO,
                other => panic!("BOARDCAST_LONGDAY_FAMILIES: unknown family {other}"),
            })
            .collect();
        Self {
            boards: var("BOARDS", 100),
            speed: var("SPEED", 60.0),
            hours: var("HOURS", 9.0),
            games: var("GAMES", 2),
            sample: Duration::from_secs_f64(var("SAMPLE_S", 10.0)),
            families,
            mqtt: var("MQTT", 1) != 0,
            mosquitto: var("BROKER", "embedded".to_owned()) == "mosquitto",
        }
    }

    /// Real time for `game` of play.
    fn real(&self, game: Duration) -> Duration {
        game.div_f64(self.speed)
    }
}

fn family_name(protocol: Protocol) -> &'static str {
    protocol.name()
}

/// A board of the hall: what it plays and what must come out.
struct HallBoard {
    name: String,
    protocol: Protocol,
    records: Vec<Record>,
    header: boardcast_core::capture::CaptureHeader,
    /// The SAN of each game it plays, in order.
    expected: Vec<Vec<String>>,
    /// The same in UCI.
    expected_uci: Vec<Vec<String>>,
    /// The same as (ply, uci, fen after), what a feed message carries.
    feed_keys: BTreeSet<(u64, String, String)>,
    /// When its last game ends (game time).
    ends: Timestamp,
}

/// Real games with a result, from the start position, of a fair length.
fn game_pool() -> Vec<SourceGame> {
    let mut pool = Vec::new();
    for text in [
        include_str!("../fixtures/games/livechess-vestland-round1.pgn"),
        include_str!("../fixtures/games/twic0920-sample.pgn"),
    ] {
        for game in read_games(text).unwrap() {
            if !game.chess960 && game.result.is_some() && (30..=160).contains(&game.moves.len()) {
                pool.push(game);
            }
        }
    }
    assert!(!pool.is_empty());
    pool
}

/// Board `index`'s day: `size.games` real games back to back, each played
/// calmly at a classical pace filling its share of the round, the pieces
/// set up again by hand between them.
fn hall_board(index: usize, pool: &[SourceGame], size: &Size) -> HallBoard {
    let name = format!("board-{}", index + 1);
    let protocol = size.families[index % size.families.len()];
    // Each game gets its share of the day, less the six minutes the
    // pieces take to be set up again (below).
    let reset_us = 6 * 60 * 1_000_000;
    let share_us = ((size.hours * 3600e6) as u64 / size.games as u64).checked_sub(reset_us).expect("a longer day");
    let mut events: Vec<(Timestamp, SensorEvent)> = Vec::new();
    let mut expected = Vec::new();
    let mut expected_uci = Vec::new();
    let mut feed_keys = BTreeSet::new();
    let mut offset = 0u64;
    let mut first = None;
    let mut picture = Picture::default();
    for g in 0..size.games {
        let game = &pool[(index * size.games + g) % pool.len()];
        first.get_or_insert(game);
        let mut style = Style::calm();
        // Classical, 30 s a move, with enough time on the clock for the
        // game to fill its share: each player's half of it and a quarter
        // more (at least 120 minutes). With 120 minutes alone, a short game
        // stretched over half the day ran out of time, and the daemon
        // rightly ended it on the flag before its last moves. Only a DGT
        // board reports its clock; beside the others the daemon sees no
        // clock, and players show the result once the board has been still
        // (as docs/reconstruction.md asks of boards without a clock).
        let base_ms = (share_us / 1000 * 5 / 8).max(7_200_000);
        style.clock = (protocol == Protocol::DGT).then_some(ClockSettings { base_ms, increment_ms: 30_000 });
        let mean_ms = (share_us / 1000 / game.moves.len() as u64).saturating_sub(1500).max(2000);
        style.think_ms = (mean_ms / 2, mean_ms * 3 / 2);
        let stream = play(game, &style, &mut rng_for(2026, index * 31 + g));
        assert!(stream.expected.result.is_some(), "a game with a result");
        // The SAN of what the board will show.
        let mut pos = game.start.clone();
        let mut sans = Vec::new();
        for (ply, uci) in stream.expected.uci.iter().enumerate() {
            let m = game.moves[ply];
            assert_eq!(m.to_uci(pos.castles().mode()).to_string(), *uci);
            sans.push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
            let fen = shakmaty::fen::Fen::from_position(&pos, shakmaty::EnPassantMode::Legal).to_string();
            feed_keys.insert((ply as u64 + 1, uci.clone(), fen));
        }
        expected.push(sans);
        expected_uci.push(stream.expected.uci.clone());
        let mut stream_events = stream.events.into_iter();
        if g > 0 {
            // The arbiter sets the pieces up again, one at a time: the
            // first game's board is not the next one's (its opening
            // picture, a whole board, is not sent again).
            stream_events.next();
            let start = Picture::from_board(game.start.board());
            let mut t = events.last().map_or(0, |(t, _)| t.as_micros()) + 120_000_000;
            let mut step = |sq: Square, cell: Cell, events: &mut Vec<_>| {
                t += 1_200_000;
                events.push((Timestamp::from_micros(t), SensorEvent::Square { square: sq, cell }));
            };
            for sq in Square::ALL {
                if picture.get(sq) != Cell::Empty && picture.get(sq) != start.get(sq) {
                    step(sq, Cell::Empty, &mut events);
                    picture.set(sq, Cell::Empty);
                }
            }
            for sq in Square::ALL {
                if picture.get(sq) != start.get(sq) {
                    step(sq, start.get(sq), &mut events);
                    picture.set(sq, start.get(sq));
                }
            }
            offset = t + 180_000_000;
        }
        for (t, event) in stream_events {
            match &event {
                SensorEvent::Board(p) => picture = (**p).clone(),
                SensorEvent::Square { square, cell } => {
                    picture.set(*square, *cell);
                }
                SensorEvent::Clock(_) => {}
            }
            events.push((Timestamp::from_micros(t.as_micros() + offset), event));
        }
    }
    let ends = events.last().map_or(Timestamp::ZERO, |(t, _)| *t);
    let records = events.into_iter().map(|(t, event)| Record { t, body: RecordBody::Event(event) }).collect();
    let header = header(first.unwrap(), Protocol::EVENTS, &name);
    HallBoard { name, protocol, records, header, expected, expected_uci, feed_keys, ends }
}

/// The daemon's configuration: the boards, the judging times scaled to the
/// speed (as `boardcast demo` scales them), the embedded broker on free
/// ports.
fn config(dir: &Path, boards: &[HallBoard], size: &Size, port: u16) -> PathBuf {
    let j = judging(size);
    let mut text = format!(
        "[broadcast]\nevent = \"longday\"\nround = \"1\"\n\
         [recording]\ndir = \"{dir}/captures\"\n[pgn]\ndir = \"{dir}/pgn\"\n\
         [reconstruction]\nsettle_ms = {}\ntouch_min_ms = {}\nout_of_sync_ms = {}\n\
         gesture_hold_ms = {}\npress_grace_ms = {}\nquiet_completion_ms = {}\n\
         [link]\nreconnect_max_ms = 300\n\
         [operator]\nkey_file = \"{dir}/operator.key\"\n[http]\nenabled = false\n\
         [mqtt]\nenabled = {mqtt}\nurl = \"{url}\"\nroot = \"longday\"\nbridge_id = \"longday\"\n\
         [mqtt.embedded]\nlisten = \"127.0.0.1:{port}\"\nws_listen = \"\"\nanonymous = \"live\"\n\
         accounts_file = \"{dir}/mqtt-accounts\"\n",
        j.settle.as_millis(),
        j.touch_min.as_millis(),
        j.out_of_sync_after.as_millis(),
        j.gesture_hold.as_millis(),
        j.press_grace.as_millis(),
        j.quiet_completion.as_millis(),
        dir = dir.display(),
        mqtt = size.mqtt,
        url = if size.mosquitto { format!("mqtt://127.0.0.1:{port}") } else { String::new() },
    );
    for board in boards {
        let _ = write!(
            text,
            "[[boards]]\nname = \"{}\"\nprotocol = \"{}\"\nport = \"{}\"\n",
            board.name,
            family_name(board.protocol),
            dir.join(format!("{}.tty", board.name)).display()
        );
    }
    let path = dir.join("boardcast.toml");
    fs::write(&path, text).unwrap();
    path
}

fn start_daemon(dir: &Path, config: &Path) -> Child {
    let log = fs::OpenOptions::new().create(true).append(true).open(dir.join("run.log")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["run", "--config"])
        .arg(config)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// The hall's arbiter. An occupancy-only board cannot tell some captures
/// apart (two captures that leave the same squares occupied): the daemon
/// then raises `ambiguous_moves` and waits, as docs/reconstruction.md says,
/// for the operator to enter the first move of the right reading from the
/// scoresheet. Nor can it see a promoted piece: it records a queen and
/// raises `promotion_unknown`, for the operator to correct (`promote`). In
/// a real hall the arbiter does both; here this does, with `boardcast ctl`
/// and an operator account, as soon as the alert comes.
struct Arbiter {
    password_file: PathBuf,
    /// (board, game, ply) of the alerts settled.
    settled: BTreeSet<(String, u64, u64)>,
    /// What was entered, and the daemon's answer.
    entered: Vec<String>,
}

impl Arbiter {
    /// Makes the arbiter's operator account (before the daemon starts).
    fn new(dir: &Path, config: &Path) -> Self {
        let password = add_account(config, "arbiter", "operator");
        let password_file = dir.join("arbiter.password");
        fs::write(&password_file, password).unwrap();
        Self { password_file, settled: BTreeSet::new(), entered: Vec::new() }
    }

    /// Enters the scoresheet's move for every `ambiguous_moves` alert, and
    /// its piece for every `promotion_unknown`, not settled yet (a
    /// restarted daemon publishes its alerts again). One the
    /// daemon could not be asked about (it was restarting) is tried again
    /// on the next call.
    fn settle(&mut self, alerts: &[Received], boards: &[HallBoard], config: &Path) {
        for alert in
            alerts.iter().filter(|a| matches!(a.json["kind"].as_str(), Some("ambiguous_moves" | "promotion_unknown")))
        {
            // <root>/v1/live/<event>/<round>/<board>/alerts
            let Some(name) = alert.topic.split('/').nth(5) else { continue };
            let (game, ply) = (alert.json["game"].as_u64().unwrap_or(0), alert.json["ply"].as_u64().unwrap_or(0));
            let key = (name.to_owned(), game, ply);
            if self.settled.contains(&key) {
                continue;
            }
            let Some(board) = boards.iter().find(|b| b.name == name) else { continue };
            let Some(san) = (game as usize).checked_sub(1).and_then(|g| board.expected.get(g)?.get(ply as usize))
            else {
                self.settled.insert(key);
                continue;
            };
            // An unseen promotion was recorded as a queen: the scoresheet
            // says which piece it was.
            let command: Vec<&str> = if alert.json["kind"] == "promotion_unknown" {
                match san.split_once('=').and_then(|(_, piece)| piece.chars().next()) {
                    Some('R') => vec!["promote", "rook"],
                    Some('B') => vec!["promote", "bishop"],
                    Some('N') => vec!["promote", "knight"],
                    _ => {
                        self.settled.insert(key);
                        continue;
                    }
                }
            } else {
                vec!["moves", san]
            };
            let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
                .args(["ctl", "--config"])
                .arg(config)
                .args(["--user", "arbiter", "--password-file"])
                .arg(&self.password_file)
                .args(["--timeout-s", "10", name])
                .args(&command)
                .output()
                .unwrap();
            if out.status.code() == Some(2) {
                continue;
            }
            let said =
                String::from_utf8_lossy(&out.stdout).trim().to_owned() + String::from_utf8_lossy(&out.stderr).trim();
            self.entered.push(format!("{name} game {game} ply {}: {} ({said})", ply + 1, command.join(" ")));
            self.settled.insert(key);
        }
    }
}

/// A flatness rule: the figure's name, how to read it from a sample, and
/// how far above its warm level the end may be (relative, absolute).
type Rule = (&'static str, fn(&Sample) -> u64, f64, u64);

/// One look at the daemon process.
#[derive(Clone, Debug)]
struct Sample {
    /// Real seconds since the boards started.
    real_s: f64,
    /// Hours of play so far.
    play_h: f64,
    /// Which run of the daemon (1 to 3).
    run: u32,
    rss_kib: u64,
    fds: u64,
    threads: u64,
    /// The process's CPU time so far, in seconds.
    cpu_s: f64,
    /// Moves made that the subscriber has received so far (duplicates
    /// included).
    made: usize,
}

fn sample(pid: u32) -> Option<(u64, u64, u64, f64)> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields 14 and 15 (utime, stime), counted after the command's `)`.
    let after: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = after.get(11)?.parse::<f64>().ok()? + after.get(12)?.parse::<f64>().ok()?;
    Some((field("VmRSS:")?, fds, field("Threads:")?, ticks / 100.0))
}

fn made_count(received: &[Received]) -> usize {
    received.iter().filter(|r| r.json["kind"] == "made").count()
}

/// The median of some values.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Every file under `dir` whose name satisfies `keep`.
fn files_under(dir: &Path, keep: &dyn Fn(&str) -> bool, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, keep, found);
        } else if path.file_name().and_then(|n| n.to_str()).is_some_and(keep) {
            found.push(path);
        }
    }
}

#[test]
#[ignore = "a long soak: run it on purpose (see the module doc)"]
fn a_long_day_on_a_full_hall_stays_flat_and_loses_nothing() {
    let size = Size::from_env();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("longday");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    let pool = game_pool();
    let boards: Vec<HallBoard> = (0..size.boards).map(|i| hall_board(i, &pool, &size)).collect();
    let day = boards.iter().map(|b| b.ends).max().unwrap().saturating_since(Timestamp::ZERO);
    let plies: usize = boards.iter().flat_map(|b| &b.expected).map(Vec::len).sum();
    println!(
        "longday: {} boards ({}), {} games, {plies} plies, {:.2} h of play at {}x: {:.1} min of real time",
        size.boards,
        size.families.iter().map(|&f| family_name(f)).collect::<Vec<_>>().join("/"),
        size.boards * size.games,
        day.as_secs_f64() / 3600.0,
        size.speed,
        size.real(day).as_secs_f64() / 60.0
    );
    let mosquitto = size.mosquitto.then(|| Mosquitto::start(&dir.join("mosquitto"), false).expect("Mosquitto"));
    let port = mosquitto.as_ref().map_or_else(free_port, |m| m.port);
    let config = config(&dir, &boards, &size, port);

    // The boards, in this process (the daemon's figures are its own).
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let stop_boards = CancellationToken::new();
    let mut tasks = Vec::new();
    for board in &boards {
        let settings = SimulateSettings {
            protocol: board.protocol,
            link: dir.join(format!("{}.tty", board.name)),
            speed: size.speed,
            unplug_at: None,
            replug_after: None,
            white_side: ClockSide::Left,
            noise: 0.0,
            serial: None,
            // A real board plays on while the daemon restarts.
            pause_while_unread: false,
        };
        let (header, records, stop) = (board.header.clone(), board.records.clone(), stop_boards.clone());
        tasks.push(
            runtime.spawn(async move { simulate::run(&header, records, settings, Duration::from_secs(3), stop).await }),
        );
    }
    let mut arbiter = size.mqtt.then(|| Arbiter::new(&dir, &config));
    let mut daemon = start_daemon(&dir, &config);
    assert!(!size.mqtt || wait_listening(port, Duration::from_secs(30)), "the embedded broker listens");
    let feed = Subscriber::start(&runtime, port, "longday/v1/live/+/+/+/moves", "longday-viewer");
    let alerts = Subscriber::start(&runtime, port, "longday/v1/live/+/+/+/alerts", "longday-arbiter");

    // The day: a sample every so often; the daemon stopped and started
    // again at a third of the day (SIGTERM, as systemd does) and killed
    // outright at two thirds (SIGKILL, as a crash or a power cut does).
    let started = Instant::now();
    let restarts = [(size.real(day) / 3, "SIGTERM"), (size.real(day) * 2 / 3, "SIGKILL")];
    let mut samples: Vec<Sample> = Vec::new();
    let mut run = 1u32;
    let mut downtimes = Vec::new();
    let mut next_sample = started;
    let mut table = String::from(" real_s  play_h run  rss_kib fds threads  cpu_s   made\n");
    print!("{table}");
    loop {
        let now = Instant::now();
        if tasks.iter().all(tokio::task::JoinHandle::is_finished) {
            break;
        }
        if let Some(&(at, how)) = restarts.get(run as usize - 1)
            && now >= started + at
        {
            let down = Instant::now();
            if how == "SIGTERM" {
                let _ = Command::new("kill").arg("-TERM").arg(daemon.id().to_string()).status();
                assert!(wait(&mut daemon, Duration::from_secs(30)), "the daemon stops on SIGTERM");
            } else {
                daemon.kill().unwrap();
                daemon.wait().unwrap();
            }
            daemon = start_daemon(&dir, &config);
            assert!(!size.mqtt || wait_listening(port, Duration::from_secs(30)), "the embedded broker listens again");
            downtimes.push((how, down.elapsed()));
            println!("longday: {how}, started again; the broker listened again after {:?}", down.elapsed());
            run += 1;
        }
        if now >= next_sample {
            next_sample += size.sample;
            if let Some((rss_kib, fds, threads, cpu_s)) = sample(daemon.id()) {
                let real_s = started.elapsed().as_secs_f64();
                let s = Sample {
                    real_s,
                    play_h: real_s * size.speed / 3600.0,
                    run,
                    rss_kib,
                    fds,
                    threads,
                    cpu_s,
                    made: made_count(&feed.received()),
                };
                let line = format!(
                    "{:7.0} {:7.2} {:3} {:8} {:3} {:7} {:6.1} {:6}\n",
                    s.real_s, s.play_h, s.run, s.rss_kib, s.fds, s.threads, s.cpu_s, s.made
                );
                print!("{line}");
                table.push_str(&line);
                samples.push(s);
            }
        }
        if let Some(arbiter) = &mut arbiter {
            arbiter.settle(&alerts.received(), &boards, &config);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let simulated: Vec<_> = tasks.into_iter().map(|t| runtime.block_on(t)).collect();
    for (board, result) in boards.iter().zip(&simulated) {
        assert!(matches!(result, Ok(Ok(_))), "{}: the simulated board ran: {result:?}", board.name);
    }
    // Let the last moves reach the subscriber, then stop as systemd does.
    std::thread::sleep(Duration::from_secs(2));
    let _ = Command::new("kill").arg("-TERM").arg(daemon.id().to_string()).status();
    assert!(wait(&mut daemon, Duration::from_secs(30)), "the daemon stops on SIGTERM");
    stop_boards.cancel();
    let received = feed.received();

    // The samples, for a spreadsheet.
    let mut csv = String::from("real_s,play_h,run,rss_kib,fds,threads,cpu_s,made\n");
    for s in &samples {
        let _ = writeln!(
            csv,
            "{:.1},{:.3},{},{},{},{},{:.2},{}",
            s.real_s, s.play_h, s.run, s.rss_kib, s.fds, s.threads, s.cpu_s, s.made
        );
    }
    fs::write(dir.join("samples.csv"), csv).unwrap();

    // Everything played is everywhere.
    let mut lost = Vec::new();
    let log = fs::read_to_string(dir.join("run.log")).unwrap_or_default();
    let mut feed_missing = 0usize;
    let mut capture_files = 0usize;
    for board in &boards {
        let mut pgns = Vec::new();
        files_under(&dir.join("pgn"), &|n| n == format!("game-{}.pgn", board.name), &mut pgns);
        let pgn: String = pgns.iter().map(|p| fs::read_to_string(p).unwrap()).collect();
        let got = pgn_moves(&pgn);
        if got != board.expected {
            lost.push(format!(
                "{} ({}): PGN {}",
                board.name,
                family_name(board.protocol),
                differs(&got, &board.expected)
            ));
        }
        // Its captures, replayed with the daemon's judging times (what
        // `boardcast replay` does, but `boardcast replay` judges with the
        // default times, which a capture played 60 times faster does not
        // meet).
        let mut captures = Vec::new();
        let prefix = format!("{}-", board.name);
        files_under(&dir.join("captures"), &|n| n.starts_with(&prefix) && n.ends_with(".jsonl"), &mut captures);
        captures.sort();
        capture_files += captures.len();
        let mut replayed = Vec::new();
        for capture in &captures {
            let text = fs::read_to_string(capture).unwrap();
            match replay(&text, &judging(&size)) {
                Ok(r) if r.error.is_none() => replayed.extend(r.games.iter().map(GameRecord::uci_moves)),
                other => lost.push(format!("{}: {} unreadable: {:?}", board.name, capture.display(), other.err())),
            }
        }
        if replayed != board.expected_uci {
            lost.push(format!(
                "{} ({}): captures ({} files) replay {}",
                board.name,
                family_name(board.protocol),
                captures.len(),
                differs(&replayed, &board.expected_uci)
            ));
        }
        // The feed.
        let topic = format!("longday/v1/live/longday/1/{}/moves", board.name);
        let got: BTreeSet<(u64, String, String)> = received
            .iter()
            .filter(|r| r.topic == topic && matches!(r.json["kind"].as_str(), Some("made" | "amended")))
            .map(|r| {
                (
                    r.json["ply"].as_u64().unwrap_or(0),
                    r.json["uci"].as_str().unwrap_or_default().to_owned(),
                    r.json["fen"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        let missing = if size.mqtt { board.feed_keys.difference(&got).count() } else { 0 };
        if missing > 0 {
            feed_missing += missing;
            lost.push(format!(
                "{} ({}): {missing} moves never reached the feed",
                board.name,
                family_name(board.protocol)
            ));
        }
    }

    // Flat, for each run of the daemon: the level once it is warm (the
    // highest sample of the second fifth of the run's samples) against the
    // end (the median of its last three samples). A restarted daemon
    // starts from its captures, so each run is judged on its own; the
    // first run's level against the day's end is shown too.
    let checks: [Rule; 3] =
        [("RSS (KiB)", |s| s.rss_kib, 0.20, 4096), ("open fds", |s| s.fds, 0.0, 4), ("threads", |s| s.threads, 0.0, 4)];
    let mut failed = !lost.is_empty();
    let mut verdict = String::new();
    for r in 1..=run {
        let of_run: Vec<&Sample> = samples.iter().filter(|s| s.run == r).collect();
        assert!(of_run.len() >= 5, "run {r}: too few samples: make the day longer or the samples shorter");
        let warm = &of_run[of_run.len() / 5..(of_run.len() * 2 / 5).max(of_run.len() / 5 + 1)];
        let end = &of_run[of_run.len() - 3..];
        for (name, f, relative, absolute) in checks {
            let w = warm.iter().map(|s| f(s)).max().unwrap();
            let e = median(end.iter().map(|s| f(s) as f64).collect()) as u64;
            let limit = (w as f64 * (1.0 + relative)) as u64 + absolute;
            let peak = of_run.iter().map(|s| f(s)).max().unwrap();
            let ok = e <= limit;
            failed |= !ok;
            let _ = writeln!(
                verdict,
                "run {r} ({:.1}-{:.1} h) {name:>10}: warm {w}, end {e} (limit {limit}), peak {peak}: {}",
                of_run[0].play_h,
                of_run[of_run.len() - 1].play_h,
                if ok { "flat" } else { "GROWS" }
            );
        }
    }
    // And over the whole day: a restarted daemon may need a little more
    // for the games it resumed, not memory that grows with the hours
    // played. The end of the day (median of the last three samples) must
    // stay within half again the first run's warm level, plus 16 MiB.
    let first_run: Vec<&Sample> = samples.iter().filter(|s| s.run == 1).collect();
    let first_warm = first_run[first_run.len() / 5..(first_run.len() * 2 / 5).max(first_run.len() / 5 + 1)]
        .iter()
        .map(|s| s.rss_kib)
        .max()
        .unwrap_or(0);
    let day_end = median(samples.iter().rev().take(3).map(|s| s.rss_kib as f64).collect()) as u64;
    let day_limit = first_warm * 3 / 2 + 16 * 1024;
    let day_ok = day_end <= day_limit;
    failed |= !day_ok;
    let _ = writeln!(
        verdict,
        "the day  RSS (KiB): first run warm {first_warm}, end of the day {day_end} (limit {day_limit}), peak {}: {}; \
         daemon CPU {:.0} s in the last run",
        samples.iter().map(|s| s.rss_kib).max().unwrap_or(0),
        if day_ok { "flat" } else { "GROWS" },
        samples.last().map_or(0.0, |s| s.cpu_s)
    );
    let made = made_count(&received);
    let _ = writeln!(
        verdict,
        "{plies} plies played; PGN files and {capture_files} capture files checked; feed: {made} `made` messages \
         received, {feed_missing} moves missing; restarts: {downtimes:?}; daemon log: {} ERROR, {} WARNING lines",
        log.matches(" ERROR ").count(),
        log.matches(" WARNING ").count()
    );
    if let Some(arbiter) = &arbiter {
        let _ = writeln!(
            verdict,
            "the arbiter settled {} ambiguous readings and unseen promotions from the scoresheet: {}",
            arbiter.entered.len(),
            arbiter.entered.join("; ")
        );
    }
    for line in &lost {
        let _ = writeln!(verdict, "LOST: {line}");
    }
    let _ = writeln!(verdict, "longday: {}", if failed { "FAIL" } else { "PASS" });
    print!("{verdict}");
    fs::write(dir.join("summary.txt"), format!("{table}{verdict}")).unwrap();
    assert!(!failed, "the long day failed (see {}):\n{verdict}", dir.join("summary.txt").display());
}

/// How games differ from the expected ones: their lengths, and the first
/// ply that differs.
fn differs(got: &[Vec<String>], expected: &[Vec<String>]) -> String {
    let lengths = |games: &[Vec<String>]| games.iter().map(Vec::len).collect::<Vec<_>>();
    let mut text = format!("plies {:?}, expected {:?}", lengths(got), lengths(expected));
    for (g, (a, b)) in got.iter().zip(expected).enumerate() {
        if let Some(at) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
            let _ = write!(text, "; game {} differs at ply {}: {:?} for {:?}", g + 1, at + 1, a.get(at), b.get(at));
            break;
        }
    }
    text
}

/// The daemon's judging times at this speed (as `boardcast demo` scales
/// them), in whole milliseconds as its configuration gives them.
fn judging(size: &Size) -> ReconstructorConfig {
    let scale =
        |d: Duration| Duration::from_millis(((d.as_secs_f64() * 1000.0 / size.speed.max(1.0)).round() as u64).max(1));
    let config = ReconstructorConfig::default();
    ReconstructorConfig {
        settle: scale(config.settle),
        touch_min: scale(config.touch_min),
        out_of_sync_after: scale(config.out_of_sync_after),
        gesture_hold: scale(config.gesture_hold),
        press_grace: scale(config.press_grace),
        quiet_completion: scale(config.quiet_completion),
        ..config
    }
}
