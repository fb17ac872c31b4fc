//! A tournament hall in a test: simulated boards behind pseudo-terminals
//! and the real `boardcast run` binary reading them, each in its own
//! scratch folder.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use boardcast_core::{capture::CaptureHeader, protocol::Protocol, sensor::SensorEvent, time::Timestamp};
use boardcast_sim::synth::{Style, events_capture, header, play, read_games, rng_for};

/// A scratch folder with boards and a daemon.
pub struct Hall {
    /// The folder.
    pub dir: PathBuf,
    /// Every daemon and simulated board started here, stopped when the
    /// hall goes (see the `Drop` below).
    started: std::sync::Mutex<Vec<u32>>,
}

/// A test that fails leaves its processes behind unless they are stopped
/// here: a daemon left running keeps trying its board's path and takes the
/// pseudo-terminal of the next test that uses the same folder. A process is
/// killed only if its command line still names this hall's folder (its
/// number may have been given to another process since it ended).
impl Drop for Hall {
    fn drop(&mut self) {
        let dir = self.dir.to_string_lossy().into_owned();
        for pid in self.started.lock().map(|p| p.clone()).unwrap_or_default() {
            let ours = fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(&dir));
            if ours {
                let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            }
        }
    }
}

/// How fast the simulated boards play (times real speed); the daemon's
/// timings in [`Hall::config`] are divided by the same factor.
pub const SPEED: u32 = 10;

/// The reconstruction settings of [`Hall::config`], for replaying the
/// captures a test daemon recorded (at the simulators' speed).
pub fn scaled() -> boardcast_core::reconstruct::ReconstructorConfig {
    let s = u64::from(SPEED);
    boardcast_core::reconstruct::ReconstructorConfig {
        settle: std::time::Duration::from_millis(300 / s),
        touch_min: std::time::Duration::from_millis(500 / s),
        out_of_sync_after: std::time::Duration::from_millis(2000 / s),
        gesture_hold: std::time::Duration::from_millis(2000 / s),
        press_grace: std::time::Duration::from_millis(1000 / s),
        quiet_completion: std::time::Duration::from_millis(10_000 / s),
        ..Default::default()
    }
}

