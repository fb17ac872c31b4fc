//! What the console's hall offers of each board one click away: its
//! capture file (the one being written now) and its recent log lines.
//!
//! The log lines are the daemon's own: a `tracing` layer beside the one that
//! writes the log ([`BoardLines`]) keeps the last [`LINES_KEPT`] lines of
//! each board's span (`board = <name>`, which every task of a board runs
//! in), so that an operator sees why a board is out of sync or
//! disconnected without a shell on the hall PC. Both are kept per process,
//! in memory: one daemon runs per process, and the lines are the log's
//! (which journald keeps for good), not a record of their own.

use std::{
    collections::{HashMap, VecDeque},
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::{LazyLock, Mutex},
};

use tracing::{
    Event, Level, Subscriber,
    field::{Field, Visit},
    span::{Attributes, Id},
};
use tracing_subscriber::{Layer, layer::Context, registry::LookupSpan};

/// Lines kept per board.
pub const LINES_KEPT: usize = 200;

/// The longest line kept (a line longer than this is cut).
const LINE_CHARS: usize = 500;

/// Each board's latest lines, oldest first.
static LINES: LazyLock<Mutex<HashMap<String, VecDeque<String>>>> = LazyLock::new(Default::default);

/// Each board's capture file now.
static CAPTURES: LazyLock<Mutex<HashMap<String, PathBuf>>> = LazyLock::new(Default::default);

/// The board's capture is written to `path` from now on.
pub fn set_capture(board: &str, path: &Path) {
    CAPTURES.lock().expect("not poisoned").insert(board.to_owned(), path.to_owned());
}

/// The file the board's capture is written to, if it is recorded.
pub fn capture(board: &str) -> Option<PathBuf> {
    CAPTURES.lock().expect("not poisoned").get(board).cloned()
}

/// The board's latest log lines, oldest first.
pub fn lines(board: &str) -> Vec<String> {
    LINES.lock().expect("not poisoned").get(board).map(|lines| lines.iter().cloned().collect()).unwrap_or_default()
}

/// Keeps a line of `board`'s.
fn keep(board: &str, line: String) {
    let mut all = LINES.lock().expect("not poisoned");
    let lines = all.entry(board.to_owned()).or_default();
    if lines.len() == LINES_KEPT {
        lines.pop_front();
    }
    lines.push_back(line);
}

/// The layer keeping each board's lines.
#[derive(Debug, Default)]
pub struct BoardLines;

/// The board a span is about (its `board` field).
struct BoardOf(String);

/// Reads a span's `board` field.
#[derive(Default)]
struct FindBoard(Option<String>);

impl Visit for FindBoard {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "board" {
            self.0 = Some(value.to_owned());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "board" {
            // `board = %name` arrives as a Display value through Debug.
            self.0 = Some(format!("{value:?}"));
        }
    }
}

/// An event's message and other fields as one line.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

impl<S> Layer<S> for BoardLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut found = FindBoard::default();
        attrs.record(&mut found);
        if let (Some(board), Some(span)) = (found.0, ctx.span(id)) {
            span.extensions_mut().insert(BoardOf(board));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let Some(scope) = ctx.event_scope(event) else { return };
        let Some(board) = scope.from_root().find_map(|span| span.extensions().get::<BoardOf>().map(|b| b.0.clone()))
        else {
            return;
        };
        let mut message = Message::default();
        event.record(&mut message);
        let level = match *event.metadata().level() {
            Level::ERROR => "ERROR ",
            Level::WARN => "WARNING ",
            _ => "",
        };
        let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
        let mut line = format!("{now} {level}{}", message.0);
        if line.chars().count() > LINE_CHARS {
            line = line.chars().take(LINE_CHARS).collect::<String>() + "…";
        }
        keep(&board, line);
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    #[test]
    fn a_boards_lines_are_kept_under_its_name_and_only_the_latest() {
        let subscriber = tracing_subscriber::registry().with(BoardLines);
        tracing::subscriber::with_default(subscriber, || {
            let span = tracing::info_span!("board", board = %"kept-b1");
            let _entered = span.enter();
            for i in 0..LINES_KEPT + 5 {
                tracing::info!("line {i}");
            }
            tracing::warn!(port = "/dev/x", "gone");
        });
        let lines = lines("kept-b1");
        assert_eq!(lines.len(), LINES_KEPT);
        assert!(lines[0].ends_with(" line 6"), "{}", lines[0]);
        assert!(lines.last().unwrap().ends_with("WARNING gone port=\"/dev/x\""), "{lines:?}");
        assert!(super::lines("no-such-board").is_empty());
    }
}
