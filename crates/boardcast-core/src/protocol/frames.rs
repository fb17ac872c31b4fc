//! A framer for binary messages whose first bytes say how long they are
//! (an ID with a fixed length, or an ID and a length byte), as the
//! Bluetooth LE boards send them over notifications that may cut a
//! message anywhere. Each family says how its messages start
//! ([`Start`]); the framer reassembles them whatever the split and
//! resynchronises on bytes that start no known message.
//!
//! It consumes bytes only once an item is certain (check → parse →
//! advance), so the items are the same however the bytes were split.

use super::queue::Framing;

/// Garbage is buffered up to this many bytes before it is reported.
const MAX_GARBAGE_RUN: usize = 1024;

/// What the bytes at some position say about a message starting there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// No message of the family starts here.
    Not,
    /// Maybe: the next bytes (not here yet) decide.
    Unsure,
    /// A message of this many bytes in all starts here.
    Whole(usize),
}

/// What the framer found next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framed {
    /// A whole message, all its bytes.
    Message(Vec<u8>),
    /// Bytes that start no known message, dropped.
    Garbage(usize),
}

/// Splits a byte stream into [`Framed`] items by the family's [`Start`].
#[derive(Clone, Debug)]
pub struct Framer {
    buf: Vec<u8>,
    start: fn(&[u8]) -> Start,
}

impl Framer {
    /// A framer for messages that start as `start` says (called with at
    /// least one byte).
    pub fn new(start: fn(&[u8]) -> Start) -> Self {
        Self { buf: Vec::new(), start }
    }

    /// Appends bytes received from the board.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete item, or `None` when more bytes are needed.
    pub fn next_item(&mut self) -> Option<Framed> {
        let (item, used) = self.check()?;
        self.buf.drain(..used);
        Some(item)
    }

    /// Drops whatever is buffered (the end of a stream, a dropped link),
    /// returning how many bytes that was.
    pub fn flush(&mut self) -> Option<usize> {
        let len = self.buf.len();
        self.buf.clear();
        (len > 0).then_some(len)
    }

    /// What the start of the buffer holds and how many bytes it takes;
    /// `None` when more bytes are needed to be sure.
    fn check(&self) -> Option<(Framed, usize)> {
        let buf = &self.buf;
        if buf.is_empty() {
            return None;
        }
        match (self.start)(buf) {
            Start::Whole(len) => {
                let whole = buf.get(..len)?;
                Some((Framed::Message(whole.to_vec()), len))
            }
            Start::Unsure => None,
            // A run of garbage ends where a message may start; it is
            // reported once it ends, so the report does not depend on the
            // split. Where the next bytes decide whether a message starts,
            // the run's end waits for them.
            Start::Not => match (1..buf.len()).map(|i| (i, (self.start)(&buf[i..]))).find(|(_, s)| *s != Start::Not) {
                Some((_, Start::Unsure)) => None,
                Some((end, _)) => Some((Framed::Garbage(end), end)),
                None if buf.len() >= MAX_GARBAGE_RUN => Some((Framed::Garbage(buf.len()), buf.len())),
                None => None,
            },
        }
    }
}

impl Framing for Framer {
    type Item = Framed;

    fn push(&mut self, bytes: &[u8]) {
        Self::push(self, bytes);
    }

    fn next_item(&mut self) -> Option<Framed> {
        Self::next_item(self)
    }

    fn flush(&mut self) -> Option<usize> {
        Self::flush(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AA` and two bytes; `BB`, a length byte of at most 3, and as many.
    fn start(buf: &[u8]) -> Start {
        match (buf[0], buf.get(1)) {
            (0xAA, _) => Start::Whole(3),
            (0xBB, None) => Start::Unsure,
            (0xBB, Some(&len)) if len <= 3 => Start::Whole(2 + usize::from(len)),
            _ => Start::Not,
        }
    }

    #[test]
    fn items_are_the_same_whatever_the_split() {
        let stream = [0x01, 0x02, 0xAA, 7, 8, 0xBB, 0x09, 0xBB, 0x01, 5, 0x33];
        let whole = {
            let mut framer = Framer::new(start);
            framer.push(&stream);
            std::iter::from_fn(|| framer.next_item()).collect::<Vec<_>>()
        };
        assert_eq!(
            whole,
            [
                Framed::Garbage(2),
                Framed::Message(vec![0xAA, 7, 8]),
                Framed::Garbage(2),
                Framed::Message(vec![0xBB, 0x01, 5])
            ]
        );
        for cut in 1..stream.len() {
            let mut framer = Framer::new(start);
            let mut items = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                framer.push(part);
                items.extend(std::iter::from_fn(|| framer.next_item()));
            }
            assert_eq!(items, whole, "cut at {cut}");
        }
        let mut framer = Framer::new(start);
        framer.push(&stream);
        while framer.next_item().is_some() {}
        assert_eq!(framer.flush(), Some(1), "the trailing byte waits");
    }
}
