//! The Bluetooth LE families added after Chessnut and the Pegasus, from
//! notification bytes to moves (`ble.rs` has those two):
//!
//! 1. iChessOne and ChessUp name every piece: every game of the corpus,
//!    played with a hall's hands and talked to by the family's own link
//!    (a ChessUp's every move acknowledged, or the simulated board gives
//!    up on the host), comes back move for move with no false alert.
//! 2. Every message of every Bluetooth LE family may be cut anywhere by
//!    the notifications: a stream of each family's messages decodes to the
//!    same items under any cuts, and survives any bytes.

use crate::support::chunks::{config, split};
use boardcast_core::{
    capture::CaptureReader,
    protocol::{BoardDecoder, Decoded, FAMILIES, Protocol, chessup, ichessone, squareoff},
    reconstruct::ReconstructorConfig,
    replay::replay,
    sensor::Picture,
};
use boardcast_sim::synth::{ReportForm, Style, header, link_capture, play, rng_for};
use proptest::{collection::vec, prelude::*, sample::Index};
use shakmaty::{Chess, Position, Square};

/// One game through a board of `protocol` that names its pieces.
fn check_pieces(game: &crate::support::CorpusGame, protocol: Protocol) -> Result<(), String> {
    let mut rng = rng_for(crate::support::corpus_seed(), game.index);
    let mut style = Style::varied(&mut rng);
    style.clock = None;
    let stream = play(&game.game, &style, &mut rng);
    let form = ReportForm { every: std::time::Duration::from_millis(50), split: 0.5, ..ReportForm::varied(&mut rng) };
    let capture = link_capture(&header(&game.game, protocol, &game.name()), &stream.events, form, &mut rng);
    let replayed = replay(&capture, &ReconstructorConfig::default()).map_err(|e| e.to_string())?;
    crate::support::same_game(&replayed, &stream.expected)
        .map_err(|e| format!("{} ({protocol}): {e}\n{}", game.name(), crate::support::trace(&replayed)))
}

fn every_game_from(protocol: Protocol) {
    let corpus = crate::support::corpus();
    let only = std::env::var("BOARDCAST_CORPUS_ONLY").ok();
    let failures: Vec<String> = corpus
        .iter()
        .filter(|game| only.as_ref().is_none_or(|o| *o == game.name()))
        .filter_map(|game| check_pieces(game, protocol).err())
        .collect();
    if let Some(first) = failures.first() {
        let shown: Vec<&str> = failures.iter().take(3).map(|f| f.lines().next().unwrap_or_default()).collect();
        panic!("{} of {} games failed; first ones:\n{}\n\n{first}", failures.len(), corpus.len(), shown.join("\n"));
    }
}

#[test]
fn every_game_comes_back_from_ichessone_notifications() {
    every_game_from(Protocol::ICHESSONE);
}

#[test]
fn every_game_comes_back_from_chessup_notifications_each_move_acknowledged() {
    every_game_from(Protocol::CHESSUP);
}

/// The link writes a ChessUp's acknowledgements: in a synthesized capture
/// every move message the board sent is followed by a `21` the host wrote,
/// before the next move message.
#[test]
fn a_chessup_capture_acknowledges_every_move() {
    let game = &crate::support::corpus()[0];
    let mut rng = rng_for(crate::support::corpus_seed(), game.index);
    let mut style = Style::varied(&mut rng);
    style.clock = None;
    let stream = play(&game.game, &style, &mut rng);
    let capture =
        link_capture(&header(&game.game, Protocol::CHESSUP, "t"), &stream.events, ReportForm::clean(), &mut rng);
    let (mut moves, mut acks, mut waiting) = (0, 0, false);
    for record in CaptureReader::new(&capture).unwrap() {
        match record.unwrap().body {
            boardcast_core::capture::RecordBody::Rx(bytes) if bytes[0] == chessup::MOVE => {
                assert!(!waiting, "a move message before the last one was acknowledged");
                moves += 1;
                waiting = true;
            }
            boardcast_core::capture::RecordBody::Tx(bytes) if bytes == [chessup::MOVE_ACK] => {
                acks += 1;
                waiting = false;
            }
            _ => {}
        }
    }
    assert!(moves >= game.game.moves.len(), "{moves} move messages");
    assert_eq!(acks, moves);
}

/// Positions along a short game (for the families that send positions).
fn positions(plies: usize) -> Vec<Picture> {
    let mut pos = Chess::default();
    let mut out = vec![Picture::from_board(pos.board())];
    for ply in 0..plies {
        let moves = pos.legal_moves();
        let m = moves[ply * 7 % moves.len()];
        pos.play_unchecked(m);
        out.push(Picture::from_board(pos.board()));
    }
    out
}

/// A stream of each message the family's decoder reads, with garbage
/// between some.
fn messages(protocol: Protocol) -> Vec<u8> {
    let pictures = positions(6);
    let parts: Vec<Vec<u8>> = match protocol.name() {
        "squareoff" => pictures
            .iter()
            .map(|p| squareoff::board_message(p.occupied()))
            .chain([squareoff::square_message(Square::E2, false), squareoff::square_message(Square::E4, true)])
            .chain([b"14#GO*".to_vec(), b"22#3.52*".to_vec(), b"x#*7".to_vec()])
            .collect(),
        "ichessone" => pictures
            .iter()
            .map(ichessone::position_message)
            .chain([vec![0x3D, 0x62, 0x00, 0x50], vec![0x3D, 0x3D, 0x11]])
            .collect(),
        "chessup" => pictures
            .iter()
            .map(chessup::state_message)
            .chain([chessup::move_message(Square::E2, Square::E4), vec![chessup::PROMOTION, 4], vec![0x13, 0x37]])
            .collect(),
        "chessnut" => pictures
            .iter()
            .map(boardcast_core::protocol::chessnut::frame::position_message)
            .chain([vec![0x2A, 0x02, 0x50, 0x01]])
            .collect(),
        _ => Vec::new(),
    };
    // Interleaved so that garbage stands between messages too.
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        out.extend_from_slice(part);
        out.extend_from_slice(&parts[parts.len() - 1 - i][..parts[parts.len() - 1 - i].len().min(3) * (i % 2)]);
    }
    out
}

