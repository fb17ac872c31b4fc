//! Pairings read from a real round's tournament report (TRF16) and from a
//! CSV: every board's players, ratings, ids and titles as the source has
//! them, in the board order the event published; bad lines are refused
//! with their line number and field.

use boardcast_core::pairings::{Pairing, Pairings, PairingsError};

const TRF: &str = include_str!("../../../../tests/fixtures/pairings/ch-rus-hl-w-2012-round4.trf");
const CSV: &str = include_str!("../../../../tests/fixtures/pairings/wgp-kazan-2012-round10.csv");

/// Round 4 as TWIC published it (`Round "4.<board>"`): White, Elo, title,
/// FIDE id, then Black's.
type Board = (&'static str, u16, &'static str, u64, &'static str, u16, &'static str, u64);
const ROUND_4: [Board; 16] = [
    ("Kovanova,B", 2391, "WGM", 4164083, "Girya,O", 2414, "WGM", 4195752),
    ("Iljushina,O", 2354, "WGM", 4152280, "Ubiennykh,E", 2336, "WIM", 4137582),
    ("Romanko,M", 2420, "IM", 4149351, "Timofeeva,Ekaterina", 2273, "WIM", 4193172),
    ("Pustovoitova,D", 2307, "FM", 4182146, "Pogonina,N", 2447, "WGM", 4147855),
    ("Kovalevskaya,E", 2417, "IM", 4116704, "Vasilevich,I", 2375, "IM", 4141296),
    ("Severiukhina,Z", 2337, "WGM", 24108065, "Ivakhinova,I", 2306, "WIM", 4185641),
    ("Schepetkova,M", 2181, "", 4189949, "Gubernatorova,L", 2243, "", 4123840),
    ("Ovod,E", 2410, "IM", 4131827, "Bodnaruk,A", 2394, "IM", 4181751),
    ("Shadrina,T", 2359, "WGM", 4119118, "Drozdova,D", 2256, "", 4170695),
    ("Zaiatz,E", 2446, "IM", 4139518, "Kabanova,E", 2164, "WFM", 24112917),
    ("Cheremnova,T", 2245, "WFM", 4175026, "Sazonova,A", 1963, "", 24131008),
    ("Sukhareva,E", 2236, "", 4167155, "Rassokhina,E", 2080, "WFM", 24117978),
    ("Sazonova,E", 2159, "WIM", 4109767, "Butuc,M", 2201, "WIM", 13902911),
    ("Dotdaeva,A", 2139, "WFM", 4180976, "Likhovid,E", 2030, "", 4171764),
    ("Korchagina,V", 2098, "WFM", 4197224, "Korchenkova,I", 2088, "WFM", 24116319),
    ("Manina,K", 1987, "", 24114820, "Adamova,T", 1914, "", 24142050),
];

#[test]
fn a_real_rounds_report_gives_every_board_as_the_event_numbered_it() {
    let pairings = Pairings::parse(TRF).unwrap();
    let Pairings::Trf(tournament) = &pairings else { panic!("read as a CSV") };
    assert_eq!(tournament.name.as_deref(), Some("62nd ch-RUS HL w"));
    assert_eq!(tournament.players.len(), 32);
    let round = pairings.round("4").unwrap();
    assert_eq!(round.len(), 16);
    for (pairing, expected) in round.iter().zip(1..).zip(ROUND_4) {
        let ((pairing, board), (white, white_elo, white_title, white_id, black, black_elo, black_title, black_id)) =
            (pairing, expected);
        assert_eq!(pairing.board, board);
        let tags = pairing.tags();
        let title = |t: &str| t.to_owned();
        assert_eq!(
            [&tags["White"], &tags["WhiteElo"], &tags["WhiteTitle"], &tags["WhiteFideId"]],
            [&white.to_owned(), &white_elo.to_string(), &title(white_title), &white_id.to_string()],
            "board {board}"
        );
        assert_eq!(
            [&tags["Black"], &tags["BlackElo"], &tags["BlackTitle"], &tags["BlackFideId"]],
            [&black.to_owned(), &black_elo.to_string(), &title(black_title), &black_id.to_string()],
            "board {board}"
        );
        assert_eq!((tags["WhiteFed"].as_str(), tags["BlackFed"].as_str()), ("", ""), "no federation in the source");
    }
    // The rounds already played are there too: round 1's top board.
    let round_1 = pairings.round("1").unwrap();
    assert_eq!((round_1[0].white.name.as_str(), round_1[0].black.name.as_str()), ("Pogonina,N", "Timofeeva,Ekaterina"));
    let missing = pairings.round("5").unwrap_err();
    assert_eq!(missing.to_string(), "the file has no pairings for round \"5\" (rounds 1 to 4)");
}

