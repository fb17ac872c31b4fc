//! The C allocator's settings, made before anything else runs, and the
//! memory it keeps handed back while the daemon runs.
//!
//! glibc gives threads their own memory arenas (up to eight per core) and
//! keeps what a thread freed in its arena for later. A daemon that resumes
//! a hundred boards after a restart does a burst of work on many threads,
//! and each arena kept its high-water mark: in the long day of 100 boards
//! (RELIABILITY.md) the restarted daemon started at 95 MiB where the first
//! run had ended at 42; with two arenas, at 47 where it had ended at 30.
//! The daemon is not allocation-bound (a few thousand messages a second at
//! most), so two arenas cost nothing that shows. `MALLOC_ARENA_MAX` in the
//! environment still wins. Large blocks are kept out of the heap, and what
//! is freed inside it is handed back every 30 s (below).

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

/// Keeps large blocks out of the heap: every allocation of 128 KiB or more
/// gets pages of its own, given back when freed.
///
/// glibc starts so, but raises the threshold to the size of each large
/// block freed (up to 32 MiB), after which such blocks come from the heap
/// and are never given back while anything lives above them. The daemon's
/// large blocks are short-lived: a dead-position search's table (a few
/// MiB), a publisher queue grown in a burst. Set once, the threshold stays.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(crate) fn keep_large_blocks_apart() {
    // SAFETY: as above, one parameter of the allocator, set before
    // anything else runs.
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Other C libraries keep their own ways.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn keep_large_blocks_apart() {}

/// Other C libraries keep their own ways.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn cap_arenas() {}

/// How often memory freed inside the heap is handed back.
const HAND_BACK_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// Hands the memory glibc keeps after it was freed back to the system,
/// every [`HAND_BACK_EVERY`], for as long as the daemon runs.
///
/// After a burst (a restarted daemon publishing every resumed game's moves
/// again, say) glibc keeps what was freed inside the heap, where only
/// `malloc_trim` gives it back: in the long day of 100 boards
/// (RELIABILITY.md) the daemon's own data took 33 MiB after the second
/// restart, and glibc held 61 MiB. A trim walks the free chunks once; the
/// long day's last run took 144 s of CPU with it, 139 without.
pub(crate) async fn hand_back() {
    let mut every = tokio::time::interval(HAND_BACK_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        trim();
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn trim() {
    // SAFETY: malloc_trim only returns free pages of glibc's own heap to
    // the system, under the allocator's locks; it touches no memory in use.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
