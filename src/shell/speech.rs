//! A board's speaker (rules.md N3, docs/speech.md): the configured command
//! (`espeak-ng -v de` …) run for each announcement the board's
//! announcer (`boardcast_core::publish::announcer`) makes, one at a time, each with a time limit.
//!
//! The board's driver is never held up: announcements wait in an
//! unbounded channel, and when more than `max_queue` wait the oldest are
//! dropped (said in the log), so a slow or stuck speaker costs stale
//! words, never moves. A command that cannot run is said once per reason,
//! and the feed goes on without it.

use std::{collections::VecDeque, process::Stdio, time::Duration};

use tokio::{process::Command, sync::mpsc};
use tracing::{info, warn};

/// How a board speaks.
#[derive(Clone, Debug)]
pub struct SpeakerSettings {
    /// The program and its arguments; the announcement is added as the
    /// last argument.
    pub command: Vec<String>,
    /// Announcements waiting at most; older ones are dropped.
    pub max_queue: usize,
    /// The longest one announcement may take before it is killed.
    pub timeout: Duration,
    /// The board's name, given to the command as `BOARDCAST_BOARD` (a
    /// script can pick the board's speaker by it).
    pub board: String,
    /// The announcements' language code, given as
    /// `BOARDCAST_SPEECH_LANGUAGE` (a script can pick the voice by it).
    pub language: &'static str,
}

/// Runs the command for each announcement from `texts`, one at a time,
/// until `texts` closes and what waits has been said.
pub async fn speak(settings: SpeakerSettings, mut texts: mpsc::UnboundedReceiver<String>) {
    let mut waiting: VecDeque<String> = VecDeque::new();
    // The reason the last announcement failed, said once until it changes.
    let mut failing: Option<String> = None;
    loop {
        if waiting.is_empty() {
            match texts.recv().await {
                Some(text) => waiting.push_back(text),
                None => break,
            }
        }
        while let Ok(text) = texts.try_recv() {
            waiting.push_back(text);
        }
        let stale = waiting.len().saturating_sub(settings.max_queue);
        if stale > 0 {
            let dropped: Vec<String> = waiting.drain(..stale).collect();
            warn!(
                "speech: {stale} announcement(s) dropped unsaid, the speaker being behind ({}); more than speech.max_queue = {} were waiting",
                dropped.join(" / "),
                settings.max_queue
            );
        }
        let Some(text) = waiting.pop_front() else { continue };
        match say(&settings, &text).await {
            Ok(()) => {
                if failing.take().is_some() {
                    info!("speech: announcing again ({text:?} was said)");
                }
            }
            Err(why) => {
                if failing.as_ref() != Some(&why) {
                    warn!(
                        "speech: cannot announce {text:?}: {why}; the board and its feed go on without speech (fix speech.command; said again only if the reason changes)"
                    );
                    failing = Some(why);
                }
            }
        }
    }
}

/// Runs the command once for `text`.
async fn say(settings: &SpeakerSettings, text: &str) -> Result<(), String> {
    let (program, args) = settings.command.split_first().ok_or("no command is configured")?;
    let child = Command::new(program)
        .args(args)
        .arg(text)
        .env("BOARDCAST_BOARD", &settings.board)
        .env("BOARDCAST_SPEECH_LANGUAGE", settings.language)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        // Its own process group, so that a timeout stops a whole pipeline
        // (`sh -c 'espeak-ng … | aplay …'`), not only the shell.
        .process_group(0)
        .spawn()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    "{program:?} was not found (install it, e.g. `apt-get install espeak-ng`, or give its full path)"
                )
            } else {
                format!("cannot start {program:?}: {e}")
            }
        })?;
    let group = child.id().and_then(|id| i32::try_from(id).ok()).map(nix::unistd::Pid::from_raw);
    let output = match tokio::time::timeout(settings.timeout, child.wait_with_output()).await {
        Ok(done) => done.map_err(|e| format!("{program:?} failed: {e}"))?,
        // Dropping the child's future kills it (kill_on_drop); its group
        // goes with it.
        Err(_) => {
            if let Some(group) = group {
                let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            }
            return Err(format!(
                "{program:?} took longer than speech.timeout_ms = {} and was stopped",
                settings.timeout.as_millis()
            ));
        }
    };
    if output.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said = stderr.lines().find(|l| !l.trim().is_empty()).map(str::trim).unwrap_or("nothing on stderr");
        Err(format!("{program:?} ended with {} ({said})", output.status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A speaker that appends each announcement to a file in `dir`.
    fn writing_to(dir: &std::path::Path, max_queue: usize) -> SpeakerSettings {
        let said = dir.join("said.txt");
        SpeakerSettings {
            command: vec!["sh".into(), "-c".into(), format!("printf '%s\\n' \"$0\" >> '{}'", said.display())],
            max_queue,
            timeout: Duration::from_secs(30),
            board: "b1".into(),
            language: "de",
        }
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("boardcast-speech-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[tokio::test]
    async fn what_waits_beyond_max_queue_is_dropped_oldest_first() {
        let dir = scratch("queue");
        let (tx, rx) = mpsc::unbounded_channel();
        // Four announcements arrive before the speaker has said any.
        for text in ["eins", "zwei", "drei", "vier"] {
            tx.send(text.to_owned()).unwrap();
        }
        drop(tx);
        speak(writing_to(&dir, 2), rx).await;
        assert_eq!(std::fs::read_to_string(dir.join("said.txt")).unwrap(), "drei\nvier\n");
    }

    #[tokio::test]
    async fn a_speaker_that_hangs_is_stopped_and_the_next_announcement_is_said() {
        let dir = scratch("hang");
        let said = dir.join("said.txt");
        let settings = SpeakerSettings {
            // The first announcement hangs (far beyond the limit), the
            // second is written.
            command: vec![
                "sh".into(),
                "-c".into(),
                format!("[ \"$0\" = hang ] && sleep 600; printf '%s\\n' \"$0\" >> '{}'", said.display()),
            ],
            timeout: Duration::from_millis(200),
            ..writing_to(&dir, 16)
        };
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send("hang".to_owned()).unwrap();
        tx.send("Kurze Rochade".to_owned()).unwrap();
        drop(tx);
        speak(settings, rx).await;
        assert_eq!(std::fs::read_to_string(&said).unwrap(), "Kurze Rochade\n");
    }

    #[tokio::test]
    async fn the_command_gets_the_words_as_its_last_argument_and_the_board_in_its_environment() {
        let dir = scratch("env");
        let said = dir.join("said.txt");
        let settings = SpeakerSettings {
            command: vec![
                "sh".into(),
                "-c".into(),
                format!(
                    "printf '%s %s %s|%s\\n' \"$BOARDCAST_BOARD\" \"$BOARDCAST_SPEECH_LANGUAGE\" \"$1\" \"$2\" >> '{}'",
                    said.display()
                ),
                "say".into(),
                "-v".into(),
            ],
            ..writing_to(&dir, 16)
        };
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send("Springer Gustav eins Felix drei".to_owned()).unwrap();
        drop(tx);
        speak(settings, rx).await;
        assert_eq!(std::fs::read_to_string(&said).unwrap(), "b1 de -v|Springer Gustav eins Felix drei\n");
    }
}
