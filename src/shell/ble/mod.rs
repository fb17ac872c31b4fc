//! Bluetooth LE boards through BlueZ's D-Bus API, spoken with zbus (pure
//! Rust: no C libdbus to build against, docs/boards.md says why). The
//! system bus by default; `DBUS_SYSTEM_BUS_ADDRESS` points it elsewhere
//! (the tests' private bus with a mock BlueZ).
//!
//! - [`scan`]: which boards are in range, for `list-ports`.
//! - [`peripheral`]: a simulated board's side, on the mock BlueZ, for
//!   `boardcast simulate --bluetooth`.
//!
//! The link that reads a board live (connect, notifications into the same
//! driver as serial bytes, reconnection) is still to come (issue 30).

pub mod peripheral;
pub mod scan;
