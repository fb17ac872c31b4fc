//! The `boardcast` command as a user runs it: replay, its outputs, its
//! errors and exit codes.

use std::{
    fs,
    path::{Path, PathBuf},
    process::{Command, Output},
};

fn boardcast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_boardcast")).args(args).output().expect("the binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A fresh folder under the target directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/dgt-real/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn replay_writes_the_pgn_and_the_alerts() {
    let dir = scratch("replay_writes_the_pgn_and_the_alerts");
    let (pgn, alerts) = (dir.join("games.pgn"), dir.join("alerts.jsonl"));
    let out =
        boardcast(&["replay", "--fast", &fixture("dgt-real-1.jsonl"), "--pgn", path(&pgn), "--alerts", path(&alerts)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pgn = fs::read_to_string(pgn).unwrap();
    assert!(pgn.contains("1. e4 {[%clk 0:03:01]} 1... e5"), "{pgn}");
    assert!(pgn.contains("29. Bf6"), "{pgn}");
    assert_eq!(fs::read_to_string(alerts).unwrap(), "", "a real clean game has no alerts");
}

#[test]
fn without_files_the_pgn_goes_to_stdout_and_alerts_to_stderr() {
    let dir = scratch("without_files");
    let capture = dir.join("illegal.jsonl");
    // The white king jumps two squares and White presses the clock.
    let mut text = String::from("{\"capture\":1,\"protocol\":\"events\",\"board\":\"b7\"}\n");
    text.push_str("{\"t_us\":0,\"board\":\"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\"}\n");
    text.push_str("{\"t_us\":500000,\"clock\":{\"white_ms\":600000,\"black_ms\":600000,\"running\":\"white\"}}\n");
    text.push_str(
        "{\"t_us\":1000000,\"square\":\"e2\",\"piece\":null}\n{\"t_us\":1100000,\"square\":\"e4\",\"piece\":\"P\"}\n",
    );
    text.push_str("{\"t_us\":1500000,\"clock\":{\"white_ms\":599000,\"black_ms\":600000,\"running\":\"black\"}}\n");
    text.push_str("{\"t_us\":3000000,\"clock\":{\"white_ms\":599000,\"black_ms\":598500,\"running\":\"white\"}}\n");
    fs::write(&capture, text).unwrap();
    let out = boardcast(&["replay", path(&capture)]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("1. e4"));
    let err = stderr(&out);
    assert!(
        err.contains("b7 game 1: ply 1, Black, 7.5.3 (irregularity): Black pressed the clock without making a move"),
        "{err}"
    );
}

#[test]
fn speed_and_fast_give_the_same_output() {
    let dir = scratch("speed_and_fast");
    let mut files = Vec::new();
    for speed in ["fast", "400"] {
        let (pgn, alerts) = (dir.join(format!("{speed}.pgn")), dir.join(format!("{speed}.jsonl")));
        let mut args = vec!["replay", fixture_dir_str(), "--pgn", path(&pgn), "--alerts", path(&alerts)];
        if speed == "fast" {
            args.push("--fast");
        } else {
            args.extend(["--speed", speed]);
        }
        let out = boardcast(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        files.push((fs::read_to_string(pgn).unwrap(), fs::read_to_string(alerts).unwrap()));
    }
    assert_eq!(files[0], files[1]);
    assert_eq!(files[0].0.matches("[Event ").count(), 2, "both captures of the folder, in order");
}

fn fixture_dir_str() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/dgt-real")
}

#[test]
fn a_bad_capture_is_named_with_its_line_and_the_others_are_still_replayed() {
    let dir = scratch("bad_capture");
    let good = fs::read_to_string(fixture("dgt-real-1.jsonl")).unwrap();
    fs::write(dir.join("a-good.jsonl"), &good).unwrap();
    // Cut mid-line, as a crash while recording would leave it.
    let cut = &good[..good.len() / 2];
    fs::write(dir.join("b-cut.jsonl"), cut).unwrap();
    fs::write(dir.join("c-bad-header.jsonl"), "{\"capture\":7,\"protocol\":\"dgt\",\"board\":\"x\"}\n").unwrap();
    let pgn = dir.join("out.pgn");
    let out = boardcast(&["replay", path(&dir), "--pgn", path(&pgn)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let cut_line = cut.lines().count();
    assert!(err.contains(&format!("b-cut.jsonl: line {cut_line}: not a JSON object")), "{err}");
    assert!(err.contains("c-bad-header.jsonl: line 1: capture format version 7 is not supported (this daemon reads version 1); capture skipped"), "{err}");
    let pgn = fs::read_to_string(pgn).unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 2, "the good capture and what came before the cut: {pgn}");
}

#[test]
fn replaying_on_several_cores_gives_the_same_bytes_as_one() {
    let dir = scratch("replay_jobs");
    let caps = dir.join("captures");
    let games = format!("{}/tests/fixtures/games/twic0920-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let out = boardcast(&["synth", &games, "--protocol", "dgt", "--out", path(&caps)]);
    assert!(out.status.success(), "{}", stderr(&out));
    fs::copy(fixture("dgt-real-1.jsonl"), caps.join("game-0-real.jsonl")).unwrap();
    let run = |jobs: &str| {
        let (pgn, alerts, mqtt) =
            (dir.join(format!("{jobs}.pgn")), dir.join(format!("{jobs}.jsonl")), dir.join(format!("{jobs}.mqtt")));
        let out = boardcast(&[
            "replay",
            path(&caps),
            "--jobs",
            jobs,
            "--pgn",
            path(&pgn),
            "--alerts",
            path(&alerts),
            "--mqtt",
            path(&mqtt),
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        [pgn, alerts, mqtt].map(|p| fs::read(p).unwrap())
    };
    let one = run("1");
    let games = String::from_utf8_lossy(&one[0]).matches("[Event ").count();
    assert!(games > 100, "every capture is replayed: {games} games");
    for jobs in ["2", "7"] {
        let many = run(jobs);
        for (what, (a, b)) in ["PGN", "alerts", "publications"].iter().zip(one.iter().zip(&many)) {
            assert!(a == b, "the {what} with --jobs {jobs} differ from one job");
        }
    }
}

#[test]
fn bytes_that_are_not_utf8_cost_one_line_not_the_capture() {
    let dir = scratch("not_utf8");
    let mut bytes = fs::read(fixture("dgt-real-1.jsonl")).unwrap();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    // A damaged last line, as a disk error or a tool writing Latin-1 leaves it.
    bytes.extend_from_slice(b"{\"t\":999999999,\"in\":\"\xe9\xff\"}\n");
    let capture = dir.join("damaged.jsonl");
    fs::write(&capture, bytes).unwrap();
    let pgn = dir.join("out.pgn");
    let out = boardcast(&["replay", path(&capture), "--pgn", path(&pgn)]);
    assert_eq!(out.status.code(), Some(1), "the damage is reported in the exit status");
    let err = stderr(&out);
    assert!(err.contains("damaged.jsonl: bytes that are not UTF-8 were replaced"), "{err}");
    assert!(err.contains(&format!("line {}", lines + 1)), "the damaged line is named: {err}");
    let clean = dir.join("clean.pgn");
    boardcast(&["replay", &fixture("dgt-real-1.jsonl"), "--pgn", path(&clean)]);
    assert_eq!(fs::read_to_string(pgn).unwrap(), fs::read_to_string(clean).unwrap(), "the game is still all there");
}

#[test]
fn bad_arguments_say_what_to_do() {
    let out = boardcast(&["replay", "/nonexistent/capture.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("/nonexistent/capture.jsonl: no such file or folder"), "{}", stderr(&out));
    let out = boardcast(&["replay", "--speed", "0", &fixture("dgt-real-1.jsonl")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--speed must be a positive number"), "{}", stderr(&out));
    let out = boardcast(&["replay", "--jobs", "0", &fixture("dgt-real-1.jsonl")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--jobs must be at least 1"), "{}", stderr(&out));
}

#[test]
fn synth_makes_captures_that_replay_to_the_game() {
    let dir = scratch("synth");
    let games = format!("{}/tests/fixtures/games/raws.san.txt", env!("CARGO_MANIFEST_DIR"));
    let out = boardcast(&["synth", &games, "--game", "2", "--protocol", "dgt", "--out", path(&dir)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pgn = dir.join("out.pgn");
    let out = boardcast(&["replay", path(&dir.join("game-2.jsonl")), "--pgn", path(&pgn)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let pgn = fs::read_to_string(pgn).unwrap();
    assert!(pgn.contains('#') && (pgn.contains("1-0") || pgn.contains("0-1")), "the game ends in mate: {pgn}");
}

#[test]
fn synth_writes_an_alert_corpus_with_labels_and_an_index() {
    let dir = scratch("synth_corpus");
    let games = format!("{}/tests/fixtures/games/twic0920-sample.pgn", env!("CARGO_MANIFEST_DIR"));
    let args = ["synth", &games, "--profile", "mixed", "--protocol", "mixed", "--count", "8", "--seed", "5"];
    let out = boardcast(&[&args[..], &["--out", path(&dir)]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let index = fs::read_to_string(dir.join("corpus.jsonl")).unwrap();
    assert_eq!(index.lines().count(), 8, "{index}");
    for (k, line) in index.lines().enumerate() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        let profile = ["clean", "noisy", "irregular", "irregular"][k % 4];
        assert_eq!(entry["profile"], profile, "{line}");
        let labels = fs::read_to_string(dir.join(entry["labels"].as_str().unwrap())).unwrap();
        assert_eq!(labels.lines().count() as u64, entry["expected_alerts"].as_u64().unwrap());
        assert_eq!(labels.is_empty(), profile != "irregular", "{labels}");
        assert!(dir.join(entry["capture"].as_str().unwrap()).exists());
    }
    // The same seed gives the same corpus.
    let again = scratch("synth_corpus_again");
    assert!(boardcast(&[&args[..], &["--out", path(&again)]].concat()).status.success());
    for name in ["corpus.jsonl", "game-3.jsonl", "game-3.labels.jsonl"] {
        assert_eq!(fs::read(dir.join(name)).unwrap(), fs::read(again.join(name)).unwrap(), "{name}");
    }
    // The folder replays whole: the labels and the index beside the
    // captures are not taken for bad captures.
    let replayed = boardcast(&["replay", "--fast", path(&dir), "--pgn", path(&dir.join("out.pgn"))]);
    assert!(replayed.status.success(), "{}", stderr(&replayed));
    assert!(!stderr(&replayed).contains("capture skipped"), "{}", stderr(&replayed));
    assert_eq!(fs::read_to_string(dir.join("out.pgn")).unwrap().matches("[Event ").count(), 8);
    // Labels need a folder to go to.
    let out = boardcast(&["synth", &games, "--profile", "irregular"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("give a folder with --out DIR"), "{}", stderr(&out));
}

#[test]
fn the_printed_defaults_are_a_valid_configuration_and_bad_values_name_their_key() {
    let dir = scratch("config_check");
    let defaults = boardcast(&["config", "default"]);
    assert!(defaults.status.success());
    let mut text = String::from_utf8(defaults.stdout).unwrap();
    text.push_str("[[boards]]\nname = \"table-1\"\nprotocol = \"dgt\"\nserial = \"04711\"\n");
    let file = dir.join("boardcast.toml");
    fs::write(&file, &text).unwrap();
    let out = boardcast(&["config", "check", "--config", path(&file)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("no problems found"), "{said}");
    assert!(said.contains("board table-1: dgt the board with serial number 04711"), "{said}");

    // A misspelt key, a wrong type, an unknown protocol, two ways to find
    // a board: each refused with the key and what to write instead.
    let cases = [
        ("settle_ms = 300", "settel_ms = 300", "unknown field `settel_ms`"),
        ("settle_ms = 300", "settle_ms = \"fast\"", "reconstruction.settle_ms"),
        (
            "protocol = \"dgt\"\nserial",
            "protocol = \"chesslink\"\nserial",
            "boards[0].protocol = \"chesslink\": \"dgt\"",
        ),
        ("serial = \"04711\"", "serial = \"04711\"\nport = \"/dev/ttyACM0\"", "either port or serial, not both"),
        ("silent_ms = 6000", "silent_ms = 1000", "link.silent_ms = 1000: more than link.keepalive_ms (2000)"),
    ];
    for (from, to, message) in cases {
        assert!(text.contains(from), "{from}");
        fs::write(&file, text.replacen(from, to, 1)).unwrap();
        let out = boardcast(&["config", "check", "--config", path(&file)]);
        assert_eq!(out.status.code(), Some(2), "{to}");
        assert!(stderr(&out).contains(message), "{to}: {}", stderr(&out));
        assert!(stderr(&out).contains(path(&file)), "names the file: {}", stderr(&out));
    }
    // Speech, once enabled, speaks only for boards that are configured.
    let speaking = text.replacen(
        "enabled = false\n# The program and its arguments; the announcement",
        "enabled = true\n# The program and its arguments; the announcement",
        1,
    );
    assert_ne!(speaking, text, "the defaults have [speech] enabled = false");
    fs::write(&file, &speaking).unwrap();
    let out = boardcast(&["config", "check", "--config", path(&file)]);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("speech: table-1 announces in de with [\"espeak-ng\", \"-v\", \"de\"]"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    fs::write(&file, speaking.replacen("boards = []", "boards = [\"table-2\"]", 1)).unwrap();
    let out = boardcast(&["config", "check", "--config", path(&file)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("speech.boards[0] = \"table-2\": the name of a configured board ([[boards]] name: \"table-1\")"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn configuration_layers_defaults_then_the_file_then_the_environment() {
    let dir = scratch("config_layers");
    let file = dir.join("boardcast.toml");
    fs::write(
        &file,
        "[pgn]\ndir = \"/srv/from-file\"\n[recording]\ndir = \"/srv/captures-from-file\"\n\
         [[boards]]\nname = \"1\"\nprotocol = \"dgt\"\nport = \"/dev/ttyACM0\"\n",
    )
    .unwrap();
    let check = |env: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_boardcast"));
        command.args(["config", "check", "--config", path(&file)]);
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().unwrap()
    };
    let out = check(&[]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("PGN: /srv/from-file"), "the file overrides the defaults: {said}");
    assert!(said.contains("settle 300 ms"), "what the file leaves alone keeps its default: {said}");
    let out = check(&[("BOARDCAST__PGN__DIR", "/srv/from-env")]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("PGN: /srv/from-env"), "the environment overrides the file: {said}");
    assert!(said.contains("captures: /srv/captures-from-file"), "{said}");
    assert!(said.contains("BOARDCAST__* environment variables"), "the sources are named: {said}");
    let out = check(&[("BOARDCAST__RECONSTRUCTION__SETTLE_MS", "soon")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("reconstruction.settle_ms"), "{}", stderr(&out));
}

#[test]
fn replay_writes_what_the_live_daemon_would_have_published() {
    let dir = scratch("replay_mqtt");
    let out_file = dir.join("feed.jsonl");
    let out = boardcast(&[
        "replay",
        &fixture("dgt-real-1.jsonl"),
        "--pgn",
        path(&dir.join("games.pgn")),
        "--mqtt",
        path(&out_file),
        "--public-delay-s",
        "60",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> =
        fs::read_to_string(&out_file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // The game from a tree's moves topic: made appends, amended replaces,
    // retracted removes; and when each ply was first made.
    let moves = |tree: &str| -> (Vec<String>, Vec<u64>) {
        let (mut game, mut times) = (Vec::new(), Vec::new());
        for l in lines.iter().filter(|l| l["topic"] == format!("boardcast/v1/{tree}/replay/1/dgt-real-1/moves")) {
            let uci = l["payload"]["uci"].as_str().unwrap().to_owned();
            match l["payload"]["kind"].as_str().unwrap() {
                "made" => {
                    game.push(uci);
                    times.push(l["t_ms"].as_u64().unwrap());
                }
                "amended" => *game.last_mut().unwrap() = uci,
                "retracted" => {
                    game.pop();
                    times.pop();
                }
                _ => {}
            }
        }
        (game, times)
    };
    let ((live, live_t), (public, public_t)) = (moves("live"), moves("public"));
    let expected: Vec<String> = include_str!("../fixtures/dgt-real/1.uci")
        .split_whitespace()
        .filter(|t| !t.ends_with('.') && *t != "*")
        .map(String::from)
        .collect();
    assert_eq!(live, expected, "the moves topic carries the game");
    assert_eq!(public, live);
    for (live, public) in live_t.iter().zip(&public_t) {
        assert_eq!(*public, live + 60_000, "the public tree is a minute behind");
    }
    assert!(
        lines.iter().all(|l| !(l["topic"].as_str().unwrap().contains("/public/")
            && l["topic"].as_str().unwrap().ends_with("/alerts")))
    );
    let state = lines.iter().rfind(|l| l["topic"] == "boardcast/v1/live/replay/1/dgt-real-1/state").unwrap();
    assert_eq!(state["retain"], true);
}

/// A reader that stops early (`| head -1`) ends the command quietly with
/// status 0: no panic, no error on standard error.
#[test]
fn printing_commands_stop_quietly_when_the_reader_goes_away() {
    let dir = scratch("broken_pipe");
    let config = dir.join("default.toml");
    let mut text = boardcast(&["config", "default"]).stdout;
    text.extend_from_slice(b"\n[[boards]]\nname = \"1\"\nprotocol = \"dgt\"\nport = \"/dev/ttyACM0\"\n");
    std::fs::write(&config, text).unwrap();
    let capture = format!("{}/dgt-real-1.jsonl", fixture_dir_str());
    let config_arg = format!("--config={}", path(&config));
    for args in [
        vec!["config", "default"],
        vec!["config", "check", config_arg.as_str()],
        vec!["replay", capture.as_str()],
        vec!["list-ports"],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before anything is read.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = stderr(&out);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
