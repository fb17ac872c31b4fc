//! Bluetooth LE boards through BlueZ's D-Bus API, spoken with zbus (pure
//! Rust: no C libdbus to build against, docs/boards.md says why). The
//! system bus by default; `DBUS_SYSTEM_BUS_ADDRESS` points it elsewhere
//! (the tests' private bus with a mock BlueZ).
//!
//! - [`scan`]: which boards are in range, for `list-ports`.
//! - [`link`]: a configured board read live (`bluetooth = …` in its
//!   table): connected, its notifications handed to the same driver as a
//!   serial board's bytes, what the driver sends written back, and the
//!   connection made again when it drops.
//! - [`bluez`]: the D-Bus calls both make, and reading BlueZ's answers.
//! - [`peripheral`]: a simulated board's side, on the mock BlueZ, for
//!   `boardcast simulate --bluetooth`.

pub mod bluez;
pub mod link;
pub mod peripheral;
pub mod scan;
