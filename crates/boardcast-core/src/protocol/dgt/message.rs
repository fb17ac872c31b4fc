//! DGT messages from the board to the host: parsing a [`Frame`] into a
//! [`Message`], and encoding messages (for the simulated board).

use shakmaty::{Color, File, Piece, Rank, Role, Square};

use super::{
    clock::{BadClockMessage, BwTime},
    frame::{self, Frame},
};
use crate::sensor::{Cell, Picture};

/// Message IDs, board to host.
pub mod id {
    /// 64 piece codes, a8 first.
    pub(crate) const BOARD_DUMP: u8 = 0x86;
    /// Clock times or a clock acknowledgement.
    pub const BWTIME: u8 = 0x8D;
    /// One square changed.
    pub const FIELD_UPDATE: u8 = 0x8E;
    #[cfg(test)]
    /// The bus address.
    pub(crate) const BUSADRES: u8 = 0x90;
    /// The serial number, ASCII digits.
    pub(crate) const SERIALNR: u8 = 0x91;
    /// The trademark text.
    pub(crate) const TRADEMARK: u8 = 0x92;
    /// Firmware version, major and minor.
    pub(crate) const VERSION: u8 = 0x93;
    /// Battery status (Bluetooth boards).
    pub(crate) const BATTERY_STATUS: u8 = 0xA0;
    /// The long serial number, ten ASCII digits.
    pub(crate) const LONG_SERIALNR: u8 = 0xA2;
}

/// A message from a DGT board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// The whole board.
    BoardDump(Box<Picture>),
    /// One square changed.
    FieldUpdate {
        /// The square, in the board's own orientation.
        square: Square,
        /// What stands there now.
        cell: Cell,
    },
    /// Clock times or a clock acknowledgement.
    Clock(BwTime),
    /// Firmware version.
    Version {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// The board's serial number (short or long form).
    SerialNumber(String),
    /// The trademark text.
    Trademark(String),
    /// Battery charge in percent (Bluetooth boards).
    Battery {
        /// Remaining capacity, 0–100.
        percent: u8,
    },
    /// A message this daemon does not use (bus address, EEPROM log, and IDs
    /// it does not know).
    Other {
        /// The message ID.
        id: u8,
        /// How many data bytes it carried.
        len: usize,
    },
}

/// A well-framed message whose content is impossible.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadMessage {
    /// A board dump or field update with a piece code above 15.
    #[error("piece code {code:#04x} is not a DGT piece code")]
    PieceCode {
        /// The code received.
        code: u8,
    },
    /// A field update for a square index above 63.
    #[error("square index {index} is not on the board")]
    SquareIndex {
        /// The index received.
        index: u8,
    },
    /// A message shorter than its kind requires.
    #[error("message {id:#04x} has {len} data bytes, at least {need} needed")]
    TooShort {
        /// The message ID.
        id: u8,
        /// Data bytes received.
        len: usize,
        /// Data bytes required.
        need: usize,
    },
    /// A clock message with impossible times.
    #[error(transparent)]
    Clock(#[from] BadClockMessage),
}

impl Message {
    /// Parses a framed message.
    ///
    /// # Errors
    ///
    /// When the message is shorter than its kind requires or holds values
    /// that cannot be (piece codes above 15, squares above 63, impossible
    /// clock times).
    pub fn parse(frame: &Frame<'_>) -> Result<Self, BadMessage> {
        let data = frame.data;
        let need = |n: usize| {
            if data.len() < n { Err(BadMessage::TooShort { id: frame.id, len: data.len(), need: n }) } else { Ok(()) }
        };
        Ok(match frame.id {
            id::BOARD_DUMP => {
                need(64)?;
                let mut picture = Picture::empty();
                for (index, &code) in data[..64].iter().enumerate() {
                    picture.set(square_of(index as u8), cell_of(code)?);
                }
                Self::BoardDump(Box::new(picture))
            }
            id::FIELD_UPDATE => {
                need(2)?;
                let index = data[0];
                if index > 63 {
                    return Err(BadMessage::SquareIndex { index });
                }
                Self::FieldUpdate { square: square_of(index), cell: cell_of(data[1])? }
            }
            id::BWTIME => Self::Clock(BwTime::decode(data)?),
            id::VERSION => {
                need(2)?;
                Self::Version { major: data[0], minor: data[1] }
            }
            id::SERIALNR | id::LONG_SERIALNR => Self::SerialNumber(ascii(data).trim().to_owned()),
            id::TRADEMARK => Self::Trademark(ascii(data)),
            id::BATTERY_STATUS => {
                need(1)?;
                Self::Battery { percent: data[0] }
            }
            id => Self::Other { id, len: data.len() },
        })
    }

    /// Appends the bytes a board sends for this message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Self::BoardDump(picture) => {
                let mut data = [0u8; 64];
                for (index, code) in data.iter_mut().enumerate() {
                    *code = code_of(picture.get(square_of(index as u8)));
                }
                frame::encode(id::BOARD_DUMP, &data, out);
            }
            Self::FieldUpdate { square, cell } => {
                frame::encode(id::FIELD_UPDATE, &[index_of(*square), code_of(*cell)], out);
            }
            Self::Clock(bwtime) => frame::encode(id::BWTIME, &bwtime.encode(), out),
            Self::Version { major, minor } => frame::encode(id::VERSION, &[*major, *minor], out),
            Self::SerialNumber(serial) => frame::encode(id::SERIALNR, &seven_bit(serial), out),
            Self::Trademark(text) => frame::encode(id::TRADEMARK, &seven_bit(text), out),
            Self::Battery { percent } => {
                frame::encode(id::BATTERY_STATUS, &[*percent & 0x7F, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0], out);
            }
            Self::Other { id, len } => frame::encode(*id, &vec![0; *len], out),
        }
    }
}