impl Hall {
    /// A fresh folder for test `name`.
    pub fn new(name: &str) -> Self {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("hall-{name}"));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Self { dir, started: std::sync::Mutex::new(Vec::new()) }
    }

    /// The link path for board `name`.
    pub fn link(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.tty"))
    }

    /// Writes a daemon configuration reading these boards, with the
    /// reconstruction timings scaled to [`SPEED`].
    pub fn config(&self, boards: &[&str]) -> PathBuf {
        self.config_with_mqtt(boards, "[mqtt]\nenabled = false\n")
    }

    /// Like [`Hall::config`], with this `[mqtt]` section (and any other
    /// tables after it).
    /// The broker's accounts file is the hall's `mqtt-accounts` ([`Hall::account`]).
    pub fn config_with_mqtt(&self, boards: &[&str], mqtt: &str) -> PathBuf {
        let mut text = self.common_config();
        let accounts = format!("accounts_file = \"{}/mqtt-accounts\"\n", self.dir.display());
        if mqtt.contains("[mqtt.embedded]\n") {
            text.push_str(&mqtt.replace("[mqtt.embedded]\n", &format!("[mqtt.embedded]\n{accounts}")));
        } else {
            text.push_str(mqtt);
            text.push_str(&format!("[mqtt.embedded]\n{accounts}"));
        }
        for name in boards {
            let link = self.link(name);
            text.push_str(&format!(
                "[[boards]]\nname = \"{name}\"\nprotocol = \"dgt\"\nport = \"{}\"\n",
                link.display()
            ));
        }
        self.write_config(&text)
    }

    /// Like [`Hall::config`], for boards of several families: each board
    /// is `(name, protocol)`.
    pub fn config_mixed(&self, boards: &[(&str, &str)]) -> PathBuf {
        let mut text = self.common_config();
        text.push_str("[mqtt]\nenabled = false\n");
        for (name, protocol) in boards {
            let link = self.link(name);
            text.push_str(&format!(
                "[[boards]]\nname = \"{name}\"\nprotocol = \"{protocol}\"\nport = \"{}\"\n",
                link.display()
            ));
        }
        self.write_config(&text)
    }

    /// Like [`Hall::config`], with each board found by its serial number
    /// among the links of `links` (`[discovery] extra_ports`).
    pub fn config_by_serial(&self, boards: &[(&str, &str)], links: &[&str]) -> PathBuf {
        let mut text = self.common_config();
        text.push_str("[mqtt]\nenabled = false\n");
        let extra: Vec<String> = links.iter().map(|l| format!("\"{}\"", self.link(l).display())).collect();
        text.push_str(&format!("[discovery]\nextra_ports = [{}]\n", extra.join(", ")));
        for (name, serial) in boards {
            text.push_str(&format!("[[boards]]\nname = \"{name}\"\nprotocol = \"dgt\"\nserial = \"{serial}\"\n"));
        }
        self.write_config(&text)
    }

    fn write_config(&self, text: &str) -> PathBuf {
        let path = self.dir.join("boardcast.toml");
        fs::write(&path, text).unwrap();
        path
    }

    /// Everything but the boards.
    fn common_config(&self) -> String {
        format!(
            "[recording]\ndir = \"{dir}/captures\"\n[pgn]\ndir = \"{dir}/pgn\"\n\
             [reconstruction]\nsettle_ms = {settle}\ntouch_min_ms = {touch}\nout_of_sync_ms = {sync}\n\
             gesture_hold_ms = {gesture}\npress_grace_ms = {grace}\nquiet_completion_ms = {quiet}\n\
             [link]\nreconnect_max_ms = 300\n[operator]\nkey_file = \"{dir}/operator.key\"\n\
             [hall]\nstate_file = \"{dir}/assigned-boards.json\"\nprobe_interval_s = 0\n\
             [http]\nenabled = false\n",
            dir = self.dir.display(),
            settle = 300 / SPEED,
            touch = 500 / SPEED,
            sync = 2000 / SPEED,
            gesture = 2000 / SPEED,
            grace = 1000 / SPEED,
            quiet = 10_000 / SPEED,
        )
    }

    /// Starts a simulated board playing `capture` at `link`.
    pub fn simulate(&self, capture: &Path, name: &str, extra: &[&str]) -> Child {
        let log = fs::File::create(self.dir.join(format!("simulate-{name}.log"))).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["simulate", "--capture"])
            .arg(capture)
            .arg("--link")
            .arg(self.link(name))
            .args(["--speed", &SPEED.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.started.lock().unwrap().push(child.id());
        child
    }

    /// Unplugs a simulated board: kills it and takes its link away. A daemon
    /// left running tries its port again every 2 s, and the kernel gives a
    /// closed pseudo-terminal's number to the next one opened: through the
    /// link, the daemon would take over another test's board (seen: a demo's
    /// board held 4 s and its game started under the demo's daemon).
    pub fn unplug(&self, board: &mut Child, name: &str) {
        let _ = board.kill();
        let _ = board.wait();
        let _ = fs::remove_file(self.link(name));
    }

    /// Starts the daemon (again: the log of every run goes to `run.log`).
    pub fn run(&self, config: &Path) -> Child {
        self.run_in(config, &[])
    }

    /// Like [`Hall::run`], the daemon started by `wrapper` (a command that
    /// runs its arguments, such as `nsenter --net=…`, exec'ing them).
    pub fn run_in(&self, config: &Path, wrapper: &[&str]) -> Child {
        let log = fs::OpenOptions::new().create(true).append(true).open(self.dir.join("run.log")).unwrap();
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(env!("CARGO_BIN_EXE_boardcast"));
                command
            }
            None => Command::new(env!("CARGO_BIN_EXE_boardcast")),
        };
        let child = command.args(["run", "--config"]).arg(config).stdout(Stdio::null()).stderr(log).spawn().unwrap();
        self.started.lock().unwrap().push(child.id());
        child
    }

    /// Adds a broker account with `boardcast accounts add` (the accounts
    /// file of this hall's configuration) and returns its password.
    pub fn account(&self, name: &str, role: &str) -> String {
        add_account(&self.dir.join("boardcast.toml"), name, role)
    }

    /// `boardcast ctl` with the hall's configuration: exit status and
    /// everything it said.
    pub fn ctl(&self, args: &[&str]) -> (i32, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["ctl", "--config"])
            .arg(self.dir.join("boardcast.toml"))
            .args(args)
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.code().unwrap_or(-1), text)
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("run.log")).unwrap_or_default()
    }

    /// A simulated board's log so far.
    pub fn simulate_log(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(format!("simulate-{name}.log"))).unwrap_or_default()
    }

    /// A board's PGN file (`pgn/<event>/round-<round>/game-<board>.pgn`;
    /// the board's games of every round, in folder order).
    pub fn pgn(&self, name: &str) -> String {
        let mut files = Vec::new();
        find_files(&self.dir.join("pgn"), &format!("game-{name}.pgn"), &mut files);
        files.sort();
        files.iter().map(|f| fs::read_to_string(f).unwrap_or_default()).collect()
    }

    /// A round's combined PGN file.
    pub fn round_pgn(&self, event: &str, round: &str) -> String {
        fs::read_to_string(self.dir.join("pgn").join(event).join(format!("round-{round}")).join("games.pgn"))
            .unwrap_or_default()
    }

    /// A board's capture files.
    pub fn captures(&self, name: &str) -> Vec<PathBuf> {
        let dir = self.dir.join("captures");
        let mut found: Vec<PathBuf> = fs::read_dir(dir)
            .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        found.retain(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&format!("{name}-"))));
        found
    }

    /// Writes a capture of game `index` of a vendored PGN file, played
    /// calmly with a clock, for the simulator.
    pub fn synth_capture(&self, pgn_file: &str, index: usize, name: &str) -> PathBuf {
        let (header, events) = synth_events(pgn_file, index, name);
        self.write_capture(name, &header, &events)
    }

    /// The capture `boardcast synth --profile irregular` makes of game
    /// `game` (from 1) of a vendored PGN file with `seed`: a real game with
    /// irregularities made in it (touch-move, illegal moves, …), for the
    /// simulator.
    pub fn synth_irregular(&self, pgn_file: &str, game: usize, seed: u64) -> PathBuf {
        let dir = self.dir.join("synth");
        let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["synth", &format!("tests/fixtures/games/{pgn_file}"), "--game", &game.to_string()])
            .args(["--profile", "irregular", "--seed", &seed.to_string(), "--out"])
            .arg(&dir)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        dir.join(format!("game-{game}.jsonl"))
    }

    /// Writes a capture for the simulator.
    pub fn write_capture(&self, name: &str, header: &CaptureHeader, events: &[(Timestamp, SensorEvent)]) -> PathBuf {
        let path = self.dir.join(format!("{name}-source.jsonl"));
        fs::write(&path, events_capture(header, events)).unwrap();
        path
    }
}

