//! The managed Mosquitto: the embedded broker when Mosquitto is installed
//! (`[mqtt.embedded] broker = "auto"` or `"mosquitto"`), run as the
//! daemon's child with a generated configuration, accounts and ACL
//! (docs/security.md).
//!
//! - Its files (`mosquitto.conf`, `passwd`, `acl`, and with TLS copies of
//!   the certificate and key) go into a private folder (mode 700) made at
//!   every start and removed at a clean stop; the password file holds
//!   hashes only, the daemon's own account included (its password is
//!   fresh at every start and never written in clear).
//! - When the daemon is root, the broker is not: the child takes the
//!   `mosquitto` system account (else `nobody`) between fork and exec, and
//!   the private folder and its files belong to that account alone.
//! - The child dies with the daemon: at a clean stop it is sent SIGTERM;
//!   if the daemon is killed outright the kernel sends it SIGKILL
//!   (`PR_SET_PDEATHSIG`, set between fork and exec, after the change of
//!   account, which clears it).
//! - Its log (standard error) goes into the daemon's log, line by line.
//! - When it exits by itself, the daemon says so loudly and starts it
//!   again with back-off (1 s doubling to 30 s); the feed's client
//!   reconnects and, the broker having lost every session and retained
//!   message, publishes the whole retained state and every unacknowledged
//!   move and alert again.
//! - The daemon's own connections go to a third listener, plain, on a free
//!   loopback port (at most 16 connections): strangers filling the other
//!   listeners' connections cannot keep the feed out, and with
//!   `[mqtt.embedded] tls_cert_file` and `tls_key_file`, when both other
//!   listeners serve TLS (MQTT over TLS, and wss for browsers), the daemon
//!   never has to trust the hall's certificate for its own traffic, which
//!   does not leave the machine (docs/security.md says why).
//! - A reload ([`Reloader`], on the daemon's SIGHUP) rewrites the password
//!   and ACL files with the accounts given (the daemon's own account and
//!   password unchanged), copies the certificate and key again, and sends
//!   the child SIGHUP: Mosquitto then reads them all again.
//!   [`check_tls_files`] tells beforehand whether the certificate and key
//!   would load: Mosquitto 2.0 reloading a bad pair keeps running but
//!   fails every TLS handshake until the next good reload.

