//! The line format Certabo boards and Sentio-format boards share: every
//! report is a line of `:` and decimal numbers separated by spaces, ended by
//! a space, CR and LF (`../shared/research/eboard-protocols.md` section 3).
//! Certabo boards also send lines marking their LED hardware (`L` classic,
//! `D` RGB), and such letters can turn up inside report lines.
//!
//! [`LineReader`] splits a byte stream into [`Line`]s however it is chunked;
//! [`encode_report`] writes one. Both decoders, both simulators and the
//! probe read lines through here, so they agree on what a line is.
//!
//! There is no checksum: a line damaged on the wire is caught only when it
//! stops looking like a report (a wrong count of numbers, a number above
//! 255, text before the `:`). Damage that keeps the shape gets through;
//! the Certabo decoder's comparison of each report with the ones before and
//! after it is what keeps it out of the picture.

use std::collections::VecDeque;

/// The numbers in a Certabo report: five per square, 64 squares.
pub const TAG_NUMBERS: usize = 320;

/// The numbers in a Sentio-format report: one bitmask per rank.
pub const OCCUPANCY_NUMBERS: usize = 8;

/// The longest line kept while waiting for its end. A Certabo report is at
/// most 1 + 320 × 4 + 3 bytes; anything much longer is not a report and is
/// dropped rather than buffered for ever.
const MAX_LINE: usize = 2048;

/// One item of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A report: the numbers after the `:`, as sent.
    Numbers(Vec<u8>),
    /// A marker saying which LEDs the board has.
    Marker(Leds),
    /// Bytes that are no report (noise, a report that lost its end, told
    /// as soon as the next one starts, the tail of a line whose start was
    /// missed).
    Junk {
        /// How many bytes.
        len: usize,
        /// Why they were dropped.
        reason: &'static str,
    },
    /// A line that starts like a report but holds something other than
    /// numbers 0–255; what is wrong, quoting it.
    Bad(String),
}

/// The LED hardware a Certabo board announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Leds {
    /// One LED per square, driven by an 8-byte frame (`L` marker).
    Classic,
    /// A 9 × 9 grid of RGB LEDs at the square corners (`D` marker).
    Rgb,
}

impl Leds {
    /// How the decoder reports the marker (`BoardInfo::Trademark` for now).
    pub(crate) const fn describe(self) -> &'static str {
        match self {
            Self::Classic => CLASSIC_LEDS,
            Self::Rgb => RGB_LEDS,
        }
    }
}

/// What the decoder says when a board announces classic LEDs.
pub const CLASSIC_LEDS: &str = "Certabo board with classic LEDs";

/// What the decoder says when a board announces RGB LEDs; the link switches
/// to RGB frames when it sees it.
pub(crate) const RGB_LEDS: &str = "Certabo board with RGB LEDs";

/// Why the bytes of a line left unfinished at the end of a stream are
/// dropped.
pub const CUT_OFF: &str = "a line cut off by the end of the stream";

/// Splits bytes into [`Line`]s, whatever chunks they arrive in.
#[derive(Clone, Debug, Default)]
pub struct LineReader {
    /// Bytes of the line not yet ended.
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no line end and no second
    /// start of a report.
    scanned: usize,
    /// Items of lines already split.
    ready: VecDeque<Line>,
}

impl LineReader {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes bytes received.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// The next item, or `None` when more bytes are needed.
    pub fn next_line(&mut self) -> Option<Line> {
        loop {
            if let Some(line) = self.ready.pop_front() {
                return Some(line);
            }
            // A line ends at its CR or LF. A report also ends where the next
            // one starts: a second `:` means the report before it lost its
            // end on the wire. That is known as soon as the `:` comes, a
            // report's time before the next line end, and is told at once:
            // a board that went unheard meanwhile must not look still to
            // the reconstructor (`Reconstructor::handle_lost_bytes`). Noise
            // before a report loses nothing and is told with the report.
            let mut in_report = self.pending[..self.scanned].contains(&b':');
            let end = self.pending.iter().enumerate().skip(self.scanned).find_map(|(i, &b)| match b {
                b'\r' | b'\n' => Some((i, false)),
                b':' if in_report => Some((i, true)),
                b':' => {
                    in_report = true;
                    None
                }
                _ => None,
            });
            match end {
                Some((start, true)) => {
                    let cut: Vec<u8> = self.pending.drain(..start).collect();
                    self.scanned = 0;
                    self.ready.push_back(Line::Junk { len: cut.len(), reason: before_report(&cut) });
                }
                Some((end, _)) => {
                    let line: Vec<u8> = self.pending.drain(..=end).collect();
                    self.scanned = 0;
                    split_line(&line[..end], &mut self.ready);
                }
                None if self.pending.len() > MAX_LINE => {
                    // No line end for far too long: keep only what may be
                    // the start of a report.
                    let keep =
                        self.pending.iter().rposition(|&b| b == b':').filter(|&i| self.pending.len() - i < MAX_LINE);
                    let drop = keep.unwrap_or(self.pending.len());
                    self.pending.drain(..drop);
                    self.scanned = self.pending.len();
                    return Some(Line::Junk { len: drop, reason: "a line too long to be a report" });
                }
                None => {
                    self.scanned = self.pending.len();
                    return None;
                }
            }
        }
    }

