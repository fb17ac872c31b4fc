//! DGT commands from the host to the board.
//!
//! Single-byte commands, plus the clock envelope `2B SIZE 03 CMD … 00`. Only
//! commands that cannot harm a board are offered: the boot loader and the
//! EEPROM-writing draughts commands are deliberately absent.

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
}

impl Command {
    /// The bytes sent for this command.
    pub fn bytes(self) -> &'static [u8] {
        match self {
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
        }
    }

    /// Whether this command goes to the clock, which accepts only one
    /// command at a time and answers each with an acknowledgement.
    pub fn is_clock_command(self) -> bool {
        self.bytes()[0] == 0x2B
    }

    /// Reads a command from the start of bytes a host sent, returning it and
    /// how many bytes it took (used by the simulated board).
    pub fn parse(bytes: &[u8]) -> Option<(Self, usize)> {
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
        ALL.into_iter().find(|c| bytes.starts_with(c.bytes())).map(|c| (c, c.bytes().len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_round_trip_through_their_bytes() {
        for cmd in [Command::SendUpdateNice, Command::SendVersion, Command::ClockVersion, Command::SendBoard] {
            let mut bytes = cmd.bytes().to_vec();
            bytes.push(0x42);
            assert_eq!(Command::parse(&bytes), Some((cmd, cmd.bytes().len())));
        }
        assert!(Command::ClockEnd.is_clock_command());
        assert!(!Command::SendBoard.is_clock_command());
        assert_eq!(Command::parse(&[0x4E]), None, "the boot loader command is never offered");
    }
}
