//! The Nordic UART service over Bluetooth LE: a serial line in two GATT
//! characteristics, which several boards use (DGT Pegasus, Square Off,
//! iChessOne, ChessUp). The service says nothing about the family: the
//! name a board advertises tells them apart ([`super::Bluetooth`]'s
//! `name_contains`).

/// The service.
pub const SERVICE: &str = "6e400001-b5a3-f393-e0a9-e50e24dcca9e";
/// The characteristic the host writes to.
pub const WRITE: &str = "6e400002-b5a3-f393-e0a9-e50e24dcca9e";
/// The characteristic the board notifies on.
pub const NOTIFY: &str = "6e400003-b5a3-f393-e0a9-e50e24dcca9e";
