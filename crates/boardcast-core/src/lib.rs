//! The sans-I/O core of boardcast: board bytes in, moves, alerts and
//! publications out.
//!
//! Everything here is plain synchronous Rust. Nothing reads a clock, opens
//! a port or a socket, or spawns a task: callers pass bytes, sensor events
//! and the current [`time::Timestamp`] in and poll what comes out, in the
//! way of quinn-proto's `handle_*(now, …)` / `poll_*()` state machines. The
//! daemon (the `boardcast` crate) moves bytes between the world and these
//! types; replays drive the very same types in virtual time.
//!
//! The data flows through the modules in this order:
//!
//! - [`protocol`]: each board family's wire format, decoded into
//!   [`sensor`] events, and the link logic (start-up, keep-alive) as
//!   bytes to send;
//! - [`capture`]: the sensor capture format (docs/capture-format.md);
//! - [`reconstruct`]: sensor events to moves and arbiter [`alert`]s under
//!   the FIDE Laws, with [`game`] records and PGN;
//! - [`session`]: one board's decoder, reconstructor and clock together,
//!   emitting [`event`]s; [`operator`] commands act on it; [`pair`]
//!   compares a game board with a visually impaired player's mirror board;
//! - [`sink`]: what consumes a board's outputs (the MQTT feed, the PGN
//!   writer's changes, the announcer, the log…), seeing the games only
//!   through a read-only view;
//! - [`publish`]: events to MQTT topics and payloads, guards and the
//!   public delay; [`deliver`] and [`lichess`]: PGN for broadcast sites,
//!   with the players from a round's [`pairings`];
//! - [`replay`]: a capture driven through a session in virtual time;
//! - [`analysis`]: engine analysis for spectators: which position next,
//!   UCI lines, and the gate that holds a result until its position is
//!   public;
//! - [`logins`]: failed log-ins (the broker's, the console's) counted per
//!   address and account, warned about in aggregate, and slowed.
//!
//! Its dependencies are shakmaty, serde and a few small pure crates; CI
//! fails if an async runtime, a broker or a serial-port crate appears in
//! `cargo tree -p boardcast-core`.
//!
//! # The API
//!
//! What other crates (the daemon, the simulator, the tests) use is public;
//! everything else is `pub(crate)`, and `unreachable_pub` keeps it so
//! (CONTRIBUTING.md has the count). The types a caller starts from are
//! re-exported here: a [`BoardSession`] driven with bytes or
//! [`SensorEvent`]s and [`Timestamp`]s, whose [`Output`]s go to
//! [`Sink`]s that see the games through [`Games`]; a board's
//! [`Protocol`] and its [`Family`]; the capture's [`CaptureHeader`] and
//! [`Record`]s.

pub use self::{
    capture::{CaptureHeader, Record},
    logins::{LoginLimits, LoginWarning, Logins},
    protocol::{FAMILIES, Family, Protocol},
    sensor::SensorEvent,
    session::{BoardSession, Output},
    sink::{Games, Sink},
    time::Timestamp,
};

pub mod alert;
pub mod analysis;
pub mod capture;
pub mod deliver;
pub mod event;
pub mod game;
pub mod legal;
pub mod lichess;
pub mod livechess;
pub mod logins;
pub mod names;
pub mod operator;
pub mod pair;
pub mod pairings;
pub mod protocol;
pub mod publish;
pub mod reconstruct;
pub mod replay;
pub mod sensor;
pub mod session;
pub mod sink;
pub mod time;
