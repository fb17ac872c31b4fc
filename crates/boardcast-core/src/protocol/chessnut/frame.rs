//! Chessnut framing: every message the board sends is `ID LEN DATA…`
//! (`LEN` data bytes follow), over Bluetooth LE notifications that may cut
//! a message anywhere. The framer reassembles messages whatever the split
//! and resynchronises on bytes that start no known message.
//!
//! The framing is the shared one of [`crate::protocol::frames`].

use shakmaty::{Color, File, Piece, Rank, Role, Square};

use crate::{
    protocol::{
        frames::{self, Start},
        queue::Framing,
    },
    sensor::{Cell, Picture},
};

/// The real-time position: `01 24`, 32 bytes of squares, 4 bytes whose
/// meaning is unknown (`FF FF FF FF` in every published example).
pub const POSITION: u8 = 0x01;
/// The data length of a position message.
pub const POSITION_LEN: u8 = 0x24;
/// The battery reply: percent and a charging flag.
pub const BATTERY: u8 = 0x2A;

/// The data length a message of `id` may have, if `id` starts a message
/// this daemon knows. A length outside the range means the byte is not a
/// message start after all.
const fn lengths(id: u8) -> Option<(u8, u8)> {
    match id {
        // 32 square bytes at least; the trailer has been seen 4 bytes long.
        POSITION => Some((32, 40)),
        BATTERY => Some((2, 4)),
        _ => None,
    }
}

/// Whether a message starts at `buf`: a known ID followed by a length it
/// may have (`ID LEN DATA…`).
fn start(buf: &[u8]) -> Start {
    match (lengths(buf[0]), buf.get(1)) {
        (Some(_), None) => Start::Unsure,
        (Some((low, high)), Some(&len)) if (low..=high).contains(&len) => Start::Whole(2 + usize::from(len)),
        _ => Start::Not,
    }
}

/// What the framer found next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Framed {
    /// A whole message: its ID and data.
    Message {
        /// The message ID (`01` for a position).
        id: u8,
        /// The data bytes after `ID LEN`.
        data: Vec<u8>,
    },
    /// Bytes that start no known message, dropped.
    Garbage(usize),
}

/// Splits a Chessnut byte stream into [`Framed`] items.
#[derive(Clone, Debug)]
pub struct Framer(frames::Framer);

impl Default for Framer {
    fn default() -> Self {
        Self(frames::Framer::new(start))
    }
}

impl Framer {
    /// Appends bytes received from the board.
    pub fn push(&mut self, bytes: &[u8]) {
        self.0.push(bytes);
    }

    /// The next complete item, or `None` when more bytes are needed.
    pub fn next_item(&mut self) -> Option<Framed> {
        Some(match self.0.next_item()? {
            frames::Framed::Message(bytes) => Framed::Message { id: bytes[0], data: bytes[2..].to_vec() },
            frames::Framed::Garbage(len) => Framed::Garbage(len),
        })
    }

