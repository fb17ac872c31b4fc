//! What the MQTT client still has to send, and what the broker still has to
//! acknowledge. Sans-I/O: the publisher task reports the client's events
//! (connected, a publish written with its packet id, an acknowledgement)
//! and hands over what [`Outbox::poll_send`] gives.
//!
//! Two kinds of message, two policies:
//!
//! - **Retained topics** (state, PGN, clock, summaries, statuses) only ever
//!   matter in their latest value. The outbox keeps that value per topic;
//!   a value superseded before it was sent is never sent, and after every
//!   reconnection every topic is sent again (a broker that restarted may
//!   have lost its retained store, and a publish cut off by the drop is
//!   repaired). They go at QoS 0.
//! - **Moves and alerts** must arrive, each of them. They go at QoS 1 and
//!   stay here until the broker acknowledges them. The MQTT client does not
//!   say which packet id a publish got, but it reports each publish as it
//!   writes it, in the order they were handed over, so the ids are matched
//!   to the messages in that order. When a reconnection finds that the
//!   broker lost the session (it restarted, or the session expired), every
//!   message not acknowledged is sent again, in its original order; when
//!   the session survived, the client resends them itself. Subscribers may
//!   see a message twice and de-duplicate by `seq`; none is lost.
//!
//! Memory is bounded: at most `queue_limit` moves and alerts wait (the
//! oldest go first when a broker stays away for days, and are counted).

use std::collections::{HashMap, VecDeque};

use super::{Publication, Qos};

/// A message handed to the MQTT client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Order of arrival (for resending in order).
    pub id: u64,
    /// The topic.
    pub topic: String,
    /// The payload.
    pub payload: Vec<u8>,
    /// Delivery guarantee.
    pub qos: Qos,
    /// Retained by the broker.
    pub retain: bool,
}

/// What has been refused, for the log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refused {
    /// Moves and alerts dropped because too many waited.
    pub overflow: u64,
    /// Messages larger than the broker's packet limit.
    pub too_large: u64,
}

/// The outbox.
#[derive(Debug)]
pub struct Outbox {
    /// Latest value per retained topic, and whether it still has to go.
    retained: HashMap<String, (Vec<u8>, bool)>,
    /// Retained topics to send, in the order they changed.
    dirty: VecDeque<String>,
    /// Moves and alerts not yet handed over.
    queue: VecDeque<Message>,
    /// Handed over, not yet written by the client.
    handed: VecDeque<Message>,
    /// Written with this packet id, not yet acknowledged.
    inflight: HashMap<u16, Message>,
    connected: bool,
    next_id: u64,
    queue_limit: usize,
    max_payload: usize,
    /// How many may be handed over and not acknowledged at once.
    window: usize,
    refused: Refused,
}

impl Outbox {
    /// An outbox keeping at most `queue_limit` moves and alerts, for a
    /// broker that takes payloads up to `max_payload` bytes.
    pub fn new(queue_limit: usize, max_payload: usize) -> Self {
        Self {
            retained: HashMap::new(),
            dirty: VecDeque::new(),
            queue: VecDeque::new(),
            handed: VecDeque::new(),
            inflight: HashMap::new(),
            connected: false,
            next_id: 0,
            queue_limit: queue_limit.max(1),
            max_payload,
            window: 64,
            refused: Refused::default(),
        }
    }

    /// A publication to send.
    pub fn handle_publication(&mut self, publication: &Publication) {
        let payload = publication.bytes();
        if payload.len() > self.max_payload {
            self.refused.too_large += 1;
            return;
        }
        if publication.retain && publication.qos == Qos::AtMostOnce {
            let fresh =
                self.retained.insert(publication.topic.clone(), (payload, true)).is_none_or(|(_, dirty)| !dirty);
            if fresh {
                self.dirty.push_back(publication.topic.clone());
            }
            return;
        }
        if self.queue.len() >= self.queue_limit {
            self.queue.pop_front();
            self.refused.overflow += 1;
        }
        self.next_id += 1;
        self.queue.push_back(Message {
            id: self.next_id,
            topic: publication.topic.clone(),
            payload,
            qos: publication.qos,
            retain: publication.retain,
        });
    }

