//! Asking a daemon to apply an operator command, as `boardcast ctl` and the
//! operator console do: the request signed with the operator key (the
//! core's `seal` of `request_json`), published on the bridge's `commands`
//! topic once subscribed to its `replies`, and the reply with the request's
//! id awaited. One short-lived connection per question, so that the
//! caller's wait never touches the feed's or the listener's connection.

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::Value;

use boardcast_core::{
    operator::Command,
    publish::{
        commands::{commands_topic, replies_topic},
        guard::{MAX_COMMAND_BYTES, OperatorKey, request_json, seal},
        topics::Topics,
    },
};

/// Why a question got no reply.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// The signed request is larger than the daemon takes.
    #[error(
        "the command is {0} bytes, more than the {MAX_COMMAND_BYTES} the daemon takes: split the pairings file (by board) and send each part with next-round"
    )]
    TooLarge(usize),
    /// The broker could not be reached or dropped the connection.
    #[error("{0}")]
    Broker(String),
}

/// The request for `board` with `id`, sent at `ts_ms`, signed with `key`:
/// the envelope the daemon's guard checks.
///
/// # Errors
///
/// [`AskError::TooLarge`] when the daemon would refuse it for its size.
pub fn signed_request(
    key: &OperatorKey,
    id: &str,
    board: &str,
    ts_ms: i64,
    command: &Command,
) -> Result<Vec<u8>, AskError> {
    let request = seal(key, &request_json(id, board, ts_ms, command));
    if request.len() > MAX_COMMAND_BYTES {
        return Err(AskError::TooLarge(request.len()));
    }
    Ok(request)
}

/// Publishes `request` (made by [`signed_request`] with `id`) to the
/// bridge of `topics` once subscribed to its replies, and waits for the
/// reply to it: `{"id", "board", "ok", "message", …}` (docs/mqtt.md). The
/// caller bounds the wait.
///
/// # Errors
///
/// [`AskError::Broker`] when the connection fails.
pub async fn ask(options: MqttOptions, topics: &Topics, id: &str, request: Vec<u8>) -> Result<Value, AskError> {
    let broker = |e: &dyn std::fmt::Display| AskError::Broker(e.to_string());
    let (client, mut eventloop) = AsyncClient::new(options, 16);
    let mut sent = false;
    loop {
        match eventloop.poll().await {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                client.subscribe(replies_topic(topics), QoS::AtLeastOnce).await.map_err(|e| broker(&e))?;
            }
            Ok(Event::Incoming(Packet::SubAck(_))) if !sent => {
                sent = true;
                client
                    .publish(commands_topic(topics), QoS::AtLeastOnce, false, request.clone())
                    .await
                    .map_err(|e| broker(&e))?;
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => {
                let reply: Value = serde_json::from_slice(&publish.payload).unwrap_or(Value::Null);
                if reply["id"] == id {
                    let _ = client.disconnect().await;
                    return Ok(reply);
                }
            }
            Ok(_) => {}
            Err(error) => return Err(broker(&error)),
        }
    }
}
