//! Starting the MQTT feed: the embedded broker when no broker is
//! configured, the publisher task, and the log lines about the broker.

use std::sync::Arc;

use anyhow::Context;
use tokio::{sync::mpsc, task::JoinHandle};
use tracing::{Instrument, error, info, warn};

use boardcast::{
    config::{BrokerChoice, BrokerUrl, Mqtt, Scheme},
    publish::{Item, board::FeedSettings, commands::Request, topics::Topics},
    shell::mqtt::{
        broker,
        client::{self, PublisherEvent, PublisherSettings},
    },
};

/// Where the feed goes, for whoever wants to tell the user.
#[derive(Clone, Debug)]
pub(crate) struct FeedReady {
    /// The embedded broker's addresses, if it is the embedded one.
    pub(crate) embedded: Option<broker::EmbeddedBroker>,
    /// The topic root.
    pub(crate) root: String,
}

/// A running feed.
pub(super) struct FeedStarted {
    pub(super) settings: FeedSettings,
    pub(super) topics: Topics,
    pub(super) items: mpsc::UnboundedSender<Item>,
    pub(super) ready: FeedReady,
    publisher: JoinHandle<()>,
    log: JoinHandle<()>,
}

impl FeedStarted {
    /// Once every board has stopped: lets the publisher deliver what is
    /// left and say goodbye.
    pub(super) async fn finish(self) {
        drop(self.items);
        let _ = self.publisher.await;
        let _ = self.log.await;
    }
}

/// Starts the feed.
pub(super) async fn start(
    mqtt: &Mqtt,
    boot: Arc<str>,
    boards: Vec<String>,
    epoch_ms: i64,
    requests: mpsc::UnboundedSender<Result<Request, (String, String)>>,
) -> anyhow::Result<FeedStarted> {
    let (broker, embedded) = match &mqtt.broker {
        BrokerChoice::External(url) => (url.clone(), None),
        BrokerChoice::Embedded { listen, ws_listen } => {
            let started = broker::start(*listen, *ws_listen).await.context("starting the embedded MQTT broker")?;
            let host = if listen.ip().is_unspecified() { "127.0.0.1".to_owned() } else { listen.ip().to_string() };
            let url = BrokerUrl {
                url: format!("mqtt://{host}:{}", listen.port()),
                scheme: Scheme::Mqtt,
                host,
                port: listen.port(),
                ca_file: None,
            };
            (url, Some(started))
        }
    };
    let bridge_id = if mqtt.bridge_id.trim().is_empty() { host_name() } else { mqtt.bridge_id.clone() };
    let topics = Topics::new(&mqtt.root, &bridge_id);
    let settings = FeedSettings { topics: topics.clone(), boot: boot.clone(), languages: mqtt.languages.clone() };
    let publisher_settings = PublisherSettings {
        broker: broker.clone(),
        client_id: format!("boardcast-{}", topics.bridge()),
        credentials: mqtt.credentials.clone(),
        keep_alive: mqtt.keep_alive,
        topics: topics.clone(),
        boot,
        public_delay: mqtt.public_delay,
        queue_limit: mqtt.queue_limit,
        boards,
        started_ms: epoch_ms,
        requests: Some(requests),
    };
    let (items, items_rx) = mpsc::unbounded_channel();
    let (report, report_rx) = mpsc::unbounded_channel();
    let publisher = tokio::spawn(client::run(publisher_settings, items_rx, report));
    let log = tokio::spawn(
        log_publisher(broker.url.clone(), report_rx).instrument(tracing::info_span!("feed", feed = "mqtt")),
    );
    let ready = FeedReady { embedded, root: topics.root().to_owned() };
    Ok(FeedStarted { settings, topics, items, ready, publisher, log })
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
                last_failure = None;
            }
            PublisherEvent::Failed { error, retry_in } => {
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
                if undelivered > 0 {
                    warn!(
                        "stopped with {undelivered} move or alert message(s) not acknowledged by the broker (the PGN files and captures have them)"
                    );
                } else {
                    info!("stopped; everything was delivered");
                }
            }
        }
    }
}
