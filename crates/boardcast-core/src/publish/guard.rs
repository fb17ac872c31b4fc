//! The gate every message on the commands topic passes before it may touch
//! a game: proof that the operator sent it (an HMAC-SHA256 over the exact
//! request with the operator key), freshness, a replay guard on its `id`,
//! and bounds on its size and rate. Sans-I/O: the caller gives the payload,
//! whether the broker marked it retained, and the wall-clock time.
//!
//! The envelope (docs/operator.md):
//! `{"signed": "<the request JSON as a string>", "mac": "<64 lowercase hex>"}`
//! where `mac` is HMAC-SHA256(key, UTF-8 bytes of `signed`). Signing the
//! string as sent, not a re-serialisation, means no two programs have to
//! agree on how JSON is written.

use std::collections::{HashMap, VecDeque};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::commands::{Request, parse_request};

type HmacSha256 = Hmac<Sha256>;

/// The oldest request that is still applied: older ones waited in a broker
/// while the daemon was away, or are replays.
pub const MAX_AGE_MS: i64 = 5 * 60 * 1000;
/// How far ahead of the daemon's clock a request's `ts_ms` may be: the
/// tolerated skew between the clocks of `ctl`'s machine and the daemon's.
pub const MAX_FUTURE_MS: i64 = 30 * 1000;
/// The largest message on the commands topic that is read at all.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;
/// Commands per second a bridge accepts, on average…
pub(crate) const RATE_PER_S: u64 = 20;
/// …and in one burst.
pub(crate) const BURST: u64 = 40;
/// The longest request `id`.
pub(crate) const MAX_ID_CHARS: usize = 128;
/// Ids remembered at most by the replay guard (more than the rate bound
/// lets through in the freshness window, so never reached in practice).
const MAX_REMEMBERED: usize = 20_000;
/// Retained messages remembered as already answered.
const MAX_RETAINED_REMEMBERED: usize = 64;

/// The operator key: 32 bytes only the daemon and `ctl` hold.
#[derive(Clone, PartialEq, Eq)]
pub struct OperatorKey([u8; 32]);

impl std::fmt::Debug for OperatorKey {
    /// Never prints the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OperatorKey(…)")
    }
}

/// A key file's line that is not a key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected one line of 64 lowercase hexadecimal characters (32 bytes), found {found}")]
pub struct BadKey {
    /// What was found instead, described without echoing the secret.
    pub found: String,
}

impl OperatorKey {
    /// A key from its 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// A key from the key file's text: one line of 64 lowercase hex
    /// characters (a final newline allowed).
    ///
    /// # Errors
    ///
    /// Anything else, described without the secret itself.
    pub fn from_hex(text: &str) -> Result<Self, BadKey> {
        let line = text.strip_suffix('\n').unwrap_or(text);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let found = || {
            let lines = text.lines().count();
            BadKey {
                found: format!(
                    "{} character(s) on {lines} line(s){}",
                    line.chars().count(),
                    if line.chars().all(|c| c.is_ascii_hexdigit()) { "" } else { ", not all hexadecimal" }
                ),
            }
        };
        let bytes = decode_hex(line).ok_or_else(found)?;
        Ok(Self(bytes))
    }

    /// The key file's text (without the newline).
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }

    fn mac(&self) -> HmacSha256 {
        <HmacSha256 as Mac>::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    /// HMAC-SHA256 of `message`, in lowercase hex.
    pub(crate) fn mac_hex(&self, message: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(message);
        hex(&mac.finalize().into_bytes())
    }

    /// Whether `mac_hex` (64 lowercase hex characters) is the MAC of
    /// `message`, compared in constant time.
    pub(crate) fn verify(&self, message: &[u8], mac_hex: &str) -> bool {
        let Some(expected) = decode_hex(mac_hex) else { return false };
        let mut mac = self.mac();
        mac.update(message);
        mac.verify_slice(&expected).is_ok()
    }
}

/// The envelope on the commands topic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The request JSON, exactly as signed.
    pub(crate) signed: String,
    /// HMAC-SHA256(key, UTF-8 bytes of `signed`), 64 lowercase hex.
    pub(crate) mac: String,
}

/// The envelope for `request` (the request JSON as a string), as bytes
/// to publish.
pub fn seal(key: &OperatorKey, request: &str) -> Vec<u8> {
    let envelope = Envelope { signed: request.to_owned(), mac: key.mac_hex(request.as_bytes()) };
    serde_json::to_vec(&envelope).expect("strings serialise")
}

