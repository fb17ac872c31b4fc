//! Short device names for the boards in the docs' screenshots: a symlink
//! `/tmp/boardcast-board-<n>` to a test's pseudo-terminal link, which the
//! configuration names as the board's port, so that the console's Port
//! column shows a device path a reader recognises rather than the test's
//! scratch folder. The daemon reads the board through it like through any
//! symlink (udev's `/dev/serial/by-id/…` are symlinks too). Each name is
//! taken atomically: a name another test (or another run) holds is skipped
//! for the next number. Ours is removed when the test ends.

use std::path::{Path, PathBuf};

use super::live::Hall;

/// A device name held by this test.
pub struct Alias {
    path: PathBuf,
    target: PathBuf,
}

impl Alias {
    /// The first free `/tmp/boardcast-board-<n>` pointing at `target`.
    pub fn to(target: &Path) -> Self {
        for n in 1..=64 {
            let path = PathBuf::from(format!("/tmp/boardcast-board-{n}"));
            if std::os::unix::fs::symlink(target, &path).is_ok() {
                return Self { path, target: target.to_owned() };
            }
        }
        panic!("no free /tmp/boardcast-board-<n> for {}", target.display());
    }

    /// A name for board `name` of `hall`, written into the hall's
    /// configuration (`boardcast.toml`) as the board's port.
    pub fn for_board(hall: &Hall, name: &str) -> Self {
        let alias = Self::to(&hall.link(name));
        let config = hall.dir.join("boardcast.toml");
        let text = std::fs::read_to_string(&config).unwrap();
        std::fs::write(&config, alias.in_config(&text)).unwrap();
        alias
    }

    /// The name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `text` (a configuration) with the target's path replaced by the name.
    pub fn in_config(&self, text: &str) -> String {
        text.replace(&format!("port = \"{}\"", self.target.display()), &format!("port = \"{}\"", self.path.display()))
    }
}

impl Drop for Alias {
    fn drop(&mut self) {
        if std::fs::read_link(&self.path).is_ok_and(|t| t == self.target) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
