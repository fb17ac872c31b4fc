//! A process's figures as Linux's `/proc` gives them (CPU time, memory),
//! for the benches that measure the daemon, its broker and themselves.
//! Shared by `#[path]`: each bench is its own crate.

use std::{fmt::Display, path::Path};

/// utime and stime of a `/proc/…/stat` file (a process's or a thread's),
/// in clock ticks; `None` once it is gone.
pub fn stat_split(path: &Path) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    // The fields after the command name, which is in parentheses (and may
    // hold spaces); utime and stime are fields 14 and 15 of the line.
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    Some((fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?))
}

/// utime + stime of a `/proc/…/stat` file, in clock ticks.
pub fn stat_ticks(path: &Path) -> Option<u64> {
    stat_split(path).map(|(user, system)| user + system)
}

/// utime and stime of process `pid` (a number or `self`), in clock ticks;
/// zeros once it is gone.
pub fn cpu_split(pid: impl Display) -> (u64, u64) {
    stat_split(Path::new(&format!("/proc/{pid}/stat"))).unwrap_or((0, 0))
}

/// A `kB` field of `/proc/<pid>/status` (`VmRSS:`, `VmHWM:`), in KiB; 0
/// once the process is gone.
pub fn status_kib(pid: impl Display, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field)?.trim().strip_suffix("kB")?.trim().parse().ok())
        .unwrap_or(0)
}

/// Clock ticks a second (`getconf CLK_TCK`; 100 on every Linux seen).
pub fn clock_ticks_per_second() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}
