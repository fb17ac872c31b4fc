//! One board as LiveChess shows it: an e-board (its pieces, clock, whether
//! it is read) and its game, kept up to date from the board's session
//! outputs. [`BoardWatch`] is a [`Sink`]: after each batch of outputs that
//! changed the board, it hands on a [`Snapshot`], which the daemon puts in
//! the [`super::hall::Hall`].

use std::collections::VecDeque;

use shakmaty::{Color, Position};

use super::records::{Clock, Player, ResultValue, chess960_number, moves, san_list, start_fen};
use crate::{
    event::{BoardStatus, ClockState, EventKind},
    protocol::BoardInfo,
    sensor::{Cell, Picture},
    session::{NoticeKind, Output},
    sink::{Games, Sink},
    time::Timestamp,
};

/// Who a board is, for LiveChess.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The board's configured name (the key of its snapshots).
    pub name: String,
    /// Its LiveChess serial number: the DGT serial it is found by, else
    /// its name.
    pub serialnr: String,
    /// The port's name (`ttyACM0`), when the configuration names a port.
    pub source: Option<String>,
    /// Its label in the round (`12`): the pairings' board number.
    pub label: String,
    /// The event and round of its games when their tags do not say.
    pub event: String,
    /// See `event`.
    pub round: String,
}

/// A board's game as LiveChess shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // LiveChess's own names (docs/livechess.md)
pub struct GameView {
    /// The `Event` tag.
    pub(crate) event: String,
    /// The `Round` tag.
    pub(crate) round: String,
    pub(crate) white: Player,
    pub(crate) black: Player,
    /// The FEN the game starts from.
    pub(crate) start: String,
    pub(crate) chess960: u32,
    /// Every ply's SAN (the feed's `san`).
    pub(crate) san: Vec<String>,
    /// Every ply as `"<SAN> <seconds left>"` (the REST game's `moves`).
    pub(crate) moves: Vec<String>,
    pub(crate) result: Option<ResultValue>,
    /// The last clock reading while the game was played.
    pub(crate) clock: Option<Clock>,
}

/// A board's state at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // LiveChess's own names (docs/livechess.md)
pub struct Snapshot {
    pub(crate) identity: Identity,
    /// The port is open.
    pub(crate) active: bool,
    /// `"84%"`, when the board says.
    pub(crate) battery: Option<String>,
    /// The FEN piece placement the board shows.
    pub board: String,
    /// The board is read turned 180°.
    pub(crate) flipped: bool,
    pub(crate) clock: Option<Clock>,
    /// Whether the board shows the reconstructed position.
    pub(crate) matches: bool,
    /// The game on the board (or the last one, until the next starts).
    pub game: Option<GameView>,
    /// The board is no longer read here (un-assigned in the console): the
    /// hall forgets it.
    pub(crate) removed: bool,
}

impl Snapshot {
    /// Says that the board `identity` names is no longer read here: sent
    /// after its last snapshot, so that the hall forgets it for good.
    pub fn removed(identity: Identity) -> Self {
        Self {
            identity,
            active: false,
            battery: None,
            board: String::new(),
            flipped: false,
            clock: None,
            matches: false,
            game: None,
            removed: true,
        }
    }
}

/// Follows one board's outputs.
#[derive(Debug)]
pub struct BoardWatch {
    identity: Identity,
    /// Wall-clock ms at session time zero.
    epoch_ms: i64,
    active: bool,
    battery: Option<String>,
    clock: Option<(ClockState, Timestamp)>,
    status: Option<BoardStatus>,
    last: Option<Snapshot>,
    out: VecDeque<Snapshot>,
}

impl BoardWatch {
    /// A board not yet read; `epoch_ms` is the wall-clock time at its
    /// session's time zero.
    pub const fn new(identity: Identity, epoch_ms: i64) -> Self {
        Self {
            identity,
            epoch_ms,
            active: false,
            battery: None,
            clock: None,
            status: None,
            last: None,
            out: VecDeque::new(),
        }
    }

    /// The board's state now, if it changed since the last call.
    fn poll(&mut self, games: Games<'_>) -> Option<Snapshot> {
        let snapshot = self.snapshot(games);
        if self.last.as_ref() == Some(&snapshot) {
            return None;
        }
        self.last = Some(snapshot.clone());
        Some(snapshot)
    }