use std::{
    collections::VecDeque,
    io::Write,
    net::SocketAddr,
    os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt},
    path::{Path, PathBuf},
    process::Stdio,
    sync::{Arc, Mutex},
    time::Duration,
};

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tokio::{
    io::{AsyncBufReadExt, BufReader},
    process::{Child, Command},
    sync::{mpsc, oneshot},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;

use boardcast_core::{LoginLimits, LoginWarning, Logins, Timestamp};

use super::broker::{BrokerError, MAX_PAYLOAD, check_free, wait_listening};
use crate::{
    accounts::{self, Account, Anonymous, DAEMON_ACCOUNT, SALT_BYTES},
    config::TlsFiles,
};

/// Where Mosquitto is looked for when `mosquitto_bin` is not given, after
/// `PATH` (Debian installs it in /usr/sbin, outside a user's `PATH`).
const USUAL_PLACES: [&str; 2] = ["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"];

/// Why the managed Mosquitto could not start.
#[derive(Debug, thiserror::Error)]
pub enum MosquittoError {
    /// An address is taken or cannot be listened on.
    #[error(transparent)]
    Address(#[from] BrokerError),
    /// Its files could not be written.
    #[error("cannot write the broker's configuration in {dir}: {source}")]
    Files {
        /// The private folder.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The program could not be started.
    #[error("cannot start {binary}: {source} (mqtt.embedded.mosquitto_bin)")]
    Spawn {
        /// The program.
        binary: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It stopped, or never listened.
    #[error("Mosquitto ({binary}) did not start: {log}")]
    NotStarted {
        /// The program.
        binary: PathBuf,
        /// Its last log lines.
        log: String,
    },
    /// No random bytes.
    #[error("cannot read random bytes from /dev/urandom: {0}")]
    Random(std::io::Error),
}

/// How to run it.
#[derive(Clone, Debug)]
pub struct MosquittoSettings {
    /// The program.
    pub binary: PathBuf,
    /// MQTT over TCP.
    pub listen: SocketAddr,
    /// MQTT over WebSocket.
    pub ws_listen: Option<SocketAddr>,
    /// The topic root the ACL is written for.
    pub root: String,
    /// The accounts besides the daemon's.
    pub accounts: Vec<Account>,
    /// Who may connect without a name.
    pub anonymous: Anonymous,
    /// Connections taken at most, per listener.
    pub max_connections: u32,
    /// The heap it may allocate at most, in MiB.
    pub memory_limit_mb: u32,
    /// Serve TLS on `listen` and `ws_listen` with these.
    pub tls: Option<TlsFiles>,
    /// The plain loopback listener for the daemon's own connections (a
    /// free port is taken when `None`).
    pub own_listen: Option<SocketAddr>,
    /// When refused log-ins read from its log make a warning.
    pub logins: LoginLimits,
}

/// The Mosquitto program: `configured`, else `mosquitto` on `PATH`, else
/// its usual places; `None` when there is none.
pub fn find_binary(configured: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = configured {
        return Some(path.to_owned());
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|dir| dir.join("mosquitto")).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().chain(USUAL_PLACES.iter().map(PathBuf::from)).find(|p| p.is_file())
}

/// The unprivileged account the broker runs as when the daemon is root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrokerUser {
    /// Its name, for the log.
    pub name: String,
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
}

impl BrokerUser {
    /// The account for a broker started by a daemon whose effective user
    /// id is `euid`: none when the daemon is not root (the broker then runs
    /// as the daemon's own user); else the `mosquitto` system account
    /// (Debian's mosquitto package makes it), else `nobody` with the group
    /// `nogroup`.
    pub fn for_daemon(euid: u32) -> Option<Self> {
        use nix::unistd::{Group, User};
        if euid != 0 {
            return None;
        }
        let found = |user: User, gid: Option<nix::unistd::Gid>| Self {
            name: user.name,
            uid: user.uid.as_raw(),
            gid: gid.unwrap_or(user.gid).as_raw(),
        };
        if let Ok(Some(user)) = User::from_name("mosquitto") {
            return Some(found(user, None));
        }
        let nogroup = Group::from_name("nogroup").ok().flatten().map(|g| g.gid);
        Some(match User::from_name("nobody") {
            Ok(Some(user)) => found(user, nogroup),
            // No such account in the system's database: its customary ids.
            _ => Self { name: "nobody".into(), uid: 65_534, gid: nogroup.map_or(65_534, |g| g.as_raw()) },
        })
    }

    /// Whether this account can reach things inside `folder`: every folder
    /// on the way lets it pass.
    fn can_enter(&self, folder: &Path) -> bool {
        folder.ancestors().all(|step| {
            std::fs::metadata(step).is_ok_and(|m| {
                let mode = m.mode();
                mode & 0o001 != 0
                    || (m.uid() == self.uid && mode & 0o100 != 0)
                    || (m.gid() == self.gid && mode & 0o010 != 0)
            })
        })
    }
}

/// A running managed Mosquitto.
pub struct ManagedMosquitto {
    /// MQTT over TCP.
    pub listen: SocketAddr,
    /// MQTT over WebSocket.
    pub ws_listen: Option<SocketAddr>,
    /// Where the daemon's own clients connect: a plain loopback listener
    /// of their own.
    pub own: SocketAddr,
    /// The daemon's own login: (`boardcast-daemon`, a fresh password).
    pub credentials: (String, String),
    dir: PathBuf,
    stop: CancellationToken,
    keeper: JoinHandle<()>,
    reloader: Reloader,
}

impl ManagedMosquitto {
    /// What reloads its accounts and certificates while it runs.
    pub fn reloader(&self) -> Reloader {
        self.reloader.clone()
    }

    /// Stops the broker (SIGTERM, then SIGKILL after 3 s) and removes its
    /// files.
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.keeper.await;
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Mosquitto's configuration for `settings`, its files in `dir`.
///
/// No `user` line: the broker is started as the account it runs as
/// ([`BrokerUser`]), and Mosquitto started by root without one would drop
/// to `mosquitto` by itself, clearing the parent-death signal.
pub fn config_text(settings: &MosquittoSettings, dir: &Path) -> String {
    let mut text = String::from("# generated by boardcast at every start (docs/security.md); not read again\n");
    text.push_str(&format!(
        "per_listener_settings false\n\
         allow_anonymous {anonymous}\n\
         password_file {dir}/passwd\n\
         acl_file {dir}/acl\n\
         persistence false\n\
         max_packet_size {packet}\n\
         log_dest stderr\n\
         log_type error\nlog_type warning\nlog_type notice\nlog_type information\n\
         log_timestamp false\n\
         connection_messages true\n\
         set_tcp_nodelay true\n\
         memory_limit {memory}\n\
         max_queued_messages 1000\n\
         max_inflight_messages 20\n\
         persistent_client_expiration 1h\n",
        memory = u64::from(settings.memory_limit_mb) << 20,
        anonymous = settings.anonymous != Anonymous::None,
        dir = dir.display(),
        // A payload of MAX_PAYLOAD with its topic and header.
        packet = MAX_PAYLOAD + 4096,
    ));
    // The bounds above are what one client can make the broker hold: any
    // anonymous client may keep a persistent session and fill it with
    // subscriptions (Mosquitto 2.0 has no per-client limit on them), so
    // the heap is capped (a client whose allocation would pass the cap is
    // disconnected), a session's queue for an absent subscriber is capped
    // (its displays get the retained state again when they return), and a
    // session left behind goes after an hour.
    // log_type information and connection_messages above: the lines of
    // every connection and refused log-in, which the daemon counts
    // (`LoginLines`); Mosquitto 2.0.11 logs neither the address nor the
    // name of a refused client in the refusal itself, and debug (which
    // would add the address) logs every message.
    // set_tcp_nodelay above: with Nagle's algorithm on its sockets (the
    // default), a message to a subscriber waits for the acknowledgement of
    // the one before: at 500 boards, moves reached displays at p50 19 ms,
    // p99 43 ms instead of 1 and 3 ms (BENCHMARKS.md section 5).
    // Without socket_domain Mosquitto 2.0's websockets listener ignores
    // the address and listens on every interface.
    let listener = |addr: SocketAddr| {
        let domain = if addr.is_ipv4() { "ipv4" } else { "ipv6" };
        format!("\nlistener {} {}\nsocket_domain {domain}\n", addr.port(), addr.ip())
    };
    // Mosquitto 2.0: certfile and keyfile after a listener make it serve
    // TLS (wss on a websockets listener); no client certificate asked.
    // They are the copies in the private folder (`Reloader`), which the
    // broker's account can read without the operator's key being opened
    // to it.
    let tls = settings.tls.as_ref().map_or_else(String::new, |_| {
        format!("certfile {}\nkeyfile {}\n", dir.join(TLS_CERT).display(), dir.join(TLS_KEY).display())
    });
    text.push_str(&listener(settings.listen));
    text.push_str(&format!("max_connections {}\n{tls}", settings.max_connections));
    if let Some(ws) = settings.ws_listen {
        text.push_str(&listener(ws));
        text.push_str(&format!("protocol websockets\nmax_connections {}\n{tls}", settings.max_connections));
    }
    if let Some(own) = settings.own_listen {
        // The daemon's own connections: loopback only, plain, and never
        // competing with strangers for the listeners' connections (a TCP
        // connection that sends nothing takes one of them for 90 s).
        text.push_str(&listener(own));
        text.push_str("max_connections 16\n");
    }
    text
}

/// Writes the files, starts Mosquitto, and returns once it accepts
/// connections on every listener.
///
/// # Errors
///
/// An address in use, files that cannot be written, or a Mosquitto that
/// does not start (with its last log lines).
pub async fn start(mut settings: MosquittoSettings) -> Result<ManagedMosquitto, MosquittoError> {
    check_free(settings.listen, "listen")?;
    if let Some(ws) = settings.ws_listen {
        check_free(ws, "ws_listen")?;
    }
    if let Some(files) = &mut settings.tls {
        // Mosquitto reads them from its own working directory: absolute
        // paths leave no doubt.
        for path in [&mut files.cert_file, &mut files.key_file] {
            if let Ok(absolute) = std::path::absolute(&*path) {
                *path = absolute;
            }
        }
    }
    let own = match settings.own_listen {
        Some(own) => own,
        None => free_loopback_port().map_err(|source| BrokerError::Listen {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            key: "listen (the daemon's own loopback listener)",
            source,
        })?,
    };
    settings.own_listen = Some(own);
    let user = BrokerUser::for_daemon(nix::unistd::geteuid().as_raw());
    let dir = private_dir(user.as_ref());
    let files = |source| MosquittoError::Files { dir: dir.clone(), source };
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::DirBuilder::new().mode(0o700).create(&dir).map_err(files)?;
    if let Some(user) = &user {
        std::os::unix::fs::chown(&dir, Some(user.uid), Some(user.gid)).map_err(files)?;
    }
    let password = hex(&random::<32>()?);
    let daemon_hash = accounts::hash_password(&password, &random::<SALT_BYTES>()?);
    // The keeper answers reloads once the broker runs.
    let (hang_ups, asked) = mpsc::unbounded_channel();
    let reloader = Reloader {
        dir: dir.clone(),
        user: user.clone(),
        daemon_hash,
        root: settings.root.clone(),
        anonymous: settings.anonymous,
        tls: settings.tls.clone(),
        keeper: hang_ups,
    };
    reloader.write_accounts(&settings.accounts).map_err(files)?;
    let conf = dir.join("mosquitto.conf");
    write_private(&conf, config_text(&settings, &dir).as_bytes(), user.as_ref()).map_err(files)?;

    let log = Arc::new(Mutex::new(VecDeque::new()));
    let mut child = spawn(&settings.binary, &conf, user.as_ref(), log.clone(), settings.logins)?;
    let listening = async {
        for addr in std::iter::once(settings.listen).chain(settings.ws_listen).chain(Some(own)) {
            wait_listening(addr).await?;
        }
        Ok::<(), BrokerError>(())
    };
    let started = tokio::select! {
        listening = listening => listening.is_ok(),
        _ = child.wait() => false,
    };
    if !started {
        let _ = child.start_kill();
        let _ = child.wait().await;
        // Let the log reader take the last lines.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let _ = std::fs::remove_dir_all(&dir);
        let lines: Vec<String> = log.lock().map(|l| l.iter().cloned().collect()).unwrap_or_default();
        return Err(MosquittoError::NotStarted {
            binary: settings.binary.clone(),
            log: if lines.is_empty() { "no output".into() } else { lines.join(" / ") },
        });
    }
    tracing::info!(
        "Mosquitto ({}) runs as the daemon's broker{} on {}{}{} (the daemon's own connections: plain, on loopback {own}), with {} account(s) and access control (docs/security.md)",
        settings.binary.display(),
        user.as_ref()
            .map(|u| format!(" as the unprivileged user {} (uid {}; the daemon is root)", u.name, u.uid))
            .unwrap_or_default(),
        settings.listen,
        settings.ws_listen.map(|ws| format!(" (WebSocket on {ws})")).unwrap_or_default(),
        if settings.tls.is_some() { ", TLS only" } else { "" },
        settings.accounts.len()
    );
    // Each connection is a descriptor: below this the caps are not what
    // runs out first.
    let listeners = 1 + u64::from(settings.ws_listen.is_some());
    let needed = u64::from(settings.max_connections) * listeners + 16 + 64;
    if let Some(allowed) = open_files_allowed().filter(|allowed| *allowed < needed) {
        tracing::warn!(
            "the broker may open {allowed} files, fewer than its connections need ({} per listener, {needed} in all with its own files; mqtt.embedded.max_connections): strangers can take every descriptor before the cap and keep the feed out. Raise the limit (LimitNOFILE in the service, `ulimit -Hn` in a shell) or lower max_connections",
            settings.max_connections
        );
    }
    let stop = CancellationToken::new();
    let keeper = tokio::spawn(keep(settings.clone(), conf, user, child, log, stop.clone(), asked));
    Ok(ManagedMosquitto {
        listen: settings.listen,
        ws_listen: settings.ws_listen,
        own,
        credentials: (DAEMON_ACCOUNT.to_owned(), password),
        dir,
        stop,
        keeper,
        reloader,
    })
}

/// A request to the keeper: send the running broker SIGHUP, and answer
/// whether one ran to receive it.
type HangUp = oneshot::Sender<bool>;

/// Reloads the managed Mosquitto's accounts, and its certificate and key
/// when it serves TLS, while it runs.
#[derive(Clone, Debug)]
pub struct Reloader {
    dir: PathBuf,
    /// Who the files are for, when the broker runs as another user.
    user: Option<BrokerUser>,
    /// The daemon's own account's hash, kept for the whole run: its
    /// connections are not disturbed by a reload.
    daemon_hash: String,
    root: String,
    anonymous: Anonymous,
    tls: Option<TlsFiles>,
    keeper: mpsc::UnboundedSender<HangUp>,
}

/// What a reload did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reloaded {
    /// The running broker was sent SIGHUP and reads the new files now.
    Signalled,
    /// No broker ran (it is being started again after stopping by
    /// itself): it reads the new files when it starts.
    NotRunning,
}

impl Reloader {
    /// The certificate and key the listeners serve, as Mosquitto reads
    /// them (absolute paths), when they serve TLS.
    pub fn tls(&self) -> Option<&TlsFiles> {
        self.tls.as_ref()
    }

    /// Writes the password and ACL files for `accounts` (the daemon's own
    /// account as at the start) and has Mosquitto read them again, with
    /// its certificate and key. Check the accounts and the certificate
    /// first: what is written here is what the broker takes.
    ///
    /// # Errors
    ///
    /// When the files cannot be written (the broker is then not signalled
    /// and keeps what it had).
    pub async fn reload(&self, accounts: &[Account]) -> Result<Reloaded, MosquittoError> {
        self.write_accounts(accounts).map_err(|source| MosquittoError::Files { dir: self.dir.clone(), source })?;
        let (answer, answered) = oneshot::channel();
        if self.keeper.send(answer).is_err() {
            return Ok(Reloaded::NotRunning);
        }
        Ok(if answered.await.unwrap_or(false) { Reloaded::Signalled } else { Reloaded::NotRunning })
    }

    /// The password file and the ACL, and with TLS copies of the
    /// certificate and key, each replaced whole (a broker started meanwhile
    /// reads the old or the new, never half of one). Every new file is
    /// written before any replaces its old one, so a disk that fills up in
    /// between leaves the old files together rather than new passwords
    /// with the old rights.
    ///
    /// The broker reads the copies, not the operator's files: when it runs
    /// as another user than the daemon, the operator's key (mode 600, the
    /// daemon's) stays as it is, and the copy is readable by the broker's
    /// user alone.
    fn write_accounts(&self, accounts: &[Account]) -> std::io::Result<()> {
        let passwd = accounts::password_file(&self.daemon_hash, accounts);
        let acl = accounts::acl_file(&self.root, self.anonymous, accounts);
        let (passwd_file, acl_file) = (self.dir.join("passwd"), self.dir.join("acl"));
        let mut files = vec![(passwd_file.as_path(), passwd.into_bytes()), (acl_file.as_path(), acl.into_bytes())];
        let (cert_copy, key_copy) = (self.dir.join(TLS_CERT), self.dir.join(TLS_KEY));
        if let Some(tls) = &self.tls {
            files.push((cert_copy.as_path(), read_bounded(&tls.cert_file)?));
            files.push((key_copy.as_path(), read_bounded(&tls.key_file)?));
        }
        let files: Vec<(&Path, &[u8])> = files.iter().map(|(path, bytes)| (*path, bytes.as_slice())).collect();
        replace_private_together(&files, self.user.as_ref())
    }
}

/// What is wrong with a certificate or its key, for the listeners' TLS.
#[derive(Debug, thiserror::Error)]
pub enum TlsFilesError {
    /// A file that cannot be read.
    #[error("cannot read {file}: {source}")]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a PEM file of certificates.
    #[error("{file} holds no PEM certificate (-----BEGIN CERTIFICATE-----){why}")]
    Certificate {
        /// The file.
        file: PathBuf,
        /// What was found wrong, if anything.
        why: String,
    },
    /// Not a PEM private key.
    #[error("{file} holds no PEM private key (-----BEGIN … PRIVATE KEY-----){why}")]
    Key {
        /// The file.
        file: PathBuf,
        /// What was found wrong, if anything.
        why: String,
    },
    /// The two do not belong together, or one does not parse.
    #[error("the certificate {cert} and the key {key} cannot serve TLS together: {why}")]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// Why.
        why: String,
    },
}

/// Checks that the certificate chain and key parse and belong together,
/// as Mosquitto will need them; returns the number of certificates in
/// the chain.
///
/// # Errors
///
/// The first thing wrong, naming the file.
pub fn check_tls_files(files: &TlsFiles) -> Result<usize, TlsFilesError> {
    let read = |file: &Path| -> Result<Vec<u8>, TlsFilesError> {
        read_bounded(file).map_err(|source| TlsFilesError::Read { file: file.to_owned(), source })
    };
    let (cert_file, key_file) = (&files.cert_file, &files.key_file);
    let chain = CertificateDer::pem_slice_iter(&read(cert_file)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsFilesError::Certificate { file: cert_file.clone(), why: format!(": {e}") })?;
    if chain.is_empty() {
        return Err(TlsFilesError::Certificate { file: cert_file.clone(), why: String::new() });
    }
    let key = PrivateKeyDer::from_pem_slice(&read(key_file)?).map_err(|e| TlsFilesError::Key {
        file: key_file.clone(),
        why: match e {
            rustls::pki_types::pem::Error::NoItemsFound => String::new(),
            e => format!(": {e}"),
        },
    })?;
    let length = chain.len();
    let provider = rustls::crypto::ring::default_provider();
    rustls::sign::CertifiedKey::from_der(chain, key, &provider).map_err(|e| TlsFilesError::Pair {
        cert: cert_file.clone(),
        key: key_file.clone(),
        why: match e {
            rustls::Error::InconsistentKeys(_) => {
                "the key is not the certificate's (the first certificate of the file must be the one the key was made for)"
                    .to_owned()
            }
            e => e.to_string(),
        },
    })?;
    Ok(length)
}

/// The copies of the certificate and key the broker serves, in its private
/// folder.
const TLS_CERT: &str = "tls-cert.pem";
const TLS_KEY: &str = "tls-key.pem";

/// A certificate or key file: a few KiB; at most 1 MiB of it is read.
fn read_bounded(file: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(file)
        .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 1 << 20), &mut bytes))?;
    Ok(bytes)
}

