//! Helpers shared by the daemon's integration tests: a hall of simulated
//! boards behind pseudo-terminals running the real binary ([`live`]), and
//! real MQTT brokers and subscribers on free ports ([`mqtt`]), short device
//! names for the screenshots' boards ([`alias`]), a mock BlueZ on a private
//! D-Bus ([`bluez`]). The helpers
//! for the core's own tests are in crates/boardcast-core/tests/it/support.
#![allow(dead_code, unreachable_pub)]

pub mod alias;
pub mod bluez;
pub mod live;
pub mod mqtt;
