//! Replaying a capture in virtual time: the records go through a
//! [`BoardSession`] exactly as a live board's bytes would, with every
//! deadline fired at its own time, as fast as the machine can. (Replaying
//! at recorded speed goes through the async driver instead:
//! the daemon's `shell::replay`.)

use std::collections::BTreeMap;

use crate::{
    alert::Alert,
    capture::{CaptureError, CaptureHeader, CaptureReader, Record},
    event::EventKind,
    game::GameRecord,
    reconstruct::ReconstructorConfig,
    session::{BoardSession, Output},
    sink::{EveryOutput, Sink},
    time::Timestamp,
};

/// A capture read from its text.
#[derive(Debug)]
pub struct Capture {
    /// The header.
    pub header: CaptureHeader,
    /// The records, up to the first that does not fit the format.
    pub records: Vec<Record>,
    /// The first line that does not fit the format, if any.
    pub error: Option<CaptureError>,
}

/// Reads a capture's text.
///
/// # Errors
///
/// When the header does not fit the format. A bad record later on ends the
/// records there and is kept in [`Capture::error`].
pub fn read_capture(text: &str) -> Result<Capture, CaptureError> {
    let reader = CaptureReader::new(text)?;
    let header = reader.header().clone();
    let mut records = Vec::new();
    let mut error = None;
    for record in reader {
        match record {
            Ok(record) => records.push(record),
            Err(e) => error = Some(e),
        }
    }
    Ok(Capture { header, records, error })
}

/// Everything a capture produced.
#[derive(Debug)]
pub struct Replayed {
    /// The capture's header.
    pub header: CaptureHeader,
    /// Events and notices, in the order the session produced them.
    pub outputs: Vec<Output>,
    /// The games, in order.
    pub games: Vec<GameRecord>,
    /// The first line that did not fit the format; everything before it was
    /// replayed.
    pub error: Option<CaptureError>,
    /// Records replayed.
    pub records: usize,
}

impl Replayed {
    /// The alerts raised, in order.
    pub fn alerts(&self) -> impl Iterator<Item = &Alert> {
        self.outputs.iter().filter_map(|o| match o {
            Output::Event(e) => match &e.kind {
                EventKind::Alert(a) => Some(a.as_ref()),
                _ => None,
            },
            Output::Notice(_) => None,
        })
    }
}

/// Replays a capture's text.
///
/// # Errors
///
/// When the header does not fit the format; a bad record later on stops the
/// replay there and is returned in [`Replayed::error`] with what came before
/// it.
pub fn replay(text: &str, config: &ReconstructorConfig) -> Result<Replayed, CaptureError> {
    Ok(replay_capture(read_capture(text)?, config))
}

/// Replays a capture already read.
pub fn replay_capture(capture: Capture, config: &ReconstructorConfig) -> Replayed {
    let Capture { header, records, error } = capture;
    let mut session = BoardSession::for_capture(&header, config.clone());
    let mut outputs = Vec::new();
    let mut last = Timestamp::ZERO;
    for record in &records {
        session.advance_to(record.t);
        session.handle_record(record);
        drain(&mut session, &mut outputs);
        last = record.t;
    }
    session.advance_to(last);
    session.handle_end(last);
    drain(&mut session, &mut outputs);
    Replayed { header, outputs, games: session.into_games(), error, records: records.len() }
}

/// A live board's session rebuilt from its capture, to carry on where a
/// stopped (or crashed) daemon left off.
#[derive(Debug)]
pub struct Resumed {
    /// The session, as it was after the last record: the game in progress
    /// with every move, the clock, the board picture.
    pub session: BoardSession,
    /// Everything the records produced, in order (to publish again), but
    /// of the clock readings only the last, at the end.
    pub outputs: Vec<Output>,
    /// The time of the last record.
    pub last: Timestamp,
    /// Records replayed.
    pub records: usize,
}