/// The square of a DGT index (0 = a8, 7 = h8, …, 63 = h1).
pub fn square_of(index: u8) -> Square {
    let index = u32::from(index & 63);
    Square::from_coords(File::new(index % 8), Rank::new(7 - index / 8))
}

/// The DGT index of a square.
pub fn index_of(square: Square) -> u8 {
    ((7 - square.rank() as u8) * 8) + square.file() as u8
}

/// DGT piece codes run pawn, rook, knight, bishop, king, queen: king before
/// queen.
const ROLES: [Role; 6] = [Role::Pawn, Role::Rook, Role::Knight, Role::Bishop, Role::King, Role::Queen];

fn cell_of(code: u8) -> Result<Cell, BadMessage> {
    Ok(match code {
        0 => Cell::Empty,
        1..=6 => Cell::Piece(Piece { color: Color::White, role: ROLES[usize::from(code - 1)] }),
        7..=12 => Cell::Piece(Piece { color: Color::Black, role: ROLES[usize::from(code - 7)] }),
        // The three "magic pieces" (draw, white wins, black wins) are not
        // chess pieces: the square is occupied by something the game does
        // not know, which the reconstructor treats as a board out of sync.
        13..=15 => Cell::Occupied,
        code => return Err(BadMessage::PieceCode { code }),
    })
}

fn code_of(cell: Cell) -> u8 {
    match cell {
        Cell::Empty => 0,
        Cell::Occupied => 13,
        Cell::Piece(p) => {
            let offset = ROLES.iter().position(|&r| r == p.role).unwrap_or(0) as u8 + 1;
            if p.color == Color::White { offset } else { offset + 6 }
        }
    }
}

fn ascii(data: &[u8]) -> String {
    data.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { char::from(b) } else { ' ' }).collect()
}

fn seven_bit(text: &str) -> Vec<u8> {
    text.bytes().map(|b| b & 0x7F).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const START_DUMP: [u8; 64] = [
        0x08, 0x09, 0x0A, 0x0C, 0x0B, 0x0A, 0x09, 0x08, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x01, 0x01, 0x01, 0x01,
        0x01, 0x01, 0x01, 0x02, 0x03, 0x04, 0x06, 0x05, 0x04, 0x03, 0x02,
    ];

    #[test]
    fn index_and_square_agree() {
        assert_eq!(square_of(0), Square::A8);
        assert_eq!(square_of(52), Square::E2);
        assert_eq!(square_of(36), Square::E4);
        assert_eq!(square_of(63), Square::H1);
        for sq in Square::ALL {
            assert_eq!(square_of(index_of(sq)), sq);
        }
    }

    #[test]
    fn parses_the_start_position_dump_from_a_real_board() {
        let msg = Message::parse(&Frame { id: id::BOARD_DUMP, data: &START_DUMP }).unwrap();
        assert_eq!(msg, Message::BoardDump(Box::new(Picture::from_board(&shakmaty::Board::new()))));
        let mut bytes = Vec::new();
        msg.encode(&mut bytes);
        assert_eq!(&bytes[3..], &START_DUMP);
    }

    #[test]
    fn parses_field_updates() {
        let lift = Message::parse(&Frame { id: id::FIELD_UPDATE, data: &[0x34, 0x00] }).unwrap();
        assert_eq!(lift, Message::FieldUpdate { square: Square::E2, cell: Cell::Empty });
        let place = Message::parse(&Frame { id: id::FIELD_UPDATE, data: &[0x24, 0x01] }).unwrap();
        assert_eq!(place, Message::FieldUpdate { square: Square::E4, cell: Cell::Piece(Color::White.pawn()) });
        let queen = Message::parse(&Frame { id: id::FIELD_UPDATE, data: &[0x03, 0x0C] }).unwrap();
        assert_eq!(queen, Message::FieldUpdate { square: Square::D8, cell: Cell::Piece(Color::Black.queen()) });
    }

    #[test]
    fn rejects_impossible_content() {
        let parse = |id, data: &[u8]| Message::parse(&Frame { id, data });
        assert_eq!(parse(id::FIELD_UPDATE, &[64, 1]), Err(BadMessage::SquareIndex { index: 64 }));
        assert_eq!(parse(id::FIELD_UPDATE, &[3, 0x10]), Err(BadMessage::PieceCode { code: 0x10 }));
        assert_eq!(parse(id::FIELD_UPDATE, &[3]), Err(BadMessage::TooShort { id: 0x8E, len: 1, need: 2 }));
        assert_eq!(parse(id::BOARD_DUMP, &[0; 10]), Err(BadMessage::TooShort { id: 0x86, len: 10, need: 64 }));
    }

    #[test]
    fn parses_identity_replies() {
        let parse = |id, data: &[u8]| Message::parse(&Frame { id, data }).unwrap();
        assert_eq!(parse(id::VERSION, &[1, 2]), Message::Version { major: 1, minor: 2 });
        assert_eq!(parse(id::SERIALNR, b"03921"), Message::SerialNumber("03921".into()));
        assert_eq!(parse(id::LONG_SERIALNR, b"0000003921"), Message::SerialNumber("0000003921".into()));
        assert_eq!(parse(id::BUSADRES, &[0x08, 0x01]), Message::Other { id: 0x90, len: 2 });
        assert_eq!(parse(id::BATTERY_STATUS, &[87, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0]), Message::Battery { percent: 87 });
    }
}
