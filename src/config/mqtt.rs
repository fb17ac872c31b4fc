//! `[mqtt]` and `[mqtt.embedded]`: where the feed goes (the embedded broker, the
//! managed Mosquitto or the built-in one, or the hall's own), how the daemon
//! logs in (accounts, client certificates, TLS), and the public delay.

use super::{Config, ConfigError, error, quoted};
use crate::accounts::Anonymous;
use boardcast_core::publish::render::Language;
use serde::Deserialize;
use std::{net::SocketAddr, path::PathBuf, time::Duration};

/// `[mqtt]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct MqttConfig {
    pub enabled: bool,
    pub url: String,
    pub username: String,
    pub password: String,
    #[serde(default)]
    pub password_file: String,
    pub ca_file: String,
    #[serde(default)]
    pub client_cert_file: String,
    #[serde(default)]
    pub client_key_file: String,
    pub root: String,
    pub bridge_id: String,
    pub public_delay_s: u64,
    pub keep_alive_s: u64,
    pub languages: Vec<String>,
    pub max_queued_messages: usize,
    pub embedded: EmbeddedConfig,
}

/// `[mqtt.embedded]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct EmbeddedConfig {
    #[serde(default = "default_embedded_broker")]
    pub broker: String,
    #[serde(default)]
    pub mosquitto_bin: String,
    pub listen: String,
    pub ws_listen: String,
    #[serde(default = "default_accounts_file")]
    pub accounts_file: PathBuf,
    #[serde(default = "default_anonymous")]
    pub anonymous: String,
    #[serde(default = "default_max_connections")]
    pub max_connections: u32,
    #[serde(default = "default_memory_limit_mb")]
    pub memory_limit_mb: u32,
    #[serde(default = "default_failed_logins_warn_per_min")]
    pub failed_logins_warn_per_min: u32,
    #[serde(default)]
    pub tls_cert_file: String,
    #[serde(default)]
    pub tls_key_file: String,
}

fn default_embedded_broker() -> String {
    "auto".into()
}

fn default_accounts_file() -> PathBuf {
    "mqtt-accounts".into()
}

fn default_anonymous() -> String {
    "public".into()
}

const fn default_max_connections() -> u32 {
    4096
}

const fn default_memory_limit_mb() -> u32 {
    128
}

const fn default_failed_logins_warn_per_min() -> u32 {
    10
}

/// The MQTT settings, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mqtt {
    /// Which broker.
    pub broker: BrokerChoice,
    /// User name and password, if the broker wants them.
    pub credentials: Option<(String, String)>,
    /// A file holding the password (its first line), read by the binary
    /// when `credentials` has a name and no password.
    pub password_file: Option<PathBuf>,
    /// The topic root.
    pub root: String,
    /// This bridge's name in the topics (empty: the host name).
    pub bridge_id: String,
    /// How far the public tree is behind the live one.
    pub public_delay: Duration,
    /// MQTT keep-alive.
    pub keep_alive: Duration,
    /// Display languages for moves.
    pub languages: Vec<Language>,
    /// Moves and alerts kept at most while the broker is away.
    pub queue_limit: usize,
    /// `[mqtt] ca_file`, when given (for `boardcast ctl` to check the
    /// embedded broker's TLS certificate).
    pub ca_file: Option<PathBuf>,
}

/// Which broker the feed goes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BrokerChoice {
    /// Start a broker of our own.
    Embedded(Embedded),
    /// Publish to this broker.
    External(BrokerUrl),
}

/// The broker the daemon starts itself (`[mqtt.embedded]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Embedded {
    /// Which program.
    pub kind: EmbeddedKind,
    /// The Mosquitto program, when given (otherwise looked for).
    pub mosquitto_bin: Option<PathBuf>,
    /// MQTT over TCP.
    pub listen: SocketAddr,
    /// MQTT over WebSocket, if wanted.
    pub ws_listen: Option<SocketAddr>,
    /// The accounts (`name:role:hash` lines; missing: none).
    pub accounts_file: PathBuf,
    /// Who may connect without a name.
    pub anonymous: Anonymous,
    /// Connections Mosquitto takes at most.
    pub max_connections: u32,
    /// The heap Mosquitto may allocate at most, in MiB (`memory_limit`).
    pub memory_limit_mb: u32,
    /// Refused log-ins a minute from one address that make a warning.
    pub failed_logins_warn_per_min: u32,
    /// The certificate and key the listeners serve TLS with, if they do.
    pub tls: Option<TlsFiles>,
}

