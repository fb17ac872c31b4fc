//! Moves and results as words to be spoken (rules.md N3, Laws appendix
//! D.2.1): `Springer Gustav eins Felix drei`, in each display language.
//!
//! What the Laws say, in every translation we have: D.2.1 of the Dutch
//! 2023 and German 2017 texts (and of the English original) recommends the
//! same words whatever the language of the tournament: the files as the
//! names Anna … Hector, the ranks as the German numbers eins … acht
//! ("unless the arbiter decides otherwise"), castling as `Lange Rochade`
//! and `Kurze Rochade`, and the pieces as König, Dame, Turm, Läufer,
//! Springer, Bauer. The Afrikaans 2005 text leaves the appendix for blind
//! players untranslated and refers to the English one. So the
//! announcement the Laws recommend is [`Language::De`]'s, in every
//! country.
//!
//! The other languages are for when the arbiter decides otherwise, or for
//! an audience: each language's own words for pieces, numbers, capture,
//! castling, check and mate, taken from its translation of the Laws
//! (appendix C's notation and article 2.2's piece names; see the tests for
//! file and line), with French from common French chess usage (there is
//! no French translation among the Laws we were given). The files keep
//! their appendix D names in every language: no translation gives others.

use std::fmt::Write as _;

use shakmaty::{Chess, Color, File, KnownOutcome, Move, Position, Rank, Role, Square};

use super::render::Language;
use crate::game::{GameResult, IllegalMove};

