//! Test support: real games turned into the sensor streams a board would
//! report, with every physical variation a tournament hall produces, in the
//! `events` and `dgt` capture forms.
//!
//! The test suite, the benchmarks and `boardcast synth` use it. Streams are
//! deterministic for a seed, so a failing game can be reproduced exactly.

mod ble;
mod certabo;
mod dgt;
mod hands;
mod irregular;
pub mod millennium;
mod pgn;
mod sentio;

use shakmaty::KnownOutcome;

pub use crate::Rng;

pub use self::{
    ble::{NOTIFICATION_BYTES, chessnut_capture, link_capture, pegasus_capture},
    certabo::{ReportForm, certabo_capture},
    dgt::{DgtForm, dgt_capture},
    hands::{Stream, play, play_planned},
    irregular::{Injection, Label, plan},
    millennium::{MillenniumForm, millennium_capture},
    pgn::{ReadGamesError, SourceGame, read_games, read_san_lines},
    sentio::sentio_capture,
};
use boardcast_core::{
    capture::{CaptureHeader, Record, RecordBody, format_header, format_record},
    protocol::Protocol,
    sensor::SensorEvent,
    time::Timestamp,
};

/// How the simulated players and board behave.
#[derive(Clone, Debug)]
pub struct Style {
    /// A clock beside the board, and its settings; `None` for no clock.
    pub clock: Option<ClockSettings>,
    /// The board is turned 180° (it reports every square mirrored).
    pub rotated: bool,
    /// Chance that a sliding piece is seen on the squares it crosses.
    pub slide: f64,
    /// Chance that a placement is seen before the lift it follows.
    pub scan_swap: f64,
    /// Chance per move that a sensor flickers while a player thinks.
    pub flicker: f64,
    /// Chance that a reply starts right after the move (or the press).
    pub fast_reply: f64,
    /// The players show the result with the kings when the board does not.
    pub gesture: bool,
    /// Thinking time per move, in milliseconds.
    pub think_ms: (u64, u64),
}

/// A clock's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClockSettings {
    /// Time per player at the start.
    pub base_ms: u64,
    /// Time added per move.
    pub increment_ms: u64,
}

impl Style {
    /// Calm players: no slides, swaps, flicker or quick replies; a clock.
    pub fn calm() -> Self {
        Self {
            clock: Some(ClockSettings { base_ms: 5_400_000, increment_ms: 30_000 }),
            rotated: false,
            slide: 0.0,
            scan_swap: 0.0,
            flicker: 0.0,
            fast_reply: 0.0,
            gesture: true,
            think_ms: (500, 3000),
        }
    }

    /// A style with every variation switched on at random.
    pub fn varied(rng: &mut Rng) -> Self {
        Self {
            clock: rng.chance(0.6).then_some(ClockSettings { base_ms: 5_400_000, increment_ms: 30_000 }),
            rotated: rng.chance(0.25),
            slide: 0.5,
            scan_swap: 0.3,
            flicker: 0.15,
            fast_reply: 0.15,
            gesture: rng.chance(0.8),
            think_ms: (500, 3000),
        }
    }
}

/// What the daemon must reconstruct from a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// The moves in UCI.
    pub uci: Vec<String>,
    /// The result, when the board shows one (mate, stalemate, dead
    /// position, or the result gesture).
    pub result: Option<KnownOutcome>,
}

/// How the game stands decided on the board at `pos`, reached by a move
/// from `before` (`None` at the game's start), by the Laws as the daemon
/// applies them: checkmate, stalemate, insufficient material, or a dead
/// position it can prove (5.2.2, with the same search after the same plies
/// as the daemon). A game the generator plays stops there, as players
/// stop, and the result is what the daemon is expected to record.
pub fn decided_on_the_board(before: Option<&shakmaty::Chess>, pos: &shakmaty::Chess) -> Option<KnownOutcome> {
    use boardcast_core::game::dead::{Budget, Verdict, verdict_after};
    use shakmaty::Position;
    pos.outcome()
        .known()
        .or_else(|| (verdict_after(before, pos, Budget::PER_MOVE) == Verdict::Dead).then_some(KnownOutcome::Draw))
}

