//! The async shell: tokio tasks that move bytes and messages between the
//! world and the sans-I/O core, and decide nothing themselves.
//!
//! - [`clock`]: the one place where session time meets the machine's clock.
//! - [`driver`]: the task that owns a board's [`BoardSession`], feeding it
//!   inputs and firing its deadlines.
//! - [`files`]: output files replaced whole, never seen half-written.
//! - [`ports`]: the machine's serial ports and the USB IDs behind them, read
//!   from sysfs.
//! - [`holders`]: which programs have a port open, so that probes leave
//!   their boards alone.
//! - [`probe`]: what answers on a port (boards are identified by protocol,
//!   never by USB IDs alone).
//! - [`port`]: a board's serial port: open, read, write, reconnect.
//! - [`record`]: every byte in and out written as a capture.
//! - [`replay`]: a capture played into a driver at recorded speed (or
//!   faster), exactly as a live board's bytes would arrive.
//! - [`pty`], [`simulate`]: a capture played as a live board behind a
//!   pseudo-terminal, for tests, the demo and users without hardware.
//! - [`repeats`]: log lines alike counted and summarised, so that a
//!   flood of them cannot fill the disk.
//! - [`supervise`]: a board's tasks started again after a failure, without
//!   touching the other boards.
//! - [`mqtt`]: the publisher task, the commands listener and the embedded
//!   broker.
//! - [`key`]: the operator key file, read and created.
//! - [`http`]: the display pages, served from the binary, with
//!   `flags` (the FIDE federations' flags).
//! - [`console`]: the operator console's log-in, sessions and commands
//!   signed on the server (`/api/`); [`board_files`]: each board's capture
//!   file and latest log lines, which its hall offers.
//! - [`speech`]: a board's announcements spoken by a configured command.
//! - [`analysis`]: the engine pool: UCI engines analysing the boards'
//!   positions for the public tree.
//! - [`ble`]: Bluetooth LE boards through BlueZ (so far: which are in
//!   range).
//!
//! [`BoardSession`]: boardcast_core::session::BoardSession

pub mod analysis;
pub mod ble;
pub mod board_files;
pub mod calibrate;
pub mod clock;
pub mod console;
pub mod driver;
pub mod files;
mod flags;
pub mod holders;
pub mod http;
pub mod key;
pub mod lichess;
pub mod livechess;
pub mod mqtt;
pub mod port;
pub mod ports;
pub mod probe;
pub mod pty;
pub mod record;
pub mod repeats;
pub mod replay;
pub mod simulate;
pub mod speech;
pub mod supervise;
