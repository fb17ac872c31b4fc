//! Square Off framing: every message is ASCII, `<code>#<body>*`, over
//! notifications that may cut it anywhere. The framer decides only once a
//! `*` has come (or enough bytes for certain that none will end a message
//! already started), so the items are the same however the bytes were
//! split; bytes before a message's code are reported as garbage.

use crate::protocol::queue::Framing;

/// The longest message: `30#`, 64 squares, `*`.
const LONGEST: usize = 68;

/// What the framer found next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framed {
    /// A whole message.
    Message {
        /// The number before `#` (`30` for the board, `0` for a square).
        code: u8,
        /// What stands between `#` and `*`.
        body: Vec<u8>,
    },
    /// Bytes that are part of no message, dropped.
    Garbage(usize),
}

/// Splits a Square Off byte stream into [`Framed`] items.
#[derive(Clone, Debug, Default)]
pub struct Framer {
    buf: Vec<u8>,
}

/// The message `bytes` (without its `*`) holds, if it is one: a code of
/// one or two digits, `#`, a body without `#`.
fn parse(bytes: &[u8]) -> Option<(u8, &[u8])> {
    let hash = bytes.iter().position(|&b| b == b'#')?;
    let (code, body) = (&bytes[..hash], &bytes[hash + 1..]);
    let digits = (1..=2).contains(&code.len()) && code.iter().all(u8::is_ascii_digit);
    let code = std::str::from_utf8(code).ok()?.parse().ok().filter(|_| digits)?;
    (!body.contains(&b'#')).then_some((code, body))
}

impl Framer {
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

    /// Drops whatever is buffered, returning how many bytes that was.
    pub fn flush(&mut self) -> Option<usize> {
        let len = self.buf.len();
        self.buf.clear();
        (len > 0).then_some(len)
    }

    fn check(&self) -> Option<(Framed, usize)> {
        let window = &self.buf[..self.buf.len().min(LONGEST + 2)];
        let Some(end) = window.iter().position(|&b| b == b'*') else {
            // No message starting in the first three bytes could end
            // later than the window: they are garbage.
            return (window.len() == LONGEST + 2).then_some((Framed::Garbage(3), 3));
        };
        let span = &window[..end];
        match (0..end).find(|&i| parse(&span[i..]).is_some()) {
            Some(0) => {
                let (code, body) = parse(span)?;
                Some((Framed::Message { code, body: body.to_vec() }, end + 1))
            }
            Some(start) => Some((Framed::Garbage(start), start)),
            None => Some((Framed::Garbage(end + 1), end + 1)),
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

    #[test]
    fn messages_and_garbage_whatever_the_split() {
        let stream = b"x130#R*0#e2u*##*22#3.52*0#e4d";
        let whole = {
            let mut framer = Framer::default();
            framer.push(stream);
            std::iter::from_fn(|| framer.next_item()).collect::<Vec<_>>()
        };
        assert_eq!(
            whole,
            [
                Framed::Garbage(2),
                Framed::Message { code: 30, body: b"R".to_vec() },
                Framed::Message { code: 0, body: b"e2u".to_vec() },
                Framed::Garbage(3),
                Framed::Message { code: 22, body: b"3.52".to_vec() },
            ]
        );
        for cut in 1..stream.len() {
            let mut framer = Framer::default();
            let mut items = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                framer.push(part);
                items.extend(std::iter::from_fn(|| framer.next_item()));
            }
            assert_eq!(items, whole, "cut at {cut}");
        }
    }
}
