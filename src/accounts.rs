//! The broker's accounts: who may log in to the managed Mosquitto and what
//! each role may read and write. Plain data and text: the accounts file
//! (`name:role:hash` lines), password hashes in Mosquitto's own `$7$`
//! format (so that the generated `password_file` is the same hashes
//! without the roles), and the generated `acl_file`. Random salts come
//! from the caller; nothing here touches a file.

use std::fmt;

use base64::{Engine, engine::general_purpose::STANDARD};
use hmac::Hmac;
use sha2::Sha512;

/// The account the daemon itself logs in with (a fresh password at every
/// start); no account in the file may have this name.
pub const DAEMON_ACCOUNT: &str = "boardcast-daemon";

/// PBKDF2 iterations Mosquitto uses for `$7$` hashes (`mosquitto_passwd`'s
/// default; the count is stored in each hash, so others are read too).
pub const ITERATIONS: u32 = 101;

/// The salt's length in bytes, as `mosquitto_passwd` makes it.
pub const SALT_BYTES: usize = 12;

/// The derived key's length (a SHA-512 output).
const KEY_BYTES: usize = 64;

/// What an account may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sends commands (`boardcast ctl`, a control panel) and reads
    /// everything under the root.
    Operator,
    /// An arbiter's console: reads the live tree (with alerts), the public
    /// tree, the bridges' status and their notices (a game lichess refused:
    /// the arbiter is the one to correct it).
    Live,
    /// A display: reads the public tree and the bridges' status.
    Public,
}

impl Role {
    /// Every role, for messages.
    pub const ALL: [Self; 3] = [Self::Operator, Self::Live, Self::Public];

    /// `"operator"`, `"live"`, `"public"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Operator => "operator",
            Self::Live => "live",
            Self::Public => "public",
        }
    }

    /// The ACL lines (without the `user` line) for this role under `root`.
    pub fn acl(self, root: &str) -> Vec<String> {
        match self {
            Self::Operator => {
                vec![format!("topic write {root}/v1/bridges/+/commands"), format!("topic read {root}/#")]
            }
            Self::Live => vec![
                format!("topic read {root}/v1/live/#"),
                format!("topic read {root}/v1/public/#"),
                format!("topic read {root}/v1/bridges/+/status"),
                format!("topic read {root}/v1/bridges/+/notices"),
                format!("topic read {root}/v1/bridges/+/boards/+/status"),
            ],
            Self::Public => vec![
                format!("topic read {root}/v1/public/#"),
                format!("topic read {root}/v1/bridges/+/status"),
                format!("topic read {root}/v1/bridges/+/boards/+/status"),
            ],
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Role {
    type Err = AccountError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|r| r.name() == s).ok_or_else(|| AccountError::Role(s.chars().take(40).collect()))
    }
}

/// One account: a name, its role and its password's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The login name.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// `$7$<iterations>$<salt>$<hash>`, as Mosquitto writes it.
    pub hash: String,
}

/// What is wrong with an account or the accounts file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    /// Not a role.
    #[error("{0:?} is not a role: operator, live or public")]
    Role(String),
    /// A name that cannot be one.
    #[error(
        "{0:?} cannot be an account name: 1 to 64 letters, digits, '.', '_' or '-', not \"{DAEMON_ACCOUNT}\" (the daemon's own)"
    )]
    Name(String),
    /// A line of the file that is not `name:role:hash`.
    #[error("line {line}: {why} (each line is name:role:hash; `boardcast accounts add` writes them)")]
    Line {
        /// The line number, from 1.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// Not a `$7$` hash.
    #[error("not a Mosquitto $7$ password hash")]
    Hash,
}

/// Checks an account name: 1 to 64 of `[A-Za-z0-9._-]`, not the daemon's.
///
/// # Errors
///
/// [`AccountError::Name`] with the name.
pub fn check_name(name: &str) -> Result<(), AccountError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && name != DAEMON_ACCOUNT;
    if ok { Ok(()) } else { Err(AccountError::Name(name.chars().take(80).collect())) }
}

