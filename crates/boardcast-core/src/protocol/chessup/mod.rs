//! ChessUp boards over Bluetooth LE (a Nordic UART service, advertised
//! name `ChessUp`). The host asks for the state with `67`; the board
//! answers `67` and 72 bytes: the 64 squares a1, b1, … h8 (a piece code,
//! `40` for empty), then the side to move, castling rights, en passant and
//! the move counters. Moves stream only inside a session the host opens
//! (`B9`, game mode 5: a game against someone at the board, the phone
//! watching), as `A3` messages of six bytes; a promotion is a `97`
//! message. Every move message must be acknowledged with `21`, a
//! promotion with `23`, or the board repeats it until the link drops.
//! `../shared/research/ble-boards.md` and `eboard-protocols.md` give the
//! sources (an open-source driver's message classes); nothing here was
//! checked on a board, and the promotion message's bytes are from the
//! research note alone (the driver's own copy of it is inconsistent).
//!
//! - [`link`]: the host's side (the session, the acknowledgements, asking
//!   for the state after every move).
//!
//! The decoder reports whole positions ([`super::position`]); a move or
//! promotion message becomes [`BoardInfo::Acknowledge`], which the link
//! answers. The state after a move is what the reconstructor reads: the
//! move message names only two squares, which says nothing of a castling
//! rook or a pawn taken en passant.

pub mod link;

use shakmaty::{Color, Piece, Role, Square};

use super::{
    Bluetooth, BoardInfo, DecodeProblem, Decoded, Family, Features, Probe, Protocol,
    frames::{Framed, Framer, Start},
    position::{PositionDecoder, Positions, WholePositions},
    queue::Out,
    uart,
};
use crate::sensor::{Cell, Picture};

/// The state: asked for with this byte alone, answered with it and 72
/// bytes.
pub const STATE: u8 = 0x67;
/// The whole state message's length.
pub const STATE_LEN: usize = 73;
/// A move made on the board (six bytes).
pub const MOVE: u8 = 0xA3;
/// A move message's length.
pub const MOVE_LEN: usize = 6;
/// A promotion chosen on the board (two bytes: the ID and the piece).
pub const PROMOTION: u8 = 0x97;
/// The host's acknowledgement of a move message.
pub const MOVE_ACK: u8 = 0x21;
/// The host's acknowledgement of a promotion message.
pub const PROMOTION_ACK: u8 = 0x23;
/// An empty square in the state.
pub const EMPTY: u8 = 0x40;

/// Whether a ChessUp message starts at `buf`.
fn start(buf: &[u8]) -> Start {
    match buf[0] {
        STATE => Start::Whole(STATE_LEN),
        MOVE => Start::Whole(MOVE_LEN),
        PROMOTION => Start::Whole(2),
        _ => Start::Not,
    }
}

/// The piece of a code: 0 to 5 White's pawn, rook, knight, bishop, queen,
/// king; 8 to 13 Black's; [`EMPTY`]; `None` for any other.
pub const fn cell_of(code: u8) -> Option<Cell> {
    let color = if code & 0x08 == 0 { Color::White } else { Color::Black };
    let role = match code & !0x08 {
        _ if code == EMPTY => return Some(Cell::Empty),
        0 => Role::Pawn,
        1 => Role::Rook,
        2 => Role::Knight,
        3 => Role::Bishop,
        4 => Role::Queen,
        5 => Role::King,
        _ => return None,
    };
    Some(Cell::Piece(Piece { color, role }))
}

/// The code of a cell (an occupied square of unknown piece cannot be said:
/// it is sent empty).
pub const fn code_of(cell: Cell) -> u8 {
    let Cell::Piece(Piece { color, role }) = cell else { return EMPTY };
    let code = match role {
        Role::Pawn => 0,
        Role::Rook => 1,
        Role::Knight => 2,
        Role::Bishop => 3,
        Role::Queen => 4,
        Role::King => 5,
    };
    if matches!(color, Color::Black) { code | 0x08 } else { code }
}

/// The picture of a state message; `Err` names a code that is no piece.
pub fn picture_of(state: &[u8]) -> Result<Picture, String> {
    let mut picture = Picture::empty();
    for (square, &code) in Square::ALL.into_iter().zip(&state[1..65]) {
        picture.set(square, cell_of(code).ok_or_else(|| format!("piece code {code:#04x} on {square}"))?);
    }
    Ok(picture)
}

/// The state message a board sends for `picture` (White to move, no
/// castling rights, no en passant, counters at zero: the daemon reads
/// only the squares).
pub fn state_message(picture: &Picture) -> Vec<u8> {
    let mut out = Vec::with_capacity(STATE_LEN);
    out.push(STATE);
    out.extend(Square::ALL.into_iter().map(|square| code_of(picture.get(square))));
    out.extend_from_slice(&[0; 8]);
    out
}