    /// Ends the stream: a line left without its end is dropped, and how
    /// many bytes it had is returned (lines already complete stay for
    /// [`LineReader::next_line`]). The reader can be used again afterwards
    /// (a board plugged back in).
    pub(crate) fn flush(&mut self) -> Option<usize> {
        let len = self.pending.len();
        let blank = self.pending.iter().all(u8::is_ascii_whitespace);
        self.pending.clear();
        self.scanned = 0;
        (!blank).then_some(len)
    }
}

/// Writes one report line: `:`, the numbers separated by spaces, then a
/// space, CR and LF, as a board sends it.
pub fn encode_report(numbers: impl IntoIterator<Item = u8>, out: &mut Vec<u8>) {
    out.push(b':');
    for (i, n) in numbers.into_iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        // Up to three digits, without formatting machinery: the simulators
        // write thousands of these.
        if n >= 100 {
            out.push(b'0' + n / 100);
        }
        if n >= 10 {
            out.push(b'0' + n / 10 % 10);
        }
        out.push(b'0' + n % 10);
    }
    out.extend_from_slice(b" \r\n");
}

/// Turns one line (without its end) into items.
fn split_line(line: &[u8], out: &mut VecDeque<Line>) {
    // A report starts at its `:`; anything before the last one is noise,
    // or a report cut short and joined to this one (the reader splits
    // those off as soon as the next report starts).
    let (junk, body) = match line.iter().rposition(|&b| b == b':') {
        Some(i) => (&line[..i], Some(&line[i + 1..])),
        None => (line, None),
    };
    let Some(body) = body else {
        if junk.iter().all(|b| b.is_ascii_whitespace() || *b == b'*') {
            // Nothing, or only the `*` some boards send between reports.
        } else if let Some(leds) = marker_line(junk) {
            out.push_back(Line::Marker(leds));
        } else {
            out.push_back(Line::Junk { len: junk.len(), reason: "a line that is not a report" });
        }
        return;
    };
    if !junk.is_empty() {
        out.push_back(Line::Junk { len: junk.len(), reason: before_report(junk) });
    }
    let mut numbers = Vec::with_capacity(TAG_NUMBERS);
    let mut marker = None;
    for token in body.split(u8::is_ascii_whitespace).filter(|t| !t.is_empty()) {
        // Marker letters and `*` can sit among the numbers; they say nothing
        // about the squares.
        let digits: Vec<u8> = token.iter().copied().filter(|b| !matches!(b, b'L' | b'D' | b'*')).collect();
        if token.contains(&b'D') {
            marker = Some(Leds::Rgb);
        } else if token.contains(&b'L') && marker.is_none() {
            marker = Some(Leds::Classic);
        }
        if digits.is_empty() {
            continue;
        }
        match number(&digits) {
            Some(n) => numbers.push(n),
            None => {
                out.push_back(Line::Bad(format!(
                    "{:?} in a report is not a number 0–255",
                    String::from_utf8_lossy(token)
                )));
                return;
            }
        }
    }
    if let Some(leds) = marker {
        out.push_back(Line::Marker(leds));
    }
    out.push_back(Line::Numbers(numbers));
}

/// Why bytes found before the start of a report are dropped: a report
/// that lost its end (it has a `:`), or noise.
fn before_report(junk: &[u8]) -> &'static str {
    if junk.contains(&b':') { "a report cut short" } else { "bytes before a report" }
}

/// `L` or `D` alone on a line (spaces and `*` allowed around it).
fn marker_line(line: &[u8]) -> Option<Leds> {
    let mut letters = line.iter().filter(|b| !b.is_ascii_whitespace() && **b != b'*');
    let first = *letters.next()?;
    if letters.any(|&b| b != first) {
        return None;
    }
    match first {
        b'L' => Some(Leds::Classic),
        b'D' => Some(Leds::Rgb),
        _ => None,
    }
}

/// A decimal number 0–255 of at most three digits.
fn number(digits: &[u8]) -> Option<u8> {
    if digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits.iter().fold(0u16, |v, d| v * 10 + u16::from(d - b'0'));
    u8::try_from(value).ok()
}

impl crate::protocol::queue::Framing for LineReader {
    type Item = Line;

    fn push(&mut self, bytes: &[u8]) {
        Self::push(self, bytes);
    }

    fn next_item(&mut self) -> Option<Line> {
        self.next_line()
    }

