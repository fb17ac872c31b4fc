//! Recording: every byte a board sends and receives, with times, written as
//! a capture (format v1) so that any field problem can be replayed exactly,
//! and so that the daemon can rebuild its games after a crash (see
//! `recover.rs`).
//!
//! What arrives is written to the file at once, whole lines only, in one
//! write per batch: a daemon killed outright loses nothing the operating
//! system has been given. The file is pushed to the disk once a second: a
//! power cut loses at most the last second, and at worst leaves a last line
//! cut short, which the capture reader reports and replays everything
//! before (and which is cut off before a resumed daemon appends to it).

use std::{path::PathBuf, time::Duration};

use tokio::{
    fs::{File, OpenOptions},
    io::{AsyncWriteExt, BufWriter},
    sync::{mpsc, oneshot},
};

use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    time::Timestamp,
};

/// Bytes in or out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Received from the board.
    Rx(Vec<u8>),
    /// Sent to the board.
    Tx(Vec<u8>),
}

impl Recorded {
    /// The capture record for these bytes at `t`.
    pub fn at(self, t: Timestamp) -> Record {
        let body = match self {
            Self::Rx(bytes) => RecordBody::Rx(bytes),
            Self::Tx(bytes) => RecordBody::Tx(bytes),
        };
        Record { t, body }
    }
}

