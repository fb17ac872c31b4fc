//! Fuzzes the capture reader and the replay behind it (captures come from
//! other tools and from disks that filled up mid-line): any text is read,
//! reported as an error or replayed, never a panic.
#![no_main]

use boardcast_core::{reconstruct::ReconstructorConfig, replay::replay};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = replay(&text, &ReconstructorConfig::default());
});
