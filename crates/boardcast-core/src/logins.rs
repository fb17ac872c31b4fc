//! Failed log-ins, counted and slowed: the broker's (read from its log) and
//! the daemon's own (the operator console's HTTP log-in).
//!
//! A stranger on the hall network who may try passwords as fast as the
//! network carries them will eventually find a weak one, and if nothing is
//! said the operator never knows it was tried. [`Logins`] counts failures
//! per address and per account, says so in aggregated [`LoginWarning`]s (a
//! flood of thousands is a few lines a minute, never a line a failure), and
//! tells a log-in that it can slow how long a new attempt must
//! [`wait`](Logins::wait): nothing after a few failures, then a delay that
//! doubles up to a cap. What it remembers is bounded in count (addresses,
//! accounts, names kept with each) and forgotten after a quiet while.
//!
//! Sans-I/O: the caller passes the time ([`Timestamp`]), the address and the
//! account of every attempt, and polls the warnings ([`Logins::poll_warning`])
//! at [`Logins::poll_timeout`] or after each failure.

use std::{
    collections::{BTreeMap, VecDeque},
    fmt,
    net::IpAddr,
    time::Duration,
};

use crate::time::Timestamp;

/// The thresholds and bounds of a [`Logins`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoginLimits {
    /// Failures from one address (or for one account, from several
    /// addresses) within one [`window`](Self::window) that make a warning.
    pub warn_per_window: u32,
    /// The counting window; warnings are aggregated per window.
    pub window: Duration,
    /// Failures in a row allowed without delay.
    pub free_failures: u32,
    /// The delay after the first failure beyond the free ones; it doubles
    /// with each further failure.
    pub first_delay: Duration,
    /// The longest delay.
    pub max_delay: Duration,
    /// A quiet time after which the failures of an address or an account
    /// are forgotten (their delay starts again from nothing).
    pub forget_after: Duration,
    /// Addresses remembered at most (the quietest is forgotten first).
    pub max_addresses: usize,
    /// Accounts remembered at most (the quietest is forgotten first).
    pub max_accounts: usize,
}

impl Default for LoginLimits {
    /// 10 failures a minute warn; 5 free failures, then 1 s doubling up to
    /// 30 s; forgotten after 15 quiet minutes; 4096 addresses and 1024
    /// accounts (a few hundred kilobytes at most).
    fn default() -> Self {
        Self {
            warn_per_window: 10,
            window: Duration::from_secs(60),
            free_failures: 5,
            first_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            forget_after: Duration::from_secs(15 * 60),
            max_addresses: 4096,
            max_accounts: 1024,
        }
    }
}

/// Failed log-ins per address and per account: warnings and delays.
#[derive(Debug)]
pub struct Logins {
    limits: LoginLimits,
    addresses: BTreeMap<IpAddr, Entry>,
    accounts: BTreeMap<String, Entry>,
    /// The start of the current counting window (none while nothing failed).
    window_start: Option<Timestamp>,
    /// Subjects named in this window's warnings (at most [`Logins::NAMED`]).
    named: usize,
    /// Failures in this window, and the addresses they came from (about:
    /// an address forgotten and seen again counts twice).
    window_failures: u64,
    window_addresses: u64,
    warnings: VecDeque<LoginWarning>,
}

