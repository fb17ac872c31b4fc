//! Millennium framing: finding messages in a stream of characters.
//!
//! A message is a letter, a fixed number of parameter characters that
//! depends on the letter, and a two-character block check. Nothing marks
//! where a message starts, so the framer scans for a letter the other side
//! sends (board replies are lower case, host commands upper case), reads
//! the fixed length, and checks every character and the block check. When
//! anything is wrong the letter was not a message start after all (a black
//! rook `r` inside a status, say, or a damaged message): one character is
//! dropped and the scan goes on from the next.
//!
//! The framer follows check → parse → advance: a decision is taken only
//! once the characters it depends on are there, so the items are the same
//! however the bytes were split into chunks. A false start is given up as
//! soon as one character cannot belong to its message, without waiting for
//! the whole length: line noise that looks like an `s` must not hold back
//! the replies behind it for 67 characters.
//!
//! Dropped characters are reported in runs. A run ends at the next message,
//! at a message start that turned out damaged (reported at once, so that
//! the link can ask for the board again without delay), after
//! [`MAX_GARBAGE_RUN`] characters, or at the end of the stream.

use super::wire::{self, NOISE};

/// Dropped characters are reported at the latest after this many.
pub(crate) const MAX_GARBAGE_RUN: usize = 4096;

/// The characters of a status: a piece letter, or `.` for an empty square.
pub const STATUS_CHARS: &[u8] = b"KQRBNPkqrbnp.";

/// Which side's messages a framer looks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Speaker {
    /// The board's replies (the decoder; the simulated board's script).
    #[default]
    Board,
    /// The host's commands (the simulated board).
    Host,
}

/// What may follow a message letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Params {
    /// This many hex characters.
    Hex(usize),
    /// The 64 characters of a status.
    Status,
}

impl Params {
    const fn len(self) -> usize {
        match self {
            Self::Hex(n) => n,
            Self::Status => 64,
        }
    }

    fn allows(self, ch: u8) -> bool {
        match self {
            Self::Hex(_) => wire::is_hex(ch),
            Self::Status => STATUS_CHARS.contains(&ch),
        }
    }
}

impl Speaker {
    /// The parameters that follow `letter`, or `None` when this speaker
    /// sends no message starting with it.
    fn params(self, letter: u8) -> Option<Params> {
        Some(match (self, letter) {
            (Self::Board, b's') => Params::Status,
            (Self::Board, b'v' | b'w' | b'r') | (Self::Host, b'W') => Params::Hex(4),
            (Self::Board, b'l' | b'x') | (Self::Host, b'S' | b'V' | b'X' | b'T') => Params::Hex(0),
            (Self::Host, b'R') => Params::Hex(2),
            // Slot time and 81 LED codes.
            (Self::Host, b'L') => Params::Hex(2 + 2 * 81),
            _ => return None,
        })
    }
}

/// One message as it came off the wire, borrowed from the framer's buffer
/// until the next call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The message letter (`s`, `v`, … from the board; `S`, `V`, … from the
    /// host).
    pub(crate) letter: u8,
    /// The parameter characters, 7-bit, block check left off.
    pub(crate) params: &'a [u8],
}

/// What the framer found next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framed<'a> {
    /// A complete message whose block check matched.
    Frame(Frame<'a>),
    /// Characters that were not part of any message and were dropped.
    Garbage {
        /// How many bytes were dropped.
        len: usize,
        /// Why.
        reason: GarbageReason,
    },
}

/// Why bytes were dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GarbageReason {
    /// Characters where no message starts.
    NoMessageStart,
    /// Bytes with even parity among them: line noise.
    LineNoise,
    /// A message start followed by a character its message cannot hold
    /// (or a byte with even parity): a damaged message, or a false start.
    Damaged,
    /// A message whose block check did not match.
    BadCheck,
    /// A message cut off by the end of the stream.
    Unfinished,
}

impl GarbageReason {
    /// A short description for logs and notices.
    pub(crate) const fn describe(self) -> &'static str {
        match self {
            Self::NoMessageStart => "characters outside any message",
            Self::LineNoise => "line noise (bytes with even parity)",
            Self::Damaged => "a message with a character it cannot hold",
            Self::BadCheck => "a message whose block check does not match",
            Self::Unfinished => "a message cut off by the end of the stream",
        }
    }
}

/// Splits a Millennium byte stream into [`Framed`] items.
#[derive(Clone, Debug, Default)]
pub struct Framer {
    speaker: Speaker,
    /// 7-bit characters, [`NOISE`] for bytes with even parity.
    buf: Vec<u8>,
    /// Where the unframed characters start in `buf`.
    start: usize,
    /// Characters of the frame last returned, dropped at the next call.
    returned: usize,
    /// Characters dropped and not reported yet.
    run: usize,
    /// Whether the run holds a byte with even parity.
    run_noisy: bool,
}

