//! The C allocator's settings, made before anything else runs.
//!
//! glibc gives threads their own memory arenas (up to eight per core) and
//! keeps what a thread freed in its arena for later. A daemon that resumes
//! a hundred boards after a restart does a burst of work on many threads,
//! and each arena kept its high-water mark: in the long day of 100 boards
//! (RELIABILITY.md) the restarted daemon started at 95 MiB where the first
//! run had ended at 42; with two arenas, at 47 where it had ended at 30.
//! The daemon is not allocation-bound (a few thousand messages a second at
//! most), so two arenas cost nothing that shows. `MALLOC_ARENA_MAX` in the
//! environment still wins.

/// Caps glibc's arenas at two, unless `MALLOC_ARENA_MAX` says otherwise.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(crate) fn cap_arenas() {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return;
    }
    // SAFETY: mallopt only sets a parameter of glibc's allocator, which
    // takes its own lock; nothing else runs yet, and arenas made later
    // follow the new cap.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, 2);
    }
}

/// Other C libraries keep their own ways.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn cap_arenas() {}
