//! `boardcast accounts`: the managed broker's accounts (`[mqtt.embedded]
//! accounts_file`): add one (its password from standard input, or made and
//! printed once), list them, remove one. The daemon reads the file at
//! start and again on SIGHUP (`systemctl reload boardcast`).

use std::{
    io::{IsTerminal, Read, Write},
    os::unix::fs::OpenOptionsExt,
    path::{Path, PathBuf},
    process::ExitCode,
};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};

use boardcast::{
    accounts::{self, Account, Role, SALT_BYTES},
    shell::mqtt::mosquitto::{hex, random},
};

use super::settings;

/// The accounts of the broker the daemon runs (Mosquitto): who may log in,
/// as which role. operator: sends commands (`boardcast ctl`) and reads
/// everything; live: an arbiter's console, reads the live tree with
/// alerts; public: a display, reads the public tree. After a change,
/// reload the daemon: `systemctl reload boardcast`, or `kill -HUP` it.
#[derive(Debug, Args)]
pub(crate) struct AccountsArgs {
    /// The configuration file the daemon runs with (for its
    /// `[mqtt.embedded] accounts_file`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The accounts file (default: the configuration's).
    #[arg(long, value_name = "FILE")]
    file: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Adds an account, or gives an existing one a new password and role.
    /// The password is read from standard input (its first line) when that
    /// is not a terminal; otherwise one is made and printed, once.
    Add {
        /// The account's name (letters, digits, '.', '_', '-').
        name: String,
        /// operator, live or public.
        #[arg(long)]
        role: String,
        /// Make a password even when standard input is not a terminal.
        #[arg(long)]
        generate: bool,
        /// Take a password from standard input shorter than 12 characters
        /// (for a test setup only: anyone on the hall network may try
        /// passwords against the broker as fast as it answers).
        #[arg(long)]
        allow_short: bool,
    },
    /// Lists the accounts and their roles.
    List,
    /// Removes an account (a lost laptop's).
    Remove {
        /// The account's name.
        name: String,
    },
}

/// Random bytes in a made password (shown as 32 hex digits): 128 bits,
/// beyond any guessing at any rate a network carries.
const GENERATED_BYTES: usize = 16;

/// The shortest password taken from standard input without
/// `--allow-short`: 12 characters, which a guessing run at the 2 250 a
/// second of issue 29 does not get through in any tournament's lifetime
/// unless the password is a word or a pattern.
const MIN_PASSWORD_CHARS: usize = 12;

pub(crate) fn run(args: AccountsArgs) -> anyhow::Result<ExitCode> {
    let file = match args.file {
        Some(file) => file,
        None => settings::load(args.config.as_deref())?.config.mqtt.embedded.accounts_file,
    };
    let mut list = load(&file)?;
    match args.action {
        Action::List => {
            for a in &list {
                outln!("{:<24} {}", a.name, a.role);
            }
            if list.is_empty() {
                eprintln!("boardcast: no accounts in {} (`boardcast accounts add NAME --role ROLE`)", file.display());
            }
        }
        Action::Add { name, role, generate, allow_short } => {
            accounts::check_name(&name)?;
            let role: Role = role.parse()?;
            let stdin = std::io::stdin();
            let (password, made) = if generate || stdin.is_terminal() {
                (hex(&random::<GENERATED_BYTES>()?), true)
            } else {
                let mut text = String::new();
                stdin.lock().take(4096).read_to_string(&mut text).context("reading the password")?;
                let line = text.lines().next().unwrap_or_default().to_owned();
                if line.is_empty() {
                    bail!("no password on standard input (give one line, or --generate to have one made)");
                }
                let length = line.chars().count();
                if length < MIN_PASSWORD_CHARS && !allow_short {
                    bail!(
                        "the password for {name} has {length} characters, fewer than {MIN_PASSWORD_CHARS}: anyone on the hall network can try passwords against the broker thousands of times a second, and Mosquitto cannot slow them (docs/security.md). Give a longer one, or leave standard input a terminal (or pass --generate) to have a 128-bit one made; --allow-short takes it anyway (tests only)"
                    );
                }
                (line, false)
            };
            let hash = accounts::hash_password(&password, &random::<SALT_BYTES>()?);
            let account = Account { name: name.clone(), role, hash };
            match list.iter_mut().find(|a| a.name == name) {
                Some(old) => *old = account,
                None => list.push(account),
            }
            save(&file, &list)?;
            if made {
                outln!("{password}");
                eprintln!(
                    "boardcast: account {name} ({role}) added to {}; its password is above and is not shown again. Reload the daemon to let it in (`systemctl reload boardcast`, or `kill -HUP` it).",
                    file.display()
                );
            } else {
                eprintln!(
                    "boardcast: account {name} ({role}) added to {}. Reload the daemon to let it in (`systemctl reload boardcast`, or `kill -HUP` it).",
                    file.display()
                );
            }
        }
        Action::Remove { name } => {
            let before = list.len();
            list.retain(|a| a.name != name);
            if list.len() == before {
                bail!("no account {name:?} in {}", file.display());
            }
            save(&file, &list)?;
            eprintln!(
                "boardcast: account {name} removed from {}. Reload the daemon to shut it out, its open connections too (`systemctl reload boardcast`, or `kill -HUP` it).",
                file.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The accounts in `file` (none when it does not exist).
pub(crate) fn load(file: &Path) -> anyhow::Result<Vec<Account>> {
    match std::fs::read_to_string(file) {
        Ok(text) => accounts::parse(&text).with_context(|| format!("the accounts file {}", file.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading the accounts file {}", file.display())),
    }
}

/// Writes the accounts whole (mode 600), replacing the file atomically.
pub(crate) fn save(file: &Path, list: &[Account]) -> anyhow::Result<()> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut out = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temp)?;
        out.write_all(accounts::format(list).as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&temp, file)
    };
    write().with_context(|| format!("writing the accounts file {}", file.display()))
}
