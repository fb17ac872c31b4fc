//! A board's speaker (`[speech]`, docs/speech.md): its announcer is one of
//! the board's outlets, and what it says goes to the speaker task
//! (`shell::speech`), which runs the configured command for each
//! announcement without ever holding up the board.

use tokio::{sync::mpsc, task::JoinHandle};
use tracing::{Instrument, Span, info};

use boardcast::{
    config::Speech,
    shell::{
        driver::Forward,
        speech::{SpeakerSettings, speak},
    },
};
use boardcast_core::{
    publish::announcer::Announcer,
    session::Output,
    sink::{Games, Sink},
};

use super::board::Start;

/// A board's running speaker.
pub(super) struct Speaker {
    task: JoinHandle<()>,
    timeout: std::time::Duration,
}

impl Speaker {
    /// Lets the speaker say what waits, for one announcement's time at
    /// most: shutting down is not held up by a queue of stale moves.
    pub(super) async fn finish(self) {
        let abort = self.task.abort_handle();
        if tokio::time::timeout(self.timeout, self.task).await.is_err() {
            abort.abort();
        }
    }
}

/// The board's announcer and its speaker, when `[speech]` names the board.
/// A resumed game's past is known to the announcer but not said again.
pub(super) fn outlet(start: &Start<'_>, speech: Option<&Speech>) -> Option<(Forward<Announcer>, Speaker)> {
    let board = start.board;
    let settings = speech?;
    let language = settings.language_of(board)?;
    let mut announcer = Announcer::new(language);
    know_past(&mut announcer, start.past, start.games);
    info!("announcing completed moves and results in {} with {:?}", language.code(), settings.command);
    let (texts_tx, texts_rx) = mpsc::unbounded_channel();
    let speaker_settings = SpeakerSettings {
        command: settings.command.clone(),
        max_queue: settings.max_queue,
        timeout: settings.timeout,
        board: board.name.clone(),
        language: language.code(),
    };
    let task = tokio::spawn(speak(speaker_settings, texts_rx).instrument(Span::current()));
    Some((Forward::to(announcer, texts_tx), Speaker { task, timeout: settings.timeout }))
}

/// Tells the announcer what was said before the restart, and lets it go
/// unsaid.
fn know_past(announcer: &mut Announcer, past: &[Output], games: Games<'_>) {
    for output in past {
        announcer.handle_output(output, games);
    }
    while announcer.poll_item().is_some() {}
}
