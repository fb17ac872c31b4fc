//! Reading captures: text in, header and records out, with the line number
//! of anything that does not fit.

use std::{borrow::Cow, fmt, str::FromStr};

use serde::Deserialize;

use crate::game::Tempo;
use shakmaty::{Color, Square};

use super::{CaptureHeader, LinkChange, Record, RecordBody, VERSION};
use crate::{
    protocol::Protocol,
    sensor::{Cell, ClockReading, Picture, SensorEvent},
    time::Timestamp,
};

/// Something in a capture that does not fit the format.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct CaptureError {
    /// The line (1-based) where the problem is; for a capture with no
    /// header, the last line.
    pub line: usize,
    /// What is wrong.
    pub(crate) kind: CaptureErrorKind,
}

/// What is wrong with a capture line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaptureErrorKind {
    /// The capture has no header line.
    #[error(
        "the capture is empty (a header line such as {{\"capture\": 1, \"protocol\": \"dgt\", \"board\": \"…\"}} is required)"
    )]
    Empty,
    /// The line is not one JSON object.
    #[error("not a JSON object: {}", short(.0))]
    NotJson(String),
    /// A required header key is missing.
    #[error("the header has no {0:?} key")]
    MissingHeaderKey(&'static str),
    /// A header written by a newer, incompatible version of the format.
    #[error("capture format version {0} is not supported (this daemon reads version {VERSION})")]
    UnsupportedVersion(u64),
    /// A protocol this daemon does not read.
    #[error("unknown protocol {} (known: {known})", quoted(.0), known = crate::protocol::Protocol::ALL.map(crate::protocol::Protocol::name).join(", "))]
    UnknownProtocol(String),
    /// A header `game` value that is not text.
    #[error("header game value {} is not a string", quoted(.0))]
    BadGameValue(String),
    /// A header `calibration` entry whose piece is not a FEN letter.
    #[error("header calibration for tag {} is not a piece letter (K Q R B N P k q r b n p)", quoted(.0))]
    BadCalibration(String),
    /// A header `rules` value that is not one of the three.
    #[error("header rules {} is not \"standard\", \"rapid\" or \"blitz\"", quoted(.0))]
    BadRules(String),
    /// A record without `t_us`.
    #[error("the record has no \"t_us\"")]
    MissingTime,
    /// A record earlier than the one before it.
    #[error("t_us {t_us} is earlier than the previous record's {previous}")]
    TimeGoesBack {
        /// This record's time.
        t_us: u64,
        /// The previous record's time.
        previous: u64,
    },
    /// A record with none of the keys that say what it is.
    #[error("the record has none of \"rx\", \"tx\", \"board\", \"square\", \"clock\", \"command\", \"link\"")]
    NoContent,
    /// A record with more than one of them.
    #[error("the record has more than one of \"rx\", \"tx\", \"board\", \"square\", \"clock\", \"command\", \"link\"")]
    SeveralContents,
    /// An operator command that is not one.
    #[error("bad command: {}", short(&.0.to_string()))]
    BadCommand(crate::operator::CommandError),
    /// A `link` record that is neither `connected` nor `disconnected`.
    #[error("link {0:?} is neither \"connected\" nor \"disconnected\"")]
    BadLink(String),
    /// A decoded event in a raw capture, or raw bytes in an `events` capture.
    #[error("a {record:?} record does not belong in a capture of protocol {protocol}")]
    WrongKind {
        /// The record's kind.
        record: &'static str,
        /// The capture's protocol.
        protocol: Protocol,
    },
    /// An `events` capture that does not start with a whole board.
    #[error("an events capture must start with a \"board\" record (the daemon cannot guess the initial board)")]
    NoInitialBoard,
    /// Bytes that are not hex.
    #[error("{key:?} is not hex bytes: {}", quoted(.text))]
    BadHex {
        /// `rx` or `tx`.
        key: &'static str,
        /// The text given.
        text: String,
    },
    /// A board that is not a FEN piece placement.
    #[error("{}", short(.0))]
    BadBoard(String),
    /// A square name that is not a1 … h8.
    #[error("{} is not a square (a1 … h8)", quoted(.0))]
    BadSquare(String),
    /// A `square` record without `piece`.
    #[error("a \"square\" record needs \"piece\" (a FEN letter, \"?\" or null)")]
    MissingPiece,
    /// A piece that is not a FEN letter or `?`.
    #[error("{} is not a piece (a FEN letter such as \"P\" or \"n\", \"?\" or null)", quoted(.0))]
    BadPiece(String),
    /// A clock whose running side is not white, black or null.
    #[error("clock \"running\" must be \"white\", \"black\" or null, not {}", quoted(.0))]
    BadRunning(String),
    /// A line longer than any record: a damaged or hostile capture. Its
    /// content is not quoted, only its length.
    #[error(
        "a line of {bytes} bytes, longer than any capture record can be (at most {MAX_LINE_BYTES} bytes; records are a few hundred): the capture is damaged"
    )]
    LineTooLong {
        /// How long the line is.
        bytes: usize,
    },
}