/// Watches the child until `stop`: started again with back-off whenever it
/// exits by itself.
async fn keep(
    settings: MosquittoSettings,
    conf: PathBuf,
    user: Option<BrokerUser>,
    mut child: Child,
    log: Arc<Mutex<VecDeque<String>>>,
    stop: CancellationToken,
    mut asked: mpsc::UnboundedReceiver<HangUp>,
) {
    let mut delay = Duration::from_secs(1);
    loop {
        let since = tokio::time::Instant::now();
        let status = loop {
            tokio::select! {
                () = stop.cancelled() => {
                    terminate(&mut child).await;
                    return;
                }
                status = child.wait() => break status,
                Some(answer) = asked.recv() => {
                    let _ = answer.send(hang_up(&child));
                }
            }
        };
        if since.elapsed() > Duration::from_secs(60) {
            delay = Duration::from_secs(1);
        }
        let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
        tracing::error!(
            "the broker (Mosquitto) stopped by itself ({status}); starting it again in {} s. Displays and the feed reconnect; the feed publishes its whole state again",
            delay.as_secs()
        );
        if !pause(delay, &stop, &mut asked).await {
            return;
        }
        delay = (delay * 2).min(Duration::from_secs(30));
        match spawn(&settings.binary, &conf, user.as_ref(), log.clone(), settings.logins) {
            Ok(new) => {
                child = new;
                if wait_listening(settings.listen).await.is_ok() {
                    tracing::warn!("the broker (Mosquitto) runs again on {}", settings.listen);
                }
            }
            Err(error) => {
                tracing::error!("{error}; trying again");
                // Wait as if it had stopped at once.
                if !pause(delay, &stop, &mut asked).await {
                    return;
                }
                match spawn(&settings.binary, &conf, user.as_ref(), log.clone(), settings.logins) {
                    Ok(new) => child = new,
                    Err(error) => {
                        tracing::error!("{error}: the daemon goes on without a broker (restart it)");
                        return;
                    }
                }
            }
        }
    }
}

