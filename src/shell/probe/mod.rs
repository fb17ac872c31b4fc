//! Asking a serial port what is behind it: the USB IDs boards use are
//! generic bridge chips, so a board is only ever identified by speaking its
//! protocol. Nothing asked changes anything on a board. A port another
//! program has open is left alone (see `holders.rs`).
//!
//! [`probe`] tries each family in turn: first it listens (Certabo and
//! Sentio boards stream by themselves, [`stream`]), then it asks for a
//! Millennium board's version ([`millennium`]), then for a DGT board's
//! version and serial number ([`dgt`]).

mod dgt;
mod millennium;
mod stream;

use std::{path::Path, time::Duration};

use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

pub use self::dgt::probe_dgt;
use super::holders::{Holder, holders};

/// What a probe found on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probed {
    /// A DGT board answered.
    Dgt {
        /// Its serial number.
        serial: Option<String>,
        /// Its firmware version.
        version: Option<String>,
    },
    /// A Millennium ChessLink board answered.
    Millennium {
        /// Its firmware version.
        version: Option<String>,
    },
    /// A Certabo board is streaming its reports.
    Certabo,
    /// An occupancy-only board is streaming Sentio-format reports.
    Sentio,
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

/// Asks `path` what board it has, waiting up to `wait` for each family's
/// answer.
pub async fn probe(path: &Path, wait: Duration) -> Probed {
    let by = holders(path);
    if !by.is_empty() {
        return Probed::InUse { by };
    }
    match stream::listen(path, wait).await {
        Probed::NoAnswer => {}
        found => return found,
    }
    match millennium::ask(path, wait).await {
        Probed::NoAnswer => {}
        found => return found,
    }
    probe_dgt(path, wait).await
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
            Self::Dgt { serial, version } => {
                f.write_str("DGT board")?;
                if let Some(serial) = serial {
                    write!(f, ", serial {serial}")?;
                }
                if let Some(version) = version {
                    write!(f, ", firmware {version}")?;
                }
                Ok(())
            }
            Self::Millennium { version: Some(version) } => write!(f, "Millennium ChessLink board, firmware {version}"),
            Self::Millennium { version: None } => f.write_str("Millennium ChessLink board"),
            Self::Certabo => f.write_str("Certabo board (RFID)"),
            Self::Sentio => f.write_str("occupancy-only board (Sentio format)"),
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