impl Resumed {
    /// What the operator changed in the board's next games' tags during
    /// this capture (`next_round`, `set_tags`: the tags at its end against
    /// its header's), to carry over to the next capture when its games are
    /// all over, so that a restart between rounds keeps the round and the
    /// players: tag → value, empty for a tag removed. A tag whose
    /// `configured` value is no longer the one `header` started from was
    /// changed in the configuration since: the configuration wins, and it is
    /// not carried. `Date` is each capture's own.
    pub fn operator_tags(&self, header: &CaptureHeader, configured: &[(String, String)]) -> BTreeMap<String, String> {
        let before = crate::session::setup_from_header(header).tags;
        let after = self.session.reconstructor().next_game_tags();
        let value =
            |tags: &[(String, String)], name: &str| tags.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        let mut changed = BTreeMap::new();
        for (name, _) in before.iter().chain(after) {
            let (was, now) = (value(&before, name), value(after, name));
            if name == "Date" || was == now || value(configured, name) != was {
                continue;
            }
            changed.insert(name.clone(), now.unwrap_or_default());
        }
        changed
    }
}

/// [`resume`] from records as they are read: the daemon streams a capture
/// of a whole day through this, so that what it holds while resuming does
/// not grow with the hours recorded.
pub fn resume_records<R: std::borrow::Borrow<Record>>(
    header: &CaptureHeader,
    records: impl IntoIterator<Item = R>,
    config: ReconstructorConfig,
    link: crate::protocol::link::LinkConfig,
) -> Resumed {
    let setup = crate::session::setup_from_header(header);
    let mut session = BoardSession::live(header.protocol, config, setup, link);
    // The header's calibration was checked when it was read.
    let _ = session.set_calibration(&header.calibration);
    let mut outputs = Vec::new();
    let mut clock = None;
    let mut last = Timestamp::ZERO;
    let mut count = 0;
    for record in records {
        let record = record.borrow();
        session.advance_to(record.t);
        session.handle_record(record);
        let from = outputs.len();
        drain(&mut session, &mut outputs);
        set_aside_clocks(&mut outputs, from, &mut clock);
        last = record.t;
        count += 1;
    }
    session.advance_to(last);
    let from = outputs.len();
    drain(&mut session, &mut outputs);
    set_aside_clocks(&mut outputs, from, &mut clock);
    outputs.extend(clock);
    Resumed { session, outputs, last, records: count }
}

/// One message the live daemon would have published, with when (in
/// milliseconds of the capture).
#[derive(Clone, Debug, PartialEq)]
pub struct Published {
    /// When, since the capture's start.
    pub t_ms: u64,
    /// The message.
    pub publication: crate::publish::Publication,
}