/// The longest line a capture may have. A record is a few hundred bytes
/// and a header a few KiB; a longer line is refused before it is parsed, so
/// a damaged or hostile file cannot make the parser build a huge value.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// [`CaptureErrorKind::LineTooLong`] for a line over the bound.
fn check_length(line: &str) -> Result<(), CaptureErrorKind> {
    if line.len() > MAX_LINE_BYTES {
        return Err(CaptureErrorKind::LineTooLong { bytes: line.len() });
    }
    Ok(())
}

/// How much of a bad input an error quotes: a capture line can be huge (a
/// cut file, a hostile one), and an error echoing it whole would flood the
/// terminal and the log.
const QUOTED_CHARS: usize = 80;

/// `text` for an error message: whole when short, else its first
/// [`QUOTED_CHARS`] characters and its length.
fn short(text: &str) -> String {
    if text.chars().count() <= QUOTED_CHARS {
        return text.to_owned();
    }
    let head: String = text.chars().take(QUOTED_CHARS).collect();
    format!("{head}… ({} bytes)", text.len())
}

/// [`short`], in quotes.
fn quoted(text: &str) -> String {
    if text.chars().count() <= QUOTED_CHARS {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(QUOTED_CHARS).collect();
    format!("{head:?}… ({} bytes)", text.len())
}

/// Reads a capture from its text: first [`CaptureReader::new`] for the
/// header, then records by iterating. [`CaptureReader::from_lines`] reads
/// from any source of lines instead (a file read line by line, so that a
/// capture of a whole day never has to be in memory at once).
///
/// Iteration stops after the first error: a capture is read up to the first
/// line that does not fit, so that a capture cut off by a crash still gives
/// everything before the cut.
#[derive(Debug)]
pub struct CaptureReader<I> {
    lines: std::iter::Enumerate<I>,
    header: CaptureHeader,
    previous: Option<u64>,
    failed: bool,
}

impl<'a> CaptureReader<std::str::Lines<'a>> {
    /// Reads the header.
    ///
    /// # Errors
    ///
    /// When the text has no header line or the header does not fit the
    /// format.
    pub fn new(text: &'a str) -> Result<Self, CaptureError> {
        Self::from_lines(text.lines())
    }
}

impl<I, L> CaptureReader<I>
where
    I: Iterator<Item = L>,
    L: AsRef<str>,
{
    /// Reads the header from the first lines of `lines` (each without its
    /// line ending).
    ///
    /// # Errors
    ///
    /// When there is no header line or the header does not fit the format.
    pub fn from_lines(lines: I) -> Result<Self, CaptureError> {
        let mut lines = lines.enumerate();
        let mut last = 0;
        for (index, line) in lines.by_ref() {
            let line = line.as_ref();
            last = index + 1;
            check_length(line).map_err(|kind| CaptureError { line: index + 1, kind })?;
            if is_skipped(line) {
                continue;
            }
            let header = parse_header(line).map_err(|kind| CaptureError { line: index + 1, kind })?;
            return Ok(Self { lines, header, previous: None, failed: false });
        }
        Err(CaptureError { line: last.max(1), kind: CaptureErrorKind::Empty })
    }

    /// The capture's header.
    pub fn header(&self) -> &CaptureHeader {
        &self.header
    }

    /// One record line; `None` for a record of a kind this version does not
    /// know (a later version's), which is skipped.
    fn record(&mut self, line: &str) -> Result<Option<Record>, CaptureErrorKind> {
        let raw: RawRecord<'_> = serde_json::from_str(line).map_err(|e| CaptureErrorKind::NotJson(e.to_string()))?;
        let t_us = raw.t_us.ok_or(CaptureErrorKind::MissingTime)?;
        if raw.is_empty() && has_other_keys(line) {
            // "Unknown keys are ignored, so later versions can add keys
            // without breaking version-1 readers": a record made only of
            // them is another version's, and is skipped (its time still
            // has to be in order).
            check_order(self.previous, t_us)?;
            self.previous = Some(t_us);
            return Ok(None);
        }
        check_order(self.previous, t_us)?;
        let body = raw.body(self.header.protocol)?;
        if self.previous.is_none()
            && self.header.protocol == Protocol::EVENTS
            && !matches!(body, RecordBody::Event(SensorEvent::Board(_)) | RecordBody::Link(_))
        {
            return Err(CaptureErrorKind::NoInitialBoard);
        }
        self.previous = Some(t_us);
        Ok(Some(Record { t: Timestamp::from_micros(t_us), body }))
    }
}

impl<I, L> Iterator for CaptureReader<I>
where
    I: Iterator<Item = L>,
    L: AsRef<str>,
{
    type Item = Result<Record, CaptureError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        while let Some((index, line)) = self.lines.next() {
            let line = line.as_ref();
            if let Err(kind) = check_length(line) {
                self.failed = true;
                return Some(Err(CaptureError { line: index + 1, kind }));
            }
            if is_skipped(line) {
                continue;
            }
            match self.record(line) {
                Ok(Some(record)) => return Some(Ok(record)),
                Ok(None) => continue,
                Err(kind) => {
                    self.failed = true;
                    return Some(Err(CaptureError { line: index + 1, kind }));
                }
            }
        }
        None
    }
}

