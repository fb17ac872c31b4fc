//! Build script: tells `boardcast --version` which commit the binary was
//! built from.
//!
//! A hall PC's log, a bug report or a package names a version; `0.1.0`
//! alone does not say which of the many commits between releases is
//! running. The commit comes from git when the build runs in a git
//! checkout; a build without one (a source tarball, git missing, or a
//! checkout git refuses to read) says so instead of guessing.
//!
//! Cargo runs this script again only when one of the files it names
//! changes: the checkout's HEAD and branch (a commit or a checkout), and
//! the sources that go into the binary (so that "with uncommitted changes"
//! stays true after an edit). A commit therefore rebuilds the `boardcast`
//! package's own targets once, as an edit does.

use std::{
    path::{Path, PathBuf},
    process::Command,
};

/// What goes into the binary: an uncommitted change here makes the binary
/// differ from its commit. (Tests, benches and docs other than the alert
/// catalogue the core embeds do not.)
const SOURCES: &[&str] =
    &["Cargo.toml", "Cargo.lock", "build.rs", "src", "crates", "config", "assets", "docs/alerts.md", "tests/fixtures"];

fn main() {
    let version = env!("CARGO_PKG_VERSION");
    let commit = commit();
    println!("cargo:rustc-env=BOARDCAST_LONG_VERSION={version} ({commit})");
    for source in SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
}

/// "commit 723d864a1b2c of 2026-11-27", with ", with uncommitted changes"
/// when the sources differ from it, or why the commit is unknown.
fn commit() -> String {
    if Command::new("git").arg("--version").output().is_err() {
        return "commit unknown: built without git".to_owned();
    }
    // The checkout must be boardcast's own: a source tarball unpacked
    // inside some other repository would otherwise take that one's commit.
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let same_dir = |top: String| {
        let canonical = |path: &str| std::fs::canonicalize(path).ok();
        canonical(&top).is_some() && canonical(&top) == canonical(&manifest_dir)
    };
    let hash = git(&["rev-parse", "--short=12", "HEAD"]);
    let (Some(hash), true) = (hash, git(&["rev-parse", "--show-toplevel"]).is_some_and(same_dir)) else {
        return "commit unknown: not built from a git checkout (or from one git would not read)".to_owned();
    };
    watch_checkout();
    let date = git(&["log", "-1", "--format=%cs", "HEAD"]).unwrap_or_default();
    let mut status = vec!["status", "--porcelain", "--untracked-files=no", "--"];
    status.extend(SOURCES);
    let changed = git(&status).is_none_or(|changes| !changes.is_empty());
    let mut said = format!("commit {hash}");
    if !date.is_empty() {
        said.push_str(&format!(" of {date}"));
    }
    if changed {
        said.push_str(", with uncommitted changes");
    }
    said
}

/// Asks cargo to run this script again after a commit, a checkout or a
/// fetch that moves the branch: git's HEAD, the branch's ref and the packed
/// refs (in a worktree, HEAD is the worktree's own and the refs are the
/// common ones).
fn watch_checkout() {
    let path = |args: &[&str]| git(args).map(PathBuf::from);
    let mut watched = Vec::new();
    if let Some(dir) = path(&["rev-parse", "--absolute-git-dir"]) {
        watched.push(dir.join("HEAD"));
    }
    if let Some(common) = path(&["rev-parse", "--path-format=absolute", "--git-common-dir"]) {
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(common.join(branch));
        }
        watched.push(common.join("packed-refs"));
    }
    // A watched file that does not exist makes cargo run the script at
    // every build.
    for file in watched.iter().filter(|file| Path::new(file).exists()) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
}

/// Git's answer, trimmed, or None when git is missing or fails.
fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(args)
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default())
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}
