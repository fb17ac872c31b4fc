//! Boards plugged in but not configured: every `hall.probe_interval_s`, the
//! serial ports (and `[discovery] extra_ports`) that no board of this
//! daemon holds and no other program has open are asked what is behind
//! them (`shell::probe`, as `list-ports` asks), and what answers is
//! published, retained, on `<root>/v1/live/unassigned/<bridge-id>`: in the
//! live tree, which the broker lets operators and arbiters read and never
//! the public (docs/mqtt.md), for the console's hall to offer Assign.
//!
//! A port one of the daemon's boards holds is found in `/proc` (this
//! process's own descriptors count here, unlike for `list-ports`): the
//! daemon may run as root, and root's open goes through the exclusive lock
//! a board's port has; a board's search by serial number and this one
//! claim a port before asking it (`shell::probe::claim`), so they never ask
//! one port at once. The first look comes one interval after the start,
//! so that boards configured by serial number find their ports first; a
//! board whose serial number is configured is never offered.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Duration,
};

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use boardcast::{
    config::{Board, FindBoard},
    shell::{
        holders::holders_in,
        port::same_serial,
        ports::candidates,
        probe::{Probed, claim, probe},
    },
};
use boardcast_core::publish::{Item, Publication, Qos, topics::Topics};

/// How long a probe waits for each round of answers (as the boards' own
/// search by serial number waits).
const PROBE_WAIT: Duration = Duration::from_millis(600);

/// One board found on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    family: &'static str,
    title: &'static str,
    serial: Option<String>,
    firmware: Option<String>,
    /// Wall-clock milliseconds since when it has been there.
    since_ms: i64,
}

/// A board offered for assignment: where, and what it told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Offered {
    pub(super) port: PathBuf,
    pub(super) family: &'static str,
    pub(super) serial: Option<String>,
}

/// What the search needs.
pub(super) struct Search {
    /// How often.
    pub(super) interval: Duration,
    /// Devices to ask besides the machine's serial ports.
    pub(super) extra_ports: Vec<PathBuf>,
    /// The configured (and assigned) boards, whose ports and serial numbers
    /// are not offered; assignments add to it.
    pub(super) boards: tokio::sync::watch::Receiver<Vec<Board>>,
    /// Where the list goes, and its topic.
    pub(super) items: mpsc::UnboundedSender<Item>,
    pub(super) topics: Topics,
    /// The boards found at the last look: only these may be assigned.
    pub(super) offered: tokio::sync::watch::Sender<Vec<Offered>>,
}

/// The topic of the boards found and not assigned.
pub(super) fn topic(topics: &Topics) -> String {
    format!("{}/v1/live/unassigned/{}", topics.root(), topics.bridge())
}

/// Looks for boards not configured until `shutdown`.
pub(super) async fn run(mut search: Search, shutdown: CancellationToken) {
    let topic = topic(&search.topics);
    let mut found: BTreeMap<PathBuf, Seen> = BTreeMap::new();
    let mut published: Option<Vec<(PathBuf, Seen)>> = None;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            () = tokio::time::sleep(search.interval) => {}
        }
        let boards = search.boards.borrow_and_update().clone();
        let mut now_found = BTreeMap::new();
        for port in candidates(&search.extra_ports) {
            if shutdown.is_cancelled() {
                break;
            }
            if configured_here(&boards, &port.path) {
                continue;
            }
            // Claimed first, then checked: a board's search by serial number
            // opens the port it found while it has the claim.
            let Some(_claim) = claim(&port.path) else { continue };
            if held(&port.path) {
                continue;
            }
            let Probed::Board(board) = probe(&port.path, PROBE_WAIT).await else { continue };
            if let Some(serial) = &board.serial
                && boards.iter().any(|b| matches!(&b.find, FindBoard::Serial(s) if same_serial(s, serial)))
            {
                // A configured board not yet found by its own search.
                continue;
            }
            let seen = Seen {
                family: board.family.name,
                title: board.family.title,
                serial: board.serial.clone(),
                firmware: board.firmware().map(str::to_owned),
                since_ms: now_ms(),
            };
            let since_ms = match found.get(&port.path) {
                Some(before) if before.family == seen.family && before.serial == seen.serial => before.since_ms,
                _ => {
                    tracing::info!("found a board not assigned on {}: {board}", port.path.display());
                    seen.since_ms
                }
            };
            now_found.insert(port.path.clone(), Seen { since_ms, ..seen });
        }
        found = now_found;
        search.offered.send_replace(
            found
                .iter()
                .map(|(port, s)| Offered { port: port.clone(), family: s.family, serial: s.serial.clone() })
                .collect(),
        );
        let list: Vec<(PathBuf, Seen)> = found.iter().map(|(p, s)| (p.clone(), s.clone())).collect();
        if published.as_ref() != Some(&list) {
            let _ = search.items.send(Item::Publish(publication(&topic, &search.topics, &list)));
            published = Some(list);
        }
    }
    // Nothing is known once the daemon stops: the retained list goes.
    let clear = Publication { topic, payload: None, retain: true, qos: Qos::AtLeastOnce, public: false };
    let _ = search.items.send(Item::Publish(clear));
}

/// The retained message: the boards found, with what they told.
fn publication(topic: &str, topics: &Topics, list: &[(PathBuf, Seen)]) -> Publication {
    let boards: Vec<_> = list
        .iter()
        .map(|(port, s)| {
            json!({
                "family": s.family,
                "title": s.title,
                "serial": s.serial,
                "port": port.display().to_string(),
                "firmware": s.firmware,
                "since_ms": s.since_ms,
            })
        })
        .collect();
    Publication {
        topic: topic.to_owned(),
        payload: Some(json!({"ts_ms": now_ms(), "bridge": topics.bridge(), "boards": boards})),
        retain: true,
        qos: Qos::AtLeastOnce,
        public: false,
    }
}

/// Whether a board of the daemon reads `port` by its configuration.
fn configured_here(boards: &[Board], port: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let port = canonical(port);
    boards.iter().any(|b| matches!(&b.find, FindBoard::Port(p) if canonical(p) == port))
}

/// Whether any process, this one included, has `port` open.
fn held(port: &Path) -> bool {
    // PID 0 is no process: nobody is left out.
    !holders_in(Path::new("/proc"), port, 0).is_empty()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64)
}