fn check_order(previous: Option<u64>, t_us: u64) -> Result<(), CaptureErrorKind> {
    match previous {
        Some(previous) if t_us < previous => Err(CaptureErrorKind::TimeGoesBack { t_us, previous }),
        _ => Ok(()),
    }
}

/// Whether a record line has keys besides `t_us` (only asked of lines with
/// none of the keys this version knows, so the second parse is rare).
fn has_other_keys(line: &str) -> bool {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(line)
        .is_ok_and(|map| map.keys().any(|k| !matches!(k.as_str(), "t_us" | "piece")))
}

fn is_skipped(line: &str) -> bool {
    let line = line.trim();
    line.is_empty() || line.starts_with('#')
}

#[derive(Deserialize)]
struct RawHeader {
    capture: Option<u64>,
    protocol: Option<String>,
    board: Option<String>,
    started_at: Option<String>,
    #[serde(default)]
    game: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    chess960: bool,
    rules: Option<String>,
    #[serde(default)]
    supervised: bool,
    #[serde(default)]
    calibration: serde_json::Map<String, serde_json::Value>,
}

fn parse_header(line: &str) -> Result<CaptureHeader, CaptureErrorKind> {
    let raw: RawHeader = serde_json::from_str(line).map_err(|e| CaptureErrorKind::NotJson(e.to_string()))?;
    let version = raw.capture.ok_or(CaptureErrorKind::MissingHeaderKey("capture"))?;
    if version != VERSION {
        return Err(CaptureErrorKind::UnsupportedVersion(version));
    }
    let protocol = raw.protocol.ok_or(CaptureErrorKind::MissingHeaderKey("protocol"))?;
    let protocol = Protocol::from_str(&protocol).map_err(|_| CaptureErrorKind::UnknownProtocol(protocol))?;
    let board = raw.board.ok_or(CaptureErrorKind::MissingHeaderKey("board"))?;
    let mut game = Vec::with_capacity(raw.game.len());
    for (key, value) in raw.game {
        let value = match value {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            _ => return Err(CaptureErrorKind::BadGameValue(key)),
        };
        game.push((key, value));
    }
    let rules = match raw.rules.as_deref() {
        None => None,
        Some("standard") => Some(Tempo::Standard),
        Some("rapid") => Some(Tempo::Rapid),
        Some("blitz") => Some(Tempo::Blitz),
        Some(other) => return Err(CaptureErrorKind::BadRules(other.to_owned())),
    };
    let mut calibration = Vec::with_capacity(raw.calibration.len());
    for (tag, letter) in raw.calibration {
        let letter = letter.as_str().and_then(|l| {
            let mut chars = l.chars();
            chars.next().filter(|c| chars.next().is_none() && "KQRBNPkqrbnp".contains(*c))
        });
        calibration.push((tag.clone(), letter.ok_or(CaptureErrorKind::BadCalibration(tag))?));
    }
    Ok(CaptureHeader {
        protocol,
        board,
        started_at: raw.started_at,
        game,
        chess960: raw.chess960,
        rules,
        supervised: raw.supervised,
        calibration,
    })
}

