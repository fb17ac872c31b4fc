//! The publisher task: items from every board's feed in, MQTT messages out
//! through rumqttc, without ever holding up a board.
//!
//! - Items arrive on an unbounded channel and go straight into the
//!   sans-I/O [`Hub`] (public tree, summaries) and [`Outbox`] (latest value
//!   per retained topic, moves and alerts until acknowledged), so a slow or
//!   absent broker never blocks a board's driver; the outbox bounds memory.
//! - rumqttc's event loop runs in its own task. rumqttc reconnects only
//!   when polled and does not wait between attempts, so that task waits
//!   after every failure: 0.25 s, doubling up to 10 s, with ±25 % jitter so
//!   that a hall of bridges does not reconnect in step.
//! - The session is persistent (a client id stable for the run, clean session off), so
//!   moves in flight survive a dropped link; when the broker has lost the
//!   session anyway, the outbox sends again what it did not acknowledge.
//!   On every connection every retained topic is sent again.
//! - The bridge's status topic says `online`; its Last Will says `offline`
//!   if the daemon vanishes, and a clean stop says so itself.
//! - This connection subscribes to nothing: operator commands come on a
//!   connection of their own (`commands.rs`), so that no message anyone
//!   publishes can break the feed. Should a message too large to read
//!   arrive anyway (a subscription left in the broker's session by an
//!   older version), the next connection starts a clean session once.

use std::{sync::Arc, time::Duration};

use rumqttc::{
    AsyncClient, ConnectionError, Event, LastWill, MqttOptions, Outgoing, Packet, QoS, StateError, TlsConfiguration,
    Transport,
};
use tokio::{
    sync::{mpsc, oneshot},
    time::{Instant, sleep, sleep_until},
};
use tokio_util::sync::CancellationToken;

use crate::config::{BrokerUrl, Scheme};
use boardcast_core::{
    publish::{
        Item, Publication, Qos,
        commands::commands_topic,
        hub::Hub,
        outbox::{Outbox, Refused},
        payload::{self, BridgeStatusPayload},
        topics::Topics,
    },
    time::Timestamp,
};

/// The largest message the client sends or accepts (a long PGN is tens of
/// KiB; rumqttc's default of 10 KiB would cut the link on one).
pub const MAX_PACKET: usize = 1 << 20;

/// Everything the publisher needs.
#[derive(Clone, Debug)]
pub struct PublisherSettings {
    /// The broker.
    pub broker: BrokerUrl,
    /// The MQTT client id: stable for this run, so that the broker keeps
    /// its session across reconnections, and secret (docs/security.md).
    pub client_id: String,
    /// User name and password.
    pub credentials: Option<(String, String)>,
    /// MQTT keep-alive.
    pub keep_alive: Duration,
    /// Topic names.
    pub topics: Topics,
    /// This run of the daemon.
    pub boot: Arc<str>,
    /// How far the public tree is behind.
    pub public_delay: Duration,
    /// Moves and alerts kept at most while the broker is away.
    pub queue_limit: usize,
    /// The boards this bridge reads (for its status topic).
    pub boards: Vec<String>,
    /// Wall-clock milliseconds now (for the status topic's time).
    pub started_ms: i64,
}

/// What the publisher reports, for the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PublisherEvent {
    /// Connected to the broker.
    Connected {
        /// Whether the broker kept the session from before.
        session_present: bool,
    },
    /// The connection failed or dropped; the next attempt comes after
    /// `retry_in`.
    Failed {
        /// What went wrong.
        error: String,
        /// When the next attempt comes.
        retry_in: Duration,
    },
    /// Messages were refused (too many waiting, or too large).
    Refused(Refused),
    /// Stopped; this many moves and alerts could not be delivered.
    Stopped {
        /// Not acknowledged by the broker when the daemon stopped.
        undelivered: usize,
    },
}

/// What the event-loop task tells the publisher.
#[derive(Debug)]
enum LoopEvent {
    Connected { session_present: bool },
    Written(u16),
    Acknowledged(u16),
    Failed { error: String, retry_in: Duration },
}

