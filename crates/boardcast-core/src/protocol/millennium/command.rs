//! Millennium commands from the host to the board: an upper-case letter,
//! parameters as upper-case hex pairs, the block check, odd parity on every
//! character. The board acts only on a command whose parity and block check
//! are right, and answers each (but `T`) with the same letter in lower case.

use super::{
    frame::Frame,
    leds::{LED_COUNT, LedPattern},
    wire,
};

/// The register saying when the board reports its status by itself.
pub const REG_REPORTING: u8 = 0x02;

/// [`REG_REPORTING`]: a status on every scan (the board's default).
pub const REPORT_EVERY_SCAN: u8 = 0;

/// [`REG_REPORTING`]: no status unless asked with `S`.
pub const REPORT_NEVER: u8 = 1;

/// [`REG_REPORTING`]: a status every N × 4.096 ms (N in register 3).
pub const REPORT_TIMED: u8 = 2;

/// [`REG_REPORTING`]: a status whenever a square changes; 4 to 7 add a
/// debounce of 2 to 5 scans.
pub const REPORT_ON_CHANGE: u8 = 3;

/// The register holding the scan time, in units of 2.048 ms.
pub const REG_SCAN_TIME: u8 = 0x01;

/// The register holding the timed report interval, in units of 4.096 ms.
pub const REG_REPORT_INTERVAL: u8 = 0x03;

/// A command to a Millennium board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `S`: send the status (the whole board).
    SendStatus,
    /// `V`: send the firmware version.
    SendVersion,
    /// `W`: write a register (kept by the board across power cycles).
    WriteRegister {
        /// The register's address.
        address: u8,
        /// The value to write.
        value: u8,
    },
    /// `R`: read a register.
    ReadRegister {
        /// The register's address.
        address: u8,
    },
    /// `L`: set every LED's pattern.
    SetLeds(LedPattern),
    /// `X`: put out every LED.
    PutOutLeds,
    /// `T`: reset the board (about three seconds before it answers again;
    /// status and LEDs cleared). Never sent by the link; the simulated
    /// board understands it.
    Reset,
}

/// A well-framed command that is not one a board understands.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadCommand {
    /// A letter that is no command.
    #[error("command letter {letter:?} is not one of S, V, W, R, L, X, T")]
    Letter {
        /// The letter received.
        letter: char,
    },
    /// Parameters of the wrong length or not hex.
    #[error("command {letter:?} has parameters {params:?}, which are not {expected} hex pairs")]
    Params {
        /// The command letter.
        letter: char,
        /// The parameters received.
        params: String,
        /// How many hex pairs were expected.
        expected: usize,
    },
}

impl Command {
    /// The bytes sent for this command (parity and block check included).
    pub fn encode(&self) -> Vec<u8> {
        let mut chars = Vec::with_capacity(3 + 2 * LED_COUNT);
        match self {
            Self::SendStatus => chars.push(b'S'),
            Self::SendVersion => chars.push(b'V'),
            Self::WriteRegister { address, value } => {
                chars.push(b'W');
                chars.extend(wire::hex_pair(*address));
                chars.extend(wire::hex_pair(*value));
            }
            Self::ReadRegister { address } => {
                chars.push(b'R');
                chars.extend(wire::hex_pair(*address));
            }
            Self::SetLeds(pattern) => {
                chars.push(b'L');
                chars.extend(wire::hex_pair(pattern.slot_time));
                chars.extend(pattern.codes.iter().flat_map(|&c| wire::hex_pair(c)));
            }
            Self::PutOutLeds => chars.push(b'X'),
            Self::Reset => chars.push(b'T'),
        }
        wire::seal(&chars)
    }

    /// Parses a framed command (for the simulated board).
    ///
    /// # Errors
    ///
    /// When the letter is no command, or the parameters are not the number
    /// of hex pairs it takes (the framer lets neither through; a frame built
    /// by hand may hold them).
    pub fn parse(frame: &Frame<'_>) -> Result<Self, BadCommand> {
        let letter = char::from(frame.letter);
        let expected = match frame.letter {
            b'S' | b'V' | b'X' | b'T' => 0,
            b'R' => 1,
            b'W' => 2,
            b'L' => 1 + LED_COUNT,
            _ => return Err(BadCommand::Letter { letter }),
        };
        let values: Option<Vec<u8>> = (frame.params.len() == 2 * expected)
            .then(|| frame.params.chunks(2).map(|p| wire::parse_hex_pair([p[0], p[1]])).collect())
            .flatten();
        let Some(values) = values else {
            let params = String::from_utf8_lossy(frame.params).into_owned();
            return Err(BadCommand::Params { letter, params, expected });
        };
        Ok(match frame.letter {
            b'S' => Self::SendStatus,
            b'V' => Self::SendVersion,
            b'X' => Self::PutOutLeds,
            b'T' => Self::Reset,
            b'R' => Self::ReadRegister { address: values[0] },
            b'W' => Self::WriteRegister { address: values[0], value: values[1] },
            _ => {
                let mut codes = [0; LED_COUNT];
                codes.copy_from_slice(&values[1..]);
                Self::SetLeds(LedPattern { slot_time: values[0], codes })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::millennium::frame::{Framed, Framer, Speaker};

    fn parse(bytes: &[u8]) -> Command {
        let mut framer = Framer::new(Speaker::Host);
        framer.push(bytes);
        match framer.next_item() {
            Some(Framed::Frame(frame)) => Command::parse(&frame).expect("a command"),
            other => panic!("not a frame: {other:?}"),
        }
    }

    #[test]
    fn encodes_the_research_vectors() {
        assert_eq!(Command::SendVersion.encode(), [0xD6, 0xB5, 0xB6]);
        assert_eq!(Command::SendStatus.encode(), [0xD3, 0xB5, 0xB3]);
        assert_eq!(Command::PutOutLeds.encode(), [0x58, 0xB5, 0x38]);
        assert_eq!(Command::Reset.encode(), [0x54, 0xB5, 0x34]);
        assert_eq!(Command::ReadRegister { address: 2 }.encode(), [0x52, 0xB0, 0x32, 0xB5, 0xB0]);
        assert_eq!(
            Command::WriteRegister { address: 2, value: 3 }.encode(),
            [0x57, 0xB0, 0x32, 0xB0, 0xB3, 0xB5, 0xB6]
        );
    }

    #[test]
    fn an_led_command_is_167_characters_and_round_trips() {
        let mut pattern = LedPattern::DARK;
        pattern.codes[0] = 0xFF;
        pattern.codes[80] = 0xCC;
        let bytes = Command::SetLeds(pattern).encode();
        assert_eq!(bytes.len(), 167);
        assert_eq!(parse(&bytes), Command::SetLeds(pattern));
        for command in [
            Command::SendStatus,
            Command::SendVersion,
            Command::WriteRegister { address: 2, value: 4 },
            Command::ReadRegister { address: 0x10 },
            Command::PutOutLeds,
            Command::Reset,
        ] {
            assert_eq!(parse(&command.encode()), command);
        }
    }

    #[test]
    fn refuses_hand_built_frames_no_host_sends() {
        assert_eq!(Command::parse(&Frame { letter: b'Q', params: &[] }), Err(BadCommand::Letter { letter: 'Q' }));
        assert_eq!(
            Command::parse(&Frame { letter: b'W', params: b"02" }).map_err(|e| e.to_string()),
            Err("command 'W' has parameters \"02\", which are not 2 hex pairs".into())
        );
    }
}
