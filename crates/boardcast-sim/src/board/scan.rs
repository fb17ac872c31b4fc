//! What the simulated boards that look at their squares every so often
//! share (Chessnut, iChessOne, ChessUp, Square Off): the board as the
//! script sets it, a scan every [`SCAN_EVERY`] that finds whether it
//! changed since last sent, the bytes waiting for the host, the host's
//! commands picked out of the bytes it writes, however they are split, and
//! a recorded board's bytes read back as what they showed.

use std::{collections::VecDeque, time::Duration};

use boardcast_core::{
    protocol::{BoardDecoder, Decoded, Family, Protocol},
    sensor::{Picture, SensorEvent},
    time::Timestamp,
};

/// How often the board looks at its squares.
pub const SCAN_EVERY: Duration = Duration::from_millis(50);

/// A scanned board and what it has to send.
#[derive(Clone, Debug)]
pub struct Scan {
    picture: Picture,
    /// The board last sent (`None`: send at the next scan).
    sent: Option<Picture>,
    next_scan: Timestamp,
    out: VecDeque<u8>,
}

impl Default for Scan {
    fn default() -> Self {
        Self { picture: Picture::empty(), sent: None, next_scan: Timestamp::ZERO, out: VecDeque::new() }
    }
}

impl Scan {
    /// The board as it is now.
    pub const fn picture(&self) -> &Picture {
        &self.picture
    }

    /// The board becomes `picture` (a recorded one).
    pub fn set_picture(&mut self, picture: Picture) {
        self.picture = picture;
    }

    /// A script's event changes the board (a clock has nothing to do with
    /// it).
    pub fn handle_script_event(&mut self, event: &SensorEvent) {
        match event {
            SensorEvent::Board(board) => self.picture = (**board).clone(),
            &SensorEvent::Square { square, cell } => {
                self.picture.set(square, cell);
            }
            SensorEvent::Clock(_) => {}
        }
    }

    /// A scan at `now`, if one is due: when the board changed since it was
    /// last sent and `sending`, the board as last sent (`None` at first)
    /// and as it is now, which counts as sent.
    pub fn scan(&mut self, now: Timestamp, sending: bool) -> Option<(Option<Picture>, Picture)> {
        if now < self.next_scan {
            return None;
        }
        self.next_scan = now + SCAN_EVERY;
        if !sending || self.sent.as_ref() == Some(&self.picture) {
            return None;
        }
        Some((self.sent.replace(self.picture.clone()), self.picture.clone()))
    }

    /// The next scan sends the board, changed or not.
    pub fn resend(&mut self) {
        self.sent = None;
    }

    /// Bytes for the host.
    pub fn send(&mut self, bytes: &[u8]) {
        self.out.extend(bytes);
    }

    /// When the next scan is due.
    pub const fn poll_timeout(&self) -> Option<Timestamp> {
        Some(self.next_scan)
    }

    /// What waits for the host.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.out.is_empty() { None } else { Some(self.out.drain(..).collect()) }
    }

    /// The link dropped: nothing waits, and the board is sent whole next.
    pub fn unplugged(&mut self) {
        self.out.clear();
        self.sent = None;
    }
}

/// The host's commands among the bytes it writes: the known ones, in the
/// order they come, whatever the split (other bytes are dropped).
#[derive(Clone, Debug)]
pub struct Commands {
    known: &'static [&'static [u8]],
    buf: Vec<u8>,
}

impl Commands {
    /// Picks out the `known` commands.
    pub const fn new(known: &'static [&'static [u8]]) -> Self {
        Self { known, buf: Vec::new() }
    }

    /// Bytes the host wrote; the commands they complete.
    pub fn handle(&mut self, bytes: &[u8]) -> Vec<&'static [u8]> {
        self.buf.extend_from_slice(bytes);
        let mut found = Vec::new();
        loop {
            let first = self
                .known
                .iter()
                .filter_map(|&c| self.buf.windows(c.len()).position(|w| w == c).map(|at| (at, c)))
                .min_by_key(|&(at, _)| at);
            let Some((at, command)) = first else { break };
            self.buf.drain(..at + command.len());
            found.push(command);
        }
        // Keep what may be the start of a command.
        let longest = self.known.iter().map(|c| c.len()).max().unwrap_or(1);
        let keep = self.buf.len().min(longest - 1);
        self.buf.drain(..self.buf.len() - keep);
        found
    }

    /// The link dropped: a command cut off is gone.
    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

/// A recorded board's bytes (a capture of the family's own bytes, as
/// `boardcast synth` writes them) read back with the family's decoder: the
/// board shows what they showed, and answers the host itself.
#[derive(Debug)]
pub struct Recorded {
    decoder: Box<dyn BoardDecoder>,
}

impl Recorded {
    /// Reads `family`'s bytes.
    ///
    /// # Panics
    ///
    /// Never: every family has a decoder.
    pub fn new(family: &'static Family) -> Self {
        Self { decoder: Protocol::of(family).decoder().expect("a family has a decoder") }
    }

    /// Recorded bytes: the board in `scan` becomes what they say.
    pub fn play(&mut self, bytes: &[u8], scan: &mut Scan) {
        self.decoder.handle_bytes(bytes);
        while let Some(decoded) = self.decoder.poll_decoded() {
            if let Decoded::Sensor(event) = decoded {
                scan.handle_script_event(&event);
            }
        }
    }
}