/// Waits `delay` while no broker runs, answering reloads that there is
/// none to signal; `false` when asked to stop meanwhile.
async fn pause(delay: Duration, stop: &CancellationToken, asked: &mut mpsc::UnboundedReceiver<HangUp>) -> bool {
    let sleep = tokio::time::sleep(delay);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            () = stop.cancelled() => return false,
            () = &mut sleep => return true,
            Some(answer) = asked.recv() => {
                let _ = answer.send(false);
            }
        }
    }
}

/// Sends the broker SIGHUP (Mosquitto reads its configuration, password
/// file, ACL and certificates again); whether it was running.
fn hang_up(child: &Child) -> bool {
    let Some(pid) = child.id() else { return false };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGHUP).is_ok()
}

async fn terminate(child: &mut Child) {
    if let Some(pid) = child.id() {
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGTERM);
    }
    if tokio::time::timeout(Duration::from_secs(3), child.wait()).await.is_err() {
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
}

/// Starts the program, its standard error read into the log (and the last
/// lines kept in `recent` for a start that fails).
fn spawn(
    binary: &Path,
    conf: &Path,
    user: Option<&BrokerUser>,
    recent: Arc<Mutex<VecDeque<String>>>,
    limits: LoginLimits,
) -> Result<Child, MosquittoError> {
    let mut command = Command::new(binary);
    command.arg("-c").arg(conf).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).kill_on_drop(true);
    if let Some(user) = user {
        // Between fork and exec, before the closures of `pre_exec`, the
        // standard library drops the supplementary groups (the daemon is
        // root), then sets the group, then the user: the broker never
        // runs a line as root.
        command.uid(user.uid).gid(user.gid);
    }
    all_the_files_allowed(&mut command);
    die_with_parent(&mut command);
    let mut child = command.spawn().map_err(|source| MosquittoError::Spawn { binary: binary.to_owned(), source })?;
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            let mut repeats = crate::shell::repeats::Repeats::default();
            let mut logins = LoginLines::new(limits);
            let origin = std::time::Instant::now();
            let now = || Timestamp::from_micros(origin.elapsed().as_micros() as u64);
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            // The address of the last connection Mosquitto announced: its
            // warning about that client names none.
            let mut source = String::new();
            loop {
                let line = tokio::select! {
                    line = lines.next_line() => match line {
                        Ok(Some(line)) => line,
                        _ => break,
                    },
                    _ = tick.tick() => {
                        for summary in repeats.due(tokio::time::Instant::now().into_std()) {
                            tracing::warn!(target: "mosquitto", "mosquitto: {summary}");
                        }
                        while let Some(warning) = logins.poll_warning(now()) {
                            tracing::warn!(target: "mosquitto", "mqtt: {warning}");
                        }
                        continue;
                    }
                };
                if let Some(rest) = line.strip_prefix("New connection from ") {
                    let address = rest.split(' ').next().unwrap_or_default();
                    source = address.rsplit_once(':').map_or(address, |(host, _)| host).to_owned();
                }
                logins.line(now(), &line);
                while let Some(warning) = logins.poll_warning(now()) {
                    tracing::warn!(target: "mosquitto", "mqtt: {warning}");
                }
                let lower = line.to_lowercase();
                if lower.contains("error") || lower.contains("warning") {
                    if repeats.shown(tokio::time::Instant::now().into_std(), &line, &source) {
                        tracing::warn!(target: "mosquitto", "mosquitto: {line}");
                    }
                } else {
                    tracing::debug!(target: "mosquitto", "mosquitto: {line}");
                }
                if let Ok(mut recent) = recent.lock() {
                    if recent.len() == 20 {
                        recent.pop_front();
                    }
                    recent.push_back(line);
                }
            }
        });
    }
    Ok(child)
}