/// What to do with a message on the commands topic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Apply it.
    Apply(Request),
    /// Refuse it.
    Refuse(Refusal),
    /// Nothing: an empty message (a retained one being cleared).
    Ignore,
}

/// A refused message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The request's id as far as it could be read (unverified: only to
    /// let the sender match the answer).
    pub id: String,
    /// Its board, likewise.
    pub board: String,
    /// Why, in words for the operator.
    pub reason: String,
    /// Answer on `replies` (not for every message of a flood, and only
    /// once for a retained message that comes again).
    pub answer: bool,
    /// The message was retained: clear it (an empty retained message) so
    /// that the broker does not deliver it again.
    pub clear_retained: bool,
}

/// The commands gate of one bridge.
#[derive(Debug)]
pub struct Guard {
    key: OperatorKey,
    /// Ids applied, with the time they may be forgotten.
    seen: HashMap<String, i64>,
    expiries: VecDeque<(i64, String)>,
    /// Token bucket, in thousandths of a command.
    tokens: u64,
    refilled_ms: i64,
    /// A flood is being refused: its first message was answered.
    flooding: bool,
    /// Retained messages already answered (their SHA-256).
    retained: VecDeque<[u8; 32]>,
}

impl Guard {
    /// Ids the replay guard holds now.
    #[cfg(test)]
    pub(crate) fn remembered(&self) -> usize {
        self.seen.len()
    }

    /// A gate letting through what `key` signed.
    pub fn new(key: OperatorKey) -> Self {
        Self {
            key,
            seen: HashMap::new(),
            expiries: VecDeque::new(),
            tokens: BURST * 1000,
            refilled_ms: i64::MIN,
            flooding: false,
            retained: VecDeque::new(),
        }
    }