    fn flush(&mut self) -> Option<usize> {
        Self::flush(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(chunks: &[&[u8]]) -> Vec<Line> {
        let mut reader = LineReader::new();
        let mut out = Vec::new();
        for chunk in chunks {
            reader.push(chunk);
            out.extend(std::iter::from_fn(|| reader.next_line()));
        }
        out.extend(reader.flush().map(|len| Line::Junk { len, reason: CUT_OFF }));
        out
    }

    #[test]
    fn splits_reports_however_they_are_chunked() {
        let whole: &[u8] = b":255 255 0 0 0 0 255 254 \r\n:1 2 3 \r\n";
        let expected = vec![Line::Numbers(vec![255, 255, 0, 0, 0, 0, 255, 254]), Line::Numbers(vec![1, 2, 3])];
        assert_eq!(lines(&[whole]), expected);
        for cut in 1..whole.len() {
            assert_eq!(lines(&[&whole[..cut], &whole[cut..]]), expected, "cut at {cut}");
        }
    }

    #[test]
    fn writes_what_it_reads() {
        let mut bytes = Vec::new();
        encode_report([0, 7, 10, 99, 100, 255], &mut bytes);
        assert_eq!(bytes, b":0 7 10 99 100 255 \r\n");
        assert_eq!(lines(&[&bytes]), [Line::Numbers(vec![0, 7, 10, 99, 100, 255])]);
    }

    #[test]
    fn tells_markers_junk_and_bad_numbers_apart() {
        assert_eq!(
            lines(&[b"L\r\nD \r\n*\r\n\r\nxyz\r\n"]),
            [
                Line::Marker(Leds::Classic),
                Line::Marker(Leds::Rgb),
                Line::Junk { len: 3, reason: "a line that is not a report" }
            ]
        );
        assert_eq!(lines(&[b":1 L2 3\r\n"]), [Line::Marker(Leds::Classic), Line::Numbers(vec![1, 2, 3])]);
        assert_eq!(lines(&[b":1 256 3\r\n"]), [Line::Bad("\"256\" in a report is not a number 0–255".into())]);
        assert_eq!(lines(&[b":1 x 3\r\n"]), [Line::Bad("\"x\" in a report is not a number 0–255".into())]);
    }

    #[test]
    fn a_report_cut_short_gives_way_to_the_next_one() {
        assert_eq!(
            lines(&[b":1 2 3 4:5 6\r\n", b"ab:7\r\n", b":8 9"]),
            [
                Line::Junk { len: 8, reason: "a report cut short" },
                Line::Numbers(vec![5, 6]),
                Line::Junk { len: 2, reason: "bytes before a report" },
                Line::Numbers(vec![7]),
                Line::Junk { len: 4, reason: CUT_OFF },
            ]
        );
    }

    #[test]
    fn a_report_cut_short_is_told_as_soon_as_the_next_one_starts() {
        // Two reports lose their ends in a row: each is told when the next
        // one starts, not when a line finally ends a report's time or two
        // later (the board was not heard meanwhile).
        let mut reader = LineReader::new();
        reader.push(b":1 2 3 4");
        assert_eq!(reader.next_line(), None);
        reader.push(b":5 6");
        assert_eq!(reader.next_line(), Some(Line::Junk { len: 8, reason: "a report cut short" }));
        assert_eq!(reader.next_line(), None);
        reader.push(b" 7:8 9 \r\n");
        assert_eq!(reader.next_line(), Some(Line::Junk { len: 6, reason: "a report cut short" }));
        assert_eq!(reader.next_line(), Some(Line::Numbers(vec![8, 9])));
        assert_eq!(reader.next_line(), None);
        // Noise before a report loses nothing: it is told with the report.
        reader.push(b"xy:1 2");
        assert_eq!(reader.next_line(), None);
        reader.push(b"\r\n");
        assert_eq!(reader.next_line(), Some(Line::Junk { len: 2, reason: "bytes before a report" }));
        assert_eq!(reader.next_line(), Some(Line::Numbers(vec![1, 2])));
        // Chunked any way, the same lines.
        let whole: &[u8] = b"xy:1 2 3 4:5 6 7:8 9 \r\n";
        let expected = [
            Line::Junk { len: 10, reason: "a report cut short" },
            Line::Junk { len: 6, reason: "a report cut short" },
            Line::Numbers(vec![8, 9]),
        ];
        for cut in 0..=whole.len() {
            assert_eq!(lines(&[&whole[..cut], &whole[cut..]]), expected, "cut at {cut}");
        }
    }

    #[test]
    fn endless_noise_is_dropped_not_kept() {
        let noise = vec![b'7'; 5000];
        let mut reader = LineReader::new();
        reader.push(&noise);
        let mut dropped = 0;
        while let Some(line) = reader.next_line() {
            let Line::Junk { len, .. } = line else { panic!("{line:?}") };
            dropped += len;
        }
        assert!(dropped > 2000 && reader.pending.len() <= MAX_LINE, "{dropped}");
        reader.push(b":1\r\n");
        assert_eq!(
            std::iter::from_fn(|| reader.next_line()).last(),
            Some(Line::Numbers(vec![1])),
            "the next report is read"
        );
    }
}
