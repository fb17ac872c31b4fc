//! Moves rendered for people: in the piece letters of the audience's
//! language (rules.md N2, Laws appendix C.2–C.3), and as the spoken
//! announcement of appendix D.2.1 for visually impaired players (N3).
//!
//! Both start from the move itself, not from a SAN string, so that
//! disambiguation, captures, promotion and check are always right.

use std::fmt::Write as _;

use shakmaty::{Chess, Color, File, Move, Position, Rank, Role, Square, san::SanPlus};

use crate::game::IllegalMove;

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
    pub const fn letter(self, role: Role) -> Option<char> {
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

/// The spoken announcement of a legal move from `before` (appendix
/// D.2.1): the piece, the square it leaves and the square it goes to, in
/// the recommended words, e.g. `Springer Gustav eins Felix drei`,
/// `Bauer Eva fünf schlägt David sechs en passant`, `Kurze Rochade`,
/// `Bauer Gustav sieben Gustav acht Dame Schach`.
///
/// D.2.1 fixes the names of files, ranks, pieces and castling; the words
/// for a capture (`schlägt`), check (`Schach`) and mate (`Matt`) are the
/// usual German ones that go with them.
pub fn spoken(before: &Chess, m: Move) -> String {
    let mut after = before.clone();
    after.play_unchecked(m);
    let mut out = match m {
        Move::Castle { king, rook } => {
            if rook.file() > king.file() {
                "Kurze Rochade".to_owned()
            } else {
                "Lange Rochade".to_owned()
            }
        }
        Move::Normal { role, from, capture, to, promotion } => {
            let mut text = format!("{} {}", piece_word(role), square_words(from));
            text.push_str(if capture.is_some() { " schlägt " } else { " " });
            text.push_str(&square_words(to));
            if let Some(promoted) = promotion {
                let _ = write!(text, " {}", piece_word(promoted));
            }
            text
        }
        Move::EnPassant { from, to } => {
            format!("{} {} schlägt {} en passant", piece_word(Role::Pawn), square_words(from), square_words(to))
        }
        Move::Put { role, to } => format!("{} {}", piece_word(role), square_words(to)),
    };
    if after.is_checkmate() {
        out.push_str(" Matt");
    } else if after.is_check() {
        out.push_str(" Schach");
    }
    out
}

/// The spoken announcement of an illegal move that stood (A.5.2), as far
/// as the board showed it.
pub(crate) fn spoken_illegal(mv: &IllegalMove) -> String {
    let mut text = piece_word(mv.piece.role).to_owned();
    if let Some(from) = mv.from {
        let _ = write!(text, " {}", square_words(from));
    }
    if mv.capture {
        text.push_str(" schlägt");
    }
    if let Some(to) = mv.to {
        let _ = write!(text, " {}", square_words(to));
    }
    text
}

/// The word for a piece (D.2.1).
pub(crate) const fn piece_word(role: Role) -> &'static str {
    match role {
        Role::King => "König",
        Role::Queen => "Dame",
        Role::Rook => "Turm",
        Role::Bishop => "Läufer",
        Role::Knight => "Springer",
        Role::Pawn => "Bauer",
    }
}

/// `Felix drei` for f3 (D.2.1: the files by name, the ranks in German
/// numbers counted from White's side).
pub(crate) fn square_words(square: Square) -> String {
    format!("{} {}", file_word(square.file()), rank_word(square.rank()))
}

const fn file_word(file: File) -> &'static str {
    match file {
        File::A => "Anna",
        File::B => "Bella",
        File::C => "Cesar",
        File::D => "David",
        File::E => "Eva",
        File::F => "Felix",
        File::G => "Gustav",
        File::H => "Hector",
    }
}

const fn rank_word(rank: Rank) -> &'static str {
    match rank {
        Rank::First => "eins",
        Rank::Second => "zwei",
        Rank::Third => "drei",
        Rank::Fourth => "vier",
        Rank::Fifth => "fünf",
        Rank::Sixth => "sechs",
        Rank::Seventh => "sieben",
        Rank::Eighth => "acht",
    }
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

    #[test]
    fn spoken_announcements_use_the_words_of_appendix_d() {
        let pos = Chess::default();
        assert_eq!(spoken(&pos, mv(&pos, "Nf3")), "Springer Gustav eins Felix drei");
        assert_eq!(spoken(&pos, mv(&pos, "e4")), "Bauer Eva zwei Eva vier");
        let pos = position("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1");
        assert_eq!(spoken(&pos, mv(&pos, "exd6")), "Bauer Eva fünf schlägt David sechs en passant");
        assert_eq!(spoken(&pos, mv(&pos, "O-O")), "Kurze Rochade");
        assert_eq!(spoken(&pos, mv(&pos, "O-O-O")), "Lange Rochade");
        let pos = position("4k3/6P1/8/8/8/8/8/4K3 w - - 0 1");
        assert_eq!(spoken(&pos, mv(&pos, "g8=Q+")), "Bauer Gustav sieben Gustav acht Dame Schach");
        let pos = position("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1");
        assert_eq!(spoken(&pos, mv(&pos, "Ra8#")), "Turm Anna eins Anna acht Matt");
        let pos = position("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1");
        assert_eq!(spoken(&pos, mv(&pos, "Kxd2")), "König Eva eins schlägt David zwei");
    }

    #[test]
    fn every_square_has_its_name() {
        assert_eq!(square_words(Square::A1), "Anna eins");
        assert_eq!(square_words(Square::H8), "Hector acht");
        assert_eq!(square_words(Square::C5), "Cesar fünf");
        assert_eq!(square_words(Square::B7), "Bella sieben");
    }
}
