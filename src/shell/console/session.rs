//! The operator console's sessions: who logged in, with which role, and
//! until when. Plain data with the time as an input (no clock read here),
//! so that expiry is tested in virtual time. Sessions live in the daemon's
//! memory only: a restart logs everyone out, and no token is ever written
//! to a file.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

use crate::accounts::{Account, Role};

/// Sessions held at most. A log-in beyond it ends the session unused the
/// longest (only someone with a password can make one, so this bounds the
/// memory without letting a stranger shut operators out).
pub const MAX_SESSIONS: usize = 256;

/// One logged-in console.
#[derive(Clone, Debug)]
struct Session {
    account: String,
    role: Role,
    /// The account's password hash when it logged in: a changed password
    /// ends the session, like a removed account.
    hash: String,
    started: Instant,
    last: Instant,
}

/// Who a session is, as the console is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Who {
    /// The account's name.
    pub account: String,
    /// Its role.
    pub role: Role,
    /// How long the session lasts from now if unused.
    pub expires_in: Duration,
    /// How long it lasts at most from now, used or not (the cookie's
    /// `Max-Age`).
    pub ends_in: Duration,
}

/// The sessions, by token.
#[derive(Debug)]
pub struct Sessions {
    by_token: HashMap<String, Session>,
    idle: Duration,
    max: Duration,
}

impl Sessions {
    /// No session yet; each ends after `idle` unused or `max` after its
    /// log-in.
    pub fn new(idle: Duration, max: Duration) -> Self {
        Self { by_token: HashMap::new(), idle, max }
    }

    /// A session for `account` under `token` (random, made by the caller),
    /// from `now`.
    pub fn open(&mut self, now: Instant, token: String, account: &Account) -> Who {
        self.expire(now);
        if self.by_token.len() >= MAX_SESSIONS
            && let Some(oldest) = self.by_token.iter().min_by_key(|(_, s)| s.last).map(|(t, _)| t.clone())
        {
            self.by_token.remove(&oldest);
        }
        let session = Session {
            account: account.name.clone(),
            role: account.role,
            hash: account.hash.clone(),
            started: now,
            last: now,
        };
        let who = self.who(now, &session);
        self.by_token.insert(token, session);
        who
    }

    /// The session of `token` at `now`, which counts as a use; `None` when
    /// there is none or it has expired (it is then forgotten).
    pub fn check(&mut self, now: Instant, token: &str) -> Option<Who> {
        let session = self.by_token.get(token)?;
        if now >= self.ends(session) {
            self.by_token.remove(token);
            return None;
        }
        let session = self.by_token.get_mut(token)?;
        session.last = now;
        let session = session.clone();
        Some(self.who(now, &session))
    }

    /// Ends the session of `token`; whether there was one.
    pub fn close(&mut self, token: &str) -> bool {
        self.by_token.remove(token).is_some()
    }

    /// Ends the sessions of accounts that are gone from `accounts`, or
    /// whose role or password changed (the accounts file was reloaded);
    /// the names of the accounts whose sessions ended.
    pub fn follow(&mut self, accounts: &[Account]) -> Vec<String> {
        let mut ended = Vec::new();
        self.by_token.retain(|_, s| {
            let kept = accounts.iter().any(|a| a.name == s.account && a.role == s.role && a.hash == s.hash);
            if !kept && !ended.contains(&s.account) {
                ended.push(s.account.clone());
            }
            kept
        });
        ended
    }

    /// Sessions held now.
    pub fn len(&self) -> usize {
        self.by_token.len()
    }

    /// Whether no session is held.
    pub fn is_empty(&self) -> bool {
        self.by_token.is_empty()
    }

    fn expire(&mut self, now: Instant) {
        let (idle, max) = (self.idle, self.max);
        self.by_token.retain(|_, s| now < (s.last + idle).min(s.started + max));
    }

    fn ends(&self, session: &Session) -> Instant {
        (session.last + self.idle).min(session.started + self.max)
    }