/// The SAN moves of game `index` of a vendored PGN file.
pub fn game_san(pgn_file: &str, index: usize) -> Vec<String> {
    let text = fs::read_to_string(format!("{}/tests/fixtures/games/{pgn_file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let game = &read_games(&text).unwrap()[index];
    let mut pos = game.start.clone();
    game.moves.iter().map(|&m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string()).collect()
}

/// Adds a broker account to the accounts file of the configuration at
/// `config`, with `boardcast accounts add` as an operator would; returns
/// its password.
pub fn add_account(config: &Path, name: &str, role: &str) -> String {
    use std::io::Write;
    let password = format!("pw-{name}-{}-hall", std::process::id());
    let mut child = Command::new(env!("CARGO_BIN_EXE_boardcast"))
        .args(["accounts", "--config"])
        .arg(config)
        .args(["add", name, "--role", role])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(format!("{password}\n").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "accounts add: {}", String::from_utf8_lossy(&out.stderr));
    password
}

/// Waits for a child to end by itself, up to `limit`.
pub fn wait(child: &mut Child, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Stops a child with SIGTERM (as systemd does) and waits for it.
pub fn stop(child: &mut Child) {
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    if !wait(child, Duration::from_secs(10)) {
        let _ = child.kill();
        let _ = child.wait();
        panic!("the process did not stop within 10 s of SIGTERM");
    }
}

/// The moves of every game in a PGN text, as SAN tokens (move numbers,
/// comments and results left out).
pub fn pgn_moves(pgn: &str) -> Vec<Vec<String>> {
    pgn_plies(pgn).into_iter().map(|game| game.into_iter().map(|(san, _)| san).collect()).collect()
}

/// The plies of each game in a PGN text, each with the comment after it.
pub fn pgn_plies(pgn: &str) -> Vec<Vec<(String, String)>> {
    let mut games = Vec::new();
    for block in pgn.split("\n\n[").filter(|b| !b.trim().is_empty()) {
        let Some(movetext) = block.split("\n\n").nth(1) else { continue };
        let mut plies: Vec<(String, String)> = Vec::new();
        let mut rest = movetext;
        while let Some(ch) = rest.chars().next() {
            if ch == '{' {
                let end = rest.find('}').unwrap_or(rest.len() - 1);
                if let Some(last) = plies.last_mut() {
                    last.1.push_str(&rest[1..end]);
                }
                rest = &rest[end + 1..];
                continue;
            }
            if ch.is_whitespace() {
                rest = &rest[1..];
                continue;
            }
            let end = rest.find(|c: char| c.is_whitespace() || c == '{').unwrap_or(rest.len());
            let token = rest[..end].rsplit("...").next().unwrap_or_default();
            let token = token.rsplit('.').next().unwrap_or_default();
            if !token.is_empty()
                && !token.starts_with(|c: char| c.is_ascii_digit())
                && !["1-0", "0-1", "1/2-1/2", "*"].contains(&token)
            {
                plies.push((token.to_owned(), String::new()));
            }
            rest = &rest[end..];
        }
        games.push(plies);
    }
    games
}

/// Game `index` of a vendored PGN file, played calmly with a clock: its
/// capture header and sensor events.
pub fn synth_events(pgn_file: &str, index: usize, name: &str) -> (CaptureHeader, Vec<(Timestamp, SensorEvent)>) {
    let text = fs::read_to_string(format!("{}/tests/fixtures/games/{pgn_file}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let games = read_games(&text).unwrap();
    let game = &games[index];
    let mut rng = rng_for(7, index);
    let mut style = Style::calm();
    // Slow enough that the daemon's first reconnection attempt (0.25 s
    // after a pulled cable) misses at most two plies, whose order the
    // turn then decides.
    style.think_ms = (2000, 2500);
    let stream = play(game, &style, &mut rng);
    (header(game, Protocol::EVENTS, name), stream.events)
}

/// Every file called `name` under `dir`.
fn find_files(dir: &Path, name: &str, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_files(&path, name, found);
        } else if path.file_name().and_then(|n| n.to_str()) == Some(name) {
            found.push(path);
        }
    }
}