fn decode_all(protocol: Protocol, chunks: &[&[u8]]) -> Vec<Decoded> {
    let mut decoder: Box<dyn BoardDecoder> = protocol.decoder().expect("a family");
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.handle_bytes(chunk);
        out.extend(std::iter::from_fn(|| decoder.poll_decoded()));
    }
    out.extend(decoder.finish());
    out
}

/// The families whose messages are written here (the Pegasus's are DGT
/// messages, tested with the DGT decoder; Millennium's with its own).
const SPLIT: [Protocol; 4] = [Protocol::CHESSNUT, Protocol::SQUAREOFF, Protocol::ICHESSONE, Protocol::CHESSUP];

#[test]
fn every_bluetooth_family_is_told_apart_by_its_advertised_name() {
    let ble: Vec<_> = FAMILIES.into_iter().filter_map(|f| f.bluetooth.as_ref().map(|b| (f.name, b))).collect();
    assert!(ble.len() >= 6, "{ble:?}");
    for (name, bluetooth) in &ble {
        let advertised = format!("{} 1234", bluetooth.name_contains);
        let found: Vec<_> = ble.iter().filter(|(_, b)| b.advertised_by(&advertised)).map(|(n, _)| *n).collect();
        assert_eq!(found, [*name], "{advertised:?}");
    }
}

#[test]
fn a_square_off_is_known_by_square_off_in_its_name_not_by_square_alone() {
    use boardcast_core::protocol::squareoff;
    let bluetooth = squareoff::FAMILY.bluetooth.as_ref().unwrap();
    for name in ["Squareoff Pro", "SquareOff", "Square Off Neo", "SQUAREOFF_GK 12"] {
        assert!(bluetooth.advertised_by(name), "{name}");
    }
    for name in ["Square 2", "SquareTrade tag", "Squares", "Chessnut Air"] {
        assert!(!bluetooth.advertised_by(name), "{name}");
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn decoding_does_not_depend_on_the_notifications(which in 0..SPLIT.len(), cuts in vec(any::<Index>(), 0..30)) {
        let protocol = SPLIT[which];
        let bytes = messages(protocol);
        prop_assert_eq!(decode_all(protocol, &[&bytes]), decode_all(protocol, &split(&bytes, &cuts)));
    }

    #[test]
    fn any_bytes_are_survived_and_the_next_board_read(which in 0..SPLIT.len(), noise in vec(any::<u8>(), 0..400)) {
        let protocol = SPLIT[which];
        let bytes = messages(protocol);
        let clean = decode_all(protocol, &[&bytes]);
        let after = decode_all(protocol, &[&noise, &bytes[..], &bytes[..]]);
        // The last board of the stream is read again after the noise
        // (reported whole after lost bytes, or seen unchanged).
        let last_board = |items: &[Decoded]| items.iter().rev().find(|d| matches!(d, Decoded::Sensor(_))).cloned();
        prop_assert_eq!(last_board(&after), last_board(&clean));
    }
}

/// A Square Off's capture of a corpus game: its notifications as the
/// family's own link asks for them, cut and timed as a hall's boards are.
fn squareoff_capture(
    header: &boardcast_core::capture::CaptureHeader,
    events: &[(boardcast_core::time::Timestamp, boardcast_core::sensor::SensorEvent)],
    rng: &mut boardcast_sim::synth::Rng,
) -> String {
    let form = ReportForm { every: std::time::Duration::from_millis(50), split: 0.5, ..ReportForm::varied(rng) };
    link_capture(header, events, form, rng)
}

/// A Square Off tells occupancy only, as a Pegasus does, so the same bar:
/// no game of the corpus comes back with a wrong move; a game whose
/// capture the reconstructor cannot settle without the arbiter may stop
/// short (an `out_of_sync` alert, the operator puts it right) or keep
/// asking the arbiter for at most one game in a hundred; the arbiter is asked in a minority of games.
#[test]
fn every_game_comes_back_from_squareoff_notifications_or_stops_for_the_arbiter() {
    let corpus = crate::support::corpus();
    let only = std::env::var("BOARDCAST_CORPUS_ONLY").ok();
    let (mut wrong, mut stuck, mut answered, mut checked) = (Vec::new(), Vec::new(), 0, 0);
    for game in corpus.iter().filter(|game| only.as_ref().is_none_or(|o| *o == game.name())) {
        checked += 1;
        match crate::sentio::check_occupancy(game, only.is_some(), Protocol::SQUAREOFF, squareoff_capture) {
            Ok(n) => answered += usize::from(n > 0),
            // Stopped, or still asking after the harness's eight answers
            // (1 of 421 when this was written): no move was written wrong.
            Err(e) if e.starts_with("stopped at ply") || e.contains("still undecided after") => stuck.push(e),
            Err(e) => wrong.push(e),
        }
    }
    assert!(wrong.is_empty(), "{} of {checked} games failed:\n{}", wrong.len(), wrong[..wrong.len().min(3)].join("\n"));
    assert!(
        stuck.len() * 100 <= checked.max(100),
        "{} of {checked} games stopped short:\n{}",
        stuck.len(),
        stuck[..stuck.len().min(3)].join("\n")
    );
    assert!(answered * 100 <= checked * 15, "{answered} of {checked} games needed the arbiter");
}