/// The broker's lines about connections, read for refused and accepted
/// log-ins and counted in a [`Logins`] (warnings when an address fails
/// too often).
///
/// Mosquitto 2.0.11 says a refused log-in as `Client <unknown>
/// disconnected, not authorised.`: neither the address nor the name the
/// client gave. The address is that of a connection announced before
/// (`New connection from 10.0.0.5:49614 on port 1883.`) and not yet
/// settled: the oldest of the last [`LoginLines::RECENT`] (a client sends
/// its CONNECT right after connecting, and the broker takes sockets in
/// turn), else the newest. A connection is settled by its log-in
/// (`New client connected from 10.0.0.5:49614 as … u'name'`, which names
/// it) or by any other line about a `<unknown>` client (closed, protocol
/// error, timed out), which does not. When strangers connect from several
/// addresses at once a failure may be counted against the wrong one of
/// them; from one address (a guessing run) it never is. The account tried
/// is never known.
#[derive(Debug)]
struct LoginLines {
    logins: Logins,
    /// Connections announced and not settled: when, and from where.
    pending: VecDeque<(Timestamp, SocketAddr)>,
}

impl LoginLines {
    /// How long after its announcement a connection is taken as the one a
    /// refusal is about before the others.
    const RECENT: Duration = Duration::from_secs(10);
    /// Connections remembered at most (the oldest go first).
    const PENDING: usize = 4096;