    /// The client connected (again). `session_present`: the broker kept
    /// the session, so the client resends what was in flight itself.
    pub fn handle_connected(&mut self, session_present: bool) {
        self.connected = true;
        // Everything retained goes again.
        self.dirty.clear();
        let mut topics: Vec<&String> = self.retained.keys().collect();
        topics.sort();
        for topic in topics {
            self.dirty.push_back(topic.clone());
        }
        for (_, dirty) in self.retained.values_mut() {
            *dirty = true;
        }
        if !session_present {
            // The broker lost the session: what it did not acknowledge is
            // lost with it, and the client dropped its copies too.
            let mut lost: Vec<Message> = self.inflight.drain().map(|(_, m)| m).collect();
            lost.extend(self.handed.drain(..));
            lost.retain(|m| m.qos == Qos::AtLeastOnce);
            lost.sort_by_key(|m| m.id);
            for message in lost.into_iter().rev() {
                self.queue.push_front(message);
            }
        }
    }

    /// The link dropped; the client reconnects by itself.
    pub fn handle_disconnected(&mut self) {
        self.connected = false;
    }

    /// The client wrote a publish with packet id `pkid` (0 for QoS 0).
    pub fn handle_written(&mut self, pkid: u16) {
        if pkid != 0 && self.inflight.contains_key(&pkid) {
            // A retransmission of one already matched.
            return;
        }
        let Some(message) = self.handed.pop_front() else { return };
        if message.qos == Qos::AtLeastOnce && pkid != 0 {
            self.inflight.insert(pkid, message);
        }
    }

    /// The broker acknowledged packet `pkid`.
    pub fn handle_acknowledged(&mut self, pkid: u16) {
        self.inflight.remove(&pkid);
    }

    /// The next message to hand to the client, if it is connected and has
    /// room: moves and alerts first (in order), then retained topics.
    pub fn poll_send(&mut self) -> Option<Message> {
        if !self.connected || self.handed.len() + self.inflight.len() >= self.window {
            return None;
        }
        let message = if let Some(message) = self.queue.pop_front() {
            message
        } else {
            let topic = self.dirty.pop_front()?;
            let (payload, dirty) = self.retained.get_mut(&topic).expect("dirty topics are retained");
            *dirty = false;
            self.next_id += 1;
            Message { id: self.next_id, topic, payload: payload.clone(), qos: Qos::AtMostOnce, retain: true }
        };
        self.handed.push_back(message.clone());
        Some(message)
    }

    /// The client could not take `message` after all (its queue is full):
    /// it goes back to the front.
    pub fn unsend(&mut self, message: Message) {
        if let Some(index) = self.handed.iter().rposition(|m| m.id == message.id) {
            self.handed.remove(index);
        }
        if message.retain && message.qos == Qos::AtMostOnce {
            if let Some((_, dirty)) = self.retained.get_mut(&message.topic)
                && !*dirty
            {
                *dirty = true;
                self.dirty.push_front(message.topic);
            }
        } else {
            self.queue.push_front(message);
        }
    }

    /// Moves and alerts not yet acknowledged by the broker.
    pub fn unacknowledged(&self) -> usize {
        self.queue.len() + self.handed.iter().filter(|m| m.qos == Qos::AtLeastOnce).count() + self.inflight.len()
    }

    /// Whether the broker is connected (as last told).
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// Whether anything still has to go (retained topics included).
    pub fn is_idle(&self) -> bool {
        self.unacknowledged() == 0 && self.dirty.is_empty() && self.handed.is_empty()
    }