/// Reads an accounts file: `name:role:hash` lines; empty lines and lines
/// starting with `#` are skipped.
///
/// # Errors
///
/// The first line that is not an account, with its number.
pub fn parse(text: &str) -> Result<Vec<Account>, AccountError> {
    let mut accounts: Vec<Account> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: String| AccountError::Line { line: i + 1, why };
        let mut parts = line.splitn(3, ':');
        let (Some(name), Some(role), Some(hash)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad("not three fields".into()));
        };
        check_name(name).map_err(|e| bad(e.to_string()))?;
        let role: Role = role.parse().map_err(|e: AccountError| bad(e.to_string()))?;
        Hash::parse(hash).map_err(|e| bad(e.to_string()))?;
        if accounts.iter().any(|a| a.name == name) {
            return Err(bad(format!("{name:?} appears twice")));
        }
        accounts.push(Account { name: name.to_owned(), role, hash: hash.to_owned() });
    }
    Ok(accounts)
}

/// The accounts file's text.
pub fn format(accounts: &[Account]) -> String {
    let mut text = String::from("# boardcast broker accounts: name:role:hash (`boardcast accounts add|list|remove`)\n");
    for a in accounts {
        text.push_str(&format!("{}:{}:{}\n", a.name, a.role, a.hash));
    }
    text
}

/// A parsed `$7$` hash.
struct Hash {
    iterations: u32,
    salt: Vec<u8>,
    key: Vec<u8>,
}

impl Hash {
    fn parse(text: &str) -> Result<Self, AccountError> {
        let rest = text.strip_prefix("$7$").ok_or(AccountError::Hash)?;
        let mut parts = rest.split('$');
        let (Some(iterations), Some(salt), Some(key), None) = (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(AccountError::Hash);
        };
        let iterations =
            iterations.parse::<u32>().ok().filter(|n| (1..=10_000_000).contains(n)).ok_or(AccountError::Hash)?;
        let salt = STANDARD.decode(salt).map_err(|_| AccountError::Hash)?;
        let key = STANDARD.decode(key).map_err(|_| AccountError::Hash)?;
        if salt.is_empty() || key.len() != KEY_BYTES {
            return Err(AccountError::Hash);
        }
        Ok(Self { iterations, salt, key })
    }
}

fn derive(password: &str, salt: &[u8], iterations: u32) -> [u8; KEY_BYTES] {
    let mut key = [0u8; KEY_BYTES];
    pbkdf2::pbkdf2::<Hmac<Sha512>>(password.as_bytes(), salt, iterations, &mut key)
        .expect("HMAC takes keys of any length");
    key
}

/// `password` hashed as Mosquitto's `$7$` (PBKDF2-HMAC-SHA512, 101
/// iterations, a 64-byte key, salt and key in standard base64).
pub fn hash_password(password: &str, salt: &[u8; SALT_BYTES]) -> String {
    let key = derive(password, salt, ITERATIONS);
    format!("$7${ITERATIONS}${}${}", STANDARD.encode(salt), STANDARD.encode(key))
}

/// Whether `password` is the one `hash` was made from (compared in
/// constant time).
pub fn verify(password: &str, hash: &str) -> bool {
    let Ok(parsed) = Hash::parse(hash) else { return false };
    let key = derive(password, &parsed.salt, parsed.iterations);
    key.iter().zip(&parsed.key).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

/// Who may connect without a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anonymous {
    /// Nobody.
    None,
    /// As a `public` account: displays with no setup.
    Public,
    /// As a `live` account (the demo's console, a closed network).
    Live,
}

/// Mosquitto's `password_file`: the daemon's account, then each account.
pub fn password_file(daemon_hash: &str, accounts: &[Account]) -> String {
    let mut text = format!("{DAEMON_ACCOUNT}:{daemon_hash}\n");
    for a in accounts {
        text.push_str(&format!("{}:{}\n", a.name, a.hash));
    }
    text
}

