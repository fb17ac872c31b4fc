//! Writing captures: one JSON object per line, keys in the order of the
//! format document.

use std::fmt::Write as _;

use shakmaty::Color;

use super::{CaptureHeader, Record, RecordBody, VERSION};
use crate::sensor::{ClockReading, SensorEvent};

/// The header line (without the newline).
pub fn format_header(header: &CaptureHeader) -> String {
    let mut out = format!(
        "{{\"capture\":{VERSION},\"protocol\":{},\"board\":{}",
        json_string(header.protocol.name()),
        json_string(&header.board)
    );
    if let Some(started_at) = &header.started_at {
        let _ = write!(out, ",\"started_at\":{}", json_string(started_at));
    }
    if !header.game.is_empty() {
        out.push_str(",\"game\":{");
        for (i, (key, value)) in header.game.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{}", json_string(key), json_string(value));
        }
        out.push('}');
    }
    if header.chess960 {
        out.push_str(",\"chess960\":true");
    }
    if let Some(rules) = header.rules {
        let _ = write!(out, ",\"rules\":{}", json_string(rules.name()));
    }
    if header.supervised {
        out.push_str(",\"supervised\":true");
    }
    if !header.calibration.is_empty() {
        out.push_str(",\"calibration\":{");
        for (i, (tag, letter)) in header.calibration.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{}:{}", json_string(tag), json_string(&letter.to_string()));
        }
        out.push('}');
    }
    out.push('}');
    out
}

/// A record line (without the newline).
///
/// # Panics
///
/// On a `BySide` clock reading: captures hold readings by colour; side
/// readings exist only inside the daemon, before it knows which side is
/// White's.
pub fn format_record(record: &Record) -> String {
    let mut out = format!("{{\"t_us\":{},", record.t.as_micros());
    match &record.body {
        RecordBody::Rx(bytes) => push_hex(&mut out, "rx", bytes),
        RecordBody::Tx(bytes) => push_hex(&mut out, "tx", bytes),
        RecordBody::Command(command) => {
            let _ = write!(out, "\"command\":{}", command.to_json());
        }
        RecordBody::Link(change) => {
            let _ = write!(out, "\"link\":\"{}\"", change.name());
        }
        RecordBody::Event(SensorEvent::Board(picture)) => {
            let _ = write!(out, "\"board\":\"{}\"", picture.to_fen_placement());
        }
        RecordBody::Event(SensorEvent::Square { square, cell }) => {
            let _ = write!(out, "\"square\":\"{square}\",\"piece\":");
            match cell.letter() {
                Some(ch) => {
                    let _ = write!(out, "\"{ch}\"");
                }
                None => out.push_str("null"),
            }
        }
        RecordBody::Event(SensorEvent::Clock(ClockReading::ByColor { white_ms, black_ms, running })) => {
            let running = match running {
                Some(Color::White) => "\"white\"",
                Some(Color::Black) => "\"black\"",
                None => "null",
            };
            let _ = write!(out, "\"clock\":{{\"white_ms\":{white_ms},\"black_ms\":{black_ms},\"running\":{running}}}");
        }
        RecordBody::Event(SensorEvent::Clock(ClockReading::BySide { .. })) => {
            panic!("a clock reading by side cannot be written to a capture")
        }
    }
    out.push('}');
    out
}

fn push_hex(out: &mut String, key: &str, bytes: &[u8]) {
    let _ = write!(out, "\"{key}\":\"");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out.push('"');
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned())
}

#[cfg(test)]
mod tests {
    use shakmaty::Square;

    use super::*;
    use crate::{
        capture::CaptureReader,
        protocol::Protocol,
        sensor::{Cell, Picture},
        time::Timestamp,
    };

    #[test]
    fn what_is_written_reads_back() {
        let mut header = CaptureHeader::new(Protocol::EVENTS, "board \"7\"");
        header.started_at = Some("2026-11-21T13:00:00Z".into());
        header.game = vec![("White".into(), "Anna".into()), ("TimeControl".into(), "300+2".into())];
        header.chess960 = true;
        let records = vec![
            Record {
                t: Timestamp::from_micros(0),
                body: RecordBody::Event(SensorEvent::Board(Box::new(Picture::from_board(&shakmaty::Board::new())))),
            },
            Record {
                t: Timestamp::from_micros(10),
                body: RecordBody::Event(SensorEvent::Square { square: Square::E2, cell: Cell::Empty }),
            },
            Record {
                t: Timestamp::from_micros(20),
                body: RecordBody::Event(SensorEvent::Square { square: Square::E4, cell: Cell::Occupied }),
            },
            Record {
                t: Timestamp::from_micros(30),
                body: RecordBody::Event(SensorEvent::Clock(ClockReading::ByColor {
                    white_ms: 1,
                    black_ms: 2,
                    running: None,
                })),
            },
        ];
        let mut text = format_header(&header);
        text.push('\n');
        for record in &records {
            text.push_str(&format_record(record));
            text.push('\n');
        }
        let reader = CaptureReader::new(&text).unwrap();
        assert_eq!(reader.header(), &header);
        let back: Vec<Record> = reader.map(Result::unwrap).collect();
        assert_eq!(back, records);
    }

    #[test]
    fn writes_raw_bytes_as_lowercase_hex() {
        let record =
            Record { t: Timestamp::from_micros(1_520_133), body: RecordBody::Rx(vec![0x8E, 0x00, 0x05, 0x34, 0x00]) };
        assert_eq!(format_record(&record), r#"{"t_us":1520133,"rx":"8e00053400"}"#);
    }
}
