//! The Millennium character layer: 7-bit ASCII with odd parity, hex digit
//! pairs, and the XOR block check that ends every message.
//!
//! The board speaks 7 data bits with odd parity. The port is opened 8N1 and
//! the parity is done here, in software, as every open-source driver does:
//! bit 7 of each byte is the parity bit, set so that the byte has an odd
//! number of one bits. A received byte with even parity was damaged on the
//! line (or is noise), which is the first and cheapest check a message gets.
//!
//! The block check is the XOR of the 7-bit characters before it (the
//! command letter included), written as two upper-case hex characters that
//! get their parity bit like any other.

/// Stands in a buffer of 7-bit characters for a byte that arrived with
/// even parity: it is no character at all, so it matches nothing.
pub(crate) const NOISE: u8 = 0x80;

/// The byte to send for a 7-bit character: bit 7 set when needed to make
/// the number of one bits odd.
pub(crate) const fn with_parity(ch: u8) -> u8 {
    let ch = ch & 0x7F;
    if ch.count_ones() % 2 == 1 { ch } else { ch | 0x80 }
}

/// The 7-bit character a received byte carries, or [`NOISE`] when its
/// parity is even.
pub(crate) const fn strip_parity(byte: u8) -> u8 {
    if byte.count_ones() % 2 == 1 { byte & 0x7F } else { NOISE }
}

/// The block check of `chars` (7-bit characters): their XOR.
pub(crate) fn block_check(chars: &[u8]) -> u8 {
    chars.iter().fold(0, |acc, &c| acc ^ (c & 0x7F))
}

/// `value` as two upper-case hex characters.
pub(crate) const fn hex_pair(value: u8) -> [u8; 2] {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    [DIGITS[(value >> 4) as usize], DIGITS[(value & 0x0F) as usize]]
}

/// Whether `ch` is an upper-case hex digit (the only kind the protocol
/// uses; lower-case letters are black pieces in a status).
pub(crate) const fn is_hex(ch: u8) -> bool {
    matches!(ch, b'0'..=b'9' | b'A'..=b'F')
}

/// The value of two upper-case hex characters.
pub(crate) fn parse_hex_pair(pair: [u8; 2]) -> Option<u8> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    Some((digit(pair[0])? << 4) | digit(pair[1])?)
}

/// The bytes to send for a message: its characters (letter and
/// parameters), the block check, and odd parity on all of them.
pub(crate) fn seal(chars: &[u8]) -> Vec<u8> {
    let check = hex_pair(block_check(chars));
    chars.iter().chain(&check).map(|&c| with_parity(c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parity_makes_every_byte_odd_and_comes_off_again() {
        assert_eq!(with_parity(b'V'), 0xD6);
        assert_eq!(with_parity(b'X'), 0x58, "already odd: sent as is");
        for ch in 0..0x80u8 {
            let byte = with_parity(ch);
            assert_eq!(byte.count_ones() % 2, 1);
            assert_eq!(strip_parity(byte), ch);
            assert_eq!(strip_parity(byte ^ 0x80), NOISE, "one flipped bit is caught");
        }
    }

    #[test]
    fn hex_pairs_round_trip_and_refuse_lower_case() {
        for value in 0..=255u8 {
            assert_eq!(parse_hex_pair(hex_pair(value)), Some(value));
        }
        assert_eq!(hex_pair(0x3C), *b"3C");
        assert_eq!(parse_hex_pair(*b"3c"), None);
        assert_eq!(parse_hex_pair(*b"G0"), None);
    }

    #[test]
    fn seals_the_research_vectors() {
        assert_eq!(seal(b"V"), [0xD6, 0xB5, 0xB6]);
        assert_eq!(seal(b"W0203"), [0x57, 0xB0, 0x32, 0xB0, 0xB3, 0xB5, 0xB6]);
    }
}
