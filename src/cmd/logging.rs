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

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::{
    EnvFilter,
    fmt::{
        FmtContext, FormatEvent, FormatFields, FormattedFields,
        format::{DefaultFields, Writer},
    },
    registry::LookupSpan,
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
    let _ = match format {
        LogFormat::Text => builder.event_format(Lines::new()).fmt_fields(DefaultFields::new()).try_init(),
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).try_init(),
    };
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