/// A warning about failed log-ins, to be logged as it is (its `Display` is
/// the sentence).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LoginWarning {
    /// Failures from one address.
    Address {
        /// Where they came from.
        address: IpAddr,
        /// How many, in this window.
        failures: u32,
        /// From the first of these failures to the last.
        over: Duration,
        /// The accounts tried (the first few; [`Names::more`] if others).
        accounts: Names,
    },
    /// Failures for one account from several addresses.
    Account {
        /// The account (as [`Logins`] keeps names: cut and cleaned).
        account: String,
        /// How many, in this window.
        failures: u32,
        /// From the first of these failures to the last.
        over: Duration,
        /// The addresses they came from (the first few).
        addresses: Names,
    },
    /// The failures of a window from addresses not named in an address
    /// warning (each under the threshold, or beyond the [`Logins::NAMED`]
    /// a window names), when they are at least the threshold together:
    /// guessing spread over many addresses.
    Others {
        /// How many.
        failures: u64,
        /// The addresses they came from (about).
        addresses: u64,
        /// The window they fell in.
        window: Duration,
    },
    /// A log-in succeeded from an address that had failed at least the
    /// warning threshold in a row: perhaps a guess that came true.
    SucceededAfter {
        /// Where the log-in came from.
        address: IpAddr,
        /// The account it logged in as.
        account: String,
        /// Failures from that address in a row before it.
        failures: u32,
    },
}

/// The first few names of a list, and whether there were more.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Names {
    /// The first few, in the order they came.
    pub first: Vec<String>,
    /// Others came after them.
    pub more: bool,
}

impl Logins {
    /// Subjects (addresses or accounts) named in warnings at most per
    /// window; the others are counted in one [`LoginWarning::Others`].
    pub const NAMED: usize = 10;
    /// Names kept with a subject (the accounts an address tried …).
    pub const NAMES: usize = 5;
    /// Characters of an account name kept (longer ones are cut, with `…`).
    pub const ACCOUNT_CHARS: usize = 64;

    /// Nothing seen yet.
    pub fn new(limits: LoginLimits) -> Self {
        Self {
            limits,
            addresses: BTreeMap::new(),
            accounts: BTreeMap::new(),
            window_start: None,
            named: 0,
            window_failures: 0,
            window_addresses: 0,
            warnings: VecDeque::new(),
        }
    }

    /// What it was made with.
    pub fn limits(&self) -> &LoginLimits {
        &self.limits
    }

    /// A log-in from `address` as `account` (as typed: an empty name is
    /// none given) was refused at `now`.
    pub fn failed(&mut self, now: Timestamp, address: IpAddr, account: &str) {
        self.fail(now, address, Some(account));
    }

    /// A log-in from `address` was refused at `now`, as an account that is
    /// not known: Mosquitto 2.0 does not log the name a refused client gave.
    /// Only the address is counted (and slowed).
    pub fn failed_unknown_account(&mut self, now: Timestamp, address: IpAddr) {
        self.fail(now, address, None);
    }

    fn fail(&mut self, now: Timestamp, address: IpAddr, account: Option<&str>) {
        self.roll(now);
        self.window_start.get_or_insert(now);
        let limits = self.limits;

        self.window_failures += 1;
        let entry = entry(&mut self.addresses, address, limits.max_addresses, limits.warn_per_window, now);
        if entry.window_failures == 0 {
            self.window_addresses += 1;
        }
        let account = account.map(shown_account);
        let crossed = entry.fail(now, &limits, account.as_deref(), |_| true);
        if crossed && self.named < Self::NAMED {
            self.named += 1;
            let warning = entry.warning_now(now, |failures, over, names| LoginWarning::Address {
                address,
                failures,
                over,
                accounts: names,
            });
            self.warnings.extend(warning);
        }

        let Some(account) = account else { return };
        let entry = entry_for(&mut self.accounts, &account, limits.max_accounts, limits.warn_per_window, now);
        // An account tried from one address only is said by that
        // address's warning already.
        let crossed = entry.fail(now, &limits, Some(&address.to_string()), |names| names.first.len() >= 2);
        if crossed && self.named < Self::NAMED {
            self.named += 1;
            let warning = entry.warning_now(now, |failures, over, names| LoginWarning::Account {
                account: account.clone(),
                failures,
                over,
                addresses: names,
            });
            self.warnings.extend(warning);
        }
    }

