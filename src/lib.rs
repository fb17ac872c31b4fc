//! boardcast, the daemon: the async shell around `boardcast-core` (serial
//! ports, the MQTT broker and client, files, HTTP, signals), the
//! configuration and the operator accounts.
//!
//! The moves, alerts and publications themselves are computed by
//! `boardcast-core`, which never does I/O; this crate only moves bytes and
//! messages between the world and it.
pub mod accounts;
pub mod config;
pub mod shell;
