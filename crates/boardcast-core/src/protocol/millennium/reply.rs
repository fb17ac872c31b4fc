//! Millennium replies from the board to the host: what a [`Frame`] means,
//! and encoding replies back into bytes (for the simulated board and for
//! generated captures).
//!
//! Every host command has its reply letter in lower case: `s` (status, the
//! whole board), `v` (firmware version), `w` and `r` (a register written or
//! read), `l` and `x` (LEDs set or put out). A board reporting by itself
//! sends `s` replies too.

use shakmaty::{File, Piece, Rank, Square};

use super::{frame::Frame, wire};
use crate::sensor::{Cell, Picture};

/// A reply from a Millennium board.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// The whole board, in the board's own orientation.
    Status(Box<Picture>),
    /// Firmware version.
    Version {
        /// Major version (0 Exclusive, 1 Performance, 2 eONE, as far as
        /// known).
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// A register was written.
    RegisterWritten {
        /// Its address.
        address: u8,
        /// The value it now holds.
        value: u8,
    },
    /// A register was read.
    RegisterRead {
        /// Its address.
        address: u8,
        /// The value it holds.
        value: u8,
    },
    /// The LED pattern was set.
    LedsSet,
    /// The LEDs were put out.
    LedsOut,
}

/// A well-framed reply whose content this daemon cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadReply {
    /// A letter the board does not send.
    #[error("reply letter {letter:?} is not one of s, v, w, r, l, x")]
    Letter {
        /// The letter received.
        letter: char,
    },
    /// A status character that is neither a piece letter nor `.`.
    #[error("status character {ch:?} for {square} is not a piece letter or '.'")]
    StatusChar {
        /// The character received.
        ch: char,
        /// The square it stands for.
        square: Square,
    },
    /// Parameters of the wrong length or not hex.
    #[error("reply {letter:?} has parameters {params:?}, expected {expected}")]
    Params {
        /// The reply letter.
        letter: char,
        /// The parameters received.
        params: String,
        /// What was expected.
        expected: &'static str,
    },
}

impl Reply {
    /// Parses a framed reply.
    ///
    /// # Errors
    ///
    /// When the letter, a status character or the parameters are not what
    /// a board sends (the framer lets none of these through; a frame built
    /// by hand may hold them).
    pub fn parse(frame: &Frame<'_>) -> Result<Self, BadReply> {
        let params = frame.params;
        let letter = char::from(frame.letter);
        let pairs = |expected: &'static str, n: usize| {
            let values: Option<Vec<u8>> = (params.len() == 2 * n)
                .then(|| params.chunks(2).map(|p| wire::parse_hex_pair([p[0], p[1]])).collect())
                .flatten();
            values.ok_or_else(|| BadReply::Params { letter, params: String::from_utf8_lossy(params).into(), expected })
        };
        Ok(match frame.letter {
            b's' => {
                if params.len() != 64 {
                    return Err(BadReply::Params {
                        letter,
                        params: String::from_utf8_lossy(params).into(),
                        expected: "64 status characters",
                    });
                }
                let mut picture = Picture::empty();
                for (index, &ch) in params.iter().enumerate() {
                    let square = square_of(index);
                    let cell = cell_of(ch).ok_or(BadReply::StatusChar { ch: char::from(ch), square })?;
                    picture.set(square, cell);
                }
                Self::Status(Box::new(picture))
            }
            b'v' => {
                let v = pairs("major and minor version as two hex pairs", 2)?;
                Self::Version { major: v[0], minor: v[1] }
            }
            b'w' | b'r' => {
                let v = pairs("address and value as two hex pairs", 2)?;
                let (address, value) = (v[0], v[1]);
                if frame.letter == b'w' {
                    Self::RegisterWritten { address, value }
                } else {
                    Self::RegisterRead { address, value }
                }
            }
            b'l' | b'x' if !params.is_empty() => {
                return Err(BadReply::Params {
                    letter,
                    params: String::from_utf8_lossy(params).into(),
                    expected: "none",
                });
            }
            b'l' => Self::LedsSet,
            b'x' => Self::LedsOut,
            _ => return Err(BadReply::Letter { letter }),
        })
    }

    /// The bytes a board sends for this reply (parity and block check
    /// included).
    pub fn encode(&self) -> Vec<u8> {
        let mut chars = Vec::with_capacity(65);
        match self {
            Self::Status(picture) => {
                chars.push(b's');
                chars.extend((0..64).map(|index| status_char(picture.get(square_of(index)))));
            }
            Self::Version { major, minor } => {
                chars.push(b'v');
                chars.extend(wire::hex_pair(*major));
                chars.extend(wire::hex_pair(*minor));
            }
            Self::RegisterWritten { address, value } | Self::RegisterRead { address, value } => {
                chars.push(if matches!(self, Self::RegisterWritten { .. }) { b'w' } else { b'r' });
                chars.extend(wire::hex_pair(*address));
                chars.extend(wire::hex_pair(*value));
            }
            Self::LedsSet => chars.push(b'l'),
            Self::LedsOut => chars.push(b'x'),
        }
        wire::seal(&chars)
    }
}