    fn new(limits: LoginLimits) -> Self {
        Self { logins: Logins::new(limits), pending: VecDeque::new() }
    }

    /// Reads one line of the broker's log.
    fn line(&mut self, now: Timestamp, line: &str) {
        if let Some(rest) = line.strip_prefix("New connection from ") {
            if let Some(address) = rest.split(' ').next().and_then(socket_address) {
                if self.pending.len() == Self::PENDING {
                    self.pending.pop_front();
                }
                self.pending.push_back((now, address));
            }
        } else if let Some(rest) = line.strip_prefix("New client connected from ") {
            let Some(address) = rest.split(' ').next().and_then(socket_address) else { return };
            self.pending.retain(|(_, pending)| *pending != address);
            // `… (p2, c1, k60, u'operator').`: no `u'` for an anonymous one.
            // The daemon's own log-ins (from loopback, like a stranger on
            // the same machine) say nothing about guessing.
            if let Some(name) = rest.rsplit_once("u'").and_then(|(_, name)| name.strip_suffix("')."))
                && name != DAEMON_ACCOUNT
            {
                self.logins.succeeded(now, address.ip(), name);
            }
        } else if let Some(rest) = line.strip_prefix("Client <unknown> ") {
            let settled = self.settle(now);
            if rest.starts_with("disconnected, not authorised")
                && let Some(address) = settled
            {
                self.logins.failed_unknown_account(now, address.ip());
            }
        }
    }

    fn poll_warning(&mut self, now: Timestamp) -> Option<LoginWarning> {
        self.logins.poll_warning(now)
    }

    /// The connection a line about an unnamed client is most likely about.
    fn settle(&mut self, now: Timestamp) -> Option<SocketAddr> {
        let recent = self.pending.iter().position(|(at, _)| now.saturating_since(*at) < Self::RECENT);
        match recent {
            Some(i) => self.pending.remove(i),
            None => self.pending.pop_back(),
        }
        .map(|(_, address)| address)
    }
}

/// `10.0.0.5:49614` or `::1:49614` (Mosquitto writes IPv6 without brackets).
fn socket_address(text: &str) -> Option<SocketAddr> {
    let (host, port) = text.rsplit_once(':')?;
    Some(SocketAddr::new(host.trim_matches(['[', ']']).parse().ok()?, port.parse().ok()?))
}

/// Makes the kernel kill the child when the daemon dies, however it dies.
///
/// Linux sends the signal when the *thread* that forked exits, not the
/// process: the broker is started from the runtime's main or worker
/// threads, which live as long as the daemon (it never uses
/// `spawn_blocking` or `block_in_place` for this, whose threads come and
/// go). A change of user or group clears the signal: `pre_exec` closures
/// run after the standard library's `uid` and `gid` have been applied,
/// so the one set here stays.
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec and calls
    // only prctl(2) and getppid(2), both async-signal-safe system calls;
    // it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL).map_err(std::io::Error::from)?;
            // The daemon died between fork and prctl: nothing would
            // signal this child any more.
            if nix::unistd::getppid() != parent {
                return Err(std::io::Error::other("the daemon is gone"));
            }
            Ok(())
        });
    }
}

/// The most descriptors a process of the daemon's may have (the hard
/// limit), or `None` when it cannot be read.
fn open_files_allowed() -> Option<u64> {
    let mut limit = nix::libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit(2) writes the struct given, which lives here.
    #[allow(unsafe_code)]
    let read = unsafe { nix::libc::getrlimit(nix::libc::RLIMIT_NOFILE, &raw mut limit) } == 0;
    read.then_some(limit.rlim_max)
}

/// Raises the child's limit of open files to the most it may have: a shell
/// gives 1024, below `max_connections` (4096 per listener), and a broker out
/// of descriptors cannot accept the daemon's own connections either.
#[allow(unsafe_code)]
fn all_the_files_allowed(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and calls
    // only getrlimit(2) and setrlimit(2), async-signal-safe system calls,
    // on a struct on its stack; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            let mut limit = nix::libc::rlimit { rlim_cur: 0, rlim_max: 0 };
            if nix::libc::getrlimit(nix::libc::RLIMIT_NOFILE, &raw mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
                limit.rlim_cur = limit.rlim_max;
                // Not raised: the broker runs with what it has.
                let _ = nix::libc::setrlimit(nix::libc::RLIMIT_NOFILE, &raw const limit);
            }
            Ok(())
        });
    }
}

/// A folder only the broker's user may enter: under systemd's
/// `RuntimeDirectory` or the user's runtime folder when there is one (and
/// the broker's `user`, when it has one of its own, can reach it: root's
/// /run/user/0 is closed to others), otherwise the temporary folder; one
/// per daemon process.
fn private_dir(user: Option<&BrokerUser>) -> PathBuf {
    let base = ["RUNTIME_DIRECTORY", "XDG_RUNTIME_DIR"]
        .into_iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .find(|p| p.is_dir() && user.is_none_or(|user| user.can_enter(p)))
        .unwrap_or_else(std::env::temp_dir);
    remove_stale(&base);
    base.join(format!("boardcast-mosquitto-{}", std::process::id()))
}