/// The move message for a move from `from` to `to` (file and rank of
/// each, 0 for the a-file and the first rank).
pub fn move_message(from: Square, to: Square) -> Vec<u8> {
    let coords = |s: Square| [u8::from(s.file()), u8::from(s.rank())];
    [&[MOVE, 0x35][..], &coords(from), &coords(to)].concat()
}

/// Turns bytes from a ChessUp board into [`Decoded`] items.
#[derive(Clone, Debug)]
pub struct ChessUpDecoder(PositionDecoder<Framer>);

impl Default for ChessUpDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl ChessUpDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self(PositionDecoder::new(Framer::new(start), handle))
    }
}

impl WholePositions for ChessUpDecoder {
    type Framer = Framer;
    fn decoder(&mut self) -> &mut PositionDecoder<Framer> {
        &mut self.0
    }
}

/// What a framed item means.
fn handle(positions: &mut Positions, item: Framed, out: &mut Out) {
    let problem = match item {
        Framed::Message(bytes) => match bytes[0] {
            STATE => match picture_of(&bytes) {
                Ok(picture) => return positions.report(picture, out),
                Err(why) => DecodeProblem::BadMessage(format!("a state with {why}")),
            },
            MOVE => return out.push_back(Decoded::Info(BoardInfo::Acknowledge(MOVE_ACK))),
            _ => return out.push_back(Decoded::Info(BoardInfo::Acknowledge(PROMOTION_ACK))),
        },
        Framed::Garbage(len) => DecodeProblem::Garbage { len, reason: "bytes outside any ChessUp message" },
    };
    positions.lost();
    out.push_back(Decoded::Problem(problem));
}

/// The family of ChessUp boards.
pub const FAMILY: Family = Family {
    name: "chessup",
    title: "ChessUp board",
    // Bluetooth LE has no line speed; this is for a port nobody opens.
    baud: 9600,
    identifies_pieces: true,
    answers_board_request: true,
    features: Features { lights: false, clock_text: false, calibration: false },
    probe: Probe {
        // Found over Bluetooth by its advertised name, never on a port.
        ask: || vec![STATE],
        answers: |decoded| matches!(decoded, Decoded::Sensor(_)),
        tells_serial: false,
        tells_version: false,
        rank: 3,
    },
    on_serial: false,
    bluetooth: Some(Bluetooth {
        name_contains: "ChessUp",
        service: uart::SERVICE,
        notify: uart::NOTIFY,
        write: uart::WRITE,
        write_spacing: std::time::Duration::ZERO,
    }),
    decoder: || Box::new(ChessUpDecoder::new()),
    link: |config| Box::new(link::ChessUpLink::new(config)),
};

impl Protocol {
    /// Raw bytes of a ChessUp board (its notifications).
    pub const CHESSUP: Self = Self::of(&FAMILY);
}

#[cfg(test)]
mod tests {
    use crate::protocol::BoardDecoder;
    use shakmaty::Board;

    use super::*;
    use crate::sensor::SensorEvent;

    fn decode(decoder: &mut ChessUpDecoder, bytes: &[u8]) -> Vec<Decoded> {
        decoder.handle_bytes(bytes);
        std::iter::from_fn(|| decoder.poll_decoded()).collect()
    }

    #[test]
    fn the_state_is_read_a1_first_and_moves_ask_for_their_acknowledgement() {
        let start = Picture::from_board(&Board::new());
        let state = state_message(&start);
        assert_eq!(state.len(), STATE_LEN);
        assert_eq!(&state[1..9], [1, 2, 3, 4, 5, 3, 2, 1], "a1 … h1: R N B Q K B N R");
        assert_eq!(state[64], 0x09, "h8: a black rook");
        let mut decoder = ChessUpDecoder::new();
        assert_eq!(decode(&mut decoder, &state), [Decoded::Sensor(SensorEvent::Board(Box::new(start)))]);
        assert_eq!(
            decode(&mut decoder, &[&move_message(Square::E2, Square::E4)[..], &[PROMOTION, 4]].concat()),
            [Decoded::Info(BoardInfo::Acknowledge(MOVE_ACK)), Decoded::Info(BoardInfo::Acknowledge(PROMOTION_ACK))]
        );
        assert_eq!(move_message(Square::E2, Square::E4), [0xA3, 0x35, 4, 1, 4, 3]);
        let mut bad = state.clone();
        bad[5] = 0x07;
        assert_eq!(
            decode(&mut decoder, &bad),
            [Decoded::Problem(DecodeProblem::BadMessage("a state with piece code 0x07 on e1".into()))]
        );
    }
}