/// A certificate (PEM, the chain from the leaf) and its private key (PEM).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain.
    pub cert_file: PathBuf,
    /// The private key.
    pub key_file: PathBuf,
}

impl Embedded {
    /// A broker on these addresses with the defaults of `[mqtt.embedded]`.
    pub fn on(listen: SocketAddr, ws_listen: Option<SocketAddr>) -> Self {
        Self {
            kind: EmbeddedKind::Auto,
            mosquitto_bin: None,
            listen,
            ws_listen,
            accounts_file: default_accounts_file(),
            anonymous: Anonymous::Public,
            max_connections: default_max_connections(),
            memory_limit_mb: default_memory_limit_mb(),
            failed_logins_warn_per_min: default_failed_logins_warn_per_min(),
            tls: None,
        }
    }
}

/// Which program the embedded broker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbeddedKind {
    /// Mosquitto when installed, otherwise the built-in one (with a warning).
    Auto,
    /// Mosquitto, as the daemon's child; refuse to start without it.
    Mosquitto,
    /// rumqttd inside the daemon: no accounts, no access control.
    Builtin,
}

/// How to reach a broker: `mqtt://host:1883`, `mqtts://host:8883`,
/// `ws://host:8080/mqtt`, `wss://…`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerUrl {
    /// The URL as written.
    pub url: String,
    /// The scheme.
    pub scheme: Scheme,
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
    /// The certificates that may sign the broker's (TLS schemes).
    pub ca_file: Option<PathBuf>,
    /// The certificate and key this client proves itself with (TLS
    /// schemes, when the broker asks for one).
    pub client_auth: Option<TlsFiles>,
}

/// A broker URL's scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `mqtt://`: MQTT over TCP.
    Mqtt,
    /// `mqtts://`: MQTT over TLS.
    Mqtts,
    /// `ws://`: MQTT over WebSocket.
    Ws,
    /// `wss://`: MQTT over WebSocket over TLS.
    Wss,
}

impl Scheme {
    /// Whether the connection is encrypted.
    pub const fn tls(self) -> bool {
        matches!(self, Self::Mqtts | Self::Wss)
    }
}

/// A client certificate and its key given as `cert` and `key`, each
/// `(name, path)`: checked as `[mqtt] client_cert_file` and
/// `client_key_file` are (both or neither, each a readable PEM file), and
/// named by `name` in the error (`boardcast ctl`'s flags, or those keys).
///
/// # Errors
///
/// One given without the other, or a file that cannot be read or is not
/// PEM.
pub fn client_certificate(cert: (&str, &str), key: (&str, &str)) -> Result<Option<TlsFiles>, ConfigError> {
    pem_pair(cert, key, "this client's certificate")
}

/// A certificate and its key, both given or both `""`; each must be a
/// readable PEM file.
fn pem_pair(
    (cert_key, cert): (&str, &str),
    (key_key, key): (&str, &str),
    what: &str,
) -> Result<Option<TlsFiles>, ConfigError> {
    let (cert, key) = (cert.trim(), key.trim());
    match (cert.is_empty(), key.is_empty()) {
        (true, true) => return Ok(None),
        (false, true) => {
            return Err(error(
                key_key.into(),
                "\"\"",
                &format!("the PEM file with the private key of {what} ({cert_key} is set)"),
            ));
        }
        (true, false) => {
            return Err(error(cert_key.into(), "\"\"", &format!("the PEM file with {what} ({key_key} is set)")));
        }
        (false, false) => {}
    }
    let cert_file =
        pem_file(cert_key, cert, "CERTIFICATE", &format!("a PEM file with {what} (-----BEGIN CERTIFICATE-----)"))?;
    let key_file = pem_file(
        key_key,
        key,
        "PRIVATE KEY",
        &format!("a PEM file with the private key of {what} (-----BEGIN … PRIVATE KEY-----)"),
    )?;
    Ok(Some(TlsFiles { cert_file, key_file }))
}

/// `path` if it can be read and holds a PEM block whose label contains
/// `label`; otherwise an error naming `key`, why, and what is wanted.
fn pem_file(key: &str, path: &str, label: &str, wanted: &str) -> Result<PathBuf, ConfigError> {
    let bad = |why: String| error(key.into(), &quoted(path), &format!("{wanted}; {why}"));
    // A certificate or key file is a few KiB: read at most 1 MiB of it.
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| std::io::Read::read_to_string(&mut std::io::Read::take(file, 1 << 20), &mut text))
        .map_err(|e| bad(format!("it cannot be read ({e}): give the right path, readable by the daemon's user")))?;
    let has_block = text.lines().any(|l| l.starts_with("-----BEGIN ") && l.contains(label));
    if !has_block {
        return Err(bad(format!(
            "it has no \"-----BEGIN …{label}-----\" block: give the PEM file, not DER or another file"
        )));
    }
    Ok(PathBuf::from(path))
}