#[derive(Deserialize)]
struct RawRecord<'a> {
    t_us: Option<u64>,
    #[serde(borrow)]
    rx: Option<Cow<'a, str>>,
    #[serde(borrow)]
    tx: Option<Cow<'a, str>>,
    #[serde(borrow)]
    board: Option<Cow<'a, str>>,
    #[serde(borrow)]
    square: Option<Cow<'a, str>>,
    /// `Some(None)` is `"piece": null`; `None` is no `piece` at all.
    #[serde(default, borrow, deserialize_with = "present")]
    piece: Option<Option<Cow<'a, str>>>,
    clock: Option<RawClock<'a>>,
    command: Option<serde_json::Value>,
    #[serde(borrow)]
    link: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct RawClock<'a> {
    white_ms: u64,
    black_ms: u64,
    #[serde(borrow)]
    running: Option<Cow<'a, str>>,
}

fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

impl RawRecord<'_> {
    /// Whether the record has none of the keys that say what it is.
    fn is_empty(&self) -> bool {
        self.rx.is_none()
            && self.tx.is_none()
            && self.board.is_none()
            && self.square.is_none()
            && self.clock.is_none()
            && self.command.is_none()
            && self.link.is_none()
    }

    fn body(self, protocol: Protocol) -> Result<RecordBody, CaptureErrorKind> {
        let kinds = [
            self.rx.is_some(),
            self.tx.is_some(),
            self.board.is_some(),
            self.square.is_some(),
            self.clock.is_some(),
            self.command.is_some(),
            self.link.is_some(),
        ];
        match kinds.iter().filter(|&&k| k).count() {
            0 => return Err(CaptureErrorKind::NoContent),
            1 => {}
            _ => return Err(CaptureErrorKind::SeveralContents),
        }
        if let Some(command) = self.command {
            return crate::operator::Command::from_json(command)
                .map(RecordBody::Command)
                .map_err(CaptureErrorKind::BadCommand);
        }
        if let Some(link) = self.link {
            return match link.as_ref() {
                "connected" => Ok(RecordBody::Link(LinkChange::Connected)),
                "disconnected" => Ok(RecordBody::Link(LinkChange::Disconnected)),
                other => Err(CaptureErrorKind::BadLink(other.chars().take(40).collect())),
            };
        }
        let raw = protocol != Protocol::EVENTS;
        let wrong = |record| Err(CaptureErrorKind::WrongKind { record, protocol });
        if let Some(hex) = self.rx {
            return if raw { Ok(RecordBody::Rx(parse_hex("rx", &hex)?)) } else { wrong("rx") };
        }
        if let Some(hex) = self.tx {
            return if raw { Ok(RecordBody::Tx(parse_hex("tx", &hex)?)) } else { wrong("tx") };
        }
        let event = if let Some(board) = self.board {
            if raw {
                return wrong("board");
            }
            SensorEvent::Board(Box::new(
                Picture::from_fen_placement(&board).map_err(|e| CaptureErrorKind::BadBoard(e.to_string()))?,
            ))
        } else if let Some(square) = self.square {
            if raw {
                return wrong("square");
            }
            let square =
                Square::from_ascii(square.as_bytes()).map_err(|_| CaptureErrorKind::BadSquare(square.into_owned()))?;
            let cell = match self.piece.ok_or(CaptureErrorKind::MissingPiece)? {
                None => Cell::Empty,
                Some(letter) => {
                    let mut chars = letter.chars();
                    match (chars.next(), chars.next()) {
                        (Some(ch), None) => Cell::from_letter(ch),
                        _ => None,
                    }
                    .ok_or_else(|| CaptureErrorKind::BadPiece(letter.into_owned()))?
                }
            };
            SensorEvent::Square { square, cell }
        } else if let Some(clock) = self.clock {
            if raw {
                return wrong("clock");
            }
            let running = match clock.running.as_deref() {
                None => None,
                Some("white") => Some(Color::White),
                Some("black") => Some(Color::Black),
                Some(other) => return Err(CaptureErrorKind::BadRunning(other.to_owned())),
            };
            SensorEvent::Clock(ClockReading::ByColor { white_ms: clock.white_ms, black_ms: clock.black_ms, running })
        } else {
            unreachable!("exactly one kind is present")
        };
        Ok(RecordBody::Event(event))
    }
}

