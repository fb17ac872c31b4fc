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
    sync::mpsc,
};

use crate::{
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

/// Writes records until the channel closes: each batch at once, synced to
/// the disk every second. Returns the first write error (the daemon goes on
/// without recording rather than stop reading the board).
pub async fn run(mut writer: BufWriter<File>, mut records: mpsc::UnboundedReceiver<Record>) -> std::io::Result<()> {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut unsynced = false;
    let mut lines = String::new();
    // Two tasks record (the driver what it is given, the port what it
    // sends), each stamping its own records: a record stamped a moment
    // before one already written is written at that one's time, since a
    // capture's times never go back.
    let mut last = Timestamp::ZERO;
    loop {
        tokio::select! {
            record = records.recv() => match record {
                Some(record) => {
                    push_line(&mut lines, &record, &mut last);
                    // Whatever else is waiting goes in the same write.
                    while let Ok(record) = records.try_recv() {
                        push_line(&mut lines, &record, &mut last);
                    }
                    writer.write_all(lines.as_bytes()).await?;
                    writer.flush().await?;
                    lines.clear();
                    unsynced = true;
                }
                None => break,
            },
            _ = tick.tick() => {
                if unsynced {
                    writer.get_ref().sync_data().await?;
                    unsynced = false;
                }
            }
        }
    }
    writer.flush().await?;
    writer.get_ref().sync_data().await
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