impl Framer {
    /// A framer for the messages of `speaker`, with nothing buffered.
    pub fn new(speaker: Speaker) -> Self {
        Self { speaker, ..Self::default() }
    }

    /// Appends bytes as received (parity bits included).
    pub fn push(&mut self, bytes: &[u8]) {
        self.consume();
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend(bytes.iter().map(|&b| wire::strip_parity(b)));
    }

    /// Drops whatever is buffered, reporting it (and any dropped characters
    /// not reported yet) as garbage: for the end of a stream, or a board
    /// unplugged mid-message.
    pub(crate) fn flush(&mut self) -> Option<Framed<'static>> {
        self.consume();
        let len = self.run + self.buf.len() - self.start;
        self.buf.clear();
        self.start = 0;
        self.run = 0;
        self.run_noisy = false;
        (len > 0).then_some(Framed::Garbage { len, reason: GarbageReason::Unfinished })
    }

    /// The next complete item, or `None` when more bytes are needed. A
    /// frame borrows the buffer until the next call.
    pub fn next_item(&mut self) -> Option<Framed<'_>> {
        self.consume();
        let len = loop {
            let &first = self.buf.get(self.start)?;
            let Some(params) = self.speaker.params(first) else {
                self.start += 1;
                self.run += 1;
                self.run_noisy |= first == NOISE;
                if self.run >= MAX_GARBAGE_RUN {
                    return Some(self.report(None));
                }
                continue;
            };
            match check(&self.buf[self.start..], params) {
                Checked::Incomplete => return None,
                Checked::Wrong(reason) => {
                    self.start += 1;
                    self.run += 1;
                    return Some(self.report(Some(reason)));
                }
                // The characters dropped before a message are reported
                // first; the message is found again at the next call.
                Checked::Whole(_) if self.run > 0 => return Some(self.report(None)),
                Checked::Whole(total) => break total,
            }
        };
        self.returned = len;
        let message = &self.buf[self.start..self.start + len];
        Some(Framed::Frame(Frame { letter: message[0], params: &message[1..len - 2] }))
    }

    fn consume(&mut self) {
        self.start += std::mem::take(&mut self.returned);
        if self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        }
    }

    /// Reports the run of dropped characters, for `reason` or, when it
    /// ended at a message or at the length limit, for what it held.
    fn report(&mut self, reason: Option<GarbageReason>) -> Framed<'static> {
        let reason =
            reason.unwrap_or(if self.run_noisy { GarbageReason::LineNoise } else { GarbageReason::NoMessageStart });
        let len = std::mem::take(&mut self.run);
        self.run_noisy = false;
        Framed::Garbage { len, reason }
    }
}

/// What the characters from a message letter on amount to.
enum Checked {
    /// More characters are needed to decide.
    Incomplete,
    /// Not a message: drop the letter.
    Wrong(GarbageReason),
    /// A whole message of this many characters.
    Whole(usize),
}

