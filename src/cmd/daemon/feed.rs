//! Starting the MQTT feed: the embedded broker when no broker is
//! configured (the managed Mosquitto, or the built-in rumqttd), the
//! publisher task, and the log lines about the broker; what a reload
//! (SIGHUP) can reload in it.

use std::{sync::Arc, time::Duration};

use super::{board::Start, reload};

use anyhow::Context;
use tokio::{
    sync::{SemaphorePermit, mpsc},
    task::JoinHandle,
};
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, error, info, warn};

use boardcast::{
    accounts::Account,
    config::{BrokerChoice, BrokerUrl, Embedded, EmbeddedKind, FindBoard, Mqtt, Pairing, Scheme},
    shell::console::Commander,
    shell::driver::Forward,
    shell::mqtt::{
        broker,
        client::{self, PublisherEvent, PublisherSettings},
        commands::{self, Heard, ListenSettings},
        mosquitto::{self, ManagedMosquitto, MosquittoSettings},
    },
};
use boardcast_core::{
    publish::{
        Item,
        board::{BoardFeed, FeedSettings},
        commands::commands_topic,
        guard::OperatorKey,
        topics::Topics,
    },
    sink::Sink,
};

/// Where the feed goes, for whoever wants to tell the user.
#[derive(Clone, Debug)]
pub(crate) struct FeedReady {
    /// The embedded broker's addresses, if it is the embedded one.
    pub(crate) embedded: Option<broker::EmbeddedBroker>,
    /// Whether the embedded broker is the managed Mosquitto (with access
    /// control) rather than the built-in one.
    pub(crate) managed: bool,
    /// The topic root.
    pub(crate) root: String,
    /// This bridge's name in the topics.
    pub(crate) bridge_id: String,
    /// Where the display pages are served, if they are.
    pub(crate) http: Option<std::net::SocketAddr>,
    /// The operator console they serve, if any (the demo makes a log-in
    /// link with it).
    pub(crate) console: Option<std::sync::Arc<boardcast::shell::console::Console>>,
}

/// Where boards send their feed items.
#[derive(Clone)]
pub(super) struct BoardFeeds {
    pub(super) settings: FeedSettings,
    pub(super) items: mpsc::UnboundedSender<Item>,
    /// Asks the publisher to say when it has caught up.
    pub(super) marks: mpsc::UnboundedSender<client::Caught>,
}

/// How long the next board waits at most for the publisher to catch up
/// with a resumed board's past.
const PAST_PUBLISHED_WAIT: Duration = Duration::from_secs(5);

impl BoardFeeds {
    /// A board's feed (`[mqtt]`): its publications, to the publisher. A
    /// resumed board's past is published again first (subscribers drop what
    /// they already have by seq), and `turn`, the next board's turn to
    /// resume, is handed on once the publisher has caught up with it: a
    /// hundred boards' pasts at once (every move of every game so far)
    /// waited in the publisher together, and the allocator kept the peak for
    /// the rest of the day (RELIABILITY.md, "Long day"). This board goes on
    /// meanwhile: its own moves must not wait. A broker that is away holds
    /// nobody up for long.
    pub(super) fn outlet(&self, start: &Start<'_>, turn: Option<SemaphorePermit<'static>>) -> Forward<BoardFeed> {
        let board = start.board;
        let mut feed =
            BoardFeed::new(self.settings.clone(), &board.name, board.path.clone(), start.epoch_ms, start.session_id);
        let port = match &board.find {
            FindBoard::Port(path) => Some(path.display().to_string()),
            FindBoard::Bluetooth(target) => Some(format!("bluetooth {target}")),
            FindBoard::Serial(_) => None,
        };
        feed.describe(board.protocol.name(), port.as_deref());
        if board.assigned {
            feed.assigned();
        }
        if let Some(Pairing::MirrorOf { game }) = &board.pair {
            feed.mirror_of(game);
        }
        for output in start.past {
            feed.handle_output(output, start.games);
        }
        feed.flush(start.games);
        while let Some(item) = feed.poll_item() {
            let _ = self.items.send(item);
        }
        if let Some(turn) = turn {
            let (caught, caught_up) = tokio::sync::oneshot::channel();
            if self.marks.send(caught).is_ok() {
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(PAST_PUBLISHED_WAIT, caught_up).await;
                    drop(turn);
                });
            }
        }
        Forward::to(feed, self.items.clone())
    }
}

