//! The commands listener: a connection of its own to the broker, only for
//! the bridge's `commands` topic, so that nothing arriving there can
//! disturb the feed's connection.
//!
//! - Clean session (client id `<feed client id>-commands`): nothing is
//!   queued for it while the daemon is away, so a command never waits in a
//!   broker to be applied at the next start.
//! - Its largest incoming packet ([`MAX_INCOMING`]) is well above the
//!   commands bound, so an oversized command is read and refused with an
//!   answer. A message larger still breaks only this connection; it is
//!   then opened again after clearing any retained message on the topic,
//!   which is what could otherwise bring the message back every time.
//! - Every message goes through the sans-I/O [`Guard`]; what it lets
//!   through, and the refusals to answer, go to the daemon's router.
//! - After every command applied the topic's retained message is cleared:
//!   one sent with retain reaches a subscribed daemon without the flag and
//!   is applied once, like any other, and must not stay in the broker to
//!   be delivered again (flagged, and refused) at the next connection.

use std::time::Duration;

use rumqttc::{AsyncClient, ConnectionError, Event, Packet, QoS, StateError};
use tokio::{sync::mpsc, time::sleep};
use tokio_util::sync::CancellationToken;

use super::client::{Backoff, connect_options};
use crate::config::BrokerUrl;
use boardcast_core::publish::{
    commands::Request,
    guard::{Guard, OperatorKey, Refusal, Verdict},
};

/// The largest message this connection reads (beyond it the connection
/// drops and comes back, see the module documentation).
pub const MAX_INCOMING: usize = 1 << 20;

/// Where and how to listen.
#[derive(Clone, Debug)]
pub struct ListenSettings {
    /// The broker.
    pub broker: BrokerUrl,
    /// This connection's client id.
    pub client_id: String,
    /// User name and password.
    pub credentials: Option<(String, String)>,
    /// MQTT keep-alive.
    pub keep_alive: Duration,
    /// `<root>/v1/bridges/<id>/commands`.
    pub topic: String,
    /// What the operator signs with.
    pub key: OperatorKey,
}

/// What the listener hands the router.
pub type Heard = Result<Request, Refusal>;

/// Listens until `stop`.
pub async fn listen(settings: ListenSettings, heard: mpsc::UnboundedSender<Heard>, stop: CancellationToken) {
    let mut options =
        connect_options(&settings.broker, &settings.client_id, settings.credentials.as_ref(), settings.keep_alive);
    options.set_clean_session(true).set_max_packet_size(MAX_INCOMING, MAX_INCOMING);
    let (client, mut eventloop) = AsyncClient::new(options, 64);
    let mut guard = Guard::new(settings.key.clone());
    let mut backoff = Backoff::new();
    let mut clear_first = false;
    loop {
        let polled = tokio::select! {
            () = stop.cancelled() => return,
            polled = eventloop.poll() => polled,
        };
        match polled {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                backoff.reset();
                if std::mem::take(&mut clear_first) {
                    let _ = client.try_publish(settings.topic.clone(), QoS::AtLeastOnce, true, Vec::new());
                }
                let _ = client.try_subscribe(settings.topic.clone(), QoS::AtLeastOnce);
            }
            Ok(Event::Incoming(Packet::Publish(publish))) if publish.topic == settings.topic => {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as i64);
                match guard.handle_message(now, &publish.payload, publish.retain) {
                    Verdict::Apply(request) => {
                        // A broker delivers a retained message to a client
                        // already subscribed without the retain flag (MQTT
                        // 3.1.1; Mosquitto does), so the guard cannot tell
                        // it from any other: clearing the topic after every
                        // command applied keeps one published with retain
                        // from waiting there for the next connection.
                        let _ = client.try_publish(settings.topic.clone(), QoS::AtLeastOnce, true, Vec::new());
                        let _ = heard.send(Ok(request));
                    }
                    Verdict::Refuse(refusal) => {
                        if refusal.clear_retained {
                            let _ = client.try_publish(settings.topic.clone(), QoS::AtLeastOnce, true, Vec::new());
                        }
                        if refusal.answer {
                            let _ = heard.send(Err(refusal));
                        }
                    }
                    Verdict::Ignore => {}
                }
            }
            Ok(_) => {}
            Err(error) => {
                if let ConnectionError::MqttState(StateError::Deserialization(
                    rumqttc::Error::PayloadSizeLimitExceeded(size),
                )) = &error
                {
                    clear_first = true;
                    let _ = heard.send(Err(Refusal {
                        id: String::new(),
                        board: String::new(),
                        reason: format!(
                            "a message of {size} bytes on the commands topic was dropped unread (commands are at most {} bytes); a retained one there is cleared",
                            boardcast_core::publish::guard::MAX_COMMAND_BYTES
                        ),
                        answer: true,
                        clear_retained: true,
                    }));
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = sleep(backoff.next()) => {}
                }
            }
        }
    }
}