/// Removes the folders of daemons that were killed outright (no clean stop
/// removed them): their process is gone.
fn remove_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("boardcast-mosquitto-")) else { continue };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A loopback port nobody listens on now (the kernel's choice).
fn free_loopback_port() -> std::io::Result<SocketAddr> {
    std::net::TcpListener::bind(("127.0.0.1", 0))?.local_addr()
}

/// A new file with `bytes`, readable and writable by its owner alone: the
/// broker's `user` when it has one, else the daemon's.
fn write_private(path: &Path, bytes: &[u8], user: Option<&BrokerUser>) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    if let Some(user) = user {
        std::os::unix::fs::fchown(&file, Some(user.uid), Some(user.gid))?;
    }
    file.write_all(bytes)
}

/// Replaces each `path` with its bytes (mode 600, owned by the broker's
/// `user`) by renaming a new file over it, once every new file is written;
/// when one cannot be written, none is replaced.
fn replace_private_together(files: &[(&Path, &[u8])], user: Option<&BrokerUser>) -> std::io::Result<()> {
    let temp = |path: &Path| {
        let mut temp = path.as_os_str().to_owned();
        temp.push(".new");
        PathBuf::from(temp)
    };
    for (index, (path, text)) in files.iter().enumerate() {
        let _ = std::fs::remove_file(temp(path));
        if let Err(error) = write_private(&temp(path), text, user) {
            for (written, _) in &files[..=index] {
                let _ = std::fs::remove_file(temp(written));
            }
            return Err(error);
        }
    }
    for (path, _) in files {
        std::fs::rename(temp(path), path)?;
    }
    Ok(())
}

