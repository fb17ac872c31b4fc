//! Probing for a board that streams its reports by itself (Certabo, Sentio
//! format, 38400 baud): listen, asking nothing, and look for a whole report
//! line. Its count of numbers tells the family: 320 tags for a Certabo
//! board, 8 rank bitmasks for a Sentio-format one.

use std::{path::Path, time::Duration};

use tokio::io::AsyncReadExt;

use super::{Probed, open};
use boardcast_core::protocol::certabo::line::{Line, LineReader, OCCUPANCY_NUMBERS, TAG_NUMBERS};

/// Listens to `path` for up to `wait`.
pub(super) async fn listen(path: &Path, wait: Duration) -> Probed {
    let mut port = match open(path, 38_400) {
        Ok(port) => port,
        Err(found) => return found,
    };
    let mut lines = LineReader::new();
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 512];
    loop {
        let read = tokio::time::timeout_at(deadline, port.read(&mut buf)).await;
        let Ok(Ok(n)) = read else { return Probed::NoAnswer };
        if n == 0 {
            return Probed::NoAnswer;
        }
        lines.push(&buf[..n]);
        // The first line is usually cut (the board was mid-report when the
        // port opened): it is junk and the next one decides.
        while let Some(line) = lines.next_line() {
            match line {
                Line::Numbers(numbers) if numbers.len() == TAG_NUMBERS => return Probed::Certabo,
                Line::Numbers(numbers) if numbers.len() == OCCUPANCY_NUMBERS => return Probed::Sentio,
                _ => {}
            }
        }
    }
}
