//! The request for the whole board (a DGT board dump, a Millennium status)
//! that a link sends after lost bytes or before a player is blamed, and
//! repeats when the answer is lost too: shared by every link whose board
//! answers such a request, so that they ask and give up alike.

use std::time::Duration;

use crate::time::Timestamp;

/// How many times a request after lost bytes is sent before the link gives
/// up (the session stops waiting by itself).
const TRIES: u8 = 3;

/// A request for the whole board that has not been answered yet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BoardRequest {
    /// When it was last sent, and how many times (a request before blaming
    /// starts at [`TRIES`]: it is sent once).
    pending: Option<(Timestamp, u8)>,
}

impl BoardRequest {
    /// Bytes were lost: a field update may be among them. Returns whether
    /// to send the request (not when one is already waiting: more lost
    /// bytes before the answer need no second one).
    pub(crate) fn after_lost_bytes(&mut self, now: Timestamp) -> bool {
        self.ask(now, 1)
    }

    /// The reconstructor is about to blame a player on the picture it has.
    /// Returns whether to send the request (once, not repeated: the session
    /// waits only so long for it).
    pub(crate) fn before_blame(&mut self, now: Timestamp) -> bool {
        self.ask(now, TRIES)
    }

    fn ask(&mut self, now: Timestamp, tries: u8) -> bool {
        let ask = self.pending.is_none();
        if ask {
            self.pending = Some((now, tries));
        }
        ask
    }

    /// The whole board came, or the connection started over: nothing is
    /// awaited.
    pub(crate) fn clear(&mut self) {
        self.pending = None;
    }

    /// Acts on the deadline: returns whether to send the request again
    /// (the answer was lost too, or the board was busy), which it does
    /// until it has been sent [`TRIES`] times.
    pub(crate) fn handle_timeout(&mut self, now: Timestamp, within: Duration) -> bool {
        let Some((asked, tries)) = self.pending else { return false };
        if now < asked + within {
            return false;
        }
        self.pending = (tries < TRIES).then_some((now, tries + 1));
        tries < TRIES
    }

    /// When the answer is due, if one is awaited.
    pub(crate) fn poll_timeout(&self, within: Duration) -> Option<Timestamp> {
        self.pending.map(|(asked, _)| asked + within)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITHIN: Duration = Duration::from_millis(500);

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    #[test]
    fn a_request_after_lost_bytes_is_sent_three_times_then_given_up() {
        let mut request = BoardRequest::default();
        assert!(request.after_lost_bytes(at(0)));
        assert!(!request.after_lost_bytes(at(10)), "more lost bytes need no second request");
        assert!(!request.handle_timeout(at(499), WITHIN), "not due yet");
        assert_eq!(request.poll_timeout(WITHIN), Some(at(500)));
        assert!(request.handle_timeout(at(500), WITHIN));
        assert!(request.handle_timeout(at(1000), WITHIN));
        assert!(!request.handle_timeout(at(1500), WITHIN), "three times is enough");
        assert_eq!(request.poll_timeout(WITHIN), None);
        assert!(request.after_lost_bytes(at(2000)), "later lost bytes ask again");
    }

    #[test]
    fn a_request_before_blaming_is_sent_once_and_an_answer_ends_it() {
        let mut request = BoardRequest::default();
        assert!(request.before_blame(at(0)));
        assert!(!request.before_blame(at(1)));
        assert!(!request.handle_timeout(at(500), WITHIN), "not repeated");
        assert_eq!(request.poll_timeout(WITHIN), None);

        assert!(request.after_lost_bytes(at(600)));
        request.clear();
        assert_eq!(request.poll_timeout(WITHIN), None);
        assert!(!request.handle_timeout(at(5000), WITHIN));
    }
}
