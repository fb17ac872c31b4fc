//! Names that become file and folder names, through the real binary: a
//! hostile board name cannot put its capture outside the capture folder, an
//! ordinary one gives the file it always gave, and names that cannot be
//! file names are refused by `config check` with the key that holds them.

use std::{fs, path::Path, process::Command, time::Duration};

use crate::support::live::{Hall, stop};

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).into_iter().flatten().flatten() {
            if entry.path().is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path().strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_hostile_board_name_records_inside_the_capture_folder_and_an_ordinary_one_as_before() {
    let hall = Hall::new("paths-captures");
    // The hall is two levels down, so `../../` from its capture folder
    // would land in the test's target folder.
    let top = hall.dir.join("inner");
    fs::create_dir_all(&top).unwrap();
    let config = top.join("boardcast.toml");
    fs::write(
        &config,
        format!(
            "[recording]\ndir = \"{dir}/captures\"\n[pgn]\ndir = \"{dir}/pgn\"\n[mqtt]\nenabled = false\n[http]\nenabled = false\n\
             [broadcast]\nevent = \"..\"\n\
             [[boards]]\nname = \"../../escaped\"\nprotocol = \"dgt\"\nport = \"{dir}/a.tty\"\n\
             [[boards]]\nname = \"board 1\"\nprotocol = \"dgt\"\nport = \"{dir}/b.tty\"\nevent = \"Open A\"\nround = \"Round 3.1\"\n",
            dir = top.display()
        ),
    )
    .unwrap();
    let mut daemon = hall.run(&config);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while files(&top.join("captures")).len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop(&mut daemon);
    let captures = files(&top.join("captures"));
    assert_eq!(captures.len(), 2, "{captures:?}: {}", hall.log());
    assert!(captures.iter().any(|c| c.starts_with("..-..-escaped-2") && c.ends_with(".jsonl")), "{captures:?}");
    assert!(captures.iter().any(|c| c.starts_with("board 1-2") && c.ends_with(".jsonl")), "{captures:?}");
    // Nothing was written beside the hall's folders.
    let everything = files(&hall.dir);
    assert!(
        everything.iter().all(|f| f.starts_with("inner/captures/")
            || f.starts_with("inner/pgn/")
            || f == "inner/boardcast.toml"
            || f == "run.log"),
        "{everything:#?}"
    );
    assert!(!hall.dir.parent().unwrap().join("escaped").exists());
}

#[test]
fn config_check_refuses_names_that_cannot_be_file_names_and_quotes_them_short() {
    let hall = Hall::new("paths-config-check");
    let long = "x".repeat(300);
    for (board, key) in [
        ("name = \"b\\u0000\"".to_owned(), "boards[0].name"),
        (format!("name = \"b1\"\nboard = \"{long}\""), "boards[0].board"),
        ("name = \"b1\"\nevent = \"Open\\u0007A\"".to_owned(), "boards[0].event"),
    ] {
        let file = hall.dir.join("check.toml");
        fs::write(&file, format!("[[boards]]\n{board}\nprotocol = \"dgt\"\nport = \"/dev/null\"\n")).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_boardcast"))
            .args(["config", "check", "--config"])
            .arg(&file)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{board}: {stderr}");
        assert!(stderr.contains(key), "{board}: {stderr}");
        assert!(stderr.len() < 600, "the name is not echoed whole: {stderr}");
    }
}