#[test]
fn a_csv_gives_its_boards_with_federations() {
    let pairings = Pairings::parse(CSV).unwrap();
    let round = pairings.round("10").unwrap();
    assert_eq!(round.len(), 6);
    let first: &Pairing = &round[0];
    assert_eq!(first.board, 1);
    let tags = first.tags();
    assert_eq!(tags["White"], "Muzychuk, Anna");
    assert_eq!(tags["WhiteFed"], "SLO");
    assert_eq!(tags["Black"], "Hou, Yifan");
    assert_eq!(tags["BlackElo"], "2623");
    assert_eq!(tags["BlackFideId"], "8602980");
    assert_eq!(round[3].white.title.as_deref(), Some("WGM"));
    assert_eq!(round[5].black.federation.as_deref(), Some("RUS"));
}

/// The fixture with line `n` (from 1) replaced.
fn with_line(n: usize, line: &str) -> String {
    let mut lines: Vec<&str> = TRF.split("\r\n").collect();
    lines[n - 1] = line;
    lines.join("\r\n")
}

#[test]
fn bad_report_lines_are_refused_with_their_line_and_columns() {
    let line_7 = TRF.split("\r\n").nth(6).unwrap().to_owned();
    let bad_rating = line_7.replacen("2447", "24x7", 1);
    let error = Pairings::parse(&with_line(7, &bad_rating)).unwrap_err();
    assert!(
        matches!(&error, PairingsError::Field { line: 7, field, .. } if field == "rating (columns 49-52)"),
        "{error}"
    );
    assert!(error.to_string().starts_with("line 7: rating (columns 49-52) \"24x7\""), "{error}");
    let bad_colour = line_7.replacen("16 w =", "16 x =", 1);
    let error = Pairings::parse(&with_line(7, &bad_colour)).unwrap_err().to_string();
    assert_eq!(error, "line 7: round 1 colour (column 97) \"x\": w, b or -");
    let bad_result = line_7.replacen("22 b =", "22 b ?", 1);
    let error = Pairings::parse(&with_line(7, &bad_result)).unwrap_err().to_string();
    assert!(error.starts_with("line 7: round 2 result (column 109) \"?\""), "{error}");
    // Player 1's round 4 opponent changed to someone who does not name her.
    let wrong = line_7.replacen("14 b", "15 b", 1);
    let error = Pairings::parse(&with_line(7, &wrong)).unwrap().round("4").unwrap_err().to_string();
    assert!(error.contains("round 4: player 1 plays 15 with Black, but player 15's line does not say so"), "{error}");
    let twice = Pairings::parse(&format!("{TRF}{line_7}\r\n")).unwrap_err().to_string();
    assert_eq!(twice, "line 39: starting rank 1 is on line 7 already");
}

#[test]
fn byes_give_no_board_and_forfeits_keep_theirs() {
    // Round 4 with player 1 given a half-point bye and her opponent a
    // pairing-allocated bye; board 2 forfeited.
    let lines: Vec<String> = TRF
        .split("\r\n")
        .map(|l| {
            if l.starts_with("001    1 ") {
                l.replacen("  14 b", "0000 - H", 1)
            } else if l.starts_with("001   14 ") {
                l.replacen("   1 w", "0000 - U", 1)
            } else if l.starts_with("001   11 ") {
                format!("{l} +")
            } else if l.starts_with("001   13 ") {
                format!("{l} -")
            } else {
                l.to_owned()
            }
        })
        .collect();
    let round = Pairings::parse(&lines.join("\r\n")).unwrap().round("4").unwrap();
    assert_eq!(round.len(), 15);
    assert!(!round.iter().any(|p| p.white.name == "Pustovoitova,D" || p.black.name == "Pogonina,N"));
    assert_eq!(round[1].white.name, "Iljushina,O", "a forfeited game was paired: its board stays");
    assert_eq!(round.iter().map(|p| p.board).collect::<Vec<_>>(), (1..=15).collect::<Vec<_>>());
}

#[test]
fn bad_csv_rows_are_refused_with_their_line_and_column() {
    let error = Pairings::parse(&CSV.replace("2598", "25x8")).unwrap_err().to_string();
    assert_eq!(error, "line 3: column white_elo \"25x8\": a rating (digits), or empty");
    let error = Pairings::parse(&CSV.replace("TUR", "Turkey")).unwrap_err().to_string();
    assert_eq!(error, "line 6: column white_fed \"Turkey\": three letters (NOR), or empty");
    let error = Pairings::parse(&CSV.replace("\n2,", "\n1,")).unwrap_err().to_string();
    assert_eq!(error, "line 4: board 1 is on line 3 already");
    let error = Pairings::parse("Board;White;Black\n1;A;\n").unwrap_err().to_string();
    assert_eq!(error, "line 2: column black \"\": the player's name");
    assert_eq!(Pairings::parse("hello\n").unwrap_err(), PairingsError::Unknown);
}
