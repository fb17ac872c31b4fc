//! Probing for a Millennium ChessLink board: it answers `V` with its
//! firmware version (38400 baud, 7-bit odd parity done in software).
//!
//! Only `V` is sent: it changes nothing on the board (a register write
//! would outlive the probe in the board's E2ROM). A board left in its
//! default mode streams its status by itself; a status that decodes is as
//! good a sign as the version, so such a board is recognised even if the
//! version reply is lost among the statuses.

use std::{path::Path, time::Duration};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Probed, open};
use boardcast_core::protocol::{
    BoardInfo, Decoded,
    millennium::{MillenniumDecoder, command::Command},
};

/// Asks `path` for a Millennium board's version, waiting up to `wait`.
pub(super) async fn ask(path: &Path, wait: Duration) -> Probed {
    let mut port = match open(path, 38_400) {
        Ok(port) => port,
        Err(found) => return found,
    };
    if let Err(error) = port.write_all(&Command::SendVersion.encode()).await {
        return Probed::Failed(error.to_string());
    }
    let mut decoder = MillenniumDecoder::new();
    let (mut version, mut status_seen) = (None, false);
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 256];
    while version.is_none() {
        let read = tokio::time::timeout_at(deadline, port.read(&mut buf)).await;
        let n = match read {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => n,
            Ok(Err(error)) => return Probed::Failed(error.to_string()),
        };
        decoder.handle_bytes(&buf[..n]);
        while let Some(decoded) = decoder.poll_decoded() {
            match decoded {
                Decoded::Info(BoardInfo::Version(v)) => version = Some(v),
                Decoded::Sensor(_) => status_seen = true,
                _ => {}
            }
        }
    }
    if version.is_some() || status_seen { Probed::Millennium { version } } else { Probed::NoAnswer }
}