/// What the live daemon would have published over MQTT for `capture`:
/// the same feed code ([`BoardFeed::pump`](crate::publish::board::BoardFeed::pump)
/// after every record, as the live driver does after every input, and the
/// same [`Hub`](crate::publish::hub::Hub)), in the capture's time, with the
/// public tree `public_delay_ms` behind. The board is published under
/// `path`.
pub fn publications(
    capture: &Capture,
    config: &ReconstructorConfig,
    settings: crate::publish::board::FeedSettings,
    path: crate::publish::topics::BoardPath,
    public_delay_ms: u64,
) -> Vec<Published> {
    use crate::publish::{board::BoardFeed, hub::Hub};
    let epoch_ms = capture
        .header
        .started_at
        .as_deref()
        .and_then(|t| humantime::parse_rfc3339(t).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    let mut session = BoardSession::for_capture(&capture.header, config.clone());
    let mut hub = Hub::new(settings.topics.clone(), &settings.boot, std::time::Duration::from_millis(public_delay_ms));
    let mut feed = BoardFeed::new(settings, &capture.header.board, path, epoch_ms, &capture.header.board);
    let mut published = Vec::new();
    let mut step = |session: &mut BoardSession, feed: &mut BoardFeed, hub: &mut Hub, t: Timestamp| {
        // Published messages carry whole milliseconds; the hub runs on the
        // same, as the live publisher's clock does.
        let t_ms = t.as_micros() / 1000;
        let now = Timestamp::from_millis(t_ms);
        // Public copies due before now come out at their own time.
        while let Some(at) = hub.poll_timeout().filter(|&at| at < now) {
            hub.handle_timeout(at);
            while let Some(publication) = hub.poll_publication() {
                published.push(Published { t_ms: at.as_micros() / 1000, publication });
            }
        }
        session.pump(&mut [feed]);
        while let Some(item) = feed.poll_item() {
            hub.handle_item(now, item);
        }
        hub.handle_timeout(now);
        while let Some(publication) = hub.poll_publication() {
            published.push(Published { t_ms, publication });
        }
    };
    step(&mut session, &mut feed, &mut hub, Timestamp::ZERO);
    let mut last = Timestamp::ZERO;
    for record in &capture.records {
        session.advance_to(record.t);
        session.handle_record(record);
        step(&mut session, &mut feed, &mut hub, record.t);
        last = record.t;
    }
    session.advance_to(last);
    session.handle_end(last);
    step(&mut session, &mut feed, &mut hub, last);
    // What the public tree still held back comes out at its time.
    while let Some(at) = hub.poll_timeout() {
        hub.handle_timeout(at);
        while let Some(publication) = hub.poll_publication() {
            published.push(Published { t_ms: at.as_micros() / 1000, publication });
        }
    }
    published
}

/// Keeps only the newest clock reading of `outputs[from..]` (in `clock`)
/// and the other outputs in order. A board's clock reports once a second:
/// a resumed game's past would hold tens of thousands of readings after a
/// few hours, each published again as a clock, a state and a summary, all
/// at once when the board resumes; every reading but the last is superseded
/// (they are retained topics), and the moves carry their own clock times.
/// Held, they made every restart of a long day start higher (RELIABILITY.md).
fn set_aside_clocks(outputs: &mut Vec<Output>, from: usize, clock: &mut Option<Output>) {
    if !outputs[from..].iter().any(is_clock) {
        return;
    }
    let fresh: Vec<Output> = outputs.drain(from..).collect();
    for output in fresh {
        if is_clock(&output) {
            *clock = Some(output);
        } else {
            outputs.push(output);
        }
    }
}

fn is_clock(output: &Output) -> bool {
    matches!(output, Output::Event(event) if matches!(event.kind, crate::event::EventKind::Clock(_)))
}

/// Takes every output waiting, through the same pump as the live driver.
fn drain(session: &mut BoardSession, outputs: &mut Vec<Output>) {
    let mut every = EveryOutput::default();
    session.pump(&mut [&mut every]);
    outputs.extend(std::iter::from_fn(|| every.poll_item()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{capture::RecordBody, operator::Command, protocol::Protocol};

    fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    /// A capture whose games are over, with the operator's next round and
    /// players in it: they are carried over, except where the configuration
    /// itself changed since (Site).
    #[test]
    fn the_operators_round_and_players_carry_over_to_the_next_capture() {
        let mut header = CaptureHeader::new(Protocol::DGT, "b1");
        header.game = tags(&[("Event", "Open"), ("Round", "1"), ("Site", "Hall"), ("Annotator", "arbiter")]);
        let command = |t, command| Record { t: Timestamp::from_micros(t), body: RecordBody::Command(command) };
        let pairing: BTreeMap<String, String> =
            [("White", "A, B"), ("Black", "C, D")].into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect();
        let records = [
            command(1, Command::NextRound { round: "4".into(), tags: pairing, pairings: BTreeMap::new() }),
            command(2, Command::SetTags { tags: [("Annotator".to_owned(), String::new())].into_iter().collect() }),
            command(3, Command::SetTags { tags: [("Site".to_owned(), "Annex".to_owned())].into_iter().collect() }),
        ];
        let resumed = resume_records(&header, records, ReconstructorConfig::default(), Default::default());
        // The configuration now says Site "Tent": its change wins over the
        // operator's "Annex"; Round, players and the removed Annotator carry.
        let configured = tags(&[("Event", "Open"), ("Round", "1"), ("Site", "Tent"), ("Annotator", "arbiter")]);
        let carried = resumed.operator_tags(&header, &configured);
        let expected: BTreeMap<String, String> =
            [("Annotator", ""), ("Black", "C, D"), ("Round", "4"), ("White", "A, B")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect();
        assert_eq!(carried, expected);
        // Nothing changed by the operator: nothing carried.
        let quiet = resume_records(&header, Vec::<Record>::new(), ReconstructorConfig::default(), Default::default());
        assert!(quiet.operator_tags(&header, &configured).is_empty());
    }
}