/// Random bytes from the operating system.
///
/// # Errors
///
/// When /dev/urandom cannot be read.
pub fn random<const N: usize>() -> Result<[u8; N], MosquittoError> {
    use std::io::Read;
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes)).map_err(MosquittoError::Random)?;
    Ok(bytes)
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reload that cannot write the ACL leaves the password file as it
    /// was too: the broker never gets new passwords with the old rights.
    #[test]
    fn the_password_file_and_the_acl_are_replaced_together_or_not_at_all() {
        let dir = std::env::temp_dir().join(format!("boardcast-accounts-together-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (passwd, acl) = (dir.join("passwd"), dir.join("acl"));
        replace_private_together(&[(&passwd, b"old passwd"), (&acl, b"old acl")], None).unwrap();
        // Something in the way of the new ACL: a directory where its file goes.
        std::fs::create_dir(dir.join("acl.new")).unwrap();
        assert!(replace_private_together(&[(&passwd, b"new passwd"), (&acl, b"new acl")], None).is_err());
        assert_eq!(std::fs::read_to_string(&passwd).unwrap(), "old passwd");
        assert_eq!(std::fs::read_to_string(&acl).unwrap(), "old acl");
        assert!(!dir.join("passwd.new").exists(), "no new file is left behind");
        std::fs::remove_dir(dir.join("acl.new")).unwrap();
        replace_private_together(&[(&passwd, b"new passwd"), (&acl, b"new acl")], None).unwrap();
        assert_eq!(std::fs::read_to_string(&acl).unwrap(), "new acl");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refused_log_ins_in_the_brokers_log_are_counted_against_their_connections_address() {
        let mut lines = LoginLines::new(LoginLimits::default());
        let at = Timestamp::from_millis;
        // What Mosquitto 2.0.11 wrote (run by hand): two wrong passwords,
        // an unknown user, then the right password, and meanwhile a display
        // from elsewhere that logs in and a stranger that closes.
        let log = [
            "New connection from 127.0.0.1:49614 on port 18839.",
            "New connection from 10.0.0.9:40000 on port 18839.",
            "Client <unknown> disconnected, not authorised.",
            "New client connected from 10.0.0.9:40000 as display-1 (p2, c1, k60, u'display').",
            "New connection from 127.0.0.1:49626 on port 18839.",
            "Client <unknown> disconnected, not authorised.",
            "New connection from ::1:49630 on port 18839.",
            "Client <unknown> closed its connection.",
        ];
        for (i, line) in log.iter().enumerate() {
            lines.line(at(i as u64), line);
        }
        for i in 0..8 {
            lines.line(at(100 + i), "New connection from 127.0.0.1:49632 on port 18839.");
            lines.line(at(100 + i), "Client <unknown> disconnected, not authorised.");
        }
        let said: Vec<String> = std::iter::from_fn(|| lines.poll_warning(at(200))).map(|w| w.to_string()).collect();
        assert_eq!(said, ["10 failed log-ins in 0.1 s from 127.0.0.1 (accounts tried: not known)"]);
        assert!(lines.pending.is_empty(), "{:?}", lines.pending);
        lines.line(at(300), "New connection from 127.0.0.1:49699 on port 18839.");
        lines.line(
            at(300),
            "New client connected from 127.0.0.1:49699 as boardcast-hall (p2, c1, k60, u'boardcast-daemon').",
        );
        lines.line(at(300), "New connection from 127.0.0.1:49700 on port 18839.");
        lines.line(at(300), "New client connected from 127.0.0.1:49700 as auto-D2B1 (p2, c1, k60, u'operator').");
        let said: Vec<String> = std::iter::from_fn(|| lines.poll_warning(at(300))).map(|w| w.to_string()).collect();
        assert_eq!(
            said,
            ["log-in as operator from 127.0.0.1 accepted after 10 failed log-ins in a row from that address: if that \
              was not the account's owner, change its password"]
        );
    }

    #[test]
    fn the_configuration_has_both_listeners_the_bounds_and_no_persistence() {
        let settings = MosquittoSettings {
            binary: "/usr/sbin/mosquitto".into(),
            listen: "127.0.0.1:11883".parse().unwrap(),
            ws_listen: Some("127.0.0.1:18083".parse().unwrap()),
            root: "boardcast".into(),
            accounts: Vec::new(),
            anonymous: Anonymous::None,
            max_connections: 4096,
            memory_limit_mb: 128,
            tls: None,
            own_listen: Some("127.0.0.1:40001".parse().unwrap()),
            logins: LoginLimits::default(),
        };
        let text = config_text(&settings, Path::new("/run/x"));
        for line in [
            "per_listener_settings false",
            "allow_anonymous false",
            "password_file /run/x/passwd",
            "acl_file /run/x/acl",
            "persistence false",
            "listener 11883 127.0.0.1",
            "listener 18083 127.0.0.1\nsocket_domain ipv4\nprotocol websockets\nmax_connections 4096",
            "log_dest stderr",
            "memory_limit 134217728",
            "max_queued_messages 1000",
            "persistent_client_expiration 1h",
            // The daemon's own, out of strangers' reach.
            "listener 40001 127.0.0.1\nsocket_domain ipv4\nmax_connections 16",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        // The broker is started as the user it runs as (BrokerUser): a
        // `user` line would have it change user again, clearing the
        // parent-death signal.
        assert!(!text.contains("\nuser "), "{text}");
        assert!(!text.contains("certfile"));
    }

    #[test]
    fn with_tls_both_listeners_serve_it_and_the_daemon_has_a_plain_loopback_one() {
        let settings = MosquittoSettings {
            binary: "/usr/sbin/mosquitto".into(),
            listen: "0.0.0.0:8883".parse().unwrap(),
            ws_listen: Some("0.0.0.0:8084".parse().unwrap()),
            root: "boardcast".into(),
            accounts: Vec::new(),
            anonymous: Anonymous::Public,
            max_connections: 4096,
            memory_limit_mb: 128,
            tls: Some(TlsFiles { cert_file: "/etc/b/cert.pem".into(), key_file: "/etc/b/key.pem".into() }),
            own_listen: Some("127.0.0.1:40001".parse().unwrap()),
            logins: LoginLimits::default(),
        };
        let text = config_text(&settings, Path::new("/run/x"));
        // The copies in the private folder, not the operator's files.
        let tls = "certfile /run/x/tls-cert.pem\nkeyfile /run/x/tls-key.pem\n";
        for block in [
            format!("listener 8883 0.0.0.0\nsocket_domain ipv4\nmax_connections 4096\n{tls}"),
            format!("listener 8084 0.0.0.0\nsocket_domain ipv4\nprotocol websockets\nmax_connections 4096\n{tls}"),
            "listener 40001 127.0.0.1\nsocket_domain ipv4\nmax_connections 16\n".to_owned(),
        ] {
            assert!(text.contains(&block), "{block}\n{text}");
        }
        assert_eq!(text.matches("certfile").count(), 2, "the daemon's own listener is plain: {text}");
    }

    #[test]
    fn a_root_daemon_runs_the_broker_as_the_mosquitto_account_or_nobody() {
        assert_eq!(BrokerUser::for_daemon(1000), None, "a daemon that is not root runs it as itself");
        let user = BrokerUser::for_daemon(0).expect("root's broker has an account of its own");
        assert_ne!(user.uid, 0);
        assert_ne!(user.gid, 0);
        match nix::unistd::User::from_name("mosquitto") {
            Ok(Some(mosquitto)) => assert_eq!((user.name.as_str(), user.uid), ("mosquitto", mosquitto.uid.as_raw())),
            _ => assert_eq!(user.name, "nobody"),
        }
    }

    #[test]
    fn the_private_folder_is_where_the_brokers_account_can_reach_it() {
        let base = std::env::temp_dir().join(format!("boardcast-reach-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let closed = base.join("closed");
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&closed).unwrap();
        std::fs::set_permissions(&base, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let stranger = BrokerUser { name: "stranger".into(), uid: me.wrapping_add(4242), gid: 4242 };
        let owner = BrokerUser { name: "owner".into(), uid: me, gid: 4242 };
        assert!(stranger.can_enter(&base), "a folder open to others");
        assert!(!stranger.can_enter(&closed), "root's /run/user/0, for one");
        assert!(!stranger.can_enter(&closed.join("below")), "nor anything inside");
        assert!(owner.can_enter(&closed), "its owner may");
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// With TLS the broker reads copies of the certificate and key in its
    /// private folder, made at every write of the accounts (the start and
    /// each reload), readable by their owner alone; the operator's files
    /// are left as they are.
    #[test]
    fn the_certificate_and_key_are_copied_into_the_private_folder_at_each_reload() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("boardcast-tls-copies-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (cert, key) = (dir.join("operator-cert.pem"), dir.join("operator-key.pem"));
        std::fs::write(&cert, "CERT 1").unwrap();
        std::fs::write(&key, "KEY 1").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o640)).unwrap();
        let (keeper, _asked) = mpsc::unbounded_channel();
        let reloader = Reloader {
            dir: dir.clone(),
            user: None,
            daemon_hash: "hash".into(),
            root: "boardcast".into(),
            anonymous: Anonymous::Public,
            tls: Some(TlsFiles { cert_file: cert.clone(), key_file: key.clone() }),
            keeper,
        };
        reloader.write_accounts(&[]).unwrap();
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!((read(TLS_CERT), read(TLS_KEY)), ("CERT 1".into(), "KEY 1".into()));
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join(TLS_KEY)), 0o600);
        assert_eq!(mode(&key), 0o640, "the operator's key is not touched");
        // A renewal: the new pair is what the broker reads after the reload.
        std::fs::write(&cert, "CERT 2").unwrap();
        std::fs::write(&key, "KEY 2").unwrap();
        reloader.write_accounts(&[]).unwrap();
        assert_eq!((read(TLS_CERT), read(TLS_KEY)), ("CERT 2".into(), "KEY 2".into()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