/// The random generator for game `index` (0-based) of a file, under a base
/// seed: how `boardcast synth --seed S --game N` and the test suite agree on
/// the stream a game gets.
pub fn rng_for(seed: u64, index: usize) -> Rng {
    Rng::new(seed.wrapping_mul(1_000_003).wrapping_add(index as u64))
}

/// What kind of players a generated game gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Calm players with a clock ([`Style::calm`]).
    Clean,
    /// Every physical variation at random ([`Style::varied`]), nothing
    /// irregular.
    Noisy,
    /// As `Noisy`, with 3 to 5 irregularities injected ([`plan`]).
    Irregular,
}

impl Profile {
    /// `clean`, `noisy` or `irregular`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Noisy => "noisy",
            Self::Irregular => "irregular",
        }
    }
}

/// A generated game: the stream and what the Laws expect an arbiter to be
/// told about it (nothing for clean and noisy games).
#[derive(Clone, Debug)]
pub struct Generated {
    /// The sensor stream and the game it must give back.
    pub stream: Stream,
    /// The irregularities made, in ply order.
    pub labels: Vec<Label>,
    /// The style the hands had.
    pub style: Style,
}

/// Plays `game` under `profile`, deterministically from `rng`.
pub fn generate(game: &SourceGame, profile: Profile, rng: &mut Rng) -> Generated {
    let style = match profile {
        Profile::Clean => Style::calm(),
        Profile::Noisy | Profile::Irregular => Style::varied(rng),
    };
    let (injections, labels) = match profile {
        Profile::Irregular => plan(game, &style, rng),
        Profile::Clean | Profile::Noisy => (Vec::new(), Vec::new()),
    };
    let stream = play_planned(game, &style, &injections, rng);
    Generated { stream, labels, style }
}

/// The capture header for a generated game.
pub fn header(game: &SourceGame, protocol: Protocol, board: &str) -> CaptureHeader {
    let mut header = CaptureHeader::new(protocol, board);
    header.game =
        game.tags.iter().filter(|(k, _)| !matches!(k.as_str(), "FEN" | "SetUp" | "Variant")).cloned().collect();
    header.chess960 = game.chess960;
    header
}

/// A stream as an `events` capture.
pub fn events_capture(header: &CaptureHeader, events: &[(Timestamp, SensorEvent)]) -> String {
    let mut text = format_header(header);
    text.push('\n');
    for (t, event) in events {
        text.push_str(&format_record(&Record { t: *t, body: RecordBody::Event(event.clone()) }));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod decided_tests {
    use shakmaty::{CastlingMode, Chess, KnownOutcome, fen::Fen};

    use super::decided_on_the_board;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>().unwrap().into_position(CastlingMode::Standard).unwrap()
    }

    /// A generated game stops where the daemon ends it: at a blockade it
    /// proves dead (5.2.2) as well as at mate or bare kings; a position
    /// still open goes on.
    #[test]
    fn a_game_is_decided_where_the_daemon_ends_it() {
        let blockade = position("4k3/8/8/p1p1p1p1/P1P1P1P1/8/8/4K3 w - - 0 1");
        assert_eq!(decided_on_the_board(None, &blockade), Some(KnownOutcome::Draw));
        let bare = position("4k3/8/8/8/8/8/8/4K3 w - - 0 1");
        assert_eq!(decided_on_the_board(None, &bare), Some(KnownOutcome::Draw));
        let open = position("4k3/8/8/3pp3/3PP3/8/8/4K3 w - - 0 1");
        assert_eq!(decided_on_the_board(None, &open), None);
        assert_eq!(decided_on_the_board(None, &Chess::default()), None);
    }
}
