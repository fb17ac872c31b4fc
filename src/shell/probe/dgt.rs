//! Probing for a DGT board: it answers the version and serial-number
//! requests (9600 baud).

use std::{path::Path, time::Duration};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{Probed, open};
use crate::shell::holders::holders;
use boardcast_core::protocol::{
    BoardInfo, Decoded,
    dgt::{DgtDecoder, command::Command},
};

/// Probes `path` for a DGT board, waiting up to `wait` for its answers.
pub async fn probe_dgt(path: &Path, wait: Duration) -> Probed {
    let by = holders(path);
    if !by.is_empty() {
        return Probed::InUse { by };
    }
    let mut port = match open(path, 9600) {
        Ok(port) => port,
        Err(found) => return found,
    };
    let request = [Command::SendVersion.bytes(), Command::SendSerialNumber.bytes()].concat();
    if let Err(error) = port.write_all(&request).await {
        return Probed::Failed(error.to_string());
    }
    let mut decoder = DgtDecoder::new();
    let (mut serial, mut version) = (None, None);
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 256];
    while serial.is_none() || version.is_none() {
        let read = tokio::time::timeout_at(deadline, port.read(&mut buf)).await;
        let Ok(Ok(n)) = read else { break };
        if n == 0 {
            break;
        }
        decoder.handle_bytes(&buf[..n]);
        while let Some(decoded) = decoder.poll_decoded() {
            match decoded {
                Decoded::Info(BoardInfo::Serial(s)) => serial = Some(s),
                Decoded::Info(BoardInfo::Version(v)) => version = Some(v),
                _ => {}
            }
        }
    }
    if serial.is_none() && version.is_none() { Probed::NoAnswer } else { Probed::Dgt { serial, version } }
}
