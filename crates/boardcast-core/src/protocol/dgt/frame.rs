//! DGT framing: splitting the byte stream from the board into messages.
//!
//! Every message is `ID LEN_HI LEN_LO DATA…`. The ID has bit 7 set; the two
//! length bytes and every data byte have bit 7 clear, and the 14-bit length
//! counts the three header bytes. That makes the start of a message
//! recognisable, which is how the framer resynchronises after garbage: a byte
//! with bit 7 clear where a message should start is skipped, and a byte with
//! bit 7 set inside a message abandons that message and starts a new one.
//!
//! The framer follows check → parse → advance: it only consumes bytes once a
//! whole message (or a run of garbage) is certain, so the output is the same
//! however the input is split into chunks.

/// Messages longer than this are taken for garbage. The longest real message
/// is the EEPROM dump (`0x1F03` bytes on 8 KB boards).
pub(crate) const MAX_MESSAGE_LEN: usize = 0x2000;

/// Garbage is buffered up to this many bytes before it is reported.
const MAX_GARBAGE_RUN: usize = 4096;

/// One message as it came off the wire, borrowed from the framer's buffer
/// (no allocation per message: a board sends many).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The message ID, bit 7 set (e.g. `0x8E` for a field update).
    pub id: u8,
    /// The data bytes after the three header bytes.
    pub(crate) data: &'a [u8],
}

/// What the framer found next in the byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framed<'a> {
    /// A complete message.
    Frame(Frame<'a>),
    /// Bytes that were not part of any message and were dropped.
    Garbage {
        /// How many bytes were dropped.
        len: usize,
        /// Why they were dropped.
        reason: GarbageReason,
    },
}

/// Why bytes were dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GarbageReason {
    /// Bytes with bit 7 clear where a message ID was expected.
    NoMessageStart,
    /// A header whose length is impossible (below 3 or above
    /// [`MAX_MESSAGE_LEN`]); the three header bytes are dropped.
    BadLength,
    /// A message cut short by the start of another one.
    Truncated,
    /// A message cut off by the end of the stream.
    Unfinished,
}

impl GarbageReason {
    /// A short description for logs and notices.
    pub(crate) const fn describe(self) -> &'static str {
        match self {
            Self::NoMessageStart => "bytes outside any message",
            Self::BadLength => "a message header with an impossible length",
            Self::Truncated => "a message cut short by the next one",
            Self::Unfinished => "a message cut off by the end of the stream",
        }
    }
}

/// Splits a DGT byte stream into [`Framed`] items.
#[derive(Clone, Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
    /// Where the unframed bytes start in `buf`.
    start: usize,
    /// Bytes of the item last returned, dropped at the next call.
    returned: usize,
}

impl Framer {
    /// A framer with nothing buffered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends bytes received from the board.
    pub fn push(&mut self, bytes: &[u8]) {
        self.consume();
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    #[cfg(test)]
    /// Bytes buffered but not yet framed (an incomplete message or a run of
    /// garbage not yet ended).
    pub(crate) fn pending(&self) -> usize {
        self.buf.len() - self.start - self.returned
    }

    fn consume(&mut self) {
        self.start += std::mem::take(&mut self.returned);
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
    }

    /// Drops whatever is buffered, reporting it as garbage: for the end of a
    /// stream, or a board that was unplugged mid-message.
    pub(crate) fn flush(&mut self) -> Option<Framed<'static>> {
        self.consume();
        let len = self.buf.len() - self.start;
        self.buf.clear();
        self.start = 0;
        (len > 0).then(|| garbage(len, GarbageReason::Unfinished))
    }

    /// The next complete item, or `None` when more bytes are needed. The
    /// item borrows the buffer until the next call.
    pub fn next_item(&mut self) -> Option<Framed<'_>> {
        self.consume();
        let (item, consumed) = check(&self.buf[self.start..])?;
        self.returned = consumed;
        Some(item)
    }
}

/// Looks at the start of `buf` and says what is there and how many bytes it
/// takes, without consuming anything. `None` means "incomplete".
fn check(buf: &[u8]) -> Option<(Framed<'_>, usize)> {
    let first = *buf.first()?;
    if first & 0x80 == 0 {
        // Report a run of garbage once it ends, so that the report is the
        // same however the run was split into chunks; a very long run is
        // reported in pieces rather than buffered without bound.
        let len = match buf.iter().position(|b| b & 0x80 != 0) {
            Some(len) => len,
            None if buf.len() >= MAX_GARBAGE_RUN => buf.len(),
            None => return None,
        };
        return Some((garbage(len, GarbageReason::NoMessageStart), len));
    }
    // A header byte with bit 7 set means the ID before it was not a message.
    for &b in buf.iter().skip(1).take(2) {
        if b & 0x80 != 0 {
            return Some((garbage(1, GarbageReason::Truncated), 1));
        }
    }
    if buf.len() < 3 {
        return None;
    }
    let total = (usize::from(buf[1]) << 7) | usize::from(buf[2]);
    if !(3..=MAX_MESSAGE_LEN).contains(&total) {
        return Some((garbage(3, GarbageReason::BadLength), 3));
    }
    let available = &buf[3..buf.len().min(total)];
    if let Some(at) = available.iter().position(|b| b & 0x80 != 0) {
        let len = 3 + at;
        return Some((garbage(len, GarbageReason::Truncated), len));
    }
    if buf.len() < total {
        return None;
    }
    let frame = Frame { id: first, data: &buf[3..total] };
    Some((Framed::Frame(frame), total))
}

