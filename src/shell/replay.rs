//! A capture played into a driver in real time (scaled by a speed factor):
//! each record is sent when its time comes, as a board's bytes would arrive.

use tokio::{sync::mpsc, time::sleep_until};

use super::{
    clock::SessionClock,
    driver::{Forward, Input, InputBody, Outlets, drive},
};
use boardcast_core::{
    capture::{CaptureHeader, Record},
    reconstruct::ReconstructorConfig,
    session::{BoardSession, Output},
    sink::EveryOutput,
};

/// Plays `records` at `clock`'s pace through a new session for `header`,
/// sending outputs as they happen. Returns the session when done.
pub async fn play(
    header: &CaptureHeader,
    records: Vec<Record>,
    config: ReconstructorConfig,
    clock: SessionClock,
    outputs: mpsc::UnboundedSender<Output>,
) -> BoardSession {
    let session = BoardSession::for_capture(header, config);
    let (tx, rx) = mpsc::channel(64);
    let feeder = tokio::spawn(async move {
        for record in records {
            let Some(body) = InputBody::from_record(record.body) else { continue };
            sleep_until(clock.instant_of(record.t)).await;
            if tx.send(Input { t: record.t, body }).await.is_err() {
                break;
            }
        }
    });
    let mut outlets = Outlets::default();
    outlets.push(Forward::to(EveryOutput::default(), outputs));
    let session = drive(session, rx, outlets, clock).await;
    // The feeder has finished: the driver only returns once it closed the
    // channel by ending.
    let _ = feeder.await;
    session
}