/// A running feed.
pub(super) struct FeedStarted {
    pub(super) settings: FeedSettings,
    pub(super) topics: Topics,
    pub(super) items: mpsc::UnboundedSender<Item>,
    /// Asks the publisher to say when it has caught up.
    pub(super) marks: mpsc::UnboundedSender<client::Caught>,
    pub(super) ready: FeedReady,
    publisher: JoinHandle<()>,
    log: JoinHandle<()>,
    listener: JoinHandle<()>,
    stop_listening: CancellationToken,
    mosquitto: Option<ManagedMosquitto>,
    /// What SIGHUP reloads (taken by the task that reloads).
    pub(super) reload: Option<reload::Target>,
    /// How the operator console sends commands: the daemon's broker and
    /// log-in, and the operator key.
    pub(super) commander: Commander,
}

impl FeedStarted {
    /// Once every board has stopped: lets the publisher deliver what is
    /// left and say goodbye.
    pub(super) async fn finish(self) {
        self.stop_listening.cancel();
        let _ = self.listener.await;
        drop(self.items);
        let _ = self.publisher.await;
        let _ = self.log.await;
        // Last: the publisher's goodbye went through it.
        if let Some(mosquitto) = self.mosquitto {
            mosquitto.stop().await;
        }
    }
}

/// Starts the feed.
pub(super) async fn start(
    mqtt: &Mqtt,
    boot: Arc<str>,
    boards: Vec<String>,
    epoch_ms: i64,
    key: OperatorKey,
    requests: mpsc::UnboundedSender<Heard>,
) -> anyhow::Result<FeedStarted> {
    let Broker { url: broker, embedded, credentials, managed, reload } = broker(mqtt).await?;
    let bridge_id = if mqtt.bridge_id.trim().is_empty() { host_name() } else { mqtt.bridge_id.clone() };
    let topics = Topics::new(&mqtt.root, &bridge_id);
    let settings = FeedSettings { topics: topics.clone(), boot: boot.clone(), languages: mqtt.languages.clone() };
    // A broker hands a session to whoever connects with its client id,
    // whatever account that client logs in with (Mosquitto 2.0 does): an id
    // a stranger can tell from the bridge id (served in `/config.json` and
    // in every topic) let anyone kick the feed off the broker, flipping every
    // display offline through the Last Will, and take the operator's
    // commands. 128 random bits per start cannot be guessed.
    let secret = mosquitto::hex(&mosquitto::random::<16>().context("the MQTT client ids")?);
    let publisher_settings = PublisherSettings {
        broker: broker.clone(),
        client_id: format!("boardcast-{}-{secret}", topics.bridge()),
        credentials: credentials.clone(),
        keep_alive: mqtt.keep_alive,
        topics: topics.clone(),
        boot,
        public_delay: mqtt.public_delay,
        queue_limit: mqtt.queue_limit,
        boards,
        started_ms: epoch_ms,
    };
    let commander = Commander {
        broker: broker.clone(),
        credentials: credentials.clone(),
        root: topics.root().to_owned(),
        bridge: topics.bridge().to_owned(),
        key: key.clone(),
    };
    let listen_settings = ListenSettings {
        broker: broker.clone(),
        client_id: format!("boardcast-{}-commands-{secret}", topics.bridge()),
        credentials,
        keep_alive: mqtt.keep_alive,
        topic: commands_topic(&topics),
        key,
    };
    let stop_listening = CancellationToken::new();
    let listener = tokio::spawn(
        commands::listen(listen_settings, requests, stop_listening.clone())
            .instrument(tracing::info_span!("operator", who = "operator")),
    );
    let (items, items_rx) = mpsc::unbounded_channel();
    let (marks, marks_rx) = mpsc::unbounded_channel();
    let (report, report_rx) = mpsc::unbounded_channel();
    let publisher = tokio::spawn(client::run(publisher_settings, items_rx, marks_rx, report));
    let log = tokio::spawn(
        log_publisher(broker.url.clone(), report_rx).instrument(tracing::info_span!("feed", feed = "mqtt")),
    );
    let ready = FeedReady {
        embedded,
        managed: managed.is_some(),
        root: topics.root().to_owned(),
        bridge_id: topics.bridge().to_owned(),
        http: None,
        console: None,
    };
    Ok(FeedStarted {
        settings,
        topics,
        items,
        marks,
        ready,
        publisher,
        log,
        listener,
        stop_listening,
        mosquitto: managed,
        reload: Some(reload),
        commander,
    })
}