fn garbage(len: usize, reason: GarbageReason) -> Framed<'static> {
    Framed::Garbage { len, reason }
}

/// Writes the header and data of a message.
pub fn encode(id: u8, data: &[u8], out: &mut Vec<u8>) {
    debug_assert!(id & 0x80 != 0 && data.len() + 3 <= MAX_MESSAGE_LEN);
    let total = data.len() + 3;
    out.push(id);
    out.push(((total >> 7) & 0x7F) as u8);
    out.push((total & 0x7F) as u8);
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An owned copy of a framed item, for comparisons.
    #[derive(Debug, PartialEq, Eq)]
    enum Owned {
        Frame(u8, Vec<u8>),
        Garbage { len: usize, reason: GarbageReason },
    }

    fn owned(item: Framed<'_>) -> Owned {
        match item {
            Framed::Frame(f) => Owned::Frame(f.id, f.data.to_vec()),
            Framed::Garbage { len, reason } => Owned::Garbage { len, reason },
        }
    }

    fn frames(chunks: &[&[u8]]) -> Vec<Owned> {
        let mut framer = Framer::new();
        let mut out = Vec::new();
        for chunk in chunks {
            framer.push(chunk);
            while let Some(item) = framer.next_item() {
                out.push(owned(item));
            }
        }
        out
    }

    fn frame(id: u8, data: &[u8]) -> Owned {
        Owned::Frame(id, data.to_vec())
    }

    #[test]
    fn frames_a_field_update_split_anywhere() {
        let bytes = [0x8E, 0x00, 0x05, 0x34, 0x00];
        for split in 0..=bytes.len() {
            let (a, b) = bytes.split_at(split);
            assert_eq!(frames(&[a, b]), vec![frame(0x8E, &[0x34, 0x00])], "split at {split}");
        }
    }

    #[test]
    fn trailing_garbage_waits_for_the_end_of_the_run_or_a_flush() {
        let mut framer = Framer::new();
        framer.push(&[0x01, 0x02]);
        assert_eq!(framer.next_item(), None);
        framer.push(&[0x03]);
        assert_eq!(framer.next_item(), None);
        assert_eq!(framer.flush(), Some(Framed::Garbage { len: 3, reason: GarbageReason::Unfinished }));
        assert_eq!(framer.flush(), None);
        framer.push(&vec![0u8; MAX_GARBAGE_RUN]);
        assert_eq!(
            framer.next_item(),
            Some(Framed::Garbage { len: MAX_GARBAGE_RUN, reason: GarbageReason::NoMessageStart })
        );
        assert_eq!(framer.next_item(), None);
        assert_eq!(framer.pending(), 0);
    }

    #[test]
    fn skips_leading_garbage_and_keeps_the_message() {
        let out = frames(&[&[0x01, 0x02, 0x7F, 0x8E, 0x00, 0x05, 0x24, 0x01]]);
        assert_eq!(
            out,
            vec![Owned::Garbage { len: 3, reason: GarbageReason::NoMessageStart }, frame(0x8E, &[0x24, 0x01]),]
        );
    }

    #[test]
    fn a_message_cut_short_by_another_is_dropped() {
        // A field update that lost its last byte, then a complete one.
        let out = frames(&[&[0x8E, 0x00, 0x05, 0x34, 0x8E, 0x00, 0x05, 0x24, 0x01]]);
        assert_eq!(out, vec![Owned::Garbage { len: 4, reason: GarbageReason::Truncated }, frame(0x8E, &[0x24, 0x01])]);
    }

    #[test]
    fn an_id_followed_by_an_id_is_dropped() {
        let out = frames(&[&[0x8E, 0x8E, 0x00, 0x05, 0x24, 0x01]]);
        assert_eq!(out, vec![Owned::Garbage { len: 1, reason: GarbageReason::Truncated }, frame(0x8E, &[0x24, 0x01])]);
    }

    #[test]
    fn impossible_lengths_are_garbage() {
        let out = frames(&[&[0x8E, 0x00, 0x01, 0x8E, 0x7F, 0x7F, 0x8E, 0x00, 0x05, 0x24, 0x01]]);
        assert_eq!(
            out,
            vec![
                Owned::Garbage { len: 3, reason: GarbageReason::BadLength },
                Owned::Garbage { len: 3, reason: GarbageReason::BadLength },
                frame(0x8E, &[0x24, 0x01]),
            ]
        );
    }

    #[test]
    fn waits_for_the_rest_of_a_long_message() {
        let mut framer = Framer::new();
        let mut bytes = vec![0x86, 0x00, 0x43];
        bytes.extend([0u8; 30]);
        framer.push(&bytes);
        assert_eq!(framer.next_item(), None);
        assert_eq!(framer.pending(), 33);
        framer.push(&[0u8; 34]);
        assert_eq!(framer.next_item().map(owned), Some(frame(0x86, &[0u8; 64])));
        assert_eq!(framer.pending(), 0);
    }

    #[test]
    fn encodes_lengths_in_two_seven_bit_bytes() {
        let mut out = Vec::new();
        encode(0x86, &[0u8; 64], &mut out);
        assert_eq!(&out[..3], &[0x86, 0x00, 0x43]);
        out.clear();
        encode(0x8F, &vec![0u8; 0x1F00], &mut out);
        assert_eq!(&out[..3], &[0x8F, 0x3E, 0x03]);
    }
}