/// Mosquitto's `acl_file` for `root`: anonymous clients first (lines before
/// the first `user` apply to them), then the daemon, then each account by
/// its role.
pub fn acl_file(root: &str, anonymous: Anonymous, accounts: &[Account]) -> String {
    let mut text = String::from("# generated by boardcast at every start and reload: edit the accounts file instead\n");
    match anonymous {
        Anonymous::None => text.push_str("# anonymous clients are refused (allow_anonymous false)\n"),
        Anonymous::Public => {
            text.push_str("# anonymous clients: as public\n");
            for line in Role::Public.acl(root) {
                text.push_str(&format!("{line}\n"));
            }
        }
        Anonymous::Live => {
            text.push_str("# anonymous clients: as live\n");
            for line in Role::Live.acl(root) {
                text.push_str(&format!("{line}\n"));
            }
        }
    }
    text.push_str(&format!("\nuser {DAEMON_ACCOUNT}\ntopic readwrite {root}/#\n"));
    for a in accounts {
        text.push_str(&format!("\n# {}\nuser {}\n", a.role, a.name));
        for line in a.role.acl(root) {
            text.push_str(&format!("{line}\n"));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_made_by_mosquitto_passwd_is_checked() {
        // `mosquitto_passwd -b pw alice secret` (Mosquitto 2.0.11).
        let theirs = "$7$101$pmS5bFXSiwvvvkr+$RQ8XDvxaC4FzWX3YxDDagmgdkyk496SOwVjQeEACZOPWkjksl/bE+T11U0aBxGYdmRi26+Ibwfoflv7Cn+tWZQ==";
        assert!(verify("secret", theirs));
        assert!(!verify("Secret", theirs));
        assert!(!verify("secret", "$6$abc$def"));
    }

    #[test]
    fn our_hashes_have_mosquittos_shape_and_check() {
        let hash = hash_password("p@ss:word", &[7; SALT_BYTES]);
        let parts: Vec<&str> = hash.split('$').collect();
        assert_eq!(parts[..3], ["", "7", "101"]);
        assert_eq!(STANDARD.decode(parts[3]).unwrap().len(), 12);
        assert_eq!(STANDARD.decode(parts[4]).unwrap().len(), 64);
        assert!(verify("p@ss:word", &hash));
        assert!(!verify("p@ss:wore", &hash));
    }

    #[test]
    fn the_accounts_file_round_trips_and_bad_lines_are_named() {
        let accounts = vec![
            Account { name: "op".into(), role: Role::Operator, hash: hash_password("a", &[1; 12]) },
            Account { name: "tv-1".into(), role: Role::Public, hash: hash_password("b", &[2; 12]) },
        ];
        assert_eq!(parse(&format(&accounts)).unwrap(), accounts);
        for (text, message) in [
            ("op:admin:$7$101$AAAA$AAAA\n", "line 1: \"admin\" is not a role"),
            ("\nop:operator\n", "line 2: not three fields"),
            ("boardcast-daemon:operator:x\n", "cannot be an account name"),
            ("op:operator:plain\n", "not a Mosquitto $7$ password hash"),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.contains(message), "{error}");
        }
        assert!(check_name("a b").is_err());
        assert!(check_name("arbiter.1").is_ok());
    }

    #[test]
    fn the_acl_lets_only_the_daemon_and_operators_write() {
        let accounts = vec![
            Account { name: "op".into(), role: Role::Operator, hash: String::new() },
            Account { name: "tv".into(), role: Role::Public, hash: String::new() },
        ];
        let acl = acl_file("bc", Anonymous::Public, &accounts);
        let writes: Vec<&str> = acl.lines().filter(|l| l.contains("write")).collect();
        assert_eq!(writes, ["topic readwrite bc/#", "topic write bc/v1/bridges/+/commands"]);
        let anonymous = acl.split("\nuser ").next().unwrap();
        assert!(anonymous.contains("topic read bc/v1/public/#") && !anonymous.contains("live"), "{acl}");
        assert!(!acl_file("bc", Anonymous::None, &[]).split("\nuser ").next().unwrap().contains("topic"));
    }
}
