//! What a user reads about the command: `--version` names the commit it was
//! built from, the man pages (one per command, made by the hidden
//! `manpages` generator the Debian package runs) and the completion scripts
//! come from the same definitions as `--help`, so none can offer a command
//! the binary does not have. pkg/deb/check sees them installed.

use std::{
    fs,
    path::PathBuf,
    process::{Command, Output},
};

fn boardcast(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_boardcast")).args(args).output().expect("the binary runs");
    assert!(out.status.success(), "boardcast {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn stdout(args: &[&str]) -> String {
    String::from_utf8(boardcast(args).stdout).unwrap()
}

/// The commands `--help` lists under "Commands:" (without `help`).
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn version_names_the_version_and_the_commit() {
    let version = stdout(&["--version"]);
    let prefix = concat!("boardcast ", env!("CARGO_PKG_VERSION"), " (");
    assert!(version.starts_with(prefix), "{version}");
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8(out.stdout).unwrap().trim().to_owned());
    match head {
        // The test binary and `boardcast` were built from the same checkout.
        Some(head) => assert!(version.contains(&format!("(commit {head} of ")), "HEAD is {head}: {version}"),
        None => assert!(version.contains("(commit unknown: "), "{version}"),
    }
    assert_eq!(stdout(&["-V"]), version, "-V and --version say the same");
}

#[test]
fn a_man_page_for_the_command_and_each_subcommand() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("manpages");
    let _ = fs::remove_dir_all(&dir);
    let listed = stdout(&["manpages", dir.to_str().unwrap()]);
    let mut expected = vec!["boardcast".to_owned()];
    for command in commands(&stdout(&["--help"])) {
        expected.push(format!("boardcast-{command}"));
        for sub in commands(&stdout(&[&command, "--help"])) {
            expected.push(format!("boardcast-{command}-{sub}"));
        }
    }
    let mut written: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap().trim_end_matches(".1").to_owned())
        .collect();
    written.sort();
    expected.sort();
    assert_eq!(written, expected, "one page per command of --help, no more");
    assert_eq!(listed.lines().count(), expected.len(), "the generator lists what it wrote: {listed}");
    // A page says what --help says: here, config check's option and what
    // the command does, and the top page where the files are.
    let check = fs::read_to_string(dir.join("boardcast-config-check.1")).unwrap();
    assert!(check.contains("\\-\\-config") && check.contains("/etc/boardcast/boardcast.toml"), "{check}");
    let top = fs::read_to_string(dir.join("boardcast.1")).unwrap();
    for section in [".SH FILES", ".SH \"SEE ALSO\"", "boardcast\\-run(1)", "/var/lib/boardcast"] {
        assert!(top.contains(section), "no {section} in boardcast.1:\n{top}");
    }
}

#[test]
fn completions_offer_every_command_and_not_the_hidden_generator() {
    let commands = commands(&stdout(&["--help"]));
    assert!(commands.contains(&"completions".to_owned()) && !commands.contains(&"manpages".to_owned()));
    for shell in ["bash", "zsh", "fish"] {
        let script = stdout(&["completions", shell]);
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell} completion lacks {command}");
        }
        assert!(!script.contains("manpages"), "{shell} completion offers the hidden generator");
    }
    // bash itself completes "boardcast con" and "boardcast config ".
    let script = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("boardcast.bash");
    fs::write(&script, stdout(&["completions", "bash"])).unwrap();
    let complete = |words: &str, cword: usize, cur: &str, prev: &str| {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; _boardcast boardcast '{cur}' {prev}; echo \"${{COMPREPLY[*]}}\"",
                script.display()
            ))
            .output()
            .expect("bash runs");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    assert_eq!(complete("boardcast con", 1, "con", "boardcast"), "config");
    let after_config = complete("boardcast config ''", 2, "", "config");
    assert!(
        after_config.split(' ').any(|w| w == "check") && after_config.split(' ').any(|w| w == "default"),
        "{after_config}"
    );
}
