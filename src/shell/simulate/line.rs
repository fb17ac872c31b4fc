//! What a simulated board is reached through: a pseudo-terminal (a board
//! on a cable, or Bluetooth Classic's serial port) or a Bluetooth LE link
//! on the mock BlueZ. The simulation asks the same three things of both:
//! what the host did, whether a host listens, and to send bytes.

use std::io;

use crate::shell::{
    ble::peripheral::{self, Peripheral},
    pty::Pty,
};

/// A simulated board's line to the host.
#[derive(Debug)]
pub(super) enum Line {
    /// A pseudo-terminal.
    Pty(Pty),
    /// A board on the mock BlueZ.
    Ble(Box<Peripheral>),
}

/// What the host did.
#[derive(Debug)]
pub(super) enum Heard {
    /// It wrote these bytes.
    Bytes(Vec<u8>),
    /// Nobody has the pseudo-terminal open (asked again a little later).
    Nobody,
    /// The host's Bluetooth link went away: the board's session with it is
    /// over.
    Left,
    /// The host connected, or started or stopped listening.
    Changed,
}

impl Line {
    /// Whether a host listens: has the device open, or is connected and
    /// notified.
    pub(super) fn host_present(&self) -> bool {
        match self {
            Self::Pty(pty) => pty.host_present(),
            Self::Ble(board) => board.host_present(),
        }
    }

    /// Waits for the host to do something.
    pub(super) async fn heard(&mut self) -> io::Result<Heard> {
        match self {
            Self::Pty(pty) => {
                let mut buf = [0u8; 256];
                Ok(match pty.read(&mut buf).await? {
                    Some(n) => Heard::Bytes(buf[..n].to_vec()),
                    None => Heard::Nobody,
                })
            }
            Self::Ble(board) => {
                let was_connected = board.connected();
                Ok(match board.heard().await.map_err(io::Error::other)? {
                    peripheral::Heard::Wrote(bytes) => Heard::Bytes(bytes),
                    peripheral::Heard::Presence if was_connected && !board.connected() => Heard::Left,
                    peripheral::Heard::Presence => Heard::Changed,
                })
            }
        }
    }

    /// Sends what the board says: written to the terminal, or notified.
    pub(super) async fn send(&self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Pty(pty) => pty.write_all(bytes).await,
            Self::Ble(board) => board.notify(bytes).await.map_err(io::Error::other),
        }
    }

    /// The board drops its host, if it can (a cable cannot be dropped by
    /// the board: there it only falls silent). `true` when dropped.
    pub(super) async fn drop_host(&self) -> io::Result<bool> {
        match self {
            Self::Pty(_) => Ok(false),
            Self::Ble(board) if board.connected() => {
                board.drop_link().await.map_err(io::Error::other)?;
                Ok(true)
            }
            Self::Ble(_) => Ok(false),
        }
    }
}
