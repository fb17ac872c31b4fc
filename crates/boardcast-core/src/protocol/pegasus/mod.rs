//! The DGT Pegasus over Bluetooth LE: DGT's framing and commands through a
//! Nordic UART service, but occupancy only: a board dump and a field update
//! say `00` (empty) or `01` (occupied) for every square. A Pegasus reports
//! a made-up full board until the host sends a developer key
//! (`63 07 <6 bytes> 00`). `../shared/research/eboard-protocols.md`
//! section 1.13 gives the sources; nothing here was checked on a board.
//!
//! The decoder is the DGT one with every piece turned into
//! [`Cell::Occupied`]: which piece stands where comes from the game, as for
//! a Sentio-format board. The link is the DGT one with the key first.

use super::{
    Bluetooth, BoardDecoder, BoardLink, Decoded, Family, Features, Probe, Protocol,
    dgt::{DgtDecoder, command::Command, link::DgtLink},
    link::{LinkConfig, LinkEvent},
};
use crate::{
    sensor::{Cell, Picture, SensorEvent},
    time::Timestamp,
};

/// The Nordic UART service a Pegasus speaks through, and its
/// characteristics (shared with other boards: [`super::uart`]).
pub use super::uart::{NOTIFY as UART_NOTIFY, SERVICE as UART_SERVICE, WRITE as UART_WRITE};

/// The developer-key command: `63 07`, the six key bytes, `00`.
pub const DEVELOPER_KEY: u8 = 0x63;

/// The developer-key message for `key`.
pub fn key_message(key: [u8; 6]) -> Vec<u8> {
    let mut out = vec![DEVELOPER_KEY, 0x07];
    out.extend_from_slice(&key);
    out.push(0x00);
    out
}

/// Turns bytes from a Pegasus into [`Decoded`] items: DGT messages, with
/// occupancy in place of pieces.
///
/// Every change is reported as the whole board (the board as the last dump
/// and the field updates since show it), as an occupancy board in the
/// Sentio format reports it: the reconstructor judges a whole board once
/// it has stood still, which is what occupancy needs (a single square
/// changing says little when the piece is unknown: a flicker, a scan that
/// saw a placement before the lift, a capture). A field update before the
/// first dump cannot be placed and is dropped (the link asks for a dump at
/// every connection).
#[derive(Clone, Debug, Default)]
pub struct PegasusDecoder {
    dgt: DgtDecoder,
    /// The board as reported so far.
    seen: Option<Picture>,
}

impl PegasusDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }
}

/// What a Pegasus's code means: anything but empty is an unknown piece.
const fn occupancy(cell: Cell) -> Cell {
    if cell.is_occupied() { Cell::Occupied } else { Cell::Empty }
}

impl BoardDecoder for PegasusDecoder {
    fn handle_bytes(&mut self, bytes: &[u8]) {
        self.dgt.handle_bytes(bytes);
    }

    fn poll_decoded(&mut self) -> Option<Decoded> {
        loop {
            match self.dgt.poll_decoded()? {
                Decoded::Sensor(SensorEvent::Board(picture)) => {
                    let mut seen = Picture::empty();
                    for square in picture.occupied() {
                        seen.set(square, Cell::Occupied);
                    }
                    self.seen = Some(seen.clone());
                    return Some(Decoded::Sensor(SensorEvent::Board(Box::new(seen))));
                }
                Decoded::Sensor(SensorEvent::Square { square, cell }) => {
                    let Some(seen) = &mut self.seen else { continue };
                    if seen.set(square, occupancy(cell)) != occupancy(cell) {
                        return Some(Decoded::Sensor(SensorEvent::Board(Box::new(seen.clone()))));
                    }
                }
                other => return Some(other),
            }
        }
    }

    fn finish(&mut self) -> Option<Decoded> {
        self.dgt.finish()
    }
}

/// The host side of a Pegasus: the developer key, then a DGT board's
/// start-up (field updates, version, serial number, a board dump), its
/// keep-alive and its dump after lost bytes. A Pegasus has no clock: the
/// link offers no clock display.
#[derive(Clone, Debug)]
pub(crate) struct PegasusLink {
    dgt: DgtLink,
    key: Option<[u8; 6]>,
    /// The key is to be sent before anything else.
    key_due: bool,
}

impl PegasusLink {
    pub(crate) fn new(config: LinkConfig) -> Self {
        Self { dgt: DgtLink::new(config), key: config.pegasus_key, key_due: false }
    }
}

impl BoardLink for PegasusLink {
    fn handle_connected(&mut self, now: Timestamp) {
        self.key_due = self.key.is_some();
        self.dgt.handle_connected(now);
    }

    fn handle_disconnected(&mut self) {
        self.key_due = false;
        self.dgt.handle_disconnected();
    }

    fn handle_rx(&mut self, now: Timestamp) {
        self.dgt.handle_rx(now);
    }

    fn handle_decoded(&mut self, now: Timestamp, decoded: &Decoded) {
        self.dgt.handle_decoded(now, decoded);
    }

