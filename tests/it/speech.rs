//! Announcements spoken aloud (rules.md N3, docs/speech.md): espeak-ng
//! makes sound of a move in every language, and a game on a simulated
//! board through the daemon is announced move by move, completed moves
//! only, then its result, while a speaker that cannot run disturbs
//! nothing.

use std::{
    fs,
    os::unix::fs::PermissionsExt,
    path::Path,
    process::{Command, Stdio},
    time::Duration,
};

use boardcast_core::publish::{render::Language, spoken::spoken_in};
use boardcast_sim::synth::read_games;
use shakmaty::{Chess, Position, san::SanPlus};

use crate::support::live::{Hall, game_san, pgn_moves, stop, wait};

const GAMES: &str = "livechess-vestland-round1.pgn";

/// Whether `program` runs; a missing one fails the test under CI (the
/// speech tests must run there) and skips it elsewhere, as for Mosquitto.
fn installed(program: &str) -> bool {
    if Command::new(program).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok() {
        return true;
    }
    let why = format!("{program} is not installed (`apt-get install espeak-ng sox`)");
    assert!(std::env::var_os("CI").is_none(), "{why}: under CI the speech tests must run");
    eprintln!("skipped: {why}");
    false
}

/// `sox FILE -n stat`'s value for `field` (it writes them on stderr).
fn stat(report: &str, field: &str) -> f64 {
    report
        .lines()
        .find_map(|l| l.strip_prefix(field)?.trim().strip_prefix(':')?.trim().parse().ok())
        .unwrap_or_else(|| panic!("sox reports {field}: {report}"))
}

#[test]
fn espeak_ng_says_a_move_audibly_in_every_language() {
    if !installed("espeak-ng") || !installed("sox") {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("speech-voices");
    fs::create_dir_all(&dir).unwrap();
    let pos = Chess::default();
    let knight = "Nf3".parse::<SanPlus>().unwrap().san.to_move(&pos).unwrap();
    for language in Language::ALL {
        let words = spoken_in(&pos, knight, language);
        let wav = dir.join(format!("{}.wav", language.code()));
        let espeak =
            Command::new("espeak-ng").args(["-v", language.code(), "-w"]).arg(&wav).arg(&words).output().unwrap();
        assert!(
            espeak.status.success(),
            "espeak-ng has a {} voice (`espeak-ng --voices`): {}",
            language.code(),
            String::from_utf8_lossy(&espeak.stderr)
        );
        let sox = Command::new("sox").arg(&wav).args(["-n", "stat"]).output().unwrap();
        assert!(sox.status.success(), "sox reads {}", wav.display());
        let report = String::from_utf8_lossy(&sox.stderr);
        let seconds = stat(&report, "Length (seconds)");
        let peak = stat(&report, "Maximum amplitude");
        let rms = stat(&report, "RMS     amplitude");
        // "Springer Gustav eins Felix drei" spoken takes about two seconds;
        // speech peaks near full scale, silence is 0.
        assert!(seconds > 0.3, "{} {words:?}: {seconds} s of sound\n{report}", language.code());
        assert!(
            peak > 0.1 && rms > 0.01,
            "{} {words:?} is not silent: peak {peak}, RMS {rms}\n{report}",
            language.code()
        );
    }
}

/// A speaker script for `hall` that appends `<board> <language>: <words>`
/// to `said.txt` (the words come as the last argument).
fn recording_speaker(hall: &Hall) -> String {
    let script = hall.dir.join("say.sh");
    let said = hall.dir.join("said.txt");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s %s: %s\\n' \"$BOARDCAST_BOARD\" \"$BOARDCAST_SPEECH_LANGUAGE\" \"$1\" >> '{}'\n",
            said.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// What a board named `board` should say for game `index` of [`GAMES`],
/// in Dutch: every move, then the result.
fn expected_announcements(board: &str, index: usize) -> Vec<String> {
    let text = fs::read_to_string(format!("{}/tests/fixtures/games/{GAMES}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let game = &read_games(&text).unwrap()[index];
    let mut pos = game.start.clone();
    let mut said = Vec::new();
    for &m in &game.moves {
        said.push(format!("{board} nl: {}", spoken_in(&pos, m, Language::Nl)));
        pos.play_unchecked(m);
    }
    let result = match game.result {
        Some(shakmaty::KnownOutcome::Decisive { winner: shakmaty::Color::White }) => "Wit wint",
        Some(shakmaty::KnownOutcome::Decisive { winner: shakmaty::Color::Black }) => "Zwart wint",
        Some(shakmaty::KnownOutcome::Draw) => "Remise",
        None => panic!("game {index} has a result"),
    };
    said.push(format!("{board} nl: {result}"));
    said
}

#[test]
fn a_game_through_the_daemon_is_announced_move_by_move_then_its_result() {
    let hall = Hall::new("speech-game");
    let speaker = recording_speaker(&hall);
    let speech =
        format!("[mqtt]\nenabled = false\n[speech]\nenabled = true\ncommand = [\"{speaker}\"]\nlanguage = \"nl\"\n");
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let mut daemon = hall.run(&hall.config_with_mqtt(&["b1"], &speech));
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    assert_eq!(pgn_moves(&hall.pgn("b1")), [game_san(GAMES, 0)], "{log}");
    let said = fs::read_to_string(hall.dir.join("said.txt")).unwrap_or_default();
    let said: Vec<&str> = said.lines().collect();
    let expected = expected_announcements("b1", 0);
    assert_eq!(said, expected, "each completed move once, in order, then the result\n{log}");
    assert_eq!(said[0], "b1 nl: Pion Eva twee Eva vier");
    assert!(!log.contains("speech: cannot announce"), "{log}");
}

#[test]
fn a_speaker_that_cannot_run_is_logged_once_and_the_game_comes_out_exact() {
    let hall = Hall::new("speech-missing");
    let missing = hall.dir.join("no-such-speaker");
    let speech = format!(
        "[mqtt]\nenabled = false\n[speech]\nenabled = true\ncommand = [\"{}\", \"-v\", \"de\"]\n",
        missing.display()
    );
    let capture = hall.synth_capture(GAMES, 0, "b1");
    let mut board = hall.simulate(&capture, "b1", &[]);
    let mut daemon = hall.run(&hall.config_with_mqtt(&["b1"], &speech));
    assert!(wait(&mut board, Duration::from_secs(120)), "the simulated game ended");
    stop(&mut daemon);
    let log = hall.log();
    assert_eq!(pgn_moves(&hall.pgn("b1")), [game_san(GAMES, 0)], "{log}");
    assert!(
        log.contains("b1: speech: cannot announce \"Bauer Eva zwei Eva vier\""),
        "the first failure is said: {log}"
    );
    assert!(log.contains("was not found"), "{log}");
    assert_eq!(log.matches("speech: cannot announce").count(), 1, "said once, not at every move: {log}");
}