fn parse_hex(key: &'static str, text: &str) -> Result<Vec<u8>, CaptureErrorKind> {
    let bad = || CaptureErrorKind::BadHex { key, text: text.to_owned() };
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    for b in text.bytes() {
        if b == b' ' {
            if high.is_some() {
                return Err(bad());
            }
            continue;
        }
        let nibble = (b as char).to_digit(16).ok_or_else(bad)? as u8;
        match high.take() {
            None => high = Some(nibble),
            Some(h) => out.push((h << 4) | nibble),
        }
    }
    if high.is_some() {
        return Err(bad());
    }
    Ok(out)
}

impl fmt::Display for RecordBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::format_record(&Record { t: Timestamp::ZERO, body: self.clone() }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Result<CaptureHeader, CaptureError>, Vec<Result<Record, CaptureError>>) {
        match CaptureReader::new(text) {
            Ok(reader) => {
                let header = reader.header().clone();
                (Ok(header), reader.collect())
            }
            Err(e) => (Err(e), Vec::new()),
        }
    }

    fn first_error(text: &str) -> CaptureError {
        let (header, records) = read(text);
        match header {
            Err(e) => e,
            Ok(_) => records.into_iter().find_map(Result::err).expect("an error"),
        }
    }

    #[test]
    fn reads_the_examples_of_the_format_document() {
        let text = r#"{"capture": 1, "protocol": "events", "board": "dgt-3921", "started_at": "2026-11-21T13:00:00Z", "game": {"White": "Carlsen", "Round": 3}, "future_key": [1]}
# comment lines and blank lines are ignored

{"t_us": 1000, "board": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"}
{"t_us": 1520133, "square": "e2", "piece": null}
{"t_us": 1702000, "square": "e4", "piece": "P"}
{"t_us": 1800000, "square": "d4", "piece": "?"}
{"t_us": 1900000, "clock": {"white_ms": 5398000, "black_ms": 5400000, "running": "black"}}
"#;
        let (header, records) = read(text);
        let header = header.unwrap();
        assert_eq!(header.protocol, Protocol::EVENTS);
        assert_eq!(header.board, "dgt-3921");
        assert_eq!(header.game_tag("White"), Some("Carlsen"));
        assert_eq!(header.game_tag("Round"), Some("3"));
        let records: Vec<Record> = records.into_iter().map(Result::unwrap).collect();
        assert_eq!(records.len(), 5);
        assert_eq!(records[1].body, RecordBody::Event(SensorEvent::Square { square: Square::E2, cell: Cell::Empty }));
        assert_eq!(
            records[2].body,
            RecordBody::Event(SensorEvent::Square { square: Square::E4, cell: Cell::Piece(Color::White.pawn()) })
        );
        assert_eq!(
            records[3].body,
            RecordBody::Event(SensorEvent::Square { square: Square::D4, cell: Cell::Occupied })
        );
        assert_eq!(
            records[4].body,
            RecordBody::Event(SensorEvent::Clock(ClockReading::ByColor {
                white_ms: 5_398_000,
                black_ms: 5_400_000,
                running: Some(Color::Black)
            }))
        );
        assert_eq!(records[4].t, Timestamp::from_micros(1_900_000));
    }

    #[test]
    fn reads_raw_bytes_with_spaces_and_either_case() {
        let text = "{\"capture\":1,\"protocol\":\"dgt\",\"board\":\"b\"}\n{\"t_us\":5,\"rx\":\"8E 00 05 34 00\"}\n{\"t_us\":5,\"tx\":\"4b\"}\n";
        let (_, records) = read(text);
        assert_eq!(records[0].as_ref().unwrap().body, RecordBody::Rx(vec![0x8E, 0, 5, 0x34, 0]));
        assert_eq!(records[1].as_ref().unwrap().body, RecordBody::Tx(vec![0x4B]));
    }

    #[test]
    fn names_the_line_and_the_problem() {
        let h = "{\"capture\":1,\"protocol\":\"events\",\"board\":\"b\"}\n{\"t_us\":0,\"board\":\"8/8/8/8/8/8/8/8\"}\n";
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "the capture is empty"),
            ("{\"capture\":2,\"protocol\":\"dgt\",\"board\":\"b\"}", 1, "capture format version 2 is not supported"),
            ("{\"capture\":1,\"protocol\":\"zz\",\"board\":\"b\"}", 1, "unknown protocol \"zz\""),
            ("{\"capture\":1,\"board\":\"b\"}", 1, "the header has no \"protocol\" key"),
            ("not json", 1, "not a JSON object"),
            (
                "{\"capture\":1,\"protocol\":\"events\",\"board\":\"b\"}\n{\"t_us\":0,\"square\":\"e2\",\"piece\":null}",
                2,
                "must start with a \"board\"",
            ),
        ];
        for &(text, line, message) in cases {
            let error = first_error(text);
            assert_eq!(error.line, line, "{text}");
            assert!(error.to_string().contains(message), "{error} should contain {message}");
        }
        let record_cases: &[(&str, &str)] = &[
            ("{\"square\":\"e2\",\"piece\":null}", "no \"t_us\""),
            ("{\"t_us\":-1,\"square\":\"e2\",\"piece\":null}", "not a JSON object"),
            ("{\"t_us\":5}", "has none of"),
            ("{\"t_us\":5,\"square\":\"e2\",\"piece\":null,\"board\":\"8/8/8/8/8/8/8/8\"}", "more than one"),
            ("{\"t_us\":5,\"square\":\"e9\",\"piece\":null}", "\"e9\" is not a square"),
            ("{\"t_us\":5,\"square\":\"e2\"}", "needs \"piece\""),
            ("{\"t_us\":5,\"square\":\"e2\",\"piece\":\"X\"}", "\"X\" is not a piece"),
            ("{\"t_us\":5,\"square\":\"e2\",\"piece\":\"PP\"}", "\"PP\" is not a piece"),
            ("{\"t_us\":5,\"board\":\"8/8\"}", "expected 8 ranks"),
            ("{\"t_us\":5,\"rx\":\"8e\"}", "does not belong in a capture of protocol events"),
            ("{\"t_us\":5,\"clock\":{\"white_ms\":1,\"black_ms\":2,\"running\":\"red\"}}", "\"running\" must be"),
            ("{\"t_us\":5,\"clock\":{\"white_ms\":1}}", "not a JSON object"),
        ];
        for &(record, message) in record_cases {
            let error = first_error(&format!("{h}{record}\n"));
            assert_eq!(error.line, 3, "{record}");
            assert!(error.to_string().contains(message), "{error} should contain {message}");
        }
        let back = first_error(&format!(
            "{h}{{\"t_us\":7,\"square\":\"e2\",\"piece\":null}}\n{{\"t_us\":6,\"square\":\"e2\",\"piece\":\"P\"}}\n"
        ));
        assert_eq!(back, CaptureError { line: 4, kind: CaptureErrorKind::TimeGoesBack { t_us: 6, previous: 7 } });
        let dgt = "{\"capture\":1,\"protocol\":\"dgt\",\"board\":\"b\"}\n";
        // A huge bad line is quoted short.
        let huge = format!("{{\"t_us\":5,\"rx\":\"{}\"}}", "z".repeat(1_000_000));
        for (record, message) in [
            ("{\"t_us\":5,\"rx\":\"8e0\"}", "not hex"),
            ("{\"t_us\":5,\"rx\":\"zz\"}", "not hex"),
            (huge.as_str(), "… (1000000 bytes)"),
            ("{\"t_us\":5,\"board\":\"8/8/8/8/8/8/8/8\"}", "does not belong"),
        ] {
            let error = first_error(&format!("{dgt}{record}"));
            assert!(error.to_string().contains(message), "{error}");
            assert!(error.to_string().len() < 300, "{} bytes", error.to_string().len());
        }
    }

    #[test]
    fn skips_records_of_a_kind_a_later_version_adds() {
        let text = "{\"capture\":1,\"protocol\":\"dgt\",\"board\":\"b\"}\n{\"t_us\":1,\"rx\":\"8e\"}\n{\"t_us\":2,\"lights\":\"off\"}\n{\"t_us\":3,\"rx\":\"00\"}\n";
        let (_, records) = read(text);
        let times: Vec<u64> = records.iter().map(|r| r.as_ref().unwrap().t.as_micros()).collect();
        assert_eq!(times, [1, 3]);
        // Its time must still be in order.
        let text = "{\"capture\":1,\"protocol\":\"dgt\",\"board\":\"b\"}\n{\"t_us\":5,\"rx\":\"8e\"}\n{\"t_us\":2,\"lights\":\"off\"}\n";
        assert_eq!(first_error(text).kind, CaptureErrorKind::TimeGoesBack { t_us: 2, previous: 5 });
    }

    #[test]
    fn stops_at_the_first_bad_line_but_keeps_what_came_before() {
        let text = "{\"capture\":1,\"protocol\":\"dgt\",\"board\":\"b\"}\n{\"t_us\":1,\"rx\":\"8e\"}\n{\"t_us\":2,\"rx\":\"00\"}\n{\"t_us\":3,\"rx\":\"05";
        let (_, records) = read(text);
        assert_eq!(records.len(), 3);
        assert!(records[0].is_ok() && records[1].is_ok());
        assert_eq!(records[2].as_ref().unwrap_err().line, 4);
    }

    #[test]
    fn a_line_longer_than_the_bound_is_refused_by_number_and_length_without_echo() {
        let header = "{\"capture\":1,\"protocol\":\"dgt\",\"board\":\"b\"}\n";
        // A record that would parse if it were read: a huge hex string.
        let huge = format!("{{\"t_us\":2,\"rx\":\"{}\"}}", "ab".repeat(MAX_LINE_BYTES / 2 + 1));
        let text = format!("{header}{{\"t_us\":1,\"rx\":\"8e\"}}\n{huge}\n{{\"t_us\":3,\"rx\":\"00\"}}\n");
        let (_, records) = read(&text);
        assert_eq!(records.len(), 2, "the record before is kept, nothing after");
        let error = records[1].as_ref().unwrap_err();
        assert_eq!((error.line, &error.kind), (3, &CaptureErrorKind::LineTooLong { bytes: huge.len() }));
        let message = error.to_string();
        assert!(message.starts_with("line 3: a line of ") && message.contains("damaged"), "{message}");
        assert!(!message.contains("abab") && message.len() < 300, "{message}");
        // The header line too; a line of exactly the bound is read.
        let error = CaptureReader::new(&format!("{huge}\n")).unwrap_err();
        assert_eq!(error.line, 1);
        assert!(matches!(error.kind, CaptureErrorKind::LineTooLong { .. }));
        let record = "{\"t_us\":1,\"rx\":\"8e\"}";
        let padded = format!("{header}{record}{}\n", " ".repeat(MAX_LINE_BYTES - record.len()));
        assert_eq!(padded.lines().nth(1).unwrap().len(), MAX_LINE_BYTES);
        assert!(read(&padded).1.iter().all(Result::is_ok));
    }
}