/// Where the feed goes, and what was started for it.
struct Broker {
    /// Where the daemon's own clients connect.
    url: BrokerUrl,
    /// The embedded broker's addresses, if the broker is the embedded one.
    embedded: Option<broker::EmbeddedBroker>,
    /// How the daemon's clients log in.
    credentials: Option<(String, String)>,
    /// The managed Mosquitto, if it runs.
    managed: Option<ManagedMosquitto>,
    /// What SIGHUP can reload.
    reload: reload::Target,
}

/// The broker the configuration names (`mqtt.url`), or the embedded one,
/// started: the managed Mosquitto when installed, else the built-in one.
async fn broker(mqtt: &Mqtt) -> anyhow::Result<Broker> {
    let mut credentials = mqtt.credentials.clone();
    let mut managed = None;
    let mut reload = reload::Target::Nothing(
        "the built-in broker (rumqttd) has no accounts and no TLS; the daemon goes on".to_owned(),
    );
    let (url, embedded) = match &mqtt.broker {
        BrokerChoice::External(url) => {
            reload = reload::Target::Nothing(format!(
                "the broker is {} (mqtt.url), whose accounts and certificates are its own: reload them there (a client certificate of the daemon, mqtt.client_cert_file, is read at start: restart the daemon after renewing it)",
                url.url
            ));
            (url.clone(), None)
        }
        BrokerChoice::Embedded(embedded) => {
            let (listen, ws_listen) = (embedded.listen, embedded.ws_listen);
            // Where the daemon's own clients connect: the managed broker's
            // plain loopback listener of their own.
            let mut own = listen;
            match start_embedded(embedded, &mqtt.root).await? {
                Some((mosquitto, accounts)) => {
                    reload = reload::Target::Mosquitto {
                        reloader: mosquitto.reloader(),
                        accounts_file: embedded.accounts_file.clone(),
                        accounts,
                    };
                    credentials = Some(mosquitto.credentials.clone());
                    own = mosquitto.own;
                    managed = Some(mosquitto);
                }
                None => {
                    broker::start(listen, ws_listen).await.context("starting the embedded MQTT broker")?;
                }
            }
            let host = if own.ip().is_unspecified() { "127.0.0.1".to_owned() } else { own.ip().to_string() };
            let url = BrokerUrl {
                url: format!("mqtt://{host}:{}", own.port()),
                scheme: Scheme::Mqtt,
                host,
                port: own.port(),
                ca_file: None,
                client_auth: None,
            };
            (url, Some(broker::EmbeddedBroker { listen, ws_listen }))
        }
    };
    Ok(Broker { url, embedded, credentials, managed, reload })
}

/// Starts the managed Mosquitto when it is wanted and installed, with the
/// accounts it was given; `None` when the built-in broker is to be started
/// instead (said loudly unless asked for).
async fn start_embedded(embedded: &Embedded, root: &str) -> anyhow::Result<Option<(ManagedMosquitto, Vec<Account>)>> {
    let binary = match embedded.kind {
        EmbeddedKind::Builtin => {
            warn!(
                "mqtt: the built-in broker (rumqttd) has NO access control: anyone who reaches {} can publish fake moves; for demonstrations only (docs/security.md)",
                embedded.listen
            );
            return Ok(None);
        }
        kind => match mosquitto::find_binary(embedded.mosquitto_bin.as_deref()) {
            Some(binary) => binary,
            None if embedded.tls.is_some() => anyhow::bail!(
                "mqtt.embedded.tls_cert_file is set but Mosquitto is not installed (not on PATH nor in /usr/sbin), and the built-in broker cannot serve TLS: `apt-get install mosquitto`, or set mqtt.embedded.mosquitto_bin"
            ),
            None if kind == EmbeddedKind::Mosquitto => anyhow::bail!(
                "mqtt.embedded.broker = \"mosquitto\" but Mosquitto is not installed (not on PATH nor in /usr/sbin): `apt-get install mosquitto`, or set mqtt.embedded.mosquitto_bin"
            ),
            None => {
                error!(
                    "mqtt: Mosquitto is not installed, so the built-in broker (rumqttd) runs instead: it has NO access control (anyone who reaches {} can publish fake moves) and is for demonstrations only. `apt-get install mosquitto` and restart (docs/security.md)",
                    embedded.listen
                );
                return Ok(None);
            }
        },
    };
    let accounts = crate::cmd::accounts::load(&embedded.accounts_file)?;
    if accounts.is_empty() {
        info!(
            "mqtt: no broker accounts in {} (`boardcast accounts add NAME --role operator` lets `boardcast ctl` in)",
            embedded.accounts_file.display()
        );
    }
    let settings = MosquittoSettings {
        binary,
        listen: embedded.listen,
        ws_listen: embedded.ws_listen,
        root: root.to_owned(),
        accounts: accounts.clone(),
        anonymous: embedded.anonymous,
        max_connections: embedded.max_connections,
        memory_limit_mb: embedded.memory_limit_mb,
        tls: embedded.tls.clone(),
        own_listen: None,
        logins: boardcast_core::LoginLimits {
            warn_per_window: embedded.failed_logins_warn_per_min,
            window: Duration::from_secs(60),
            ..boardcast_core::LoginLimits::default()
        },
    };
    let mosquitto = mosquitto::start(settings).await.context("starting the embedded MQTT broker (Mosquitto)")?;
    Ok(Some((mosquitto, accounts)))
}

