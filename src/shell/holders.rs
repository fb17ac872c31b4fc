//! Which processes have a device open, read from `/proc`. A probe must not
//! disturb a board another program is reading: opening its port and
//! sending it requests would steal the answers (and the field updates
//! between them) from that program. The daemon's own ports are opened
//! exclusively, so opening them fails anyway; other programs often do not
//! bother, and this is how they are noticed.
//!
//! Only processes whose `/proc/<pid>/fd` the caller may read are seen (all
//! of them for root, the caller's own otherwise), so the answer "nobody" is
//! a best effort; the exclusive open that follows is the second guard.

use std::{
    fs,
    path::{Path, PathBuf},
};

/// A process holding a device open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Its process ID.
    pub pid: u32,
    /// Its command name (`/proc/<pid>/comm`).
    pub name: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (PID {})", self.name, self.pid)
    }
}

/// The processes that have `device` open (symlinks such as
/// `/dev/boardcast/…` resolved), leaving out the calling process.
pub fn holders(device: &Path) -> Vec<Holder> {
    holders_in(Path::new("/proc"), device, std::process::id())
}

/// [`holders`] with another `/proc` (for tests) and the process to leave
/// out.
pub fn holders_in(proc_root: &Path, device: &Path, except: u32) -> Vec<Holder> {
    let Ok(target) = fs::canonicalize(device) else { return Vec::new() };
    let Ok(entries) = fs::read_dir(proc_root) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        if pid == except {
            continue;
        }
        // Processes may end while we look, and most are not ours to read:
        // either way, nothing to say about them.
        let Ok(fds) = fs::read_dir(entry.path().join("fd")) else { continue };
        let holds = fds.flatten().any(|fd| fs::read_link(fd.path()).is_ok_and(|p| same_file(&p, &target)));
        if holds {
            let name = fs::read_to_string(entry.path().join("comm")).map(|n| n.trim().to_owned()).unwrap_or_default();
            found.push(Holder { pid, name });
        }
    }
    found.sort_by_key(|h| h.pid);
    found
}

fn same_file(link: &Path, target: &PathBuf) -> bool {
    link == target || fs::canonicalize(link).is_ok_and(|p| &p == target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_this_process_holding_a_file_unless_left_out() {
        let dir = std::env::temp_dir().join(format!("boardcast-holders-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let device = dir.join("device");
        fs::write(&device, b"").unwrap();
        let link = dir.join("link");
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(&device, &link).unwrap();
        let me = std::process::id();
        assert!(holders_in(Path::new("/proc"), &link, 0).iter().all(|h| h.pid != me), "not open yet");
        let _open = fs::File::open(&device).unwrap();
        let found = holders_in(Path::new("/proc"), &link, 0);
        assert!(found.iter().any(|h| h.pid == me && !h.name.is_empty()), "{found:?}");
        assert!(holders(&link).iter().all(|h| h.pid != me), "the caller is left out");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_device_has_no_holders() {
        assert!(holders(Path::new("/nonexistent/device")).is_empty());
    }
}