    /// Judges one message received at `now_ms` (ms since the epoch).
    pub fn handle_message(&mut self, now_ms: i64, payload: &[u8], retained: bool) -> Verdict {
        if payload.is_empty() {
            return Verdict::Ignore;
        }
        let refuse = |id: String, board: String, reason: String| {
            Verdict::Refuse(Refusal { id, board, reason, answer: true, clear_retained: retained })
        };
        if !self.take_token(now_ms) {
            let (id, board) = peek(payload);
            let answer = !std::mem::replace(&mut self.flooding, true);
            return Verdict::Refuse(Refusal {
                id,
                board,
                reason: format!(
                    "more than {RATE_PER_S} commands a second (bursts of {BURST}) reached this bridge: refused until they slow down"
                ),
                answer,
                clear_retained: retained,
            });
        }
        self.flooding = false;
        if payload.len() > MAX_COMMAND_BYTES {
            return refuse(
                String::new(),
                String::new(),
                format!("the command is {} bytes; commands are at most {MAX_COMMAND_BYTES} bytes", payload.len()),
            );
        }
        if retained {
            let digest: [u8; 32] = Sha256::digest(payload).into();
            let first = !self.retained.contains(&digest);
            if first {
                if self.retained.len() == MAX_RETAINED_REMEMBERED {
                    self.retained.pop_front();
                }
                self.retained.push_back(digest);
            }
            let (id, board) = peek(payload);
            return Verdict::Refuse(Refusal {
                id,
                board,
                reason: "a retained command is never applied (it would be delivered again at every connection); the daemon cleared it: send it again without retain".into(),
                answer: first,
                clear_retained: true,
            });
        }
        let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
            let (id, board) = peek(payload);
            return refuse(
                id,
                board,
                "not a signed command: expected {\"signed\": <request JSON as a string>, \"mac\": <HMAC-SHA256 in hex>} (boardcast ctl signs by itself; docs/operator.md)".into(),
            );
        };
        if !self.key.verify(envelope.signed.as_bytes(), &envelope.mac) {
            let (id, board) = peek(envelope.signed.as_bytes());
            return refuse(
                id,
                board,
                "not signed with this daemon's operator key ([operator] key_file; docs/operator.md)".into(),
            );
        }
        self.signed(now_ms, &envelope.signed)
    }

    /// A request whose signature holds: freshness, replay, then the
    /// command itself.
    fn signed(&mut self, now_ms: i64, signed: &str) -> Verdict {
        let (id, board) = peek(signed.as_bytes());
        let refuse = |reason: String| {
            Verdict::Refuse(Refusal {
                id: id.clone(),
                board: board.clone(),
                reason,
                answer: true,
                clear_retained: false,
            })
        };
        let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(signed) else {
            return refuse("the signed request is not a JSON object".into());
        };
        match fields.get("id") {
            Some(Value::String(id)) if !id.is_empty() && id.chars().count() <= MAX_ID_CHARS => {}
            _ => return refuse(format!("the request has no \"id\" (a string of 1 to {MAX_ID_CHARS} characters)")),
        }
        let Some(sent) = fields.get("ts_ms").and_then(Value::as_i64) else {
            return refuse("the request has no \"ts_ms\" (when it was sent, ms since 1970)".into());
        };
        let age = now_ms.saturating_sub(sent);
        if age > MAX_AGE_MS {
            return refuse(format!(
                "the request is {} s old (at most {} s: sent while the daemon was away, or a replay); send it again",
                age / 1000,
                MAX_AGE_MS / 1000
            ));
        }
        if -age > MAX_FUTURE_MS {
            return refuse(format!(
                "the request is dated {} s in the future (clocks may differ by at most {} s): set the sender's clock",
                -age / 1000,
                MAX_FUTURE_MS / 1000
            ));
        }
        self.forget(now_ms);
        if self.seen.contains_key(&id) {
            return refuse(format!(
                "the request {id:?} was already received (a replay): give every request its own id"
            ));
        }
        if self.seen.len() >= MAX_REMEMBERED {
            return refuse("too many commands in the last minutes: refused until older ones are forgotten".into());
        }
        let until = now_ms.max(sent).saturating_add(MAX_AGE_MS + MAX_FUTURE_MS);
        self.seen.insert(id.clone(), until);
        self.expiries.push_back((until, id.clone()));
        match parse_request(signed.as_bytes()) {
            Ok(request) => Verdict::Apply(request),
            Err((_, reason)) => refuse(reason),
        }
    }

    /// Forgets ids too old to pass the freshness check again.
    fn forget(&mut self, now_ms: i64) {
        while let Some((until, _)) = self.expiries.front()
            && *until < now_ms
        {
            let (_, id) = self.expiries.pop_front().expect("just looked");
            self.seen.remove(&id);
        }
    }

    fn take_token(&mut self, now_ms: i64) -> bool {
        if self.refilled_ms == i64::MIN {
            self.refilled_ms = now_ms;
        }
        let elapsed = u64::try_from(now_ms.saturating_sub(self.refilled_ms)).unwrap_or(0);
        self.refilled_ms = self.refilled_ms.max(now_ms);
        self.tokens = self.tokens.saturating_add(elapsed.saturating_mul(RATE_PER_S)).min(BURST * 1000);
        if self.tokens >= 1000 {
            self.tokens -= 1000;
            true
        } else {
            false
        }
    }
}

/// The `id` and `board` of a payload (an envelope's request, or a bare
/// request), as far as they can be read: for the answer only.
fn peek(payload: &[u8]) -> (String, String) {
    let value = match serde_json::from_slice::<Value>(payload) {
        Ok(Value::Object(fields)) => match fields.get("signed") {
            Some(Value::String(signed)) => serde_json::from_str(signed).unwrap_or(Value::Null),
            _ => Value::Object(fields),
        },
        _ => Value::Null,
    };
    let text = |v: &Value| match v {
        Value::String(s) => s.chars().take(MAX_ID_CHARS).collect(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    (text(&value["id"]), text(&value["board"]))
}

/// The JSON of a request for `board` with `id` sent at `ts_ms`: what `ctl`
/// signs.
pub fn request_json(id: &str, board: &str, ts_ms: i64, command: &crate::operator::Command) -> String {
    let mut request = json!({"id": id, "board": board, "ts_ms": ts_ms});
    if let (Value::Object(fields), Value::Object(command)) = (&mut request, command.to_json()) {
        fields.extend(command);
    }
    request.to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// 32 bytes from exactly 64 lowercase hex characters.
fn decode_hex(text: &str) -> Option<[u8; 32]> {
    let digits = text.as_bytes();
    if digits.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut bytes = [0; 32];
    for (i, pair) in digits.chunks(2).enumerate() {
        bytes[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(bytes)
}

#[cfg(test)]
mod tests;