/// The machine's name, for the bridge's topics.
pub(crate) fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "bridge".to_owned())
}

/// Log lines about the broker: connections, and failures said once per
/// kind (a broker that stays away is not reported every ten seconds).
async fn log_publisher(url: String, mut events: mpsc::UnboundedReceiver<PublisherEvent>) {
    let mut last_failure: Option<String> = None;
    let mut connected_once = false;
    // Whether the broker is reached now (a stop while it is away has not
    // delivered the latest state, whatever the outbox holds).
    let mut connected = false;
    while let Some(event) = events.recv().await {
        match event {
            PublisherEvent::Connected { session_present } => {
                let again = if connected_once { "again " } else { "" };
                let session = if session_present || !connected_once {
                    ""
                } else {
                    " (the broker lost the session: unacknowledged moves and alerts are sent again)"
                };
                info!("connected {again}to {url}{session}");
                connected_once = true;
                connected = true;
                last_failure = None;
            }
            PublisherEvent::Failed { error, retry_in } => {
                connected = false;
                if last_failure.as_ref() != Some(&error) {
                    warn!(
                        "{url}: {error}; trying again in {:.1} s and then less often (at most every 10 s); moves and alerts are kept meanwhile",
                        retry_in.as_secs_f64()
                    );
                    last_failure = Some(error);
                }
            }
            PublisherEvent::Refused(refused) => {
                if refused.overflow > 0 {
                    error!(
                        "{} move or alert message(s) dropped so far: the broker has been away too long (raise mqtt.max_queued_messages)",
                        refused.overflow
                    );
                }
                if refused.too_large > 0 {
                    error!("{} message(s) too large for the broker were not sent", refused.too_large);
                }
            }
            PublisherEvent::Stopped { undelivered } => {
                match stopped_line(&url, undelivered, connected, &last_failure) {
                    (true, line) => info!("{line}"),
                    (false, line) => warn!("{line}"),
                }
            }
        }
    }
}

/// The line said when the publisher stops, and whether all went well: that
/// everything was delivered only when the broker is reached and has
/// acknowledged every move and alert; otherwise what was not, and why.
fn stopped_line(url: &str, undelivered: usize, connected: bool, last_failure: &Option<String>) -> (bool, String) {
    let why = last_failure.as_deref().map_or_else(String::new, |e| format!(" ({e})"));
    let kept = "the PGN files and captures have everything";
    if !connected {
        return (
            false,
            format!(
                "stopped without reaching {url}{why}: the feed's latest state and {undelivered} move or alert message(s) were not delivered; {kept}"
            ),
        );
    }
    if undelivered > 0 {
        return (
            false,
            format!("stopped with {undelivered} move or alert message(s) not acknowledged by {url}; {kept}"),
        );
    }
    (true, "stopped; everything was delivered".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everything_delivered_is_said_only_when_true() {
        let never = stopped_line("mqtt://x:1", 0, false, &Some("connection refused".into()));
        assert!(!never.0);
        assert!(never.1.contains("without reaching mqtt://x:1 (connection refused)"), "{}", never.1);
        assert!(!never.1.contains("everything was delivered"));
        assert!(!stopped_line("mqtt://x:1", 3, true, &None).0);
        assert_eq!(stopped_line("mqtt://x:1", 0, true, &None), (true, "stopped; everything was delivered".into()));
    }
}
