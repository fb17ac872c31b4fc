//! The PGN delivered beyond the hall (served over HTTP, pushed to lichess):
//! a round's games in the PGN folders' layout, with completed moves only,
//! held back by the public delay.
//!
//! Delivered PGN is public, like the MQTT public tree, so it is released
//! `mqtt.public_delay_s` after the moment it shows, never earlier. It holds
//! completed moves only ([`Plies::Completed`]): a relay keeps every move it
//! has seen, and a made move replaced before the clock is pressed would stay
//! on the broadcast as a variation. Sans-I/O: the shell gives the time.

use std::{collections::VecDeque, time::Duration};

use crate::{
    game::{
        GameRecord,
        pgn::{Plies, write_pgn_with},
    },
    livechess::cloud::CloudGame,
    names::component,
    publish::topics::level,
    time::Timestamp,
};

/// One round's delivered PGN.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundPgn {
    /// The `Event` tag.
    pub event: String,
    /// The `Round` tag.
    pub round: String,
    /// The round's folder below the PGN folder (`Open-A/round-3`), as the
    /// PGN files have it.
    pub folder: String,
    /// Each board's file name in the folder (`game-12.pgn`) and its games.
    pub(crate) boards: Vec<(String, String)>,
    /// Every game of the round, one PGN each, in board order.
    pub games: Vec<String>,
    /// Each board's last game of the round, as LiveChess Cloud shows it
    /// (`/lcc/`, docs/livechess.md), in board order.
    pub cloud: Vec<CloudGame>,
}

impl RoundPgn {
    /// The round's PGN from each board's games in it (`(label, games)`, in
    /// board order).
    pub fn new(event: &str, round: &str, boards: &[(&str, Vec<&GameRecord>)]) -> Self {
        let folder = format!("{}/round-{}", component(&level(event)), component(&level(round)));
        let mut files = Vec::new();
        let mut games = Vec::new();
        let mut cloud = Vec::new();
        for (label, records) in boards {
            let Some(last) = records.last() else { continue };
            cloud.push(CloudGame::new(label, last));
            let mut text = String::new();
            for record in records {
                let mut one = String::new();
                write_pgn_with(record, Plies::Completed, &mut one);
                text.push_str(&one);
                games.push(one);
            }
            files.push((board_file(label), text));
        }
        Self { event: event.to_owned(), round: round.to_owned(), folder, boards: files, games, cloud }
    }

    /// `games.pgn`: every game of the round.
    pub fn all(&self) -> String {
        self.games.concat()
    }

    /// Every file of the round, path below the PGN folder first:
    /// `games.pgn`, then each board's.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut files = vec![(format!("{}/games.pgn", self.folder), self.all())];
        files.extend(self.boards.iter().map(|(name, text)| (format!("{}/{name}", self.folder), text.clone())));
        files
    }
}

/// A board's file name in its round folder: `game-<label>.pgn`.
pub(crate) fn board_file(label: &str) -> String {
    format!("game-{}.pgn", component(&level(label)))
}

/// Values released a fixed delay after they were put in, in order.
#[derive(Debug)]
pub struct DelayLine<T> {
    delay: Duration,
    queue: VecDeque<(Timestamp, T)>,
}

impl<T> DelayLine<T> {
    /// A line holding values back by `delay` (zero: released at once).
    pub const fn new(delay: Duration) -> Self {
        Self { delay, queue: VecDeque::new() }
    }

    /// `value` as it is at `now`.
    pub fn push(&mut self, now: Timestamp, value: T) {
        self.queue.push_back((now + self.delay, value));
    }

    /// The next value due at `now`.
    pub fn poll(&mut self, now: Timestamp) -> Option<T> {
        if self.queue.front().is_some_and(|(due, _)| *due <= now) {
            self.queue.pop_front().map(|(_, value)| value)
        } else {
            None
        }
    }

    /// When the next value is due.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.queue.front().map(|(due, _)| *due)
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, Chess, san::San};

    use super::*;

    fn game(sans: &str, complete: bool) -> GameRecord {
        let mut record = GameRecord::new(1, Chess::default(), CastlingMode::Standard, false, Timestamp::ZERO);
        record.tags = vec![("Event".into(), "Open A".into()), ("Round".into(), "3".into())];
        for san in sans.split_whitespace() {
            let m = san.parse::<San>().unwrap().to_move(record.position()).unwrap();
            record.push(m, Timestamp::ZERO, false);
            if complete {
                record.complete_last(Timestamp::ZERO);
            }
        }
        record
    }

    #[test]
    fn a_round_is_delivered_in_the_files_layout_with_completed_moves_only() {
        let done = game("e4 e5", true);
        let mut made = game("d4", true);
        let m = "d5".parse::<San>().unwrap().to_move(made.position()).unwrap();
        made.push(m, Timestamp::ZERO, false);
        let round = RoundPgn::new("Open A", "3", &[("2", vec![&done]), ("10", vec![&made]), ("11", vec![])]);
        let files = round.files();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["Open-A/round-3/games.pgn", "Open-A/round-3/game-2.pgn", "Open-A/round-3/game-10.pgn"]);
        assert!(files[2].1.contains("1. d4 *"), "{}", files[2].1);
        assert!(!files[0].1.contains("d5"), "the made move is not delivered: {}", files[0].1);
        assert_eq!(round.games.len(), 2);
        assert_eq!(files[0].1, round.games.concat());
        // Hostile names stay one folder level each.
        let hostile = RoundPgn::new("../..", "../x", &[("../../etc", vec![&done])]);
        assert_eq!(hostile.folder, "..-../round-..-x");
        assert_eq!(hostile.boards[0].0, "game-..-..-etc.pgn");
    }

    #[test]
    fn the_delay_line_releases_in_order_after_the_delay() {
        let mut line = DelayLine::new(Duration::from_secs(900));
        assert_eq!(line.poll_timeout(), None);
        line.push(Timestamp::from_millis(0), "a");
        line.push(Timestamp::from_millis(500), "b");
        assert_eq!(line.poll(Timestamp::from_millis(899_999)), None);
        assert_eq!(line.poll_timeout(), Some(Timestamp::from_millis(900_000)));
        assert_eq!(line.poll(Timestamp::from_millis(900_000)), Some("a"));
        assert_eq!(line.poll(Timestamp::from_millis(900_000)), None);
        assert_eq!(line.poll(Timestamp::from_millis(901_000)), Some("b"));
        assert!(line.is_empty());
        let mut now = DelayLine::new(Duration::ZERO);
        now.push(Timestamp::from_millis(7), 1);
        assert_eq!(now.poll(Timestamp::from_millis(7)), Some(1));
    }
}
