//! Carrying on after a stop or a crash. The captures are the journal: every
//! byte each board sent, with its time, written as it arrived. When the
//! daemon starts, each board's newest capture is replayed through the same
//! code that read it live; if its last game is still in progress, the
//! board goes on from there, recording into the same capture, so that game
//! continues exactly where it was (a power cut, `kill -9`, a panic or a
//! planned restart make no difference). A capture whose games are all over
//! is left as it is and a new one begins, with the round and players the
//! operator set in it applied again (`Found::Over`): a restart between
//! rounds keeps them.

use std::{
    collections::BTreeMap,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use tracing::{info, warn};

use boardcast::config::Board;
use boardcast_core::{
    capture::{CaptureHeader, CaptureReader},
    protocol::{Protocol, link::LinkConfig},
    reconstruct::ReconstructorConfig,
    replay::{Resumed, resume_records},
    time::Timestamp,
};

/// Boards resume one at a time.
static RESUMING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// A game in progress found in a board's capture.
pub(super) struct Recovered {
    /// The capture it continues.
    pub(super) path: PathBuf,
    /// The session rebuilt from it.
    pub(super) resumed: Resumed,
    /// Its header's start time, as milliseconds since 1970.
    pub(super) started_ms: i64,
    /// The session time to go on from (now, in the capture's time).
    pub(super) now: Timestamp,
    /// This board's turn to resume: kept until the publisher has caught up
    /// with its republished past (see `board.rs`), so that the next board
    /// waits for that too.
    pub(super) turn: tokio::sync::SemaphorePermit<'static>,
}

/// What a board's newest capture leaves to its next session.
pub(super) enum Found {
    /// A game in progress: the board goes on in the same capture.
    InProgress(Box<Recovered>),
    /// Its games are over: a new capture begins, and the operator's
    /// changes to the next games' tags (round, players) are applied again
    /// (`Resumed::operator_tags`).
    Over {
        /// The capture read.
        path: PathBuf,
        /// Tag → value (empty: removed) the operator set.
        tags: BTreeMap<String, String>,
        /// This board's turn to resume (released when dropped).
        _turn: tokio::sync::SemaphorePermit<'static>,
    },
}

/// The game in progress in `board`'s newest capture in `dir`, or the tags
/// its next capture carries over; `None` when it has no capture to read.
pub(super) async fn find(dir: &Path, board: &Board, config: &ReconstructorConfig, link: LinkConfig) -> Option<Found> {
    let path = newest_capture(dir, &board.name).await?;
    // The capture is read and replayed line by line on a blocking thread:
    // a day's capture is never in memory at once, and the runtime's workers
    // go on serving the boards that are already running. One board at a
    // time: a hundred boards resuming at once on a hundred threads left
    // the restarted daemon with a hundred threads and the allocator's
    // memory of each (RELIABILITY.md, "Long day").
    let turn = RESUMING.acquire().await.ok()?;
    let (name, protocol, config) = (board.name.clone(), board.protocol, config.clone());
    let read_path = path.clone();
    let span = tracing::Span::current();
    let read = tokio::task::spawn_blocking(move || {
        span.in_scope(|| read_and_resume(&read_path, &name, protocol, config, link))
    });
    let (resumed, started_ms, header) = match read.await {
        Ok(found) => found?,
        Err(failure) => {
            // A bug (the panic is printed above): the capture stays as it
            // is on disk, and the board starts a new one.
            warn!("resuming from {} failed: {failure}; starting afresh", path.display());
            return None;
        }
    };
    let in_progress = resumed.session.reconstructor().game().is_some_and(|g| g.result.is_none());
    if !in_progress {
        let tags = resumed.operator_tags(&header, &board.tags);
        return Some(Found::Over { path, tags, _turn: turn });
    }
    // Session time goes on with the wall clock, so that the gap shows as
    // the time it was; never before the last record, should the clock have
    // been set back.
    let wall = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let elapsed = Duration::from_millis(wall.saturating_sub(started_ms).max(0) as u64);
    let now = Timestamp::ZERO + elapsed;
    let now = if now > resumed.last { now } else { resumed.last + Duration::from_millis(1) };
    Some(Found::InProgress(Box::new(Recovered { path, resumed, started_ms, now, turn })))
}

/// Replays the capture at `path` into a resumed session, with its header's
/// start time (milliseconds since 1970) and the header; `None` when it is
/// not this board's or cannot be read (said in the log).
fn read_and_resume(
    path: &Path,
    board: &str,
    protocol: Protocol,
    config: ReconstructorConfig,
    link: LinkConfig,
) -> Option<(Resumed, i64, CaptureHeader)> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) => {
            warn!("cannot read {} to resume its game: {error}; starting afresh", path.display());
            return None;
        }
    };
    let mut failure = None;
    let lines = lines(BufReader::new(file), &mut failure);
    let reader = match CaptureReader::from_lines(lines) {
        Ok(reader) => reader,
        Err(error) => {
            warn!("{}: {error}; not resuming from it", path.display());
            return None;
        }
    };
    let header = reader.header().clone();
    if header.board != board || header.protocol != protocol {
        return None;
    }
    let started_ms = header
        .started_at
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)?;
    let mut error = None;
    let records = reader.map_while(|record| record.map_err(|e| error = Some(e)).ok());
    let resumed = resume_records(&header, records, config, link);
    if let Some(failure) = failure {
        warn!("cannot read {} to its end: {failure}; resuming from the records before", path.display());
    }
    if let Some(error) = &error {
        // A power cut can leave the last line cut short; everything before
        // it stands (and the line is cut off before recording goes on).
        info!("{}: {error}; resuming from the records before it", path.display());
    }
    Some((resumed, started_ms, header))
}