/// One language's words for an announcement.
struct Words {
    /// King, queen, rook, bishop, knight, pawn.
    pieces: [&'static str; 6],
    /// The ranks, from White's side.
    ranks: [&'static str; 8],
    /// Between the square left and the square taken.
    takes: &'static str,
    /// After an en passant capture.
    en_passant: &'static str,
    /// Castling with the h-side rook, then with the a-side rook.
    castles: [&'static str; 2],
    /// After a move that gives check, then mate.
    check: [&'static str; 2],
    /// White won, Black won, a draw.
    results: [&'static str; 3],
}

const fn words(language: Language) -> &'static Words {
    match language {
        Language::En => &EN,
        Language::Nl => &NL,
        Language::De => &DE,
        Language::Af => &AF,
        Language::Fr => &FR,
    }
}

/// English: the notation of appendix C.13 of the English Laws (`x =
/// captures`, `kingside castling`, `+ = check`, `# = checkmate`).
const EN: Words = Words {
    pieces: ["King", "Queen", "Rook", "Bishop", "Knight", "Pawn"],
    ranks: ["one", "two", "three", "four", "five", "six", "seven", "eight"],
    takes: "captures",
    en_passant: "en passant",
    castles: ["Kingside castling", "Queenside castling"],
    check: ["check", "checkmate"],
    results: ["White wins", "Black wins", "Draw"],
};

/// Dutch (KNSB 2023): pieces from article 2.2, `slaan`, `korte rokade`,
/// `schaak`, `mat` from C.13, `remise` from article 9.
const NL: Words = Words {
    pieces: ["Koning", "Dame", "Toren", "Loper", "Paard", "Pion"],
    ranks: ["een", "twee", "drie", "vier", "vijf", "zes", "zeven", "acht"],
    takes: "slaat",
    en_passant: "en passant",
    castles: ["Korte rokade", "Lange rokade"],
    check: ["schaak", "mat"],
    results: ["Wit wint", "Zwart wint", "Remise"],
};

/// German (2017): appendix D.2.1's words (pieces, ranks, castling), and
/// `schlägt` and `Schach` from C.13 (`Matt`: its `Schachmatt` as said at
/// the board), `Remis` from article 9. This is
/// the announcement the Laws recommend in every language.
const DE: Words = Words {
    pieces: ["König", "Dame", "Turm", "Läufer", "Springer", "Bauer"],
    ranks: ["eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht"],
    takes: "schlägt",
    en_passant: "en passant",
    castles: ["Kurze Rochade", "Lange Rochade"],
    check: ["Schach", "Matt"],
    results: ["Weiß gewinnt", "Schwarz gewinnt", "Remis"],
};

/// Afrikaans (2005): pieces from article 2.2, `buit`, `koningskant`,
/// `skaak`, `skaakmat` from appendix E's abbreviations, `gelykop` from
/// article 9.
const AF: Words = Words {
    pieces: ["Koning", "Dame", "Toring", "Loper", "Ruiter", "Pion"],
    ranks: ["een", "twee", "drie", "vier", "vyf", "ses", "sewe", "agt"],
    takes: "buit",
    en_passant: "en passant",
    castles: ["Rokering koningskant", "Rokering dameskant"],
    check: ["skaak", "skaakmat"],
    results: ["Wit wen", "Swart wen", "Gelykop"],
};

/// French: common French chess words (not from a translation of the Laws
/// we were given).
const FR: Words = Words {
    pieces: ["Roi", "Dame", "Tour", "Fou", "Cavalier", "Pion"],
    ranks: ["un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit"],
    takes: "prend",
    en_passant: "en passant",
    castles: ["Petit roque", "Grand roque"],
    check: ["échec", "échec et mat"],
    results: ["Les blancs gagnent", "Les noirs gagnent", "Partie nulle"],
};

/// The spoken announcement of a legal move from `before` in the words of
/// appendix D.2.1 (German, as the Laws recommend in every language): the
/// piece, the square it leaves and the square it goes to, e.g. `Springer
/// Gustav eins Felix drei`, `Bauer Eva fünf schlägt David sechs en
/// passant`, `Kurze Rochade`, `Bauer Gustav sieben Gustav acht Dame
/// Schach`.
pub(crate) fn spoken(before: &Chess, m: Move) -> String {
    spoken_in(before, m, Language::De)
}

/// The announcement of a legal move from `before` in `language`'s words:
/// `Knight Gustav one Felix three`, `Paard Gustav een Felix drie`.
pub fn spoken_in(before: &Chess, m: Move, language: Language) -> String {
    let w = words(language);
    let mut after = before.clone();
    after.play_unchecked(m);
    let mut out = match m {
        Move::Castle { king, rook } => w.castles[usize::from(rook.file() < king.file())].to_owned(),
        Move::Normal { role, from, capture, to, promotion } => {
            let mut text = format!("{} {}", piece(w, role), square(w, from));
            if capture.is_some() {
                let _ = write!(text, " {}", w.takes);
            }
            let _ = write!(text, " {}", square(w, to));
            if let Some(promoted) = promotion {
                let _ = write!(text, " {}", piece(w, promoted));
            }
            text
        }
        Move::EnPassant { from, to } => {
            format!("{} {} {} {} {}", piece(w, Role::Pawn), square(w, from), w.takes, square(w, to), w.en_passant)
        }
        Move::Put { role, to } => format!("{} {}", piece(w, role), square(w, to)),
    };
    if after.is_checkmate() {
        let _ = write!(out, " {}", w.check[1]);
    } else if after.is_check() {
        let _ = write!(out, " {}", w.check[0]);
    }
    out
}

/// The spoken announcement of an illegal move that stood (A.5.2), as far
/// as the board showed it, in appendix D's (German) words.
pub(crate) fn spoken_illegal(mv: &IllegalMove) -> String {
    spoken_illegal_in(mv, Language::De)
}

/// [`spoken_illegal`] in `language`'s words.
pub(crate) fn spoken_illegal_in(mv: &IllegalMove, language: Language) -> String {
    let w = words(language);
    let mut text = piece(w, mv.piece.role).to_owned();
    if let Some(from) = mv.from {
        let _ = write!(text, " {}", square(w, from));
    }
    if mv.capture {
        let _ = write!(text, " {}", w.takes);
    }
    if let Some(to) = mv.to {
        let _ = write!(text, " {}", square(w, to));
    }
    text
}

/// A result in words: `Weiß gewinnt`, `Draw`.
pub(crate) fn spoken_result(result: &GameResult, language: Language) -> &'static str {
    let w = words(language);
    match result.outcome {
        KnownOutcome::Decisive { winner: Color::White } => w.results[0],
        KnownOutcome::Decisive { winner: Color::Black } => w.results[1],
        KnownOutcome::Draw => w.results[2],
    }
}

const fn piece(w: &Words, role: Role) -> &'static str {
    match role {
        Role::King => w.pieces[0],
        Role::Queen => w.pieces[1],
        Role::Rook => w.pieces[2],
        Role::Bishop => w.pieces[3],
        Role::Knight => w.pieces[4],
        Role::Pawn => w.pieces[5],
    }
}

/// `Felix drei` for f3: the file by its appendix D name, the rank as a
/// number counted from White's side.
fn square(w: &Words, square: Square) -> String {
    format!("{} {}", file_word(square.file()), w.ranks[usize::from(square.rank())])
}

#[cfg(test)]
/// `Felix drei` for f3 in the words of appendix D.2.1.
pub(crate) fn square_words(sq: Square) -> String {
    square(&DE, sq)
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

// The rank index above relies on shakmaty numbering ranks from White's
// side, 0 to 7.
const _: () = assert!(Rank::First as usize == 0 && Rank::Eighth as usize == 7);

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen, san::SanPlus};

    use super::*;
    use crate::game::Termination;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    fn mv(pos: &Chess, san: &str) -> Move {
        san.parse::<SanPlus>().unwrap().san.to_move(pos).unwrap()
    }

    /// The same moves in every language: a knight move, a pawn move, en
    /// passant, both castlings, promotion with check, mate, a capture.
    fn announcements(language: Language) -> Vec<String> {
        let mut said = Vec::new();
        let pos = Chess::default();
        said.push(spoken_in(&pos, mv(&pos, "Nf3"), language));
        said.push(spoken_in(&pos, mv(&pos, "e4"), language));
        let pos = position("r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1");
        said.push(spoken_in(&pos, mv(&pos, "exd6"), language));
        said.push(spoken_in(&pos, mv(&pos, "O-O"), language));
        said.push(spoken_in(&pos, mv(&pos, "O-O-O"), language));
        let pos = position("4k3/6P1/8/8/8/8/8/4K3 w - - 0 1");
        said.push(spoken_in(&pos, mv(&pos, "g8=Q+"), language));
        let pos = position("6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1");
        said.push(spoken_in(&pos, mv(&pos, "Ra8#"), language));
        let pos = position("4k3/8/8/8/8/8/3q4/4K3 w - - 0 1");
        said.push(spoken_in(&pos, mv(&pos, "Kxd2"), language));
        said
    }

    #[test]
    fn german_is_appendix_d_as_every_translation_of_the_laws_gives_it() {
        // seeds/001 (German 2017) lines 519–537, D.2.1: "A - Anna" …
        // "H - Hector"; "1 - eins" … "8 - acht"; "Die Rochade wird mit den
        // deutschen Bezeichnungen "Lange Rochade" und "Kurze Rochade"
        // angesagt."; "Die Figuren tragen folgende Namen: König, Dame, Turm,
        // Läufer, Springer, Bauer." The Dutch 2023 text (seeds/000 lines
        // 493–511) prescribes the same words ("krijgen de rijen van wit naar
        // zwart de Duitse getallen", "met de Duitse benamingen 'Lange
        // Rochade' of 'Kurze Rochade'", "De stukken dragen de namen: König,
        // Dame, Turm, Läufer, Springer en Bauer."). Capture, check and mate
        // are C.13's "x = schlagen", "+ = Schach", "++ oder # = Schachmatt"
        // (seeds/001 lines 490–494; D.2.1 leaves them to the language; the
        // short "Matt" is what was published before and is said at boards).
        assert_eq!(
            announcements(Language::De),
            [
                "Springer Gustav eins Felix drei",
                "Bauer Eva zwei Eva vier",
                "Bauer Eva fünf schlägt David sechs en passant",
                "Kurze Rochade",
                "Lange Rochade",
                "Bauer Gustav sieben Gustav acht Dame Schach",
                "Turm Anna eins Anna acht Matt",
                "König Eva eins schlägt David zwei",
            ]
        );
        let pos = Chess::default();
        assert_eq!(spoken(&pos, mv(&pos, "Nf3")), "Springer Gustav eins Felix drei");
    }

    #[test]
    fn dutch_uses_the_words_of_the_dutch_laws() {
        // seeds/000 (Dutch 2023) lines 80–85, article 2.2: "een koning",
        // "een dame", "twee torens", "twee lopers", "twee paarden", "acht
        // pionnen"; lines 469–473, C.13: "(korte rokade)", "(lange
        // rokade)", "x = slaan", "+ = schaak", "++ of # = mat"; D.2.1 (lines
        // 493–511) itself prescribes the German words, as for `De`.
        assert_eq!(
            announcements(Language::Nl),
            [
                "Paard Gustav een Felix drie",
                "Pion Eva twee Eva vier",
                "Pion Eva vijf slaat David zes en passant",
                "Korte rokade",
                "Lange rokade",
                "Pion Gustav zeven Gustav acht Dame schaak",
                "Toren Anna een Anna acht mat",
                "Koning Eva een slaat David twee",
            ]
        );
    }

    #[test]
    fn afrikaans_uses_the_words_of_the_afrikaans_laws() {
        // seeds/003 (Afrikaans 2005) lines 52–63, article 2.2: "Koning",
        // "Dame", "Toring", "Loper", "Ruiter", "Pion"; lines 856–870,
        // "BELANGRIKSTE AFKORTINGS": "0-0 Rokering … (koningskant)",
        // "0-0-0 Rokering … (dameskant)", "x buit / neem", "+ skaak",
        // "# skaakmat". (Its appendix for blind players is not translated:
        // lines 532–533 refer readers to the English text.)
        assert_eq!(
            announcements(Language::Af),
            [
                "Ruiter Gustav een Felix drie",
                "Pion Eva twee Eva vier",
                "Pion Eva vyf buit David ses en passant",
                "Rokering koningskant",
                "Rokering dameskant",
                "Pion Gustav sewe Gustav agt Dame skaak",
                "Toring Anna een Anna agt skaakmat",
                "Koning Eva een buit David twee",
            ]
        );
    }

    #[test]
    fn english_uses_the_notation_words_of_the_english_laws() {
        // The English Laws (FIDE, 2023), C.13: "0-0 = castling with rook h1
        // or rook h8 (kingside castling)", "x = captures", "+ = check",
        // "++ or # = checkmate".
        assert_eq!(
            announcements(Language::En),
            [
                "Knight Gustav one Felix three",
                "Pawn Eva two Eva four",
                "Pawn Eva five captures David six en passant",
                "Kingside castling",
                "Queenside castling",
                "Pawn Gustav seven Gustav eight Queen check",
                "Rook Anna one Anna eight checkmate",
                "King Eva one captures David two",
            ]
        );
    }

    #[test]
    fn french_uses_common_french_chess_words() {
        assert_eq!(
            announcements(Language::Fr),
            [
                "Cavalier Gustav un Felix trois",
                "Pion Eva deux Eva quatre",
                "Pion Eva cinq prend David six en passant",
                "Petit roque",
                "Grand roque",
                "Pion Gustav sept Gustav huit Dame échec",
                "Tour Anna un Anna huit échec et mat",
                "Roi Eva un prend David deux",
            ]
        );
    }

    #[test]
    fn results_are_said_in_words() {
        let result = |outcome| GameResult { outcome, termination: Termination::Checkmate };
        let white = result(KnownOutcome::Decisive { winner: Color::White });
        let black = result(KnownOutcome::Decisive { winner: Color::Black });
        let draw = GameResult { outcome: KnownOutcome::Draw, termination: Termination::Stalemate };
        assert_eq!(spoken_result(&white, Language::De), "Weiß gewinnt");
        assert_eq!(spoken_result(&black, Language::Nl), "Zwart wint");
        // seeds/003 line 43: "is die spel gelykop"; seeds/000 line 24,
        // "Artikel 9: Remise".
        assert_eq!(spoken_result(&draw, Language::Af), "Gelykop");
        assert_eq!(spoken_result(&draw, Language::Nl), "Remise");
        assert_eq!(spoken_result(&white, Language::En), "White wins");
        assert_eq!(spoken_result(&draw, Language::Fr), "Partie nulle");
    }

    #[test]
    fn every_square_has_its_name() {
        assert_eq!(square_words(Square::A1), "Anna eins");
        assert_eq!(square_words(Square::H8), "Hector acht");
        assert_eq!(square_words(Square::C5), "Cesar fünf");
        assert_eq!(square_words(Square::B7), "Bella sieben");
    }
}
