//! Moves rendered for people in the piece letters of the audience's
//! language (rules.md N2, Laws appendix C.2–C.3); the spoken announcement
//! (N3, appendix D.2.1) is in [`super::spoken`].
//!
//! Both start from the move itself, not from a SAN string, so that
//! disambiguation, captures, promotion and check are always right.

use shakmaty::{Chess, Color, Move, Role, san::SanPlus};

/// A display language for piece letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// English: K Q R B N.
    En,
    /// Dutch: K D T L P.
    Nl,
    /// German: K D T L S.
    De,
    /// Afrikaans: K D T L R.
    Af,
    /// French: R D T F C.
    Fr,
}

impl Language {
    /// Every language, in the order the payloads list them.
    pub const ALL: [Self; 5] = [Self::En, Self::Nl, Self::De, Self::Af, Self::Fr];

    /// `"en"`, `"nl"` …
    pub const fn code(self) -> &'static str {
        match self {
            Self::En => "en",
            Self::Nl => "nl",
            Self::De => "de",
            Self::Af => "af",
            Self::Fr => "fr",
        }
    }

    /// The letter for a piece (pawns have none).
    pub(crate) const fn letter(self, role: Role) -> Option<char> {
        // King, queen, rook, bishop, knight, as appendix C.3 lists them
        // (and rules.md N2 for French).
        let letters = match self {
            Self::En => ['K', 'Q', 'R', 'B', 'N'],
            Self::Nl => ['K', 'D', 'T', 'L', 'P'],
            Self::De => ['K', 'D', 'T', 'L', 'S'],
            Self::Af => ['K', 'D', 'T', 'L', 'R'],
            Self::Fr => ['R', 'D', 'T', 'F', 'C'],
        };
        match role {
            Role::King => Some(letters[0]),
            Role::Queen => Some(letters[1]),
            Role::Rook => Some(letters[2]),
            Role::Bishop => Some(letters[3]),
            Role::Knight => Some(letters[4]),
            Role::Pawn => None,
        }
    }
}

impl std::str::FromStr for Language {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|l| l.code() == s).ok_or_else(|| format!("{s:?} is not one of en, nl, de, af, fr"))
    }
}

/// A legal move from `before` in `language`'s piece letters: `Sf3`,
/// `exd8=D#`, `O-O`.
pub(crate) fn localized(before: &Chess, m: Move, language: Language) -> String {
    let san = SanPlus::from_move(before.clone(), m).to_string();
    translate(&san, language)
}

/// SAN-like text (English letters) in `language`'s letters. Only capitals
/// are piece letters in SAN (files are lower case, castling is `O`), so
/// the translation is letter by letter.
pub(crate) fn translate(san: &str, language: Language) -> String {
    san.chars()
        .map(|c| {
            let role = match c {
                'K' => Role::King,
                'Q' => Role::Queen,
                'R' => Role::Rook,
                'B' => Role::Bishop,
                'N' => Role::Knight,
                _ => return c,
            };
            language.letter(role).unwrap_or(c)
        })
        .collect()
}

/// `"white"` or `"black"`.
pub(crate) const fn color_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    fn mv(pos: &Chess, san: &str) -> Move {
        san.parse::<SanPlus>().unwrap().san.to_move(pos).unwrap()
    }

    #[test]
    fn piece_letters_follow_appendix_c_in_every_language() {
        let pos = Chess::default();
        let knight = mv(&pos, "Nf3");
        let expected = [("en", "Nf3"), ("nl", "Pf3"), ("de", "Sf3"), ("af", "Rf3"), ("fr", "Cf3")];
        for (language, (code, text)) in Language::ALL.into_iter().zip(expected) {
            assert_eq!(language.code(), code);
            assert_eq!(localized(&pos, knight, language), text);
        }
        // Pawns have no letter; files stay; promotion, capture, check and
        // disambiguation carry over.
        let pos = position("r3k2r/1P6/8/8/8/8/8/R3K2R w KQkq - 0 1");
        assert_eq!(localized(&pos, mv(&pos, "bxa8=Q+"), Language::Nl), "bxa8=D+");
        assert_eq!(localized(&pos, mv(&pos, "bxa8=N"), Language::De), "bxa8=S");
        assert_eq!(localized(&pos, mv(&pos, "O-O-O"), Language::Fr), "O-O-O");
        assert_eq!(localized(&pos, mv(&pos, "Kf1"), Language::Fr), "Rf1");
        let pos = position("k7/8/8/8/8/8/K7/R6R w - - 0 1");
        assert_eq!(localized(&pos, mv(&pos, "Rhd1"), Language::Af), "Thd1");
        let pos = position("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1");
        assert_eq!(localized(&pos, mv(&pos, "Ra8#"), Language::Fr), "Ta8#");
        assert_eq!(translate("Bb5", Language::Fr), "Fb5");
    }
}