    fn who(&self, now: Instant, session: &Session) -> Who {
        Who {
            account: session.account.clone(),
            role: session.role,
            expires_in: (session.last + self.idle).min(session.started + self.max).saturating_duration_since(now),
            ends_in: (session.started + self.max).saturating_duration_since(now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(name: &str, role: Role) -> Account {
        Account { name: name.into(), role, hash: format!("hash-of-{name}") }
    }

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn a_session_ends_when_unused_for_the_idle_time_and_at_its_absolute_end() {
        let t0 = Instant::now();
        let mut sessions = Sessions::new(10 * MIN, 30 * MIN);
        let who = sessions.open(t0, "a".into(), &account("op", Role::Operator));
        assert_eq!(
            (who.account.as_str(), who.role, who.expires_in, who.ends_in),
            ("op", Role::Operator, 10 * MIN, 30 * MIN)
        );
        // Used every 9 minutes it lives on, but not past 30 minutes.
        for n in 1..=3 {
            assert!(sessions.check(t0 + n * 9 * MIN, "a").is_some(), "used at {} min", n * 9);
        }
        let late = sessions.check(t0 + 29 * MIN, "a").unwrap();
        assert_eq!(late.expires_in, MIN, "the absolute end comes first");
        assert_eq!(sessions.check(t0 + 30 * MIN, "a"), None);
        assert!(sessions.is_empty(), "an expired session is forgotten");
        // Unused for the idle time: gone.
        sessions.open(t0, "b".into(), &account("op", Role::Operator));
        assert!(sessions.check(t0 + 9 * MIN, "b").is_some());
        assert_eq!(sessions.check(t0 + 19 * MIN, "b"), None);
        assert_eq!(sessions.check(t0, "never-made"), None);
    }

    #[test]
    fn log_out_ends_a_session_and_a_reloaded_accounts_file_ends_the_removed_and_changed() {
        let t0 = Instant::now();
        let mut sessions = Sessions::new(10 * MIN, 30 * MIN);
        let (op, arbiter, other) =
            (account("op", Role::Operator), account("arbiter", Role::Live), account("other", Role::Operator));
        sessions.open(t0, "op".into(), &op);
        sessions.open(t0, "arbiter".into(), &arbiter);
        sessions.open(t0, "other".into(), &other);
        sessions.open(t0, "other-2".into(), &other);
        assert!(sessions.close("op"));
        assert!(!sessions.close("op"));
        assert_eq!(sessions.check(t0, "op"), None);
        // `other` removed, `arbiter` made an operator: both sessions end.
        let promoted = Account { role: Role::Operator, ..arbiter.clone() };
        let mut ended = sessions.follow(&[op.clone(), promoted]);
        ended.sort();
        assert_eq!(ended, ["arbiter", "other"]);
        assert!(sessions.is_empty());
        // A new password ends the session made with the old one.
        sessions.open(t0, "op".into(), &op);
        let changed = Account { hash: "new".into(), ..op.clone() };
        assert_eq!(sessions.follow(&[changed]), ["op"]);
        sessions.open(t0, "op".into(), &op);
        assert!(sessions.follow(std::slice::from_ref(&op)).is_empty(), "an unchanged account keeps its session");
        assert_eq!(sessions.len(), 1);
    }

    #[test]
    fn the_number_of_sessions_is_bounded_and_the_least_used_goes_first() {
        let t0 = Instant::now();
        let mut sessions = Sessions::new(10 * MIN, 30 * MIN);
        let op = account("op", Role::Operator);
        for n in 0..MAX_SESSIONS {
            sessions.open(t0 + Duration::from_millis(n as u64), format!("t{n}"), &op);
        }
        assert!(sessions.check(t0 + MIN, "t0").is_some(), "t0 used: t1 is now the least used");
        sessions.open(t0 + MIN, "new".into(), &op);
        assert_eq!(sessions.len(), MAX_SESSIONS);
        assert!(sessions.check(t0 + MIN, "t1").is_none());
        assert!(sessions.check(t0 + MIN, "t0").is_some() && sessions.check(t0 + MIN, "new").is_some());
    }
}
