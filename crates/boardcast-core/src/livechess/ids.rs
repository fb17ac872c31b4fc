//! Stable UUIDs for the event, its rounds and games: derived from what the
//! configuration and the games' tags say (the event's name, the round, the
//! board's label), so that they are the same after a restart and a client
//! holding one keeps reading the same game.
//!
//! A UUID is the first 16 bytes of a SHA-256 of a fixed prefix and the
//! parts, with the version (8, "custom", RFC 9562) and variant bits set.

use sha2::{Digest, Sha256};

/// The UUID (`xxxxxxxx-xxxx-8xxx-yxxx-xxxxxxxxxxxx`) of `kind` and `parts`.
pub(crate) fn uuid(kind: &str, parts: &[&str]) -> String {
    let mut hash = Sha256::new();
    hash.update(b"boardcast livechess\0");
    hash.update(kind.as_bytes());
    for part in parts {
        // Lengths first: ("ab", "c") and ("a", "bc") differ.
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    let digest = hash.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

/// The tournament's UUID: its event name.
pub fn tournament(event: &str) -> String {
    uuid("tournament", &[event])
}

/// A game's UUID: its event, round and board label.
pub fn game(event: &str, round: &str, board: &str) -> String {
    uuid("game", &[event, round, board])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_stable_well_formed_and_distinct() {
        let a = game("Open A", "3", "12");
        assert_eq!(a, game("Open A", "3", "12"), "the same after a restart");
        assert_eq!(a.len(), 36);
        let groups: Vec<&str> = a.split('-').collect();
        assert_eq!(groups.iter().map(|g| g.len()).collect::<Vec<_>>(), [8, 4, 4, 4, 12]);
        assert!(groups[2].starts_with('8'), "{a}");
        assert!(matches!(groups[3].as_bytes()[0], b'8' | b'9' | b'a' | b'b'), "{a}");
        assert_ne!(a, game("Open A", "31", "2"));
        assert_ne!(a, game("Open A", "3", "13"));
        assert_ne!(tournament("Open A"), tournament("Open B"));
    }
}
