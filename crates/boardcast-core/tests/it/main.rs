//! The core's integration tests, in one binary so that the suite links
//! once. They need the core and the simulated boards only: no broker, no
//! serial port, no TLS stack is built to run them.
//!
//! - [`rules`] and [`alerts`]: one test per article of the Laws and per
//!   alert kind, in virtual time;
//! - [`corpus`]: every real game of the fixtures, replayed with a hall's
//!   noise in every capture form, comes back move for move;
//! - [`real_captures`]: the real DGT recordings replay to their games;
//! - [`millennium`], [`certabo`], [`sentio`]: each board family from bytes
//!   to moves; [`ble`]: the Bluetooth LE families (Chessnut, DGT Pegasus);
//!   [`ble_families`]: the others (Square Off, iChessOne, ChessUp), and
//!   every BLE message cut at every byte;
//! - [`properties`]: decoders and the reconstructor under any input;
//! - [`pgn`]: PGN as written, and read back as the games written;
//! - [`dead`]: dead positions (5.2.2) against a published labelled set;
//! - [`clock_display`]: a DGT 3000 showing moves, byte for byte;
//! - [`outage`]: a board away and back, with moves missing or not;
//! - [`pair`]: a visually impaired player's board mirroring the game board;
//! - [`pairings`]: a real round's tournament report and a CSV, read into
//!   every board's tags;
//! - [`payloads`]: the MQTT payload types against docs/mqtt.md;
//! - [`livechess`]: a game as DGT LiveChess's REST, WebSocket and Cloud
//!   JSON show it, in LiveChess's shapes.
//!
//! The fixtures are the workspace's `tests/fixtures` (see their SOURCE.md).

mod support;

mod alerts;
mod ble;
mod ble_families;
mod certabo;
mod certabo_calibrate;
mod clock_display;
mod corpus;
mod dead;
mod livechess;
mod millennium;
mod outage;
mod pair;
mod pairings;
mod payloads;
mod pgn;
mod properties;
mod public;
mod real_captures;
mod rules;
mod sentio;
