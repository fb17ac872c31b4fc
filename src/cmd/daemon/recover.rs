//! Carrying on after a stop or a crash. The captures are the journal: every
//! byte each board sent, with its time, written as it arrived. When the
//! daemon starts, each board's newest capture is replayed through the same
//! code that read it live; if its last game is still in progress, the
//! board goes on from there, recording into the same capture, so that game
//! continues exactly where it was (a power cut, `kill -9`, a panic or a
//! planned restart make no difference). A capture whose games are all over
//! is left as it is and a new one begins.

use std::{
    path::{Path, PathBuf},
    time::{Duration, SystemTime},
};

use tracing::{info, warn};

use boardcast::config::Board;
use boardcast_core::{
    protocol::link::LinkConfig,
    reconstruct::ReconstructorConfig,
    replay::{Resumed, read_capture, resume},
    time::Timestamp,
};

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
}

/// The game in progress in `board`'s newest capture in `dir`, if any.
pub(super) async fn find(
    dir: &Path,
    board: &Board,
    config: &ReconstructorConfig,
    link: LinkConfig,
) -> Option<Recovered> {
    let path = newest_capture(dir, &board.name).await?;
    let text = match tokio::fs::read_to_string(&path).await {
        Ok(text) => text,
        Err(error) => {
            warn!("cannot read {} to resume its game: {error}; starting afresh", path.display());
            return None;
        }
    };
    let capture = match read_capture(&text) {
        Ok(capture) => capture,
        Err(error) => {
            warn!("{}: {error}; not resuming from it", path.display());
            return None;
        }
    };
    if capture.header.board != board.name || capture.header.protocol != board.protocol {
        return None;
    }
    if let Some(error) = &capture.error {
        // A power cut can leave the last line cut short; everything before
        // it stands (and the line is cut off before recording goes on).
        info!("{}: {error}; resuming from the records before it", path.display());
    }
    let started_ms = capture
        .header
        .started_at
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)?;
    let resumed = resume(&capture, config.clone(), link);
    let in_progress = resumed.session.reconstructor().game().is_some_and(|g| g.result.is_none());
    if !in_progress {
        return None;
    }
    // Session time goes on with the wall clock, so that the gap shows as
    // the time it was; never before the last record, should the clock have
    // been set back.
    let wall = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    let elapsed = Duration::from_millis(wall.saturating_sub(started_ms).max(0) as u64);
    let now = Timestamp::ZERO + elapsed;
    let now = if now > resumed.last { now } else { resumed.last + Duration::from_millis(1) };
    Some(Recovered { path, resumed, started_ms, now })
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