/// Publishes `items` until the channel closes (every board has stopped),
/// then says the bridge is offline and disconnects (waiting at most 3 s for
/// the broker to acknowledge what is left).
pub async fn run(
    settings: PublisherSettings,
    mut items: mpsc::UnboundedReceiver<Item>,
    mut marks: mpsc::UnboundedReceiver<Caught>,
    report: mpsc::UnboundedSender<PublisherEvent>,
) {
    let Connection { client, mut loop_rx, stop_loop, event_loop } = connect(&settings);

    // The hub's time: a monotonic clock from here (the wall clock may jump).
    let origin = Instant::now();
    let now = || Timestamp::from_micros(origin.elapsed().as_micros() as u64);
    let mut hub = Hub::new(settings.topics.clone(), &settings.boot, settings.public_delay);
    let mut outbox = Outbox::new(settings.queue_limit, MAX_PACKET - 1024);
    outbox.handle_publication(&bridge_status(&settings, "online"));
    let mut refused = Refused::default();
    let mut open = true;
    let commands_topic = commands_topic(&settings.topics);
    let mut waiting_marks: Vec<Caught> = Vec::new();
    while open {
        hand_over(&mut outbox, &client);
        // Nothing drains while the broker is away: nobody waits for it.
        if outbox.unacknowledged() <= CAUGHT_UP || !outbox.is_connected() {
            for mark in waiting_marks.drain(..) {
                let _ = mark.send(());
            }
        }
        let wake = hub.poll_timeout().map(|at| origin + at.saturating_since(Timestamp::ZERO));
        tokio::select! {
            item = items.recv() => match item {
                Some(item) => {
                    hub.handle_item(now(), item);
                    // Take whatever else is waiting before handing over.
                    while let Ok(item) = items.try_recv() {
                        hub.handle_item(now(), item);
                    }
                    while let Some(publication) = hub.poll_publication() {
                        outbox.handle_publication(&publication);
                    }
                }
                None => open = false,
            },
            // Items sent before the mark are in the channel already: take
            // them first, so that the mark counts them.
            Some(mark) = marks.recv() => {
                while let Ok(item) = items.try_recv() {
                    hub.handle_item(now(), item);
                }
                while let Some(publication) = hub.poll_publication() {
                    outbox.handle_publication(&publication);
                }
                waiting_marks.push(mark);
            }
            event = loop_rx.recv() => match event {
                Some(event) => {
                    if matches!(event, LoopEvent::Connected { session_present: true }) {
                        // Versions before the commands connection
                        // subscribed here, in the persistent session.
                        let _ = client.try_unsubscribe(commands_topic.clone());
                    }
                    handle_loop_event(&mut outbox, event, &report);
                }
                None => open = false,
            },
            () = sleep_until(wake.unwrap_or_else(far_future)), if wake.is_some() => {
                hub.handle_timeout(now());
                while let Some(publication) = hub.poll_publication() {
                    outbox.handle_publication(&publication);
                }
            }
        }
        if outbox.refused() != refused {
            refused = outbox.refused();
            let _ = report.send(PublisherEvent::Refused(refused));
        }
    }

    // Every board has stopped: deliver what is left (for a few seconds at
    // most if the broker is away), say the bridge is offline, disconnect.
    hub.handle_stop(now());
    while let Some(publication) = hub.poll_publication() {
        outbox.handle_publication(&publication);
    }
    outbox.handle_publication(&bridge_status(&settings, "offline"));
    let connection = Connection { client, loop_rx, stop_loop, event_loop };
    let undelivered = say_goodbye(connection, &mut outbox, &report).await;
    let _ = report.send(PublisherEvent::Stopped { undelivered });
}

/// The publisher's connection: its client, and the task that drives the
/// client's event loop and reports what happens on it.
struct Connection {
    client: AsyncClient,
    loop_rx: mpsc::UnboundedReceiver<LoopEvent>,
    stop_loop: CancellationToken,
    event_loop: tokio::task::JoinHandle<()>,
}

/// Connects (and keeps connecting) to the broker.
fn connect(settings: &PublisherSettings) -> Connection {
    let (client, mut eventloop) = AsyncClient::new(options(settings), 256);
    // Nagle's algorithm held a small publish until the broker acknowledged
    // the one before: a move's `made` reached subscribers at p99 30 ms
    // instead of 6 (BENCHMARKS.md section 5). Messages here are few and
    // each one matters at once.
    let mut network = eventloop.network_options();
    network.set_tcp_nodelay(true);
    eventloop.set_network_options(network);
    let (loop_tx, loop_rx) = mpsc::unbounded_channel();
    let stop_loop = CancellationToken::new();
    let event_loop = tokio::spawn(drive_event_loop(eventloop, loop_tx, stop_loop.clone()));
    Connection { client, loop_rx, stop_loop, event_loop }
}

