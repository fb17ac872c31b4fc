//! Names that become file and folder names: an event's and a round's PGN
//! folders, a board's PGN file, a board's capture files. Names come from the
//! configuration and from operator commands (`set_tags`, `next_round`), so
//! each is made one safe path component here, at the one place every such
//! name passes: no name can leave the PGN and capture folders, and no name
//! the file system refuses can stop a game from being saved.
//!
//! Ordinary names ("Open A", "Round 3.1", "Ålesund", "board 1") are kept as
//! they are; only what could escape the folder or fail to be written is
//! changed (docs/service.md, "Names in file paths").

/// The longest component made, in bytes (a file name may have 255, and the
/// daemon adds a prefix and suffix such as `round-` or `-<stamp>-<n>.jsonl`).
pub(crate) const MAX_COMPONENT_BYTES: usize = 120;

/// The longest name the configuration accepts, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 100;

/// Device names Windows reserves in every folder (a PGN folder is often
/// shared with a Windows PC running the uploader): `CON`, `con.pgn` and
/// `COM1` name devices there, not files.
const RESERVED: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];

/// `name` as one path component that stays inside its folder:
/// - `/`, `\` and control characters (NUL included) become `-`;
/// - an empty name becomes `_`, and a name of dots only (`.`, `..`) gets a
///   `_` in front, as does a Windows device name (`CON`, `nul.txt`, `COM1`);
/// - a name longer than [`MAX_COMPONENT_BYTES`] is cut, and ends with `~`
///   and eight hex digits of a hash of the whole name, so that two long
///   names differing only at their ends stay apart.
pub fn component(name: &str) -> String {
    let mut out: String = name.chars().map(|c| if c == '/' || c == '\\' || c.is_control() { '-' } else { c }).collect();
    if out.is_empty() {
        return "_".into();
    }
    if out.chars().all(|c| c == '.') || reserved(&out) {
        out.insert(0, '_');
    }
    if out.len() > MAX_COMPONENT_BYTES {
        let keep = MAX_COMPONENT_BYTES - 9;
        let cut = (0..=keep).rev().find(|&i| out.is_char_boundary(i)).unwrap_or(0);
        out.truncate(cut);
        out.push_str(&format!("~{:08x}", fnv1a(name.as_bytes())));
    }
    out
}

/// Why a configured name cannot be used, if it cannot: control characters
/// (NUL included) or more than [`MAX_NAME_CHARS`] characters. Anything else
/// is accepted (and made safe by [`component`] where it becomes a path).
pub fn unusable(name: &str) -> Option<String> {
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Some(format!("a name without control characters (it has {:?})", c));
    }
    let count = name.chars().count();
    if count > MAX_NAME_CHARS {
        return Some(format!("a name of at most {MAX_NAME_CHARS} characters (it has {count})"));
    }
    None
}

/// Whether Windows reserves `name` (its part before the first dot, without
/// trailing spaces, in any case) for a device.
fn reserved(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or_default().trim_end().to_ascii_uppercase();
    if RESERVED.contains(&stem.as_str()) {
        return true;
    }
    let bytes = stem.as_bytes();
    bytes.len() == 4 && (stem.starts_with("COM") || stem.starts_with("LPT")) && bytes[3].is_ascii_digit()
}

/// FNV-1a, 32 bits: a hash that never changes between builds, so a long
/// name maps to the same file after an upgrade.
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| (hash ^ u32::from(b)).wrapping_mul(0x0100_0193))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_names_are_kept() {
        for name in ["Open A", "Round 3.1", "Ålesund Sjakklubb", "board 1", "Tata-Steel-2026", "?", "3", "con-game"] {
            assert_eq!(component(name), name);
        }
    }

    #[test]
    fn no_name_leaves_its_folder() {
        assert_eq!(component(".."), "_..");
        assert_eq!(component("."), "_.");
        assert_eq!(component(""), "_");
        assert_eq!(component("../../etc/passwd"), "..-..-etc-passwd");
        assert_eq!(component("a\\..\\b"), "a-..-b");
        assert_eq!(component("nul\0byte\nline"), "nul-byte-line");
        for reserved in ["CON", "con", "Nul.pgn", "COM1", "lpt9.txt", "AUX "] {
            assert!(component(reserved).starts_with('_'), "{reserved}");
        }
    }

    #[test]
    fn long_names_are_cut_and_stay_apart() {
        let a = format!("{}a", "é".repeat(200));
        let b = format!("{}b", "é".repeat(200));
        let (ca, cb) = (component(&a), component(&b));
        assert!(ca.len() <= MAX_COMPONENT_BYTES && cb.len() <= MAX_COMPONENT_BYTES);
        assert_ne!(ca, cb);
        assert_eq!(component(&a), ca, "the same name, the same file");
    }

    #[test]
    fn configured_names_with_control_characters_or_too_long_are_refused() {
        assert!(unusable("Open A").is_none());
        assert!(unusable("a\0b").unwrap().contains("control"));
        assert!(unusable(&"x".repeat(250)).unwrap().contains("250"));
    }
}