    fn snapshot(&self, games: Games<'_>) -> Snapshot {
        let clock = self.clock.as_ref().map(|(c, t)| Clock {
            white: c.white_ms / 1000,
            black: c.black_ms / 1000,
            run: c.running.map(|color| color == Color::White),
            time: self.epoch_ms + (t.as_micros() / 1000) as i64,
        });
        let game = games.current().map(|record| {
            let tag = |name: &str, or: &str| {
                record.tags.iter().find(|(k, _)| k == name).map_or_else(|| or.to_owned(), |(_, v)| v.clone())
            };
            let result = ResultValue::of(record);
            GameView {
                event: tag("Event", &self.identity.event),
                round: tag("Round", &self.identity.round),
                white: Player::from_tags(&record.tags, Color::White),
                black: Player::from_tags(&record.tags, Color::Black),
                start: start_fen(record),
                chess960: chess960_number(&record.start, record.castling_mode),
                san: san_list(record),
                moves: moves(record, self.clock.as_ref().map(|(c, _)| (c.white_ms, c.black_ms))),
                result,
                clock: clock.map(|c| if result.is_some() { Clock { run: None, ..c } } else { c }),
            }
        });
        let position = games.current().map(|g| g.position().board().clone());
        let matches = match &self.status {
            Some(BoardStatus::InSync) => true,
            Some(BoardStatus::OutOfSync { .. }) => false,
            Some(BoardStatus::AwaitingStart) | None => {
                position.as_ref().is_some_and(|board| games.picture().diff(board).is_empty())
            }
        };
        Snapshot {
            identity: self.identity.clone(),
            active: self.active,
            battery: self.battery.clone(),
            board: placement(games.picture(), position.as_ref()),
            flipped: games.rotated(),
            clock,
            matches,
            game,
            removed: false,
        }
    }
}

impl Sink for BoardWatch {
    type Item = Snapshot;

    fn handle_output(&mut self, output: &Output, _games: Games<'_>) {
        match output {
            Output::Event(event) => match &event.kind {
                EventKind::Clock(clock) => self.clock = Some((*clock, event.t)),
                EventKind::Status(status) => self.status = Some(status.clone()),
                _ => {}
            },
            Output::Notice(notice) => match &notice.kind {
                NoticeKind::Connected => self.active = true,
                NoticeKind::Disconnected => self.active = false,
                NoticeKind::Board(BoardInfo::Battery(percent)) => self.battery = Some(format!("{percent}%")),
                _ => {}
            },
        }
    }

    fn flush(&mut self, games: Games<'_>) {
        if let Some(snapshot) = self.poll(games) {
            self.out.push_back(snapshot);
        }
    }

    fn poll_item(&mut self) -> Option<Snapshot> {
        self.out.pop_front()
    }
}

/// The pieces the board shows, as a FEN placement. A board that sees only
/// occupied squares shows the game position's piece where it has one; an
/// occupied square the position leaves empty is left out (LiveChess's
/// clients read `board` as a FEN; `match` says the board differs).
fn placement(picture: &Picture, position: Option<&shakmaty::Board>) -> String {
    if picture.unknown().is_empty() {
        return picture.to_fen_placement();
    }
    let mut known = picture.clone();
    for square in picture.unknown() {
        let piece = position.and_then(|board| board.piece_at(square));
        known.set(square, piece.map_or(Cell::Empty, Cell::Piece));
    }
    known.to_fen_placement()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Board, Square};

    #[test]
    fn occupied_squares_show_the_game_positions_pieces() {
        let mut picture = Picture::from_board(&Board::default());
        for square in picture.occupied() {
            picture.set(square, Cell::Occupied);
        }
        assert_eq!(placement(&picture, Some(&Board::default())), "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR");
        // e2-e4 on the board, the game not yet told: e4 is not in the
        // position, so it is left out.
        picture.set(Square::E2, Cell::Empty);
        picture.set(Square::E4, Cell::Occupied);
        assert_eq!(placement(&picture, Some(&Board::default())), "rnbqkbnr/pppppppp/8/8/8/8/PPPP1PPP/RNBQKBNR");
        assert_eq!(
            placement(&Picture::from_board(&Board::default()), None),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
    }
}
