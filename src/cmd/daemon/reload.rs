//! SIGHUP: the managed Mosquitto's accounts and TLS certificate read again
//! without a restart (docs/security.md). Everything is checked before
//! anything changes: a bad accounts file or certificate leaves the broker
//! with what it had, and the log says what is wrong, where, and what to do.
//! The operator console's log-ins follow the same accounts.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use tokio::signal::unix::Signal;
use tracing::{error, info, warn};

use boardcast::{
    accounts::Account,
    shell::{
        console::Console,
        mqtt::mosquitto::{self, Reloaded, Reloader},
    },
};

/// What SIGHUP reloads.
pub(crate) enum Target {
    /// The managed Mosquitto: the accounts of `accounts_file` (those it
    /// has now: `accounts`), and its certificate and key when it serves TLS.
    Mosquitto {
        /// Rewrites its files and signals it.
        reloader: Reloader,
        /// `[mqtt.embedded] accounts_file`.
        accounts_file: PathBuf,
        /// The accounts the broker has now.
        accounts: Vec<Account>,
    },
    /// Nothing, and why.
    Nothing(String),
}

/// The operator console's log-ins, which follow the accounts file, and
/// that file (`mqtt.embedded.accounts_file`).
pub(crate) type ConsoleAccounts = (Arc<Console>, PathBuf);

/// Reloads at every SIGHUP, until the daemon stops (this task is then
/// aborted; SIGHUP stays caught, and is ignored). The console's accounts
/// follow the broker's (with the managed Mosquitto, only when the broker
/// took them), or the file alone (another broker).
pub(super) async fn run(mut hangups: Signal, mut target: Target, console: Option<ConsoleAccounts>) {
    while hangups.recv().await.is_some() {
        match &mut target {
            Target::Nothing(why) => match &console {
                None => info!("SIGHUP: nothing to reload: {why}"),
                Some((console, file)) => match crate::cmd::accounts::load(file) {
                    Ok(accounts) => {
                        info!("reloaded (SIGHUP): {} console account(s) from {}", accounts.len(), file.display());
                        console.set_accounts(accounts);
                    }
                    Err(e) => error!(
                        "reload (SIGHUP) refused: {e:#}. The operator console keeps the accounts it had; correct the file, then reload again"
                    ),
                },
            },
            Target::Mosquitto { reloader, accounts_file, accounts } => {
                if reload(reloader, accounts_file, accounts).await
                    && let Some((console, _)) = &console
                {
                    console.set_accounts(accounts.clone());
                }
            }
        }
    }
}

/// Reads `file` and checks the certificate; when both are good, has the
/// broker take them and makes `current` the new accounts (and says so).
async fn reload(reloader: &Reloader, file: &Path, current: &mut Vec<Account>) -> bool {
    let refuse = |what: String| {
        error!(
            "reload (SIGHUP) refused: {what}. Nothing was reloaded: the broker keeps its {} account(s){}. Correct it, then reload again (`systemctl reload boardcast` or `kill -HUP` the daemon)",
            current.len(),
            if reloader.tls().is_some() { " and the certificate it serves" } else { "" }
        );
    };
    // Missing at the start means no accounts yet; missing now that there
    // are some is more likely a mistake than a wish to shut everyone out.
    if !current.is_empty() && !file.exists() {
        refuse(format!(
            "the accounts file {} (mqtt.embedded.accounts_file) does not exist any more (to remove every account, leave it empty)",
            file.display()
        ));
        return false;
    }
    let accounts = match crate::cmd::accounts::load(file) {
        Ok(accounts) => accounts,
        Err(e) => {
            refuse(format!("{e:#}"));
            return false;
        }
    };
    let tls = match reloader.tls() {
        None => String::new(),
        Some(files) => match mosquitto::check_tls_files(files) {
            Ok(chain) => format!(
                "; the certificate {} ({chain} in its chain) and its key {}",
                files.cert_file.display(),
                files.key_file.display()
            ),
            Err(e) => {
                refuse(format!("{e} (mqtt.embedded.tls_cert_file, tls_key_file)"));
                return false;
            }
        },
    };
    let what =
        format!("{} broker account(s) from {} ({}){tls}", accounts.len(), file.display(), changes(current, &accounts));
    match reloader.reload(&accounts).await {
        Ok(Reloaded::Signalled) => info!("reloaded (SIGHUP): {what}; the broker (Mosquitto) applies them now"),
        Ok(Reloaded::NotRunning) => {
            warn!(
                "reloaded (SIGHUP): {what}; the broker (Mosquitto) is being started again and takes them as it starts"
            );
        }
        Err(e) => {
            refuse(format!("{e}"));
            return false;
        }
    }
    *current = accounts;
    true
}

/// Which accounts came, went, or changed (password or role), for the log.
fn changes(before: &[Account], after: &[Account]) -> String {
    let names = |list: Vec<&str>| list.join(", ");
    let added: Vec<&str> =
        after.iter().filter(|a| !before.iter().any(|b| b.name == a.name)).map(|a| a.name.as_str()).collect();
    let removed: Vec<&str> =
        before.iter().filter(|b| !after.iter().any(|a| a.name == b.name)).map(|b| b.name.as_str()).collect();
    let changed: Vec<&str> =
        after.iter().filter(|a| before.iter().any(|b| b.name == a.name && b != *a)).map(|a| a.name.as_str()).collect();
    let parts: Vec<String> = [("added", added), ("removed", removed), ("changed", changed)]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(what, list)| format!("{what}: {}", names(list)))
        .collect();
    if parts.is_empty() { "no change".to_owned() } else { parts.join("; ") }
}

#[cfg(test)]
mod tests {
    use boardcast::accounts::Role;

    use super::*;

    fn account(name: &str, role: Role, hash: &str) -> Account {
        Account { name: name.into(), role, hash: hash.into() }
    }

    #[test]
    fn the_log_names_the_accounts_added_removed_and_changed() {
        let before = [account("op", Role::Operator, "h1"), account("tv", Role::Public, "h2")];
        let after = [account("op", Role::Operator, "h3"), account("arbiter", Role::Live, "h4")];
        assert_eq!(changes(&before, &after), "added: arbiter; removed: tv; changed: op");
        assert_eq!(changes(&before, &before), "no change");
    }
}