/// Hands over what is left (for a few seconds at most if the broker is
/// away), then disconnects; returns how many messages went unacknowledged.
async fn say_goodbye(
    connection: Connection,
    outbox: &mut Outbox,
    report: &mpsc::UnboundedSender<PublisherEvent>,
) -> usize {
    let Connection { client, mut loop_rx, stop_loop, event_loop } = connection;
    let deadline = Instant::now() + Duration::from_secs(3);
    while !outbox.is_idle() && Instant::now() < deadline {
        hand_over(outbox, &client);
        tokio::select! {
            Some(event) = loop_rx.recv() => handle_loop_event(outbox, event, report),
            () = sleep(Duration::from_millis(20)) => {}
        }
    }
    let _ = client.try_disconnect();
    // Let the event loop write the DISCONNECT.
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        while let Some(event) = loop_rx.recv().await {
            if matches!(event, LoopEvent::Failed { .. }) {
                break;
            }
        }
    })
    .await;
    stop_loop.cancel();
    let _ = event_loop.await;
    outbox.unacknowledged()
}

fn handle_loop_event(outbox: &mut Outbox, event: LoopEvent, report: &mpsc::UnboundedSender<PublisherEvent>) {
    match event {
        LoopEvent::Connected { session_present } => {
            outbox.handle_connected(session_present);
            let _ = report.send(PublisherEvent::Connected { session_present });
        }
        LoopEvent::Written(pkid) => outbox.handle_written(pkid),
        LoopEvent::Acknowledged(pkid) => outbox.handle_acknowledged(pkid),
        LoopEvent::Failed { error, retry_in } => {
            outbox.handle_disconnected();
            let _ = report.send(PublisherEvent::Failed { error, retry_in });
        }
    }
}

/// Hands the client what the outbox has ready, while it has room.
fn hand_over(outbox: &mut Outbox, client: &AsyncClient) {
    while let Some(message) = outbox.poll_send() {
        let qos = match message.qos {
            Qos::AtMostOnce => QoS::AtMostOnce,
            Qos::AtLeastOnce => QoS::AtLeastOnce,
        };
        if client.try_publish(message.topic.clone(), qos, message.retain, message.payload.clone()).is_err() {
            outbox.unsend(message);
            break;
        }
    }
}

/// Told once the publisher has caught up: the items sent before it was
/// asked for went to the broker, and at most [`CAUGHT_UP`] moves and alerts
/// still wait for the broker's acknowledgement; or at once while the
/// broker is away.
pub type Caught = oneshot::Sender<()>;

/// Moves and alerts still unacknowledged when the publisher counts as
/// caught up: a few hundred kilobytes, and more than a resumed board's
/// past, so that a publisher keeping up never holds a resume back.
const CAUGHT_UP: usize = 1000;

/// Polls rumqttc's event loop for ever, waiting after each failure.
async fn drive_event_loop(
    mut eventloop: rumqttc::EventLoop,
    events: mpsc::UnboundedSender<LoopEvent>,
    stop: CancellationToken,
) {
    let mut backoff = Backoff::new();
    loop {
        let polled = tokio::select! {
            () = stop.cancelled() => return,
            polled = eventloop.poll() => polled,
        };
        let event = match polled {
            Ok(Event::Incoming(Packet::ConnAck(ack))) => {
                backoff.reset();
                eventloop.mqtt_options.set_clean_session(false);
                LoopEvent::Connected { session_present: ack.session_present }
            }
            Ok(Event::Incoming(Packet::PubAck(ack))) => LoopEvent::Acknowledged(ack.pkid),
            Ok(Event::Outgoing(Outgoing::Publish(pkid))) => LoopEvent::Written(pkid),
            Ok(_) => continue,
            Err(error) => {
                if let ConnectionError::MqttState(StateError::Deserialization(
                    rumqttc::Error::PayloadSizeLimitExceeded(_),
                )) = &error
                {
                    // Something in the broker's session for this client
                    // that it cannot read would come back at every
                    // reconnection: drop the session once.
                    eventloop.mqtt_options.set_clean_session(true);
                }
                let retry_in = backoff.next();
                let _ = events.send(LoopEvent::Failed { error: error.to_string(), retry_in });
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = sleep(retry_in) => {}
                }
                continue;
            }
        };
        if events.send(event).is_err() {
            return;
        }
    }
}