/// The lines of `reader` without their line endings. Bytes that are not
/// UTF-8 become U+FFFD, so such a line fails as a record (and the capture
/// is read up to it) instead of the whole file being refused. A read error
/// ends the lines and is kept in `failure`.
fn lines<'a>(reader: impl BufRead + 'a, failure: &'a mut Option<std::io::Error>) -> impl Iterator<Item = String> + 'a {
    reader.split(b'\n').map_while(move |line| match line {
        Ok(mut bytes) => {
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            Some(String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
        }
        Err(error) => {
            *failure = Some(error);
            None
        }
    })
}

/// The newest `<board>-….jsonl` in `dir` (by modification time).
async fn newest_capture(dir: &Path, board: &str) -> Option<PathBuf> {
    let mut entries = tokio::fs::read_dir(dir).await.ok()?;
    let prefix = format!("{}-", boardcast_core::names::component(board));
    let mut newest: Option<(SystemTime, PathBuf)> = None;
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        // `<board>-20261121T103126[-n].jsonl`: the stamp keeps board "b1"
        // apart from a board called "b1-2".
        let Some(stamp) = name.strip_prefix(&prefix) else { continue };
        let stamped =
            stamp.len() > 9 && stamp.as_bytes()[..8].iter().all(u8::is_ascii_digit) && stamp.as_bytes()[8] == b'T';
        if !stamped || !name.ends_with(".jsonl") {
            continue;
        }
        let Ok(modified) = entry.metadata().await.and_then(|m| m.modified()) else { continue };
        if newest.as_ref().is_none_or(|(t, _)| modified > *t) {
            newest = Some((modified, entry.path()));
        }
    }
    newest.map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Line endings of either kind are dropped, and a line that is not
    /// UTF-8 is still a line (it then fails as a record, and the capture
    /// is resumed up to it) instead of ending the reading.
    #[test]
    fn lines_keep_going_past_bytes_that_are_not_utf8() {
        let bytes: &[u8] = b"{\"capture\": 1}\r\n{\"t_us\": 1, \"rx\": \"\xff\"}\nlast";
        let mut failure = None;
        let read: Vec<String> = lines(bytes, &mut failure).collect();
        assert_eq!(read, ["{\"capture\": 1}", "{\"t_us\": 1, \"rx\": \"\u{fffd}\"}", "last"]);
        assert!(failure.is_none());
    }

    /// A capture cut off in the middle of a line (a power cut) resumes with
    /// every record before the cut, read line by line from the file.
    #[test]
    fn a_capture_cut_mid_line_resumes_with_every_record_before_the_cut() {
        let dir = std::env::temp_dir().join(format!("boardcast-recover-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b1-20261127T030000.jsonl");
        let text = concat!(
            r#"{"capture": 1, "protocol": "events", "board": "b1", "started_at": "2026-11-27T03:00:00Z"}"#,
            "\n",
            r#"{"t_us": 0, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}"#,
            "\n",
            r#"{"t_us": 1000000, "square": "e2", "piece": null}"#,
            "\n",
            r#"{"t_us": 1200000, "square": "e4", "piece": "P"}"#,
            "\n",
            r#"{"t_us": 5000000, "square": "e7", "piece": null}"#,
            "\n",
            r#"{"t_us": 9000000, "squ"#,
        );
        std::fs::write(&path, text).unwrap();
        let config = ReconstructorConfig::default();
        let (resumed, started_ms, _) =
            read_and_resume(&path, "b1", Protocol::EVENTS, config, LinkConfig::default()).expect("resumed");
        assert_eq!(resumed.records, 4);
        assert_eq!(started_ms, 1_795_748_400_000);
        let game = resumed.session.reconstructor().game().expect("a game");
        assert_eq!(game.plies.len(), 1, "e4 is kept");
        assert!(
            read_and_resume(&path, "b2", Protocol::EVENTS, ReconstructorConfig::default(), LinkConfig::default())
                .is_none()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
