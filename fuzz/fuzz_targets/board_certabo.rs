//! Fuzzes a Certabo board's byte stream through the whole live session.
#![no_main]

use boardcast_core::protocol::Protocol;
use libfuzzer_sys::fuzz_target;

#[path = "board.rs"]
mod board;

fuzz_target!(|data: &[u8]| board::run(Protocol::CERTABO, data));
