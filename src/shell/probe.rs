//! Asking a serial port what is behind it: the USB IDs boards use are
//! generic bridge chips, so a board is only ever identified by speaking its
//! protocol. Nothing asked changes anything on a board. A port another
//! program has open is left alone (see `holders.rs`).
//!
//! [`probe`] is one loop over the families' probes (data on each
//! `Family`, run by the core's `protocol::probe`): in rank order, the
//! families that only listen first (Certabo and Sentio boards stream by
//! themselves, and are listened for together), then each family that is
//! asked (a Millennium board for its version, a DGT board for its version
//! and serial number).

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

use super::holders::{Holder, holders};
use boardcast_core::protocol::{
    Family,
    probe::{Found, Probing, rounds},
};

/// The ports this process is asking or opening now, by their device
/// (links resolved): the daemon's search for boards not configured and a
/// board's search by serial number each claim a port before asking it, so
/// that they never ask one port at once (as root, the exclusive open does
/// not keep a second opener out, and each would read the other's answers).
static CLAIMED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// A port claimed by this process until dropped ([`claim`]).
#[derive(Debug)]
pub struct Claim(PathBuf);

/// Claims `path` for asking or opening it; `None` while another task of
/// this process has it.
pub fn claim(path: &Path) -> Option<Claim> {
    let device = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let mut claimed = CLAIMED.lock().expect("not poisoned");
    if claimed.contains(&device) {
        return None;
    }
    claimed.push(device.clone());
    Some(Claim(device))
}

impl Drop for Claim {
    fn drop(&mut self) {
        CLAIMED.lock().expect("not poisoned").retain(|d| *d != self.0);
    }
}

/// What a probe found on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probed {
    /// A board answered.
    Board(Found),
    /// Nothing answered as a board would.
    NoAnswer,
    /// Another program has the port open (perhaps the daemon itself); it
    /// was left alone.
    InUse {
        /// Who, when `/proc` tells (empty when only the exclusive open
        /// failing told).
        by: Vec<Holder>,
    },
    /// The port could not be opened.
    Failed(String),
}

/// Asks `path` what board it has, waiting up to `wait` for each round of
/// probes.
pub async fn probe(path: &Path, wait: Duration) -> Probed {
    probe_for(path, wait, &rounds()).await
}

/// Asks `path` whether a board of `family` is there (the daemon finding a
/// board by its serial number).
pub async fn probe_family(path: &Path, wait: Duration, family: &'static Family) -> Probed {
    probe_for(path, wait, &[vec![family]]).await
}

async fn probe_for(path: &Path, wait: Duration, rounds: &[Vec<&'static Family>]) -> Probed {
    let by = holders(path);
    if !by.is_empty() {
        return Probed::InUse { by };
    }
    for round in rounds {
        match probe_round(path, wait, round).await {
            Probed::NoAnswer => {}
            found => return found,
        }
    }
    Probed::NoAnswer
}

/// One opening of the port: the round's asks sent, the answers read until
/// one family's probe is done or `wait` is over.
async fn probe_round(path: &Path, wait: Duration, families: &[&'static Family]) -> Probed {
    let Some(first) = families.first() else { return Probed::NoAnswer };
    let mut port = match open(path, first.baud) {
        Ok(port) => port,
        Err(found) => return found,
    };
    let mut probes: Vec<Probing> = families.iter().map(|f| Probing::new(f)).collect();
    let ask: Vec<u8> = probes.iter().flat_map(Probing::ask).collect();
    if !ask.is_empty()
        && let Err(error) = port.write_all(&ask).await
    {
        return Probed::Failed(error.to_string());
    }
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 512];
    while !probes.iter().any(Probing::is_done) {
        let read = tokio::time::timeout_at(deadline, port.read(&mut buf)).await;
        let n = match read {
            Ok(Ok(0)) | Err(_) => break,
            Ok(Ok(n)) => n,
            Ok(Err(error)) => return Probed::Failed(error.to_string()),
        };
        for probe in &mut probes {
            probe.handle_bytes(&buf[..n]);
        }
    }
    let done = probes.iter().find(|p| p.is_done());
    match done.or_else(|| probes.iter().find(|p| p.found().is_some())).and_then(Probing::found) {
        Some(found) => Probed::Board(found),
        None => Probed::NoAnswer,
    }
}

/// Opens `path` at `baud`, 8N1, exclusively (so that nothing else reads the
/// answers while probing).
fn open(path: &Path, baud: u32) -> Result<SerialStream, Probed> {
    let opened = tokio_serial::new(path.to_string_lossy(), baud)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .open_native_async();
    let port = match opened {
        Ok(port) => port,
        Err(error) if is_busy(&error) => return Err(Probed::InUse { by: Vec::new() }),
        Err(error) => return Err(Probed::Failed(error.to_string())),
    };
    let mut port = port;
    if port.set_exclusive(true).is_err() {
        return Err(Probed::InUse { by: Vec::new() });
    }
    Ok(port)
}

fn is_busy(error: &tokio_serial::Error) -> bool {
    error.to_string().contains("busy") || error.to_string().contains("Device or resource busy")
}

impl std::fmt::Display for Probed {
    /// What `list-ports` says about the port.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Board(found) => write!(f, "{found}"),
            Self::NoAnswer => f.write_str("no board answered"),
            Self::InUse { by } if by.is_empty() => f.write_str("in use by another program (left alone)"),
            Self::InUse { by } => {
                let names: Vec<String> = by.iter().map(ToString::to_string).collect();
                write!(f, "in use by {} (left alone)", names.join(", "))
            }
            Self::Failed(error) => write!(f, "cannot open: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_is_claimed_by_one_task_at_a_time_and_freed_when_dropped() {
        let path = Path::new("/nonexistent/boardcast-claim-test");
        let first = claim(path).expect("free");
        assert!(claim(path).is_none(), "claimed already");
        assert!(claim(Path::new("/nonexistent/boardcast-claim-other")).is_some(), "another port is free");
        drop(first);
        assert!(claim(path).is_some(), "free again");
    }
}
