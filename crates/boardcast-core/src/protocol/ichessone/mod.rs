//! iChessOne boards over Bluetooth LE (a Nordic UART service, advertised
//! name containing `iChessOne`). The host writes ASCII commands: `CPIRQ`
//! has the board report its position whenever it changes, `RP` asks for
//! it now. A position is `3D 70` (`=p`) and 32 bytes, two squares a byte,
//! rank 8 first, a8 in the high nibble of the first byte; the battery is
//! `3D 62`, a status byte and the percent. Every square names its piece.
//! `../shared/research/eboard-protocols.md` section 4.2 gives the source
//! (an open-source driver and its test vectors); nothing here was checked
//! on a board.
//!
//! - [`link`]: the host's side (the commands).
//!
//! The decoder reports whole positions ([`super::position`]).

pub mod link;

use shakmaty::{Color, File, Piece, Rank, Role, Square};

use super::{
    Bluetooth, BoardInfo, DecodeProblem, Decoded, Family, Features, Probe, Protocol,
    frames::{Framed, Framer, Start},
    position::{PositionDecoder, Positions, WholePositions},
    queue::Out,
    uart,
};
use crate::sensor::{Cell, Picture};

/// Every message from the board starts with `=`.
pub const REPLY: u8 = 0x3D;
/// A position: `3D 70` and 32 bytes.
pub const POSITION: u8 = 0x70;
/// The battery: `3D 62`, a status byte and the percent.
pub const BATTERY: u8 = 0x62;

/// Whether an iChessOne message starts at `buf`.
fn start(buf: &[u8]) -> Start {
    match (buf[0], buf.get(1)) {
        (REPLY, None) => Start::Unsure,
        (REPLY, Some(&POSITION)) => Start::Whole(34),
        (REPLY, Some(&BATTERY)) => Start::Whole(4),
        _ => Start::Not,
    }
}

/// The square of a position's `index`-th nibble: a8, b8, … h8, a7, … h1.
fn square_of(index: usize) -> Square {
    Square::from_coords(File::new((index % 8) as u32), Rank::new(7 - (index / 8) as u32))
}

/// The roles in code order: 1 to 6 White's, 7 to 12 Black's.
const ROLES: [Role; 6] = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];

/// The piece of a nibble (0 is empty); `None` for 13 to 15.
fn cell_of(nibble: u8) -> Option<Cell> {
    match nibble {
        0 => Some(Cell::Empty),
        1..=6 => Some(Cell::Piece(Piece { color: Color::White, role: ROLES[usize::from(nibble - 1)] })),
        7..=12 => Some(Cell::Piece(Piece { color: Color::Black, role: ROLES[usize::from(nibble - 7)] })),
        _ => None,
    }
}

/// The nibble of a cell (an occupied square of unknown piece is sent
/// empty).
fn nibble_of(cell: Cell) -> u8 {
    let Cell::Piece(Piece { color, role }) = cell else { return 0 };
    let code = ROLES.iter().position(|&r| r == role).unwrap_or_default() as u8 + 1;
    if color == Color::White { code } else { code + 6 }
}

/// The picture of a position message's 32 square bytes; `Err` names a
/// nibble that is no piece.
pub fn picture_of(squares: &[u8]) -> Result<Picture, String> {
    let mut picture = Picture::empty();
    for (i, &byte) in squares.iter().take(32).enumerate() {
        for (k, nibble) in [(2 * i, byte >> 4), (2 * i + 1, byte & 0x0F)] {
            let cell = cell_of(nibble).ok_or_else(|| format!("piece code {nibble} on {}", square_of(k)))?;
            picture.set(square_of(k), cell);
        }
    }
    Ok(picture)
}

/// The position message a board sends for `picture`.
pub fn position_message(picture: &Picture) -> Vec<u8> {
    let mut out = vec![REPLY, POSITION];
    out.extend(
        (0..32).map(|i| nibble_of(picture.get(square_of(2 * i))) << 4 | nibble_of(picture.get(square_of(2 * i + 1)))),
    );
    out
}

/// Turns bytes from an iChessOne board into [`Decoded`] items.
#[derive(Clone, Debug)]
pub struct IChessOneDecoder(PositionDecoder<Framer>);

impl Default for IChessOneDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl IChessOneDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self(PositionDecoder::new(Framer::new(start), handle))
    }
}

impl WholePositions for IChessOneDecoder {
    type Framer = Framer;
    fn decoder(&mut self) -> &mut PositionDecoder<Framer> {
        &mut self.0
    }
}

/// What a framed item means.
fn handle(positions: &mut Positions, item: Framed, out: &mut Out) {
    let problem = match item {
        Framed::Message(bytes) if bytes[1] == POSITION => match picture_of(&bytes[2..]) {
            Ok(picture) => return positions.report(picture, out),
            Err(why) => DecodeProblem::BadMessage(format!("a position with {why}")),
        },
        Framed::Message(bytes) => return out.push_back(Decoded::Info(BoardInfo::Battery(bytes[3].min(100)))),
        Framed::Garbage(len) => DecodeProblem::Garbage { len, reason: "bytes outside any iChessOne message" },
    };
    positions.lost();
    out.push_back(Decoded::Problem(problem));
}

/// The family of iChessOne boards.
pub const FAMILY: Family = Family {
    name: "ichessone",
    title: "iChessOne board",
    // Bluetooth LE has no line speed; this is for a port nobody opens.
    baud: 9600,
    identifies_pieces: true,
    answers_board_request: true,
    features: Features { lights: false, clock_text: false, calibration: false },
    probe: Probe {
        // Found over Bluetooth by its advertised name, never on a port.
        ask: || link::REQUEST_POSITION.to_vec(),
        answers: |decoded| matches!(decoded, Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: false,
        rank: 3,
    },
    on_serial: false,
    bluetooth: Some(Bluetooth {
        name_contains: "iChessOne",
        service: uart::SERVICE,
        notify: uart::NOTIFY,
        write: uart::WRITE,
        write_spacing: std::time::Duration::ZERO,
    }),
    decoder: || Box::new(IChessOneDecoder::new()),
    link: |config| Box::new(link::IChessOneLink::new(config)),
};

impl Protocol {
    /// Raw bytes of an iChessOne board (its notifications).
    pub const ICHESSONE: Self = Self::of(&FAMILY);
}

#[cfg(test)]
mod tests {
    use crate::protocol::BoardDecoder;
    use shakmaty::Board;

    use super::*;
    use crate::sensor::SensorEvent;

    /// The start position as published (see docs/boards.md).
    const START: [u8; 34] = [
        0x3D, 0x70, 0xA8, 0x9B, 0xC9, 0x8A, 0x77, 0x77, 0x77, 0x77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x11, 0x11, 0x11, 0x11, 0x42, 0x35, 0x63, 0x24,
    ];

    #[test]
    fn the_published_start_position_reads_and_writes_back() {
        let start = Picture::from_board(&Board::new());
        assert_eq!(position_message(&start), START);
        let mut decoder = IChessOneDecoder::new();
        let mut out = Vec::new();
        for part in START.chunks(20).chain([&[0x3D, 0x62, 0x00, 0x57][..]]) {
            decoder.handle_bytes(part);
            out.extend(std::iter::from_fn(|| decoder.poll_decoded()));
        }
        assert_eq!(out, [Decoded::Sensor(SensorEvent::Board(Box::new(start))), Decoded::Info(BoardInfo::Battery(87))]);
    }
}