/// Waits between connection attempts: 0.25 s doubling to 10 s, ±25 %.
pub(crate) struct Backoff {
    delay: Duration,
}

impl Backoff {
    pub(crate) fn new() -> Self {
        Self { delay: Duration::from_millis(250) }
    }

    pub(crate) fn reset(&mut self) {
        self.delay = Duration::from_millis(250);
    }

    pub(crate) fn next(&mut self) -> Duration {
        let base = self.delay;
        self.delay = (self.delay * 2).min(Duration::from_secs(10));
        // The jitter keeps a hall's displays from reconnecting in step; it
        // needs no seeded generator: the standard library's per-process
        // random hash keys are random enough and cost nothing.
        let random = {
            use std::hash::{BuildHasher, Hasher};
            std::collections::hash_map::RandomState::new().build_hasher().finish()
        };
        let factor = 0.75 + ((random % 1001) as f64) / 2000.0;
        base.mul_f64(factor)
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(86_400 * 365)
}

/// The publisher's options: persistent session and the Last Will.
fn options(settings: &PublisherSettings) -> MqttOptions {
    let mut options =
        connect_options(&settings.broker, &settings.client_id, settings.credentials.as_ref(), settings.keep_alive);
    options.set_clean_session(false).set_last_will(LastWill::new(
        settings.topics.bridge_status(),
        serde_json::to_vec(&bridge_payload(settings, "offline", Some("connection lost"))).expect("payloads serialise"),
        QoS::AtLeastOnce,
        true,
    ));
    options
}

/// Options to reach `broker` (packet size for long PGNs, credentials, TLS,
/// WebSocket), for the publisher and for `boardcast ctl`.
pub fn connect_options(
    broker: &BrokerUrl,
    client_id: &str,
    credentials: Option<&(String, String)>,
    keep_alive: Duration,
) -> MqttOptions {
    let host = match broker.scheme {
        // For WebSocket, rumqttc takes the whole URL as the "host".
        Scheme::Ws | Scheme::Wss => broker.url.clone(),
        Scheme::Mqtt | Scheme::Mqtts => broker.host.clone(),
    };
    let mut options = MqttOptions::new(client_id.to_owned(), host, broker.port);
    options.set_keep_alive(keep_alive).set_max_packet_size(MAX_PACKET, MAX_PACKET);
    if let Some((user, password)) = credentials {
        options.set_credentials(user.clone(), password.clone());
    }
    let tls = || {
        // The configuration checked that the file exists; unreadable now
        // means no CA, which the TLS handshake then reports.
        let ca = broker.ca_file.as_ref().and_then(|path| std::fs::read(path).ok()).unwrap_or_default();
        // The same for a client certificate: a file gone since then makes
        // the broker refuse the handshake, which the log reports.
        let client_auth = broker.client_auth.as_ref().map(|files| {
            (std::fs::read(&files.cert_file).unwrap_or_default(), std::fs::read(&files.key_file).unwrap_or_default())
        });
        TlsConfiguration::Simple { ca, alpn: None, client_auth }
    };
    match broker.scheme {
        Scheme::Mqtt => {}
        Scheme::Mqtts => {
            options.set_transport(Transport::Tls(tls()));
        }
        Scheme::Ws => {
            options.set_transport(Transport::Ws);
        }
        Scheme::Wss => {
            options.set_transport(Transport::Wss(tls()));
        }
    }
    options
}

/// The bridge's retained status.
fn bridge_status(settings: &PublisherSettings, status: &str) -> Publication {
    Publication {
        topic: settings.topics.bridge_status(),
        payload: Some(payload::to_value(&bridge_payload(settings, status, None))),
        retain: true,
        qos: Qos::AtMostOnce,
        public: false,
    }
}

fn bridge_payload<'a>(
    settings: &'a PublisherSettings,
    status: &'a str,
    reason: Option<&'a str>,
) -> BridgeStatusPayload<'a> {
    BridgeStatusPayload {
        schema: payload::SCHEMA,
        boot: &settings.boot,
        ts_ms: settings.started_ms,
        bridge: settings.topics.bridge(),
        status,
        reason,
        version: env!("CARGO_PKG_VERSION"),
        boards: &settings.boards,
    }
}