/// The square of status character `index`: the document's order, a8 first,
/// then b8 … h8, a7 … h1 (see the module docs of `millennium` on
/// orientation).
pub fn square_of(index: usize) -> Square {
    let index = (index & 63) as u32;
    Square::from_coords(File::new(index % 8), Rank::new(7 - index / 8))
}

/// The cell a status character stands for.
fn cell_of(ch: u8) -> Option<Cell> {
    if ch == b'.' {
        return Some(Cell::Empty);
    }
    Piece::from_char(char::from(ch)).map(Cell::Piece)
}

/// The status character for a cell. A board cannot report an unidentified
/// piece; should a picture hold one (a script of an occupancy-only board),
/// it is sent as a white pawn rather than as an empty square, so that the
/// square at least reads occupied.
fn status_char(cell: Cell) -> u8 {
    match cell {
        Cell::Empty => b'.',
        Cell::Occupied => b'P',
        Cell::Piece(piece) => piece.char() as u8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::millennium::frame::{Framed, Framer, Speaker};

    fn parse(bytes: &[u8]) -> Result<Reply, BadReply> {
        let mut framer = Framer::new(Speaker::Board);
        framer.push(bytes);
        match framer.next_item() {
            Some(Framed::Frame(frame)) => Reply::parse(&frame),
            other => panic!("not a frame: {other:?}"),
        }
    }

    #[test]
    fn reads_the_start_position_a8_first() {
        let status = wire::seal(b"srnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR");
        let start = Picture::from_board(&shakmaty::Board::new());
        assert_eq!(parse(&status), Ok(Reply::Status(Box::new(start.clone()))));
        assert_eq!(Reply::Status(Box::new(start)).encode(), status);
        assert_eq!(square_of(0), Square::A8);
        assert_eq!(square_of(7), Square::H8);
        assert_eq!(square_of(52), Square::E2);
        assert_eq!(square_of(63), Square::H1);
    }

    #[test]
    fn replies_round_trip_through_their_bytes() {
        for reply in [
            Reply::Version { major: 1, minor: 8 },
            Reply::RegisterWritten { address: 2, value: 4 },
            Reply::RegisterRead { address: 0x10, value: 0xAB },
            Reply::LedsSet,
            Reply::LedsOut,
        ] {
            assert_eq!(parse(&reply.encode()), Ok(reply));
        }
        assert_eq!(Reply::Version { major: 1, minor: 8 }.encode(), wire::seal(b"v0108"));
    }

    #[test]
    fn refuses_hand_built_frames_no_board_sends() {
        let status = [b'.'; 63];
        assert!(matches!(
            Reply::parse(&Frame { letter: b's', params: &status }),
            Err(BadReply::Params { letter: 's', .. })
        ));
        let mut status = [b'.'; 64];
        status[60] = b'?';
        assert_eq!(
            Reply::parse(&Frame { letter: b's', params: &status }),
            Err(BadReply::StatusChar { ch: '?', square: Square::E1 })
        );
        assert_eq!(Reply::parse(&Frame { letter: b'q', params: &[] }), Err(BadReply::Letter { letter: 'q' }));
        assert_eq!(
            Reply::parse(&Frame { letter: b'v', params: b"01" }).map_err(|e| e.to_string()),
            Err("reply 'v' has parameters \"01\", expected major and minor version as two hex pairs".into())
        );
    }
}
