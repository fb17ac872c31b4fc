//! The operator console's server side: log-in with the broker's accounts
//! (`boardcast accounts`) or a one-time link ([`link`]), sessions as
//! cookies ([`session`]), and operator
//! commands signed here, with the operator key that never reaches the
//! browser, and sent to a bridge as `boardcast ctl` sends them
//! ([`api`], through `shell::mqtt::ask`); the legal moves its board
//! offers come from the core ([`legal`]); an operator assigns a board
//! not configured ([`assign`]) and un-assigns it, downloads a board's
//! capture and reads its log lines ([`hall`]), also one of another bridge of the hall,
//! where every change for another bridge's board goes ([`bridges`]); the tournament panel previews pairings
//! ([`round`]). `operator` accounts change
//! games; `live` accounts acknowledge alerts and change games only when
//! `[http] live_may_change` allows; `public` accounts get no console.
//! Failed log-ins are slowed per address and per account by the core's
//! tracker (`boardcast_core::Logins`), whose aggregated warnings go to the
//! log.

pub mod api;
pub mod assign;
pub mod bridges;
pub mod hall;
pub mod legal;
pub mod link;
pub mod round;
pub mod session;

use std::{
    sync::{Arc, Mutex, OnceLock, RwLock},
    time::{Duration, Instant},
};

use boardcast_core::{LoginLimits, Logins, publish::guard::OperatorKey, time::Timestamp};
use tokio_util::sync::CancellationToken;

use crate::{
    accounts::{Account, Role},
    config::{BrokerUrl, ConsoleSettings},
};

use self::session::Sessions;

/// How the console reaches the bridges: the daemon's broker and account,
/// and the key that signs.
#[derive(Clone, Debug)]
pub struct Commander {
    /// The broker the daemon publishes to.
    pub broker: BrokerUrl,
    /// The daemon's own log-in there (it may write every bridge's commands).
    pub credentials: Option<(String, String)>,
    /// The topic root.
    pub root: String,
    /// This daemon's bridge id: where a command goes unless it names another.
    pub bridge: String,
    /// The operator key (`[operator] key_file`).
    pub key: OperatorKey,
}

/// How long the console waits for a bridge's reply to a command.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// The console's state, shared by the HTTP server's connections.
#[derive(Debug)]
pub struct Console {
    settings: ConsoleSettings,
    accounts: RwLock<Vec<Account>>,
    sessions: Mutex<Sessions>,
    /// One-click log-in links not yet used (`link.rs`).
    links: Mutex<link::Links>,
    commander: Option<Commander>,
    /// Failed log-ins per address and per account (the core's tracker):
    /// the delays `/api/login` imposes and the warnings it logs.
    logins: Mutex<Logins>,
    /// The origin of the tracker's time.
    origin: Instant,
    /// Where an operator's assignment of a board goes (`assign.rs`); unset:
    /// this daemon assigns none.
    assigner: OnceLock<assign::Assigner>,
    /// The tournament panel's view of the daemon (`round.rs`).
    pub round: round::Panel,
}

impl Console {
    /// A console logging in `accounts`, sending commands through
    /// `commander` (`None`: the daemon has no MQTT feed, so no bridge to
    /// command).
    pub fn new(settings: ConsoleSettings, accounts: Vec<Account>, commander: Option<Commander>) -> Self {
        Self {
            settings,
            accounts: RwLock::new(accounts),
            sessions: Mutex::new(Sessions::new(settings.idle, settings.max)),
            links: Mutex::new(link::Links::default()),
            commander,
            logins: Mutex::new(Logins::new(LoginLimits::default())),
            origin: Instant::now(),
            assigner: OnceLock::new(),
            round: round::Panel::default(),
        }
    }

    /// Operators' assignments of boards go to `assigner` from now on.
    pub fn set_assigner(&self, assigner: assign::Assigner) {
        let _ = self.assigner.set(assigner);
    }

    /// A one-time token logging `account` in from a link
    /// (`console.html#login=<token>`), for [`link::LINK_LIFETIME`].
    ///
    /// # Errors
    ///
    /// When the operating system gives no random bytes.
    pub fn login_link(&self, account: &str) -> Result<String, crate::shell::mqtt::mosquitto::MosquittoError> {
        let token = crate::shell::mqtt::mosquitto::hex(&crate::shell::mqtt::mosquitto::random::<32>()?);
        self.links.lock().expect("not poisoned").issue(Instant::now(), token.clone(), account, link::LINK_LIFETIME);
        Ok(token)
    }

    /// The accounts file was read again (SIGHUP): log-ins follow it, and
    /// the sessions of accounts removed, or whose role or password changed,
    /// end.
    pub fn set_accounts(&self, accounts: Vec<Account>) {
        let ended = self.sessions.lock().expect("not poisoned").follow(&accounts);
        if !ended.is_empty() {
            tracing::info!("console: sessions ended (account removed or changed): {}", ended.join(", "));
        }
        *self.accounts.write().expect("not poisoned") = accounts;
    }

    /// Logs the failed log-ins' aggregated warnings, also those due at the
    /// end of a counting window with no attempt after it; until `stop`.
    pub async fn say_warnings(self: Arc<Self>, stop: CancellationToken) {
        loop {
            let next = self.logins.lock().expect("not poisoned").poll_timeout();
            let wait = next.map_or(Duration::from_secs(60), |at| {
                Duration::from_micros(at.as_micros().saturating_sub(self.now().as_micros()))
                    .max(Duration::from_millis(100))
            });
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(wait) => {}
            }
            self.warn(self.now());
        }
    }

    /// The tracker's time now.
    fn now(&self) -> Timestamp {
        Timestamp::from_micros(self.origin.elapsed().as_micros() as u64)
    }

    /// Logs the tracker's warnings due at `now`.
    fn warn(&self, now: Timestamp) {
        let mut logins = self.logins.lock().expect("not poisoned");
        while let Some(warning) = logins.poll_warning(now) {
            tracing::warn!("console: {warning}");
        }
    }

    /// Whether `role` may send `command` (a `command` field as in
    /// docs/operator.md).
    fn may(&self, role: Role, command: &str) -> bool {
        match role {
            Role::Operator => true,
            // Assigning boards is the operators' alone, whatever live
            // accounts may do to games.
            Role::Live => {
                command == "acknowledge_alert"
                    || (self.settings.live_may_change && !matches!(command, "assign_board" | "unassign_board"))
            }
            Role::Public => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console(live_may_change: bool) -> Console {
        Console::new(ConsoleSettings { live_may_change, ..ConsoleSettings::default() }, Vec::new(), None)
    }

    #[test]
    fn operators_change_games_live_accounts_acknowledge_alerts_unless_allowed_more_public_nothing() {
        let strict = console(false);
        for command in ["set_result", "take_back", "next_round", "acknowledge_alert"] {
            assert!(strict.may(Role::Operator, command), "{command}");
            assert!(!strict.may(Role::Public, command), "{command}");
        }
        assert!(strict.may(Role::Live, "acknowledge_alert"));
        assert!(!strict.may(Role::Live, "set_result") && !strict.may(Role::Live, "take_back"));
        let allowed = console(true);
        assert!(allowed.may(Role::Live, "set_result"));
        assert!(!allowed.may(Role::Live, "unassign_board") && !allowed.may(Role::Live, "assign_board"));
        assert!(!allowed.may(Role::Public, "acknowledge_alert"));
    }
}