/// The system's certificate bundle on Debian and its relatives.
const SYSTEM_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";

fn parse_broker_url(url: &str, ca_file: &str) -> Result<BrokerUrl, ConfigError> {
    let bad = |why: &str| error("mqtt.url".into(), &format!("{url:?}"), why);
    let accepted = "mqtt://host:port, mqtts://host:port, ws://host:port/path or wss://host:port/path, or \"\" for the embedded broker";
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad(accepted))?;
    let scheme = match scheme {
        "mqtt" | "tcp" => Scheme::Mqtt,
        "mqtts" | "ssl" | "tls" => Scheme::Mqtts,
        "ws" => Scheme::Ws,
        "wss" => Scheme::Wss,
        _ => return Err(bad(accepted)),
    };
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(bad("a URL without user name or password (use mqtt.username and mqtt.password)"));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
            let port = port.parse::<u16>().map_err(|_| bad("a port number between 1 and 65535 after the host"))?;
            (host.trim_start_matches('[').trim_end_matches(']').to_owned(), port)
        }
        _ => {
            let port = match scheme {
                Scheme::Mqtt => 1883,
                Scheme::Mqtts => 8883,
                Scheme::Ws => 80,
                Scheme::Wss => 443,
            };
            (authority.to_owned(), port)
        }
    };
    if host.is_empty() || port == 0 {
        return Err(bad(accepted));
    }
    let ca_file = if scheme.tls() {
        let path = if ca_file.is_empty() { PathBuf::from(SYSTEM_CA_FILE) } else { PathBuf::from(ca_file) };
        if !path.is_file() {
            return Err(error(
                "mqtt.ca_file".into(),
                &format!("{:?}", path.display().to_string()),
                "a PEM file with the certificates that sign the broker's (needed for mqtts:// and wss://)",
            ));
        }
        Some(path)
    } else {
        None
    };
    Ok(BrokerUrl { url: url.to_owned(), scheme, host, port, ca_file, client_auth: None })
}