    /// A log-in from `address` as `account` was accepted at `now`.
    ///
    /// The account's failures in a row are cleared (its owner got in), the
    /// address's are not: a stranger who has one account (a display's)
    /// would otherwise clear its delay between guesses at another. The
    /// address's delay runs out by itself, counted from its last failure.
    pub fn succeeded(&mut self, now: Timestamp, address: IpAddr, account: &str) {
        self.roll(now);
        let account = shown_account(account);
        if let Some(entry) = self.accounts.get_mut(&account) {
            entry.streak = 0;
        }
        if let Some(entry) = self.addresses.get_mut(&address) {
            let streak = entry.streak_at(now, &self.limits);
            if streak >= self.limits.warn_per_window && !entry.success_said {
                entry.success_said = true;
                self.warnings.push_back(LoginWarning::SucceededAfter { address, account, failures: streak });
            }
        }
    }

    /// How long a new attempt from `address` as `account` must wait from
    /// `now`, if at all: the longer of the address's and the account's
    /// delays, each counted from its last failure.
    pub fn wait(&self, now: Timestamp, address: IpAddr, account: &str) -> Option<Duration> {
        let by_address = self.addresses.get(&address).map_or(Duration::ZERO, |e| e.wait(now, &self.limits));
        let by_account =
            self.accounts.get(&shown_account(account)).map_or(Duration::ZERO, |e| e.wait(now, &self.limits));
        Some(by_address.max(by_account)).filter(|wait| !wait.is_zero())
    }

    /// The next warning due at `now`, if any: poll until `None`, after
    /// each failure and at [`Logins::poll_timeout`].
    pub fn poll_warning(&mut self, now: Timestamp) -> Option<LoginWarning> {
        self.roll(now);
        self.warnings.pop_front()
    }

    /// When the current window ends, if its end may have something to say.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.window_start.map(|start| start + self.limits.window)
    }

    /// Addresses and accounts remembered now (for tests and the bounds).
    pub fn remembered(&self) -> (usize, usize) {
        (self.addresses.len(), self.accounts.len())
    }

    /// Ends the window if `now` is past it: its totals, its forgotten
    /// subjects, and a fresh window.
    fn roll(&mut self, now: Timestamp) {
        let Some(start) = self.window_start else { return };
        let window = self.limits.window;
        if now < start + window {
            return;
        }
        self.end_window();
        if now < start + window + window {
            self.window_start = Some(start + window);
        } else {
            // A whole window without a failure: nothing is carried over.
            self.end_window();
            self.window_start = None;
        }
        let forget = self.limits.forget_after;
        self.addresses.retain(|_, e| now.saturating_since(e.last_seen) < forget);
        self.accounts.retain(|_, e| now.saturating_since(e.last_seen) < forget);
        if self.addresses.values().chain(self.accounts.values()).all(|e| e.window_failures == 0) {
            // Nothing is counted: the next window starts with the next failure.
            self.window_start = None;
        }
    }

    /// The totals of the window that ends, and a fresh one.
    fn end_window(&mut self) {
        let threshold = self.limits.warn_per_window;
        let (mut named_failures, mut named_addresses) = (0_u64, 0_u64);
        for (address, entry) in &mut self.addresses {
            if entry.named {
                named_failures += u64::from(entry.window_failures);
                named_addresses += 1;
            }
            if let Some((failures, over, accounts)) = entry.end_window(threshold) {
                self.warnings.push_back(LoginWarning::Address { address: *address, failures, over, accounts });
            }
        }
        for (account, entry) in &mut self.accounts {
            // An account tried from one address only was said by that address.
            let threshold = if entry.names.first.len() >= 2 { threshold } else { u32::MAX };
            if let Some((failures, over, addresses)) = entry.end_window(threshold) {
                self.warnings.push_back(LoginWarning::Account { account: account.clone(), failures, over, addresses });
            }
        }
        let others = self.window_failures.saturating_sub(named_failures);
        if others >= u64::from(threshold) {
            self.warnings.push_back(LoginWarning::Others {
                failures: others,
                addresses: self.window_addresses.saturating_sub(named_addresses),
                window: self.limits.window,
            });
        }
        self.named = 0;
        self.window_failures = 0;
        self.window_addresses = 0;
    }
}