    fn handle_timeout(&mut self, now: Timestamp) {
        self.dgt.handle_timeout(now);
    }

    /// The key first (the board ignores the real squares until it has
    /// it), then whatever the DGT link sends.
    fn poll_transmit(&mut self, now: Timestamp) -> Option<Vec<u8>> {
        if let Some(key) = self.key.filter(|_| self.key_due) {
            self.key_due = false;
            return Some(key_message(key));
        }
        self.dgt.poll_transmit(now)
    }

    fn poll_timeout(&self) -> Option<Timestamp> {
        self.dgt.poll_timeout()
    }

    fn poll_event(&mut self) -> Option<LinkEvent> {
        self.dgt.poll_event()
    }

    fn request_board(&mut self, now: Timestamp) {
        self.dgt.request_board(now);
    }
}

/// The family of DGT Pegasus boards.
pub const FAMILY: Family = Family {
    name: "pegasus",
    title: "DGT Pegasus (occupancy only)",
    // Bluetooth LE has no line speed; this is for a port nobody opens.
    baud: 9600,
    identifies_pieces: false,
    answers_board_request: true,
    features: Features { lights: false, clock_text: false, calibration: false },
    probe: Probe {
        // Found over Bluetooth by its advertised name, never on a serial
        // port; were it probed, it would answer as a DGT board does.
        ask: || [Command::SendVersion.bytes(), Command::SendSerialNumber.bytes()].concat(),
        answers: |decoded| matches!(decoded, Decoded::Info(super::BoardInfo::Serial(_))),
        // Not on a port: a Pegasus is found by its Bluetooth address.
        tells_serial: false,
        tells_version: false,
        rank: 3,
    },
    on_serial: false,
    bluetooth: Some(Bluetooth {
        name_contains: "DGT_Pegasus",
        service: UART_SERVICE,
        notify: UART_NOTIFY,
        write: UART_WRITE,
        write_spacing: std::time::Duration::ZERO,
    }),
    decoder: || Box::new(PegasusDecoder::new()),
    link: |config| Box::new(PegasusLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a DGT Pegasus (its notifications).
    pub const PEGASUS: Self = Self::of(&FAMILY);
}

#[cfg(test)]
mod tests {
    use shakmaty::{Board, Square};

    use super::*;
    use crate::protocol::dgt::message::Message;

    #[test]
    fn pieces_are_only_occupancy_and_split_messages_are_reassembled() {
        let mut bytes = Vec::new();
        Message::BoardDump(Box::new(Picture::from_board(&Board::new()))).encode(&mut bytes);
        Message::FieldUpdate { square: Square::E4, cell: Cell::Piece(shakmaty::Color::White.pawn()) }
            .encode(&mut bytes);
        let mut decoder = PegasusDecoder::new();
        let mut out = Vec::new();
        for chunk in bytes.chunks(20) {
            decoder.handle_bytes(chunk);
            out.extend(std::iter::from_fn(|| decoder.poll_decoded()));
        }
        let [Decoded::Sensor(SensorEvent::Board(first)), Decoded::Sensor(SensorEvent::Board(then))] = out.as_slice()
        else {
            panic!("{out:?}")
        };
        assert_eq!(first.occupied(), Board::new().occupied());
        assert!(first.occupied().into_iter().all(|sq| first.get(sq) == Cell::Occupied));
        assert_eq!(then.occupied(), first.occupied() | shakmaty::Bitboard::from(Square::E4));
    }

    #[test]
    fn a_field_update_before_the_first_dump_is_dropped() {
        let mut bytes = Vec::new();
        Message::FieldUpdate { square: Square::E4, cell: Cell::Piece(shakmaty::Color::White.pawn()) }
            .encode(&mut bytes);
        let mut decoder = PegasusDecoder::new();
        decoder.handle_bytes(&bytes);
        assert_eq!(decoder.poll_decoded(), None);
    }

    #[test]
    fn the_developer_key_goes_first_after_every_connection() {
        let key = [1, 2, 3, 4, 5, 6];
        let mut link = PegasusLink::new(LinkConfig { pegasus_key: Some(key), ..LinkConfig::default() });
        let now = Timestamp::ZERO;
        link.handle_connected(now);
        let sent: Vec<Vec<u8>> = std::iter::from_fn(|| link.poll_transmit(now)).collect();
        assert_eq!(sent[0], [0x63, 0x07, 1, 2, 3, 4, 5, 6, 0x00]);
        assert_eq!(sent[1..], [[0x4B], [0x4D], [0x45], [0x42]]);
        link.handle_disconnected();
        link.handle_connected(now);
        assert_eq!(link.poll_transmit(now), Some(key_message(key)));
        let mut keyless = PegasusLink::new(LinkConfig::default());
        keyless.handle_connected(now);
        assert_eq!(keyless.poll_transmit(now), Some(vec![0x4B]), "no key configured: none sent");
        assert!(keyless.clock_mut().is_none());
    }
}