/// Checks the message starting at `rest[0]`, character by character, so
/// that a false start is given up as soon as it can be.
fn check(rest: &[u8], params: Params) -> Checked {
    let check_at = 1 + params.len();
    let total = check_at + 2;
    for (i, &ch) in rest.iter().enumerate().take(total).skip(1) {
        let fits = if i < check_at { params.allows(ch) } else { wire::is_hex(ch) };
        if !fits {
            return Checked::Wrong(GarbageReason::Damaged);
        }
    }
    if rest.len() < total {
        return Checked::Incomplete;
    }
    let expected = wire::parse_hex_pair([rest[check_at], rest[check_at + 1]]);
    if expected != Some(wire::block_check(&rest[..check_at])) {
        return Checked::Wrong(GarbageReason::BadCheck);
    }
    Checked::Whole(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::millennium::wire::seal;

    /// An owned copy of a framed item, for comparisons.
    #[derive(Debug, PartialEq, Eq)]
    enum Owned {
        Frame(u8, Vec<u8>),
        Garbage(usize, GarbageReason),
    }

    fn frames(speaker: Speaker, chunks: &[&[u8]]) -> Vec<Owned> {
        let mut framer = Framer::new(speaker);
        let mut out = Vec::new();
        for chunk in chunks {
            framer.push(chunk);
            while let Some(item) = framer.next_item() {
                out.push(match item {
                    Framed::Frame(f) => Owned::Frame(f.letter, f.params.to_vec()),
                    Framed::Garbage { len, reason } => Owned::Garbage(len, reason),
                });
            }
        }
        if let Some(Framed::Garbage { len, reason }) = framer.flush() {
            out.push(Owned::Garbage(len, reason));
        }
        out
    }

    fn start_status() -> Vec<u8> {
        seal(b"srnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR")
    }

    #[test]
    fn frames_a_version_reply_split_anywhere() {
        let bytes = seal(b"v0108");
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(frames(Speaker::Board, &[a, b]), [Owned::Frame(b'v', b"0108".to_vec())], "cut at {cut}");
        }
    }

    #[test]
    fn the_start_position_status_checks_73_in_either_orientation() {
        let status = start_status();
        assert_eq!(&status[65..], &[wire::with_parity(b'7'), wire::with_parity(b'3')]);
        let turned = seal(b"sRNBKQBNRPPPPPPPP................................pppppppprnbkqbnr");
        assert_eq!(&turned[65..], &status[65..]);
        assert!(matches!(frames(Speaker::Board, &[&status]).as_slice(), [Owned::Frame(b's', p)] if p.len() == 64));
    }

    #[test]
    fn a_damaged_status_is_dropped_and_reported_at_once() {
        let mut status = start_status();
        status[20] ^= 0x01; // one flipped bit: even parity
        let mut framer = Framer::new(Speaker::Board);
        framer.push(&status[..21]);
        // The damage is seen before the status is complete.
        assert_eq!(framer.next_item(), Some(Framed::Garbage { len: 1, reason: GarbageReason::Damaged }));
        framer.push(&status[21..]);
        framer.push(&seal(b"x"));
        let mut rest = Vec::new();
        while let Some(item) = framer.next_item() {
            rest.push(match item {
                Framed::Frame(f) => Owned::Frame(f.letter, f.params.to_vec()),
                Framed::Garbage { len, reason } => Owned::Garbage(len, reason),
            });
        }
        // The black rooks (`r`) in the rest of it are false starts, the
        // noise byte is in the run, and the `x` reply comes through.
        let dropped: usize = rest.iter().map(|o| if let Owned::Garbage(n, _) = o { *n } else { 0 }).sum();
        assert_eq!(dropped, 66);
        assert_eq!(rest.last(), Some(&Owned::Frame(b'x', Vec::new())));
    }

    #[test]
    fn a_wrong_block_check_drops_one_character_and_rescans() {
        let mut bytes = seal(b"w0203");
        bytes[5] = wire::with_parity(b'0'); // the check now reads "06"
        bytes.extend(seal(b"l"));
        assert_eq!(
            frames(Speaker::Board, &[&bytes]),
            [
                Owned::Garbage(1, GarbageReason::BadCheck),
                Owned::Garbage(6, GarbageReason::NoMessageStart),
                Owned::Frame(b'l', Vec::new())
            ]
        );
    }

    #[test]
    fn noise_before_a_message_is_reported_with_the_run_it_belongs_to() {
        // 0x73 is `s` with good parity: a false start given up at the `v`.
        let mut bytes = vec![0x01, 0x73, 0x55];
        bytes.extend(seal(b"v0108"));
        assert_eq!(
            frames(Speaker::Board, &[&bytes]),
            [
                Owned::Garbage(2, GarbageReason::Damaged),
                Owned::Garbage(1, GarbageReason::LineNoise),
                Owned::Frame(b'v', b"0108".to_vec())
            ]
        );
    }

    #[test]
    fn host_commands_have_their_own_letters_and_lengths() {
        let mut bytes = seal(b"R02");
        bytes.extend(seal(b"S"));
        bytes.extend(seal(b"s"));
        assert_eq!(
            frames(Speaker::Host, &[&bytes]),
            [
                Owned::Frame(b'R', b"02".to_vec()),
                Owned::Frame(b'S', Vec::new()),
                Owned::Garbage(3, GarbageReason::Unfinished)
            ]
        );
    }

    #[test]
    fn long_garbage_is_reported_in_pieces_and_the_rest_at_the_end() {
        let mut framer = Framer::new(Speaker::Board);
        framer.push(&vec![wire::with_parity(b'.'); MAX_GARBAGE_RUN + 5]);
        assert_eq!(
            framer.next_item(),
            Some(Framed::Garbage { len: MAX_GARBAGE_RUN, reason: GarbageReason::NoMessageStart })
        );
        assert_eq!(framer.next_item(), None);
        assert_eq!(framer.flush(), Some(Framed::Garbage { len: 5, reason: GarbageReason::Unfinished }));
        assert_eq!(framer.flush(), None);
    }
}