/// What one address or one account has done.
#[derive(Debug)]
struct Entry {
    /// Failures in a row (counted from nothing again after `forget_after`).
    streak: u32,
    last_failure: Timestamp,
    /// The last failure or success (what forgetting counts from).
    last_seen: Timestamp,
    window_failures: u32,
    window_first: Timestamp,
    window_last: Timestamp,
    /// Named in a warning this window (then its total is said at the end
    /// if it grew after).
    named: bool,
    /// Its failures when it was named.
    named_at: u32,
    /// Over the threshold in the window before: its total is said at the
    /// end of this one, not at the crossing (one line a window under a
    /// steady flood).
    carried: bool,
    /// The other side's names: accounts an address tried, addresses an
    /// account was tried from (this window).
    names: Names,
    /// A success after its streak was said (once per entry's life).
    success_said: bool,
}

impl Entry {
    fn new(now: Timestamp) -> Self {
        Self {
            streak: 0,
            last_failure: now,
            last_seen: now,
            window_failures: 0,
            window_first: now,
            window_last: now,
            named: false,
            named_at: 0,
            carried: false,
            names: Names::default(),
            success_said: false,
        }
    }

    /// Counts a failure; whether it is to be named now (it crossed the
    /// threshold this window, and `may_name` agrees).
    fn fail(
        &mut self,
        now: Timestamp,
        limits: &LoginLimits,
        name: Option<&str>,
        may_name: impl Fn(&Names) -> bool,
    ) -> bool {
        self.streak = self.streak_at(now, limits).saturating_add(1);
        if self.streak == 1 {
            self.success_said = false;
        }
        self.last_failure = now;
        self.last_seen = now;
        if self.window_failures == 0 {
            self.window_first = now;
            self.names = Names::default();
        }
        self.window_failures = self.window_failures.saturating_add(1);
        self.window_last = now;
        if let Some(name) = name
            && !self.names.first.iter().any(|n| n == name)
        {
            if self.names.first.len() < Logins::NAMES {
                self.names.first.push(name.to_owned());
            } else {
                self.names.more = true;
            }
        }
        !self.named && self.window_failures >= limits.warn_per_window && may_name(&self.names)
    }

    /// Marks the entry named; the warning to give now (none if it was over
    /// the threshold in the window before: its total comes at the end).
    fn warning_now(
        &mut self,
        now: Timestamp,
        make: impl FnOnce(u32, Duration, Names) -> LoginWarning,
    ) -> Option<LoginWarning> {
        self.named = true;
        self.named_at = self.window_failures;
        (!self.carried).then(|| make(self.window_failures, now.saturating_since(self.window_first), self.names.clone()))
    }

    /// The window's total to say if it was named, and a fresh window.
    fn end_window(&mut self, threshold: u32) -> Option<(u32, Duration, Names)> {
        let failures = std::mem::take(&mut self.window_failures);
        let total = (self.named && (self.carried || failures > self.named_at))
            .then(|| (failures, self.window_last.saturating_since(self.window_first), self.names.clone()));
        self.carried = failures >= threshold;
        self.named = false;
        self.named_at = 0;
        total
    }

    fn streak_at(&self, now: Timestamp, limits: &LoginLimits) -> u32 {
        if self.streak > 0 && now.saturating_since(self.last_failure) >= limits.forget_after { 0 } else { self.streak }
    }

    fn wait(&self, now: Timestamp, limits: &LoginLimits) -> Duration {
        let beyond = self.streak_at(now, limits).saturating_sub(limits.free_failures);
        if beyond == 0 {
            return Duration::ZERO;
        }
        let delay = limits.first_delay.saturating_mul(1 << (beyond - 1).min(20)).min(limits.max_delay);
        (self.last_failure + delay).saturating_since(now)
    }
}