    /// What was refused so far.
    pub fn refused(&self) -> Refused {
        self.refused
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn retained(topic: &str, n: u32) -> Publication {
        Publication {
            topic: topic.into(),
            payload: Some(json!({"n": n})),
            retain: true,
            qos: Qos::AtMostOnce,
            public: false,
        }
    }

    fn moved(n: u32) -> Publication {
        Publication {
            topic: "moves".into(),
            payload: Some(json!({"seq": n})),
            retain: false,
            qos: Qos::AtLeastOnce,
            public: false,
        }
    }

    fn send_all(outbox: &mut Outbox) -> Vec<Message> {
        std::iter::from_fn(|| outbox.poll_send()).collect()
    }

    fn text(m: &Message) -> String {
        format!("{} {}", m.topic, String::from_utf8_lossy(&m.payload))
    }

    #[test]
    fn nothing_goes_before_the_connection_and_superseded_state_never_goes() {
        let mut outbox = Outbox::new(100, 1 << 20);
        outbox.handle_publication(&retained("state", 1));
        outbox.handle_publication(&moved(1));
        outbox.handle_publication(&retained("state", 2));
        assert_eq!(outbox.poll_send(), None, "not connected");
        outbox.handle_connected(false);
        let sent: Vec<String> = send_all(&mut outbox).iter().map(text).collect();
        assert_eq!(sent, ["moves {\"seq\":1}", "state {\"n\":2}"], "moves first, only the latest state");
    }

    #[test]
    fn moves_lost_with_the_session_are_sent_again_in_order_and_acknowledged_ones_are_not() {
        let mut outbox = Outbox::new(100, 1 << 20);
        outbox.handle_connected(false);
        for n in 1..=4 {
            outbox.handle_publication(&moved(n));
        }
        let sent = send_all(&mut outbox);
        assert_eq!(sent.len(), 4);
        // The client wrote 1–3 (ids 7, 8, 9); the broker acknowledged 1;
        // the link dropped with 2 and 3 in flight and 4 still queued in the
        // client.
        outbox.handle_written(7);
        outbox.handle_written(8);
        outbox.handle_written(9);
        outbox.handle_acknowledged(7);
        outbox.handle_disconnected();
        outbox.handle_publication(&moved(5));
        assert_eq!(outbox.unacknowledged(), 4);
        outbox.handle_connected(false);
        let again: Vec<String> = send_all(&mut outbox).iter().map(text).collect();
        assert_eq!(again, ["moves {\"seq\":2}", "moves {\"seq\":3}", "moves {\"seq\":4}", "moves {\"seq\":5}"]);
    }

    #[test]
    fn when_the_session_survives_the_client_resends_and_nothing_is_doubled_here() {
        let mut outbox = Outbox::new(100, 1 << 20);
        outbox.handle_connected(false);
        outbox.handle_publication(&moved(1));
        outbox.handle_publication(&moved(2));
        send_all(&mut outbox);
        outbox.handle_written(1);
        outbox.handle_disconnected();
        outbox.handle_connected(true);
        assert!(send_all(&mut outbox).is_empty());
        // The client resends 1 under its id, then writes 2 for the first time.
        outbox.handle_written(1);
        outbox.handle_written(2);
        outbox.handle_acknowledged(1);
        outbox.handle_acknowledged(2);
        assert_eq!(outbox.unacknowledged(), 0);
        assert!(outbox.is_idle());
    }

    #[test]
    fn every_retained_topic_goes_again_after_a_reconnection() {
        let mut outbox = Outbox::new(100, 1 << 20);
        outbox.handle_connected(false);
        outbox.handle_publication(&retained("b", 1));
        outbox.handle_publication(&retained("a", 1));
        for m in send_all(&mut outbox) {
            outbox.handle_written(0);
            assert!(m.retain);
        }
        assert!(outbox.is_idle());
        outbox.handle_disconnected();
        outbox.handle_connected(true);
        let again: Vec<String> = send_all(&mut outbox).into_iter().map(|m| m.topic).collect();
        assert_eq!(again, ["a", "b"]);
    }

    #[test]
    fn memory_is_bounded_and_oversized_payloads_are_refused() {
        let mut outbox = Outbox::new(3, 20);
        for n in 1..=5 {
            outbox.handle_publication(&moved(n));
        }
        let mut big = retained("big", 1);
        big.payload = Some(json!({"pgn": "1. e4 e5 ".repeat(10)}));
        outbox.handle_publication(&big);
        assert_eq!(outbox.refused(), Refused { overflow: 2, too_large: 1 });
        outbox.handle_connected(false);
        let kept: Vec<String> = send_all(&mut outbox).iter().map(text).collect();
        assert_eq!(kept, ["moves {\"seq\":3}", "moves {\"seq\":4}", "moves {\"seq\":5}"]);
    }

    #[test]
    fn a_message_the_client_could_not_take_goes_back_to_the_front() {
        let mut outbox = Outbox::new(100, 1 << 20);
        outbox.handle_connected(false);
        outbox.handle_publication(&moved(1));
        outbox.handle_publication(&moved(2));
        let first = outbox.poll_send().unwrap();
        outbox.unsend(first);
        let sent: Vec<String> = send_all(&mut outbox).iter().map(text).collect();
        assert_eq!(sent, ["moves {\"seq\":1}", "moves {\"seq\":2}"]);
        outbox.handle_publication(&retained("s", 1));
        let state = outbox.poll_send().unwrap();
        outbox.unsend(state);
        assert_eq!(outbox.poll_send().map(|m| m.topic), Some("s".into()));
    }

    #[test]
    fn a_cleared_retained_topic_is_an_empty_message() {
        let mut outbox = Outbox::new(100, 1 << 20);
        outbox.handle_connected(false);
        outbox.handle_publication(&Publication::clear("old".into()));
        let sent = send_all(&mut outbox);
        assert_eq!(sent.len(), 1);
        assert!(sent[0].payload.is_empty() && sent[0].retain);
    }
}
