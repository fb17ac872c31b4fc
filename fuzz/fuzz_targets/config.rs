//! Fuzzes the configuration: any file appended to the defaults is either
//! accepted or refused with a message, never a panic.
#![no_main]

use boardcast::config::{Config, DEFAULTS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = format!("{DEFAULTS}\n{}", String::from_utf8_lossy(data));
    let Ok(built) =
        config::Config::builder().add_source(config::File::from_str(&text, config::FileFormat::Toml)).build()
    else {
        return;
    };
    let Ok(parsed) = built.try_deserialize::<Config>() else { return };
    let _ = parsed.boards();
    let _ = parsed.reconstructor();
    let _ = parsed.link();
    let _ = parsed.mqtt();
});
