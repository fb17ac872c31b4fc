//! The DGT e-board protocol (serial, USB and Bluetooth boards, and clocks
//! attached to them).
//!
//! - [`frame`]: splitting bytes into messages, with resynchronisation.
//! - [`message`]: what each message means, and encoding them back.
//! - [`clock`]: the BWTIME clock message.
//! - [`command`]: what the host sends.
//! - [`link`]: the host's side of a live connection.
//! - [`display`]: when a DGT 3000 may show a move instead of the times.
//!
//! [`DgtDecoder`] puts the first three together into the protocol-neutral
//! [`Decoded`] items the rest of the daemon uses.

pub mod clock;
pub mod command;
pub mod display;
pub mod frame;
pub mod link;
pub mod message;

use self::{
    clock::BwTime,
    frame::{Framed, Framer},
    message::Message,
};
use super::{BoardDecoder, Family, Features, Probe, Protocol};
use super::{BoardInfo, DecodeProblem, Decoded};
use crate::sensor::SensorEvent;

/// Turns bytes from a DGT board into [`Decoded`] items, whatever chunks they
/// arrive in.
#[derive(Clone, Debug, Default)]
pub struct DgtDecoder {
    framer: Framer,
}

impl DgtDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }
}

fn decoded(message: Message) -> Option<Decoded> {
    Some(match message {
        Message::BoardDump(picture) => Decoded::Sensor(SensorEvent::Board(picture)),
        Message::FieldUpdate { square, cell } => Decoded::Sensor(SensorEvent::Square { square, cell }),
        Message::Clock(BwTime::Times(times)) if times.connected() => {
            Decoded::Sensor(SensorEvent::Clock(times.reading()))
        }
        Message::Clock(BwTime::Times(_)) => Decoded::Info(BoardInfo::ClockAbsent),
        Message::Clock(BwTime::Ack(ack)) => Decoded::Info(BoardInfo::ClockAck(ack.0)),
        Message::Clock(BwTime::Empty) | Message::Other { .. } => return None,
        Message::Version { major, minor } => Decoded::Info(BoardInfo::Version(format!("{major}.{minor}"))),
        Message::SerialNumber(serial) => Decoded::Info(BoardInfo::Serial(serial)),
        Message::Trademark(text) => Decoded::Info(BoardInfo::Trademark(text)),
        Message::Battery { percent } => Decoded::Info(BoardInfo::Battery(percent)),
    })
}

/// The family of DGT e-boards.
pub const FAMILY: Family = Family {
    name: "dgt",
    title: "DGT board",
    baud: 9600,
    identifies_pieces: true,
    answers_board_request: true,
    features: Features { lights: false, clock_text: true, calibration: false },
    probe: Probe {
        // The version and serial number: asking changes nothing on a board.
        ask: || [command::Command::SendVersion.bytes(), command::Command::SendSerialNumber.bytes()].concat(),
        answers: |decoded| matches!(decoded, Decoded::Info(BoardInfo::Serial(_) | BoardInfo::Version(_))),
        tells_serial: true,
        tells_version: true,
        rank: 2,
    },
    on_serial: true,
    bluetooth: None,
    decoder: || Box::new(DgtDecoder::new()),
    link: |config| Box::new(link::DgtLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a DGT board.
    pub const DGT: Self = Self::of(&FAMILY);
}

impl BoardDecoder for DgtDecoder {
    /// Takes bytes received from the board.
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.framer.push(bytes);
    }

    /// The next decoded item, or `None` when more bytes are needed.
    fn poll_decoded(&mut self) -> Option<Decoded> {
        loop {
            let frame = match self.framer.next_item()? {
                Framed::Frame(frame) => frame,
                Framed::Garbage { len, reason } => {
                    return Some(Decoded::Problem(DecodeProblem::Garbage { len, reason: reason.describe() }));
                }
            };
            let message = match Message::parse(&frame) {
                Ok(message) => message,
                Err(error) => {
                    return Some(Decoded::Problem(DecodeProblem::BadMessage(error.to_string())));
                }
            };
            if let Some(decoded) = decoded(message) {
                return Some(decoded);
            }
        }
    }

    /// Ends the stream: whatever is buffered is reported as a cut-off
    /// message (a board unplugged mid-message, or the end of a capture).
    fn finish(&mut self) -> Option<Decoded> {
        self.framer.flush().map(|item| match item {
            Framed::Garbage { len, reason } => {
                Decoded::Problem(DecodeProblem::Garbage { len, reason: reason.describe() })
            }
            Framed::Frame(_) => unreachable!("flush only reports garbage"),
        })
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Square};

    use super::*;
    use crate::sensor::{Cell, ClockReading, ClockSide};

    #[test]
    fn decodes_a_stream_with_garbage_between_messages() {
        let mut decoder = DgtDecoder::new();
        decoder.handle_bytes(&[0x8E, 0x00, 0x05, 0x34, 0x00, 0x13, 0x37, 0x8E, 0x00, 0x05, 0x24, 0x01]);
        decoder.handle_bytes(&[0x8D, 0x00, 0x0A, 0x20, 0x03, 0x02, 0x20, 0x03, 0x01, 0x09]);
        let mut out = Vec::new();
        while let Some(item) = decoder.poll_decoded() {
            out.push(item);
        }
        assert_eq!(
            out,
            vec![
                Decoded::Sensor(SensorEvent::Square { square: Square::E2, cell: Cell::Empty }),
                Decoded::Problem(DecodeProblem::Garbage { len: 2, reason: "bytes outside any message" }),
                Decoded::Sensor(SensorEvent::Square { square: Square::E4, cell: Cell::Piece(Color::White.pawn()) }),
                Decoded::Sensor(SensorEvent::Clock(ClockReading::BySide {
                    left: crate::sensor::ClockDisplay { ms: 181_000, flag: false },
                    right: crate::sensor::ClockDisplay { ms: 182_000, flag: false },
                    running: Some(ClockSide::Left),
                })),
            ]
        );
        assert_eq!(decoder.finish(), None);
    }

    #[test]
    fn reports_a_bad_message_and_goes_on() {
        let mut decoder = DgtDecoder::new();
        decoder.handle_bytes(&[0x8E, 0x00, 0x05, 0x50, 0x00, 0x8E, 0x00, 0x05, 0x24, 0x01, 0x8E, 0x00]);
        assert_eq!(
            decoder.poll_decoded(),
            Some(Decoded::Problem(DecodeProblem::BadMessage("square index 80 is not on the board".into())))
        );
        assert!(matches!(decoder.poll_decoded(), Some(Decoded::Sensor(_))));
        assert_eq!(decoder.poll_decoded(), None);
        assert_eq!(
            decoder.finish(),
            Some(Decoded::Problem(DecodeProblem::Garbage {
                len: 2,
                reason: "a message cut off by the end of the stream"
            }))
        );
    }
}