/// Creates the capture file (never overwriting one) and writes its header.
///
/// # Errors
///
/// When the folder cannot be created or the file cannot be written.
pub async fn create(
    dir: &std::path::Path,
    name: &str,
    header: &CaptureHeader,
) -> std::io::Result<(PathBuf, BufWriter<File>)> {
    tokio::fs::create_dir_all(dir).await?;
    let mut attempt = 0;
    loop {
        let suffix = if attempt == 0 { String::new() } else { format!("-{attempt}") };
        let path = dir.join(format!("{name}{suffix}.jsonl"));
        match OpenOptions::new().write(true).create_new(true).open(&path).await {
            Ok(file) => {
                let mut writer = BufWriter::new(file);
                writer.write_all(format_header(header).as_bytes()).await?;
                writer.write_all(b"\n").await?;
                writer.flush().await?;
                return Ok((path, writer));
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && attempt < 1000 => attempt += 1,
            Err(error) => return Err(error),
        }
    }
}

/// Opens an existing capture to add to it (a resumed game), cutting off a
/// last line that a power cut left unfinished.
///
/// # Errors
///
/// When the file cannot be read or written.
pub async fn append(path: &std::path::Path) -> std::io::Result<BufWriter<File>> {
    let text = tokio::fs::read(path).await?;
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let file = OpenOptions::new().write(true).open(path).await?;
    if whole < text.len() {
        file.set_len(whole as u64).await?;
    }
    let mut file = file;
    tokio::io::AsyncSeekExt::seek(&mut file, std::io::SeekFrom::End(0)).await?;
    Ok(BufWriter::new(file))
}

/// What the recorder is given: records, and markers that ask to be told
/// once every record before them is in the operating system's hands.
#[derive(Debug)]
pub enum ToRecorder {
    /// A record to write.
    Record(Record),
    /// Told once the records before it are written (or wait in memory for
    /// a disk that refuses them: see [`run`]).
    Written(tokio::sync::oneshot::Sender<()>),
}

impl From<Record> for ToRecorder {
    fn from(record: Record) -> Self {
        Self::Record(record)
    }
}

/// Records waiting for a disk that refuses them, at most: some days of a
/// board's traffic. Beyond it the oldest are let go, and the log says how
/// many.
const BACKLOG_MAX_BYTES: usize = 64 << 20;

/// Writes records until the channel closes: each batch at once, synced to
/// the disk every second. A [`ToRecorder::Written`] marker is answered once
/// the records before it have been written, which is what lets the driver
/// hold a board's outputs until its input is in the capture (the capture is
/// the record everything else is derived from: a daemon killed at any
/// moment has never published more than its captures hold).
///
/// A write that fails (a full disk, a USB stick pulled out) does not end
/// the recording: the file is cut back to its last whole line, the records
/// wait in memory, and every second the write is tried again, so the
/// capture is complete again once the disk has room (the log says when it
/// stopped and when it caught up). Markers are answered meanwhile without
/// waiting for the disk: a full disk must not stop the games and the feed,
/// so for that time the capture is behind them (docs/live-boards.md).
/// Returns the error only when the file cannot be written at the end, with
/// records still waiting.
pub async fn run(
    path: &std::path::Path,
    writer: BufWriter<File>,
    mut records: mpsc::UnboundedReceiver<ToRecorder>,
) -> std::io::Result<()> {
    // `create` and `append` flush before handing the writer over, so
    // nothing is left in its buffer; writing to the file directly lets a
    // failed write be undone to a known length.
    let mut file = writer.into_inner();
    let mut good = file.metadata().await?.len();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut unsynced = false;
    let mut lines = String::new();
    let mut failing: Option<std::io::Error> = None;
    let mut dropped = 0usize;
    // Two tasks record (the driver what it is given, the port what it
    // sends), each stamping its own records: a record stamped a moment
    // before one already written is written at that one's time, since a
    // capture's times never go back.
    let mut last = Timestamp::ZERO;
    let mut waiting = Vec::new();
    loop {
        tokio::select! {
            message = records.recv() => match message {
                Some(message) => {
                    take(message, &mut lines, &mut last, &mut waiting);
                    // Whatever else is waiting goes in the same write.
                    while let Ok(message) = records.try_recv() {
                        take(message, &mut lines, &mut last, &mut waiting);
                    }
                    if failing.is_some() {
                        dropped += trim_backlog(&mut lines);
                        answer(&mut waiting);
                        continue;
                    }
                }
                None => break,
            },
            _ = tick.tick() => {
                if failing.is_none() {
                    if unsynced {
                        unsynced = false;
                        if let Err(error) = file.sync_data().await {
                            tracing::warn!("cannot push {} to the disk: {error}; trying again in a second", path.display());
                        }
                    }
                    continue;
                }
            }
        }
        if lines.is_empty() {
            answer(&mut waiting);
            continue;
        }
        let written = write_lines(&mut file, &mut good, &lines).await;
        answer(&mut waiting);
        match written {
            Ok(()) => {
                lines.clear();
                unsynced = true;
                if failing.take().is_some() {
                    tracing::warn!(
                        "recording resumed: {} is complete again{}",
                        path.display(),
                        if dropped == 0 {
                            String::new()
                        } else {
                            format!(" but for {dropped} bytes of the oldest records, which did not fit in memory")
                        }
                    );
                    dropped = 0;
                }
            }
            Err(error) => {
                if failing.is_none() {
                    tracing::error!(
                        "recording paused: cannot write {}: {error}; the records wait in memory and are written as soon as the disk takes them (free some space); the board is still read and its games still written",
                        path.display()
                    );
                }
                failing = Some(error);
            }
        }
    }
    if !lines.is_empty() {
        write_lines(&mut file, &mut good, &lines).await?;
    }
    file.sync_data().await
}

/// Appends `lines` at `good`, the length of the file's whole lines; on an
/// error the file is cut back there so that a retry never leaves half a
/// line in the capture.
async fn write_lines(file: &mut File, good: &mut u64, lines: &str) -> std::io::Result<()> {
    use tokio::io::AsyncSeekExt;
    let result = async {
        file.seek(std::io::SeekFrom::Start(*good)).await?;
        file.write_all(lines.as_bytes()).await?;
        file.flush().await
    }
    .await;
    match result {
        Ok(()) => {
            *good += lines.len() as u64;
            Ok(())
        }
        Err(error) => {
            // Best effort: if even this fails, the next write starts at
            // `good` anyway and overwrites the partial line.
            let _ = file.set_len(*good).await;
            Err(error)
        }
    }
}

/// Lets the oldest whole lines go when the backlog is over its bound;
/// returns how many bytes went.
fn trim_backlog(lines: &mut String) -> usize {
    if lines.len() <= BACKLOG_MAX_BYTES {
        return 0;
    }
    let over = lines.len() - BACKLOG_MAX_BYTES / 2;
    // Cut after a newline, which is always a character boundary.
    let cut = lines.as_bytes()[over..].iter().position(|&b| b == b'\n').map_or(lines.len(), |i| over + i + 1);
    lines.drain(..cut);
    cut
}

/// Adds a record's line to the batch, or the marker to those waiting for it.
fn take(message: ToRecorder, lines: &mut String, last: &mut Timestamp, waiting: &mut Vec<oneshot::Sender<()>>) {
    match message {
        ToRecorder::Record(record) => push_line(lines, &record, last),
        ToRecorder::Written(marker) => waiting.push(marker),
    }
}

/// Tells every marker waiting that the records before it are written.
fn answer(waiting: &mut Vec<oneshot::Sender<()>>) {
    for marker in waiting.drain(..) {
        let _ = marker.send(());
    }
}

fn push_line(lines: &mut String, record: &Record, last: &mut Timestamp) {
    *last = (*last).max(record.t);
    if record.t < *last {
        lines.push_str(&format_record(&Record { t: *last, body: record.body.clone() }));
    } else {
        lines.push_str(&format_record(record));
    }
    lines.push('\n');
}
