//! One-click log-in links (`boardcast demo` prints one): a one-time token
//! made by the daemon for an account, carried in the console address's
//! fragment (`console.html#login=<token>`: a browser sends no fragment to
//! any server, so it is in no request line, proxy or log), spent by the
//! first `POST /api/login-link` that shows it, and worth nothing after
//! [`LINK_LIFETIME`]. No password is ever in an address. Plain data with
//! the time as an input, like the sessions; tokens live in memory only.

use std::{
    collections::HashMap,
    time::{Duration, Instant},
};

/// How long a link logs in, unused.
pub const LINK_LIFETIME: Duration = Duration::from_secs(10 * 60);

/// Links held at most (only the daemon itself makes them).
const MAX_LINKS: usize = 16;

/// The links not yet used, by token: the account and until when.
#[derive(Debug, Default)]
pub struct Links {
    by_token: HashMap<String, (String, Instant)>,
}

impl Links {
    /// A link logging `account` in under `token` (random, made by the
    /// caller), until `now + lifetime`.
    pub fn issue(&mut self, now: Instant, token: String, account: &str, lifetime: Duration) {
        self.by_token.retain(|_, (_, until)| now < *until);
        if self.by_token.len() >= MAX_LINKS
            && let Some(oldest) = self.by_token.iter().min_by_key(|(_, (_, until))| *until).map(|(t, _)| t.clone())
        {
            self.by_token.remove(&oldest);
        }
        self.by_token.insert(token, (account.to_owned(), now + lifetime));
    }

    /// The account of `token` at `now`, spending it: the same token never
    /// logs in twice. `None` when there is no such link or it has expired.
    pub fn spend(&mut self, now: Instant, token: &str) -> Option<String> {
        let (account, until) = self.by_token.remove(token)?;
        (now < until).then_some(account)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_logs_in_once_and_not_after_it_expires() {
        let t0 = Instant::now();
        let mut links = Links::default();
        links.issue(t0, "a".into(), "operator", LINK_LIFETIME);
        links.issue(t0, "b".into(), "operator", LINK_LIFETIME);
        assert_eq!(links.spend(t0 + Duration::from_secs(5), "a").as_deref(), Some("operator"));
        assert_eq!(links.spend(t0 + Duration::from_secs(6), "a"), None, "spent");
        assert_eq!(links.spend(t0 + LINK_LIFETIME, "b"), None, "expired");
        assert_eq!(links.spend(t0, "never-made"), None);
    }

    #[test]
    fn the_links_held_are_bounded_and_the_oldest_goes_first() {
        let t0 = Instant::now();
        let mut links = Links::default();
        for n in 0..=MAX_LINKS {
            links.issue(t0 + Duration::from_millis(n as u64), format!("t{n}"), "operator", LINK_LIFETIME);
        }
        assert_eq!(links.by_token.len(), MAX_LINKS);
        assert_eq!(links.spend(t0, "t0"), None);
        assert!(links.spend(t0, &format!("t{MAX_LINKS}")).is_some());
    }
}