    /// Drops whatever is buffered (the end of a stream, a dropped link),
    /// returning how many bytes that was.
    pub fn flush(&mut self) -> Option<usize> {
        self.0.flush()
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

/// The square of a position message's `index`-th nibble: h8, g8, … a8,
/// h7, … a1.
fn square_of(index: usize) -> Square {
    Square::from_coords(File::new(7 - (index % 8) as u32), Rank::new(7 - (index / 8) as u32))
}

/// The piece of a nibble (0 is empty); `None` for 13 to 15.
const fn cell_of(nibble: u8) -> Option<Cell> {
    let (color, role) = match nibble {
        0 => return Some(Cell::Empty),
        1 => (Color::Black, Role::Queen),
        2 => (Color::Black, Role::King),
        3 => (Color::Black, Role::Bishop),
        4 => (Color::Black, Role::Pawn),
        5 => (Color::Black, Role::Knight),
        6 => (Color::White, Role::Rook),
        7 => (Color::White, Role::Pawn),
        8 => (Color::Black, Role::Rook),
        9 => (Color::White, Role::Bishop),
        10 => (Color::White, Role::Knight),
        11 => (Color::White, Role::Queen),
        12 => (Color::White, Role::King),
        _ => return None,
    };
    Some(Cell::Piece(Piece { color, role }))
}

/// The nibble of a cell (an occupied square of unknown piece cannot be
/// said: it is sent empty).
const fn nibble_of(cell: Cell) -> u8 {
    let Cell::Piece(Piece { color, role }) = cell else { return 0 };
    match (color, role) {
        (Color::Black, Role::Queen) => 1,
        (Color::Black, Role::King) => 2,
        (Color::Black, Role::Bishop) => 3,
        (Color::Black, Role::Pawn) => 4,
        (Color::Black, Role::Knight) => 5,
        (Color::White, Role::Rook) => 6,
        (Color::White, Role::Pawn) => 7,
        (Color::Black, Role::Rook) => 8,
        (Color::White, Role::Bishop) => 9,
        (Color::White, Role::Knight) => 10,
        (Color::White, Role::Queen) => 11,
        (Color::White, Role::King) => 12,
    }
}

/// The picture of a position message's 32 square bytes (the first square
/// of a pair in the low nibble); `Err` names a nibble that is no piece.
pub fn picture_of(squares: &[u8]) -> Result<Picture, String> {
    let mut picture = Picture::empty();
    for (i, &byte) in squares.iter().take(32).enumerate() {
        for (k, nibble) in [(2 * i, byte & 0x0F), (2 * i + 1, byte >> 4)] {
            let cell = cell_of(nibble).ok_or_else(|| format!("piece code {nibble} on {}", square_of(k)))?;
            picture.set(square_of(k), cell);
        }
    }
    Ok(picture)
}

/// The whole position message a board sends for `picture`.
pub fn position_message(picture: &Picture) -> Vec<u8> {
    let mut out = Vec::with_capacity(38);
    out.extend_from_slice(&[POSITION, POSITION_LEN]);
    for i in 0..32 {
        let low = nibble_of(picture.get(square_of(2 * i)));
        let high = nibble_of(picture.get(square_of(2 * i + 1)));
        out.push(low | high << 4);
    }
    out.extend_from_slice(&[0xFF; 4]);
    out
}

#[cfg(test)]
mod tests {
    use shakmaty::Board;

    use super::*;

    /// The start position as published for the Chessnut Air (see
    /// docs/boards.md for the source).
    pub(crate) const START: [u8; 38] = [
        0x01, 0x24, 0x58, 0x23, 0x31, 0x85, 0x44, 0x44, 0x44, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x77, 0x77, 0x77, 0x77, 0xA6, 0xC9, 0x9B, 0x6A, 0xFF, 0xFF, 0xFF, 0xFF,
    ];

    #[test]
    fn the_published_start_position_reads_and_writes_back() {
        let mut framer = Framer::default();
        framer.push(&START);
        let Some(Framed::Message { id: POSITION, data }) = framer.next_item() else { panic!() };
        assert_eq!(picture_of(&data).unwrap(), Picture::from_board(&Board::new()));
        assert_eq!(position_message(&Picture::from_board(&Board::new())), START);
    }

    #[test]
    fn garbage_is_reported_once_whatever_the_split() {
        let stream = [&[0x13, 0x37, 0x55][..], &START, &[0x2A, 0x02, 0x50, 0x01]].concat();
        let whole = {
            let mut framer = Framer::default();
            framer.push(&stream);
            std::iter::from_fn(|| framer.next_item()).collect::<Vec<_>>()
        };
        assert_eq!(whole[0], Framed::Garbage(3));
        assert_eq!(whole[2], Framed::Message { id: BATTERY, data: vec![0x50, 0x01] });
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
