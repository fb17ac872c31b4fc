//! The daemon's log, through `tracing`: one line per thing that happens,
//! each board's lines in a span named after the board.
//!
//! - `text` (the default) is for people and journald: `b1: made 4. Nf3
//!   (g1f3)`, warnings and errors marked, no colours when not on a
//!   terminal, no time stamp under systemd (the journal adds its own).
//! - `json` is one object per line for log collectors, with the board's
//!   name as the `board` field of its span.
//!
//! Only boardcast's own lines are shown at the configured level; the MQTT
//! client speaks only of warnings and errors, the embedded broker not at
//! all.
//!
//! Warnings and errors alike (the same but for their numbers) are shown
//! three times a minute and then counted, with one summary line when the
//! minute ends (`shell::repeats`): a stranger who can make the daemon warn
//! (a forged command, a refused connection) cannot fill the disk or bury
//! the real messages.

use std::{
    fmt,
    sync::{LazyLock, Mutex, Once},
    time::{Duration, Instant},
};

use boardcast::shell::{board_files::BoardLines, repeats::Repeats};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::{
    EnvFilter,
    fmt::{
        FmtContext, FormatEvent, FormatFields, FormattedFields,
        format::{DefaultFields, Writer},
    },
    layer::SubscriberExt as _,
    registry::LookupSpan,
    util::SubscriberInitExt as _,
};

pub(crate) use boardcast::config::LogFormat;

/// Sends the log to standard error, at `level` (`info`, `debug`, …) for
/// boardcast itself. Does nothing if a logger is already set.
pub(crate) fn init(format: LogFormat, level: &str) {
    // rumqttd reports every client that drops its connection as an error,
    // which is routine in a hall (and the daemon's own start-up check
    // connects and leaves): the broker's problems that matter reach the
    // daemon's own lines.
    let filter = EnvFilter::try_new(format!("warn,rumqttd=off,boardcast={level}"))
        .unwrap_or_else(|_| EnvFilter::new("warn,rumqttd=off,boardcast=info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false);
    // Each board's latest lines are also kept for the console's hall
    // (`shell::board_files`).
    let _ = match format {
        LogFormat::Text => builder
            .event_format(Aggregated(Lines::new()))
            .fmt_fields(DefaultFields::new())
            .finish()
            .with(BoardLines)
            .try_init(),
        LogFormat::Json => {
            let json = tracing_subscriber::fmt::format().json().with_current_span(true).with_span_list(false);
            builder.json().event_format(Aggregated(json)).finish().with(BoardLines).try_init()
        }
    };
}

/// The warnings and errors seen in the current windows, for every format.
static REPEATS: LazyLock<Mutex<Repeats>> = LazyLock::new(|| Mutex::new(Repeats::default()));

/// A format whose warnings and errors go through [`REPEATS`].
struct Aggregated<F>(F);

impl<S, N, F> FormatEvent<S, N> for Aggregated<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        // `WARN` and `ERROR` are the levels at or below `WARN`.
        if *event.metadata().level() > Level::WARN {
            return self.0.format_event(ctx, writer, event);
        }
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        // The time stamp's digits count as numbers: lines alike but for
        // their time are alike.
        let shown = REPEATS.lock().map_or(true, |mut repeats| repeats.shown(Instant::now(), without_time(&line), ""));
        if shown {
            return writer.write_str(&line);
        }
        start_summaries();
        Ok(())
    }
}

/// The line without the readable format's leading time stamp.
fn without_time(line: &str) -> &str {
    let line = line.trim_end();
    match line.split_once(' ') {
        Some((first, rest)) if first.len() > 20 && first.ends_with('Z') && first.as_bytes()[0].is_ascii_digit() => rest,
        _ => line,
    }
}

/// Says, once a second, the summaries of the windows that hid lines; started
/// by the first hidden line (most runs never need it).
fn start_summaries() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new().name("log-summaries".into()).spawn(|| {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                // The lock is let go before the summaries are logged: they
                // go through the same format.
                let due = REPEATS.lock().map(|mut repeats| repeats.due(Instant::now())).unwrap_or_default();
                for summary in due {
                    tracing::warn!("log: {summary}");
                }
            }
        });
        if let Err(error) = spawned {
            eprintln!("boardcast: repeated log lines will not be summarised (no thread: {error})");
        }
    });
}

/// The readable format: `[time] [LEVEL] board: message`.
struct Lines {
    /// systemd's journal stamps every line itself.
    timestamps: bool,
}

impl Lines {
    fn new() -> Self {
        Self { timestamps: std::env::var_os("JOURNAL_STREAM").is_none() }
    }
}

impl<S, N> FormatEvent<S, N> for Lines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        if self.timestamps {
            let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
            write!(writer, "{now} ")?;
        }
        match *event.metadata().level() {
            Level::ERROR => write!(writer, "ERROR ")?,
            Level::WARN => write!(writer, "WARNING ")?,
            _ => {}
        }
        // The innermost span's field names what the line is about
        // (`board=b1` for a board's lines, `feed=mqtt` for the feed's).
        if let Some(span) = ctx.lookup_current() {
            let extensions = span.extensions();
            if let Some(fields) = extensions.get::<FormattedFields<N>>() {
                let value = fields.fields.split_once('=').map_or(fields.fields.as_str(), |(_, v)| v);
                write!(writer, "{}: ", value.trim_matches('"'))?;
            }
        }
        ctx.format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
