//! Repeated log lines, aggregated: of the lines alike (the same but for
//! their numbers, whatever their length) in a window of [`Repeats::WINDOW`], the first
//! [`Repeats::SHOWN`] go into the log as they come; the rest are counted,
//! with their sources, and said in one line when the window ends.
//!
//! A stranger on the hall network can make one line happen as often as
//! they like: a malformed CONNECT is one warning of the broker, a forged
//! command one refusal of the daemon. Thousands a second would otherwise
//! fill the disk and bury the real messages (issue 29, "log flooding").
//! Used for the broker's lines relayed into the daemon's log
//! (`mqtt::mosquitto`) and for the daemon's own warnings and errors
//! (`cmd::logging`).
//!
//! Time is given, never read here: the callers pass the moment a line came.

use std::{
    collections::{BTreeSet, HashMap},
    time::{Duration, Instant},
};

/// The lines alike seen in their current windows.
#[derive(Debug, Default)]
pub struct Repeats {
    alike: HashMap<String, Alike>,
}

#[derive(Debug)]
struct Alike {
    since: Instant,
    example: String,
    shown: u32,
    hidden: u64,
    sources: BTreeSet<String>,
    /// Sources beyond [`Repeats::SOURCES`] were seen.
    others: bool,
}

impl Repeats {
    /// How long a window lasts: a summary at most this often per kind of line.
    pub const WINDOW: Duration = Duration::from_secs(60);
    /// Lines alike shown as they come in a window.
    pub const SHOWN: u32 = 3;
    /// Sources named in a summary at most.
    const SOURCES: usize = 5;
    /// Kinds of line tracked at most: lines that differ in more than
    /// their numbers (a stranger's made-up client ids) would otherwise
    /// grow the table without bound; beyond it a new kind is shown and
    /// not tracked.
    const KINDS: usize = 1024;

    /// Whether `line` (which came from `source`, or `""` when unknown)
    /// goes into the log now; if not, it is counted for the summary.
    pub fn shown(&mut self, now: Instant, line: &str, source: &str) -> bool {
        let key = alike_key(line);
        if !self.alike.contains_key(&key) && self.alike.len() >= Self::KINDS {
            return true;
        }
        let alike = self.alike.entry(key).or_insert_with(|| Alike {
            since: now,
            example: line.to_owned(),
            shown: 0,
            hidden: 0,
            sources: BTreeSet::new(),
            others: false,
        });
        if alike.shown < Self::SHOWN {
            alike.shown += 1;
            return true;
        }
        alike.hidden += 1;
        if !source.is_empty() && !alike.sources.contains(source) {
            if alike.sources.len() < Self::SOURCES {
                alike.sources.insert(source.to_owned());
            } else {
                alike.others = true;
            }
        }
        false
    }

    /// The summaries of the windows ended by `now`, one line each (only for
    /// windows that hid lines).
    pub fn due(&mut self, now: Instant) -> Vec<String> {
        let mut summaries = Vec::new();
        self.alike.retain(|_, alike| {
            if now.duration_since(alike.since) < Self::WINDOW {
                return true;
            }
            if alike.hidden > 0 {
                let sources: Vec<&str> = alike.sources.iter().map(String::as_str).collect();
                let from = if sources.is_empty() {
                    String::new()
                } else {
                    format!(" (from {}{})", sources.join(", "), if alike.others { " and others" } else { "" })
                };
                summaries.push(format!(
                    "{} more line(s) like \"{}\" in {} s, not shown{from}",
                    alike.hidden,
                    alike.example,
                    Self::WINDOW.as_secs(),
                ));
            }
            false
        });
        summaries
    }
}

/// What lines alike share: the line with each run of digits as one `#`
/// (`forged-7` and `forged-12` are alike, and so are two time stamps).
fn alike_key(line: &str) -> String {
    let mut key = String::with_capacity(line.len());
    for c in line.chars() {
        if !c.is_ascii_digit() {
            key.push(c);
        } else if !key.ends_with('#') {
            key.push('#');
        }
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_warnings_are_counted_and_said_once_a_window_with_their_sources() {
        let mut repeats = Repeats::default();
        let t0 = std::time::Instant::now();
        let shown = (0..1000)
            .filter(|n| {
                repeats.shown(t0, "Client <unknown> disconnected due to protocol error.", &format!("10.0.0.{}", n % 7))
            })
            .count();
        assert_eq!(shown, 3);
        assert!(repeats.shown(t0, "Error: another thing", ""), "another warning is shown");
        assert!(repeats.due(t0 + Duration::from_secs(59)).is_empty());
        let said = repeats.due(t0 + Repeats::WINDOW);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("997 more line(s) like \"Client <unknown> disconnected"), "{said:?}");
        assert!(said[0].contains("from 10.0.0.0, 10.0.0.3, 10.0.0.4") && said[0].ends_with("and others)"), "{said:?}");
        assert!(repeats.shown(t0 + Repeats::WINDOW, "Client <unknown> disconnected due to protocol error.", ""));
    }

    #[test]
    fn a_line_without_a_source_is_summarised_without_addresses() {
        let mut repeats = Repeats::default();
        let t0 = Instant::now();
        for n in 5..15 {
            repeats.shown(t0, &format!("command \"c-{n}\" refused: the signature does not match"), "");
        }
        let said = repeats.due(t0 + Repeats::WINDOW);
        assert_eq!(
            said,
            vec![r#"7 more line(s) like "command "c-5" refused: the signature does not match" in 60 s, not shown"#]
        );
    }

    #[test]
    fn the_table_of_kinds_is_bounded_and_an_untracked_kind_is_shown() {
        let mut repeats = Repeats::default();
        let t0 = Instant::now();
        for n in 0..Repeats::KINDS + 50 {
            // Made-up client ids: letters only, so that no two are alike.
            let id: String =
                format!("{n:x}").chars().map(|c| char::from(b'g' + c.to_digit(16).unwrap() as u8)).collect();
            assert!(repeats.shown(t0, &format!("client {id} refused"), ""));
        }
        assert_eq!(repeats.alike.len(), Repeats::KINDS);
    }
}
