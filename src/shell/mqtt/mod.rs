//! MQTT: the publisher task that keeps the feed flowing to a broker
//! ([`client`]), the separate connection that listens for operator
//! commands ([`commands`]), asking a daemon to apply one ([`ask`]: `ctl`
//! and the operator console), and the broker the daemon starts itself when none is
//! configured: Mosquitto as a child with accounts and access control
//! ([`mosquitto`]), or the built-in rumqttd without either ([`broker`]).
//! What is published, and the policies for
//! retained state and for moves that must not be lost, live in the
//! sans-I/O `publish` module; these tasks only move its messages.

pub mod ask;
pub mod broker;
pub mod client;
pub mod commands;
pub mod mosquitto;
