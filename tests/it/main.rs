//! The daemon's integration tests, in one binary so that the suite links
//! once. They run the real `boardcast` binary against simulated boards
//! behind pseudo-terminals, real MQTT brokers on free ports, real files and
//! a real browser. (The core's tests are in crates/boardcast-core/tests.)
//!
//! - [`live`], [`mixed_hall`], [`paths`], [`recovery`]: boards in a hall,
//!   unplugged, replugged, a full disk, a restart;
//! - [`paired`]: a visually impaired player's board mirroring a game;
//! - [`bridges`]: several bridges on one feed through a bridged Mosquitto;
//! - [`mqtt`], [`commands`], [`operator`], [`security`], [`tls`]: the feed,
//!   operator commands and who may do what; [`hardening`]: what a
//!   stranger on the hall network cannot do to the feed; [`reload`]: accounts and
//!   certificates reloaded on SIGHUP;
//! - [`displays`]: the pages in headless Chromium; [`console_game`]: the
//!   console's game and alert views; [`console_hall`]: boards
//!   not configured, assigned in the console and kept over a restart; [`console_hall_ops`]: a
//!   hall started with no board, Identify, a board's log and capture, Un-assign;
//!   [`console_calibrate`]: a Certabo board calibrated while it runs; [`console_round`]: the
//!   tournament panel (pairings, rounds, players), [`console_bridges_round`]: the
//!   same across two bridges, [`console_round2`]: its
//!   delivery (the lichess push's state); [`analysis`]: engine
//!   analysis with the real Stockfish, on the public tree only;
//! - [`lichess`]: delivery to a broadcast site;
//! - [`livechess`]: DGT LiveChess's clients (a PyPI helper, a browser
//!   connector's WebSocket, LiveChess Cloud readers) against the daemon;
//! - [`speech`]: moves announced aloud (espeak-ng, sox);
//! - [`cli`], [`calibrate`], [`udev`]: the commands and the udev rules;
//!   [`ble`]: Bluetooth LE boards' captures; [`ble_link`]: Bluetooth LE
//!   boards read live through a mock BlueZ; [`ble_sim`]: a capture played
//!   as a Bluetooth LE board on the mock BlueZ;
//!   [`manual`]: `--version`, the man pages and the completion scripts;
//! - [`alert_quality`]: alerts scored on a corpus of irregular games;
//! - [`longday`]: a tournament day, ignored by default (RELIABILITY.md).

mod support;

mod alert_quality;
mod analysis;
mod ble;
mod ble_link;
mod ble_sim;
mod bridges;
mod calibrate;
mod cli;
mod commands;
mod console;
mod console_bridges;
mod console_bridges_round;
mod console_calibrate;
mod console_game;
mod console_hall;
mod console_hall_ops;
mod console_round;
mod console_round2;
mod displays;
mod hardening;
mod lichess;
mod live;
mod livechess;
mod longday;
mod manual;
mod mixed_hall;
mod mqtt;
mod operator;
mod paired;
mod paths;
mod recovery;
mod reload;
mod security;
mod speech;
mod tls;
mod udev;