impl Config {
    /// The MQTT settings.
    ///
    /// # Errors
    ///
    /// A URL or address that cannot be used, an unknown language, or a
    /// TLS URL without certificates to check the broker with.
    pub fn mqtt(&self) -> Result<Mqtt, ConfigError> {
        let m = &self.mqtt;
        let broker = if m.url.trim().is_empty() {
            BrokerChoice::Embedded(embedded(&m.embedded)?)
        } else {
            BrokerChoice::External(external(m)?)
        };
        let languages = m
            .languages
            .iter()
            .map(|l| {
                l.parse::<Language>().map_err(|_| {
                    error("mqtt.languages".into(), &format!("{l:?}"), "some of \"en\", \"nl\", \"de\", \"af\", \"fr\"")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if m.keep_alive_s == 0 {
            return Err(error(
                "mqtt.keep_alive_s".into(),
                "0",
                "a positive number of seconds (15 suits a hall network)",
            ));
        }
        if m.max_queued_messages == 0 {
            return Err(error(
                "mqtt.max_queued_messages".into(),
                "0",
                "a positive number (moves and alerts kept while the broker is away)",
            ));
        }
        let credentials = (!m.username.is_empty()).then(|| (m.username.clone(), m.password.clone()));
        let password_file = (!m.password_file.trim().is_empty()).then(|| PathBuf::from(m.password_file.trim()));
        Ok(Mqtt {
            broker,
            credentials,
            password_file,
            root: m.root.clone(),
            bridge_id: m.bridge_id.clone(),
            public_delay: Duration::from_secs(m.public_delay_s),
            keep_alive: Duration::from_secs(m.keep_alive_s),
            languages,
            queue_limit: m.max_queued_messages,
            ca_file: (!m.ca_file.trim().is_empty()).then(|| PathBuf::from(m.ca_file.trim())),
        })
    }
}

/// `[mqtt.embedded]`: the broker the daemon runs itself.
fn embedded(e: &EmbeddedConfig) -> Result<Embedded, ConfigError> {
    let address = |key: &str, value: &str| {
        value.trim().parse::<SocketAddr>().map_err(|_| {
            error(
                format!("mqtt.embedded.{key}"),
                &format!("{value:?}"),
                "an address and port such as \"127.0.0.1:1883\"",
            )
        })
    };
    let listen = address("listen", &e.listen)?;
    let ws_listen = if e.ws_listen.trim().is_empty() { None } else { Some(address("ws_listen", &e.ws_listen)?) };
    let kind = match e.broker.as_str() {
        "auto" => EmbeddedKind::Auto,
        "mosquitto" => EmbeddedKind::Mosquitto,
        "builtin" => EmbeddedKind::Builtin,
        other => {
            return Err(error(
                "mqtt.embedded.broker".into(),
                &quoted(other),
                "\"auto\" (Mosquitto when installed), \"mosquitto\" or \"builtin\" (no access control)",
            ));
        }
    };
    let anonymous = match e.anonymous.as_str() {
        "public" => Anonymous::Public,
        "live" => Anonymous::Live,
        "none" => Anonymous::None,
        other => {
            return Err(error(
                "mqtt.embedded.anonymous".into(),
                &quoted(other),
                "\"public\" (read the public tree), \"live\" (also the live tree) or \"none\"",
            ));
        }
    };
    // The WebSocket listener cannot check a page's Origin (Mosquitto 2.0 has
    // no option for it), so with anonymous live readers any page opened in
    // a hall browser would read the live tree: moves before the public
    // delay, alerts. Only a broker no other machine reaches may allow it.
    let beyond_loopback = [Some(listen), ws_listen].into_iter().flatten().find(|a| !a.ip().is_loopback());
    if anonymous == Anonymous::Live
        && let Some(open) = beyond_loopback
    {
        return Err(error(
            "mqtt.embedded.anonymous".into(),
            "\"live\"",
            &format!(
                "\"public\" or \"none\" when the broker listens beyond this machine ({open}): anonymous live readers would read moves before the public delay and the alerts from any page or phone on the network; give arbiters `live` accounts instead (`boardcast accounts add NAME --role live`)"
            ),
        ));
    }
    if e.max_connections == 0 {
        return Err(error(
            "mqtt.embedded.max_connections".into(),
            "0",
            "a positive number of connections (4096 suits a hall)",
        ));
    }
    if !(16..=1 << 20).contains(&e.memory_limit_mb) {
        return Err(error(
            "mqtt.embedded.memory_limit_mb".into(),
            &e.memory_limit_mb.to_string(),
            "a number of MiB from 16 to 1048576 (128 is ten times what Mosquitto takes for a hall of 500 boards)",
        ));
    }
    if !(1..=1_000_000).contains(&e.failed_logins_warn_per_min) {
        return Err(error(
            "mqtt.embedded.failed_logins_warn_per_min".into(),
            &e.failed_logins_warn_per_min.to_string(),
            "a number of refused log-ins a minute from 1 to 1000000 (10 lets a mistyped password or two pass unsaid)",
        ));
    }
    let mosquitto_bin = (!e.mosquitto_bin.trim().is_empty()).then(|| PathBuf::from(e.mosquitto_bin.trim()));
    let tls = pem_pair(
        ("mqtt.embedded.tls_cert_file", &e.tls_cert_file),
        ("mqtt.embedded.tls_key_file", &e.tls_key_file),
        "the broker's certificate",
    )?;
    if tls.is_some() && kind == EmbeddedKind::Builtin {
        return Err(error(
            "mqtt.embedded.broker".into(),
            "\"builtin\"",
            "\"mosquitto\" or \"auto\" when mqtt.embedded.tls_cert_file is set (the built-in broker cannot serve TLS)",
        ));
    }
    Ok(Embedded {
        kind,
        mosquitto_bin,
        listen,
        ws_listen,
        accounts_file: e.accounts_file.clone(),
        anonymous,
        max_connections: e.max_connections,
        memory_limit_mb: e.memory_limit_mb,
        failed_logins_warn_per_min: e.failed_logins_warn_per_min,
        tls,
    })
}

/// `mqtt.url` and the client's certificate: the hall's own broker.
fn external(m: &MqttConfig) -> Result<BrokerUrl, ConfigError> {
    let mut broker = parse_broker_url(m.url.trim(), &m.ca_file)?;
    broker.client_auth = pem_pair(
        ("mqtt.client_cert_file", &m.client_cert_file),
        ("mqtt.client_key_file", &m.client_key_file),
        "this client's certificate",
    )?;
    if broker.client_auth.is_some() && !broker.scheme.tls() {
        return Err(error(
            "mqtt.client_cert_file".into(),
            &quoted(&m.client_cert_file),
            "\"\" with a mqtt:// or ws:// URL (client certificates need mqtts:// or wss://)",
        ));
    }
    Ok(broker)
}