/// The entry of `key`, made (forgetting another if `map` is full).
fn entry<K: Ord + Copy>(
    map: &mut BTreeMap<K, Entry>,
    key: K,
    max: usize,
    threshold: u32,
    now: Timestamp,
) -> &mut Entry {
    if !map.contains_key(&key) {
        make_room(map, max, threshold);
    }
    map.entry(key).or_insert_with(|| Entry::new(now))
}

fn entry_for<'m>(
    map: &'m mut BTreeMap<String, Entry>,
    key: &str,
    max: usize,
    threshold: u32,
    now: Timestamp,
) -> &'m mut Entry {
    if !map.contains_key(key) {
        make_room(map, max, threshold);
    }
    map.entry(key.to_owned()).or_insert_with(|| Entry::new(now))
}

/// Forgets entries until there is room for one more: those named in a
/// warning last, then those over the threshold, the quietest first, so
/// that a flood of new addresses cannot wipe out the record of the
/// guessers already seen.
fn make_room<K: Ord + Clone>(map: &mut BTreeMap<K, Entry>, max: usize, threshold: u32) {
    while map.len() >= max.max(Logins::NAMED * 2 + 1) {
        let victim = map
            .iter()
            .min_by_key(|(_, e)| (e.named, e.window_failures >= threshold, e.last_seen))
            .map(|(k, _)| k.clone());
        match victim {
            Some(key) => map.remove(&key),
            None => break,
        };
    }
}

/// An account name as it may be logged and kept: no control characters
/// (a name is the stranger's to choose), at most
/// [`Logins::ACCOUNT_CHARS`] characters, `(none)` for no name.
fn shown_account(account: &str) -> String {
    if account.is_empty() {
        return "(none)".to_owned();
    }
    let mut shown: String =
        account.chars().take(Logins::ACCOUNT_CHARS).map(|c| if c.is_control() { '?' } else { c }).collect();
    if account.chars().nth(Logins::ACCOUNT_CHARS).is_some() {
        shown.push('…');
    }
    shown
}

impl fmt::Display for LoginWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Address { address, failures, over, accounts } if accounts.first.is_empty() => {
                write!(f, "{failures} failed log-ins {} from {address} (accounts tried: not known)", Span(*over))
            }
            Self::Address { address, failures, over, accounts } => {
                write!(f, "{failures} failed log-ins {} from {address} (accounts tried: {accounts})", Span(*over))
            }
            Self::Account { account, failures, over, addresses } => {
                write!(f, "{failures} failed log-ins {} as {account} (from {addresses})", Span(*over))
            }
            Self::Others { failures, addresses, window } => write!(
                f,
                "{failures} failed log-ins in the last {} s from {addresses} address(es) not named in a warning",
                window.as_secs()
            ),
            Self::SucceededAfter { address, account, failures } => write!(
                f,
                "log-in as {account} from {address} accepted after {failures} failed log-ins in a row from that \
                 address: if that was not the account's owner, change its password"
            ),
        }
    }
}

impl fmt::Display for Names {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.first.join(", "))?;
        if self.more {
            f.write_str(" and others")?;
        }
        Ok(())
    }
}

