//! DGT commands from the host to the board.
//!
//! Single-byte commands, plus the clock envelope `2B SIZE 03 CMD … 00`. Only
//! commands that cannot harm a board are offered: the boot loader and the
//! EEPROM-writing draughts commands are deliberately absent.
//!
//! [`ClockText`] is what a DGT 3000 can show in place of the times: eight
//! printable ASCII characters (the clock has no other alphabet).

/// A command to a DGT board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `0x40`: to idle mode; the board sends nothing by itself.
    Reset,
    /// `0x41`: send the clock's times once.
    SendClock,
    /// `0x42`: send a board dump.
    SendBoard,
    /// `0x43`: report field changes, and clock times every second.
    SendUpdate,
    /// `0x44`: report field changes only.
    SendUpdateBoard,
    /// `0x45`: send the serial number.
    SendSerialNumber,
    /// `0x4B`: report field changes, and clock times when they change.
    SendUpdateNice,
    /// `0x4C`: send the battery status (Bluetooth boards).
    SendBatteryStatus,
    /// `0x4D`: send the firmware version.
    SendVersion,
    /// `0x55`: send the long serial number (Bluetooth boards, Revelation II).
    SendLongSerialNumber,
    /// Ask the clock for its version (answered by an acknowledgement).
    ClockVersion,
    /// Return the clock to its time display.
    ClockEnd,
    /// Show eight characters on a DGT 3000 (sub-command `0x0C`, no beep).
    /// A DGT XL does not understand it.
    ClockText(ClockText),
}

/// Eight printable ASCII characters for a DGT 3000's display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClockText(pub [u8; 8]);

impl ClockText {
    /// `text` made fit: padded with spaces or cut to eight characters; a
    /// character the clock cannot show (anything but printable ASCII, such
    /// as a figurine letter) becomes `?`, so that what is shown is never
    /// mistaken for another move.
    pub fn new(text: &str) -> Self {
        let mut out = [b' '; 8];
        for (slot, c) in out.iter_mut().zip(text.chars()) {
            *slot = if c.is_ascii_graphic() || c == ' ' { c as u8 } else { b'?' };
        }
        Self(out)
    }

    /// The text as shown, trailing spaces included.
    pub fn as_str(&self) -> &str {
        // Only printable ASCII is ever stored.
        std::str::from_utf8(&self.0).unwrap_or("")
    }
}

impl Command {
    /// The bytes sent for this command.
    pub fn bytes(self) -> Vec<u8> {
        let fixed: &[u8] = match self {
            Self::Reset => &[0x40],
            Self::SendClock => &[0x41],
            Self::SendBoard => &[0x42],
            Self::SendUpdate => &[0x43],
            Self::SendUpdateBoard => &[0x44],
            Self::SendSerialNumber => &[0x45],
            Self::SendUpdateNice => &[0x4B],
            Self::SendBatteryStatus => &[0x4C],
            Self::SendVersion => &[0x4D],
            Self::SendLongSerialNumber => &[0x55],
            Self::ClockVersion => &[0x2B, 0x03, 0x03, 0x09, 0x00],
            Self::ClockEnd => &[0x2B, 0x03, 0x03, 0x03, 0x00],
            Self::ClockText(ClockText(text)) => {
                // SIZE counts the bytes after it: 03 0C, eight characters,
                // the beep (0 = none) and the closing 00.
                let mut bytes = vec![0x2B, 0x0C, 0x03, 0x0C];
                bytes.extend_from_slice(&text);
                bytes.extend_from_slice(&[0x00, 0x00]);
                return bytes;
            }
        };
        fixed.to_vec()
    }

    #[cfg(test)]
    /// Whether this command goes to the clock, which accepts only one
    /// command at a time and answers each with an acknowledgement.
    pub(crate) fn is_clock_command(self) -> bool {
        matches!(self, Self::ClockVersion | Self::ClockEnd | Self::ClockText(_))
    }

    /// Reads a command from the start of bytes a host sent, returning it and
    /// how many bytes it took (used by the simulated board).
    pub fn parse(bytes: &[u8]) -> Option<(Self, usize)> {
        if let [0x2B, 0x0C, 0x03, 0x0C, rest @ ..] = bytes
            && let Some((text, [_beep, 0x00, ..])) = rest.split_first_chunk::<8>()
        {
            return Some((Self::ClockText(ClockText(*text)), 14));
        }
        const ALL: [Command; 12] = [
            Command::Reset,
            Command::SendClock,
            Command::SendBoard,
            Command::SendUpdate,
            Command::SendUpdateBoard,
            Command::SendSerialNumber,
            Command::SendUpdateNice,
            Command::SendBatteryStatus,
            Command::SendVersion,
            Command::SendLongSerialNumber,
            Command::ClockVersion,
            Command::ClockEnd,
        ];
        ALL.into_iter().find(|c| bytes.starts_with(&c.bytes())).map(|c| (c, c.bytes().len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_through_their_bytes() {
        let text = Command::ClockText(ClockText::new("Nf3"));
        for cmd in [Command::SendUpdateNice, Command::SendVersion, Command::ClockVersion, Command::SendBoard, text] {
            let mut bytes = cmd.bytes().to_vec();
            bytes.push(0x42);
            assert_eq!(Command::parse(&bytes), Some((cmd, cmd.bytes().len())));
        }
        assert!(Command::ClockEnd.is_clock_command());
        assert!(!Command::SendBoard.is_clock_command());
        assert_eq!(Command::parse(&[0x4E]), None, "the boot loader command is never offered");
        assert!(text.is_clock_command());
    }

    #[test]
    fn clock_text_is_the_documented_dgt_3000_ascii_command() {
        // The example of the protocol notes: "e2e4    " without a beep.
        let bytes = Command::ClockText(ClockText::new("e2e4")).bytes();
        assert_eq!(bytes, [0x2B, 0x0C, 0x03, 0x0C, 0x65, 0x32, 0x65, 0x34, 0x20, 0x20, 0x20, 0x20, 0x00, 0x00]);
        assert_eq!(Command::ClockEnd.bytes(), [0x2B, 0x03, 0x03, 0x03, 0x00]);
        assert_eq!(Command::ClockVersion.bytes(), [0x2B, 0x03, 0x03, 0x09, 0x00]);
    }

    #[test]
    fn clock_text_fits_eight_printable_characters() {
        assert_eq!(ClockText::new("Nf3").as_str(), "Nf3     ");
        assert_eq!(ClockText::new("O-O-O").as_str(), "O-O-O   ");
        assert_eq!(ClockText::new("exd8=Q+").as_str(), "exd8=Q+ ");
        assert_eq!(ClockText::new("23...Nf3 is cut").as_str(), "23...Nf3");
        // A figurine knight is not on the clock: shown as `?`, not dropped.
        assert_eq!(ClockText::new("\u{2658}f3").as_str(), "?f3     ");
        assert_eq!(ClockText::new("a\tb").as_str(), "a?b     ");
    }
}
