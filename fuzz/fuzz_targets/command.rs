//! Fuzzes what arrives on the commands topic: the guard (envelope, MAC,
//! freshness, replay, bounds) on raw bytes, and the request parser behind
//! it on requests sealed with the right key, so that the parser is reached
//! too. Everything is refused with a reason or parsed, never a panic.
#![no_main]

use boardcast_core::publish::{
    commands::parse_request,
    guard::{Guard, OperatorKey, seal},
};
use libfuzzer_sys::fuzz_target;

const NOW_MS: i64 = 1_795_259_698_145;

fuzz_target!(|data: &[u8]| {
    let key = OperatorKey::from_bytes([7; 32]);
    let mut guard = Guard::new(key.clone());
    let _ = guard.handle_message(NOW_MS, data, data.first() == Some(&b'r'));
    let _ = parse_request(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let sealed = seal(&key, text);
        let _ = guard.handle_message(NOW_MS, &sealed, false);
    }
});