/// "in 2.5 s" / "in 37 s": the time a count took.
struct Span(Duration);

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < Duration::from_secs(10) {
            write!(f, "in {:.1} s", self.0.as_secs_f64())
        } else {
            write!(f, "in {} s", self.0.as_secs())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("a test address")
    }

    fn at_ms(ms: u64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    fn drain(logins: &mut Logins, now: Timestamp) -> Vec<LoginWarning> {
        std::iter::from_fn(|| logins.poll_warning(now)).collect()
    }

    #[test]
    fn the_threshold_warns_once_naming_the_address_and_the_accounts_tried() {
        let mut logins = Logins::new(LoginLimits::default());
        for i in 0..9 {
            logins.failed(at_ms(i * 100), ip("10.0.0.5"), if i % 2 == 0 { "operator" } else { "admin" });
        }
        assert_eq!(drain(&mut logins, at_ms(900)), vec![], "9 failures are under the threshold of 10");
        logins.failed(at_ms(900), ip("10.0.0.5"), "operator");
        let said = drain(&mut logins, at_ms(900));
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(said[0].to_string(), "10 failed log-ins in 0.9 s from 10.0.0.5 (accounts tried: operator, admin)");
        // More failures in the same window say nothing until it ends.
        for i in 10..50 {
            logins.failed(at_ms(i * 100), ip("10.0.0.5"), "operator");
        }
        assert_eq!(drain(&mut logins, at_ms(5_000)), vec![]);
        assert_eq!(logins.poll_timeout(), Some(at_ms(60_000)));
        assert_eq!(drain(&mut logins, at_ms(59_999)), vec![]);
        let said = drain(&mut logins, at_ms(60_000));
        assert_eq!(
            said.iter().map(ToString::to_string).collect::<Vec<_>>(),
            ["50 failed log-ins in 4.9 s from 10.0.0.5 (accounts tried: operator, admin)"]
        );
        // Quiet since: the next window has nothing to say, and then none runs.
        assert_eq!(drain(&mut logins, at_ms(120_000)), vec![]);
        assert_eq!(logins.poll_timeout(), None);
    }

    #[test]
    fn a_flood_is_a_line_a_window_however_many_failures() {
        let mut logins = Logins::new(LoginLimits::default());
        let mut lines = Vec::new();
        // 20 000 guesses in 8.9 s, as in issue 29, then the same rate for
        // five minutes: 674 000 failures.
        let mut t_us = 0;
        while t_us < 300_000_000 {
            logins.failed(
                Timestamp::from_micros(t_us),
                ip("10.0.0.5"),
                if t_us % 2 == 0 { "operator" } else { "admin" },
            );
            lines.extend(drain(&mut logins, Timestamp::from_micros(t_us)));
            t_us += 445;
        }
        lines.extend(drain(&mut logins, Timestamp::from_micros(t_us + 60_000_000)));
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        // The crossing, then one total per window (5 windows and the one the
        // last failures fell in).
        assert_eq!(text.len(), 6, "{text:#?}");
        assert!(text[0].starts_with("10 failed log-ins in 0.0 s from 10.0.0.5 (accounts tried:"), "{}", text[0]);
        for total in &text[1..] {
            assert!(total.contains("failed log-ins in 59 s from 10.0.0.5"), "{total}");
        }
        assert!(text[1].starts_with("134832 failed"), "{}", text[1]);
        assert_eq!(logins.remembered(), (1, 2));
    }

    #[test]
    fn an_account_tried_from_several_addresses_is_named_and_from_one_it_is_not() {
        let mut logins = Logins::new(LoginLimits::default());
        for i in 0..30 {
            logins.failed(at_ms(i), ip("10.0.0.7"), "display");
        }
        let said = drain(&mut logins, at_ms(30));
        assert!(matches!(&said[..], [LoginWarning::Address { .. }]), "{said:?}");

        // A slow, spread guessing: 3 failures from each of 8 addresses.
        for i in 0..24 {
            logins.failed(at_ms(100 + i * 100), ip(&format!("10.0.1.{}", i % 8)), "operator");
        }
        let said: Vec<String> = drain(&mut logins, at_ms(2_500)).iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "10 failed log-ins in 0.9 s as operator (from 10.0.1.0, 10.0.1.1, 10.0.1.2, 10.0.1.3, 10.0.1.4 and others)"
            ]
        );
    }

    #[test]
    fn the_delay_grows_after_the_free_failures_to_its_cap_and_runs_out() {
        let limits = LoginLimits::default();
        let mut logins = Logins::new(limits);
        let (a, t0) = (ip("192.0.2.1"), at_ms(1_000));
        assert_eq!(logins.wait(t0, a, "operator"), None);
        for _ in 0..5 {
            logins.failed(t0, a, "operator");
        }
        assert_eq!(logins.wait(t0, a, "operator"), None, "5 failures are free (a mistyped password or two)");
        let mut waits = Vec::new();
        for _ in 0..8 {
            logins.failed(t0, a, "operator");
            waits.push(logins.wait(t0, a, "operator").expect("a delay").as_secs());
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        // Counted from the last failure.
        assert_eq!(logins.wait(t0 + Duration::from_secs(20), a, "operator"), Some(Duration::from_secs(10)));
        assert_eq!(logins.wait(t0 + Duration::from_secs(30), a, "operator"), None);
        // The same address for another account, another address for the same account.
        assert_eq!(logins.wait(t0, a, "admin"), Some(Duration::from_secs(30)));
        assert_eq!(logins.wait(t0, ip("192.0.2.2"), "operator"), Some(Duration::from_secs(30)));
        assert_eq!(logins.wait(t0, ip("192.0.2.2"), "admin"), None);
        // After a quiet quarter of an hour the next failure is free again.
        let later = t0 + limits.forget_after;
        logins.failed(later, a, "operator");
        assert_eq!(logins.wait(later, a, "operator"), None);
    }

    #[test]
    fn guessing_from_many_addresses_is_slowed_by_the_account() {
        let mut logins = Logins::new(LoginLimits::default());
        for i in 0..8 {
            logins.failed(at_ms(i), ip(&format!("198.51.100.{i}")), "operator");
        }
        assert_eq!(logins.wait(at_ms(8), ip("198.51.100.200"), "operator"), Some(Duration::from_millis(3_999)));
    }

    #[test]
    fn a_success_clears_the_accounts_delay_but_not_the_addresses() {
        let mut logins = Logins::new(LoginLimits::default());
        let (a, t) = (ip("10.0.0.5"), at_ms(0));
        for _ in 0..7 {
            logins.failed(t, a, "operator");
        }
        // The stranger's own display account gets in: the address still waits.
        logins.succeeded(t, a, "display");
        assert_eq!(logins.wait(t, a, "operator"), Some(Duration::from_secs(2)));
        // The operator gets in from elsewhere: nothing holds the account.
        logins.succeeded(t, ip("10.0.0.9"), "operator");
        assert_eq!(logins.wait(t, ip("10.0.0.9"), "operator"), None);
        assert_eq!(logins.wait(t, a, "operator"), Some(Duration::from_secs(2)));
    }

    #[test]
    fn a_success_after_many_failures_from_its_address_is_said_once() {
        let mut logins = Logins::new(LoginLimits::default());
        let a = ip("10.0.0.5");
        for i in 0..200 {
            logins.failed(at_ms(i), a, "operator");
        }
        drain(&mut logins, at_ms(200));
        logins.succeeded(at_ms(300), a, "operator");
        logins.succeeded(at_ms(400), a, "operator");
        let said: Vec<String> = drain(&mut logins, at_ms(400)).iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            ["log-in as operator from 10.0.0.5 accepted after 200 failed log-ins in a row from that address: if that \
              was not the account's owner, change its password"]
        );
        // A few mistyped passwords then the right one say nothing.
        let b = ip("10.0.0.6");
        for i in 0..3 {
            logins.failed(at_ms(500 + i), b, "admin");
        }
        logins.succeeded(at_ms(600), b, "admin");
        assert_eq!(drain(&mut logins, at_ms(600)), vec![]);
    }

    #[test]
    fn memory_and_lines_are_bounded_when_every_guess_comes_from_a_new_address() {
        let limits = LoginLimits { max_addresses: 100, max_accounts: 30, ..LoginLimits::default() };
        let mut logins = Logins::new(limits);
        let mut lines = Vec::new();
        // 50 addresses over the threshold, then 10 000 addresses with one
        // failure each and 10 000 account names.
        for n in 0..50_u32 {
            for k in 0..12 {
                let now = at_ms(u64::from(n) * 12 + k);
                logins.failed(now, IpAddr::from([10, 1, 0, n as u8]), "operator");
                lines.extend(drain(&mut logins, now));
            }
        }
        for n in 0..10_000_u32 {
            let now = at_ms(1_000 + u64::from(n));
            logins.failed(now, IpAddr::from((0x0a02_0000 + n).to_be_bytes()), &format!("user{n}"));
            lines.extend(drain(&mut logins, now));
            assert!(logins.remembered().0 <= 100 && logins.remembered().1 <= 30);
        }
        let named_now = lines.len();
        assert_eq!(named_now, Logins::NAMED, "{lines:#?}");
        lines.extend(drain(&mut logins, at_ms(60_000)));
        let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
        // The named ones grew after their crossing (12 each): their totals,
        // the account's, and all the others in one line.
        assert_eq!(text.len(), 2 * Logins::NAMED + 1, "{text:#?}");
        assert_eq!(text[Logins::NAMED], "12 failed log-ins in 0.0 s from 10.1.0.0 (accounts tried: operator)");
        assert_eq!(
            text[2 * Logins::NAMED - 1],
            "600 failed log-ins in 0.6 s as operator (from 10.1.0.0, 10.1.0.1, 10.1.0.2, 10.1.0.3, 10.1.0.4 and others)"
        );
        assert_eq!(
            text[2 * Logins::NAMED],
            "10492 failed log-ins in the last 60 s from 10041 address(es) not named in a warning"
        );
    }

    #[test]
    fn account_names_are_cut_and_cleaned_before_they_are_kept_or_said() {
        let mut logins = Logins::new(LoginLimits { warn_per_window: 1, ..LoginLimits::default() });
        logins.failed(at_ms(0), ip("10.0.0.5"), &format!("evil\n2026-01-01 INFO fake line{}", "x".repeat(500)));
        logins.failed(at_ms(0), ip("10.0.0.6"), "");
        let said: Vec<String> = drain(&mut logins, at_ms(0)).iter().map(ToString::to_string).collect();
        assert!(!said[0].contains('\n'), "{said:?}");
        assert!(said[0].contains("evil?2026-01-01 INFO fake line"), "{said:?}");
        assert!(said[0].len() < 200, "{said:?}");
        assert!(said[1].contains("(accounts tried: (none))"), "{said:?}");
    }

    #[test]
    fn a_failure_whose_account_is_not_known_counts_and_slows_the_address() {
        let mut logins = Logins::new(LoginLimits::default());
        let a = ip("10.0.0.5");
        for i in 0..10 {
            logins.failed_unknown_account(at_ms(i * 10), a);
        }
        let said: Vec<String> = drain(&mut logins, at_ms(100)).iter().map(ToString::to_string).collect();
        assert_eq!(said, ["10 failed log-ins in 0.1 s from 10.0.0.5 (accounts tried: not known)"]);
        assert_eq!(logins.wait(at_ms(90), a, "anyone"), Some(Duration::from_secs(16)));
        assert_eq!(logins.remembered(), (1, 0));
    }

    #[test]
    fn an_address_quiet_for_a_while_is_forgotten() {
        let limits = LoginLimits::default();
        let mut logins = Logins::new(limits);
        logins.failed(at_ms(0), ip("10.0.0.5"), "operator");
        assert_eq!(logins.remembered(), (1, 1));
        assert_eq!(logins.poll_warning(Timestamp::ZERO + limits.forget_after), None);
        logins.failed(Timestamp::ZERO + limits.forget_after, ip("10.0.0.6"), "admin");
        assert_eq!(logins.remembered(), (1, 1));
    }
}
