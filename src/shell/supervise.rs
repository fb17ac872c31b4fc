//! Keeping one board's tasks alive without letting them take the others
//! down. Each board runs in its own task: a panic there (a bug) ends that
//! task only, and is reported here as a failure like any other. A failed
//! board is started again after a pause (its game resumes from its
//! capture), unless it keeps failing: then it is given up, said so, and the
//! other boards go on.

use std::{collections::VecDeque, future::Future, time::Duration};

use tokio::time::{Instant, sleep};
use tokio_util::sync::CancellationToken;

/// How patient the supervisor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// The pause before starting a failed task again.
    pub pause: Duration,
    /// Give up after this many failures …
    pub failures: usize,
    /// … within this long.
    pub within: Duration,
}

impl Default for Patience {
    fn default() -> Self {
        Self { pause: Duration::from_secs(2), failures: 5, within: Duration::from_secs(600) }
    }
}

/// How a supervised task ended for good.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It stopped when asked (or by itself, without failing).
    Stopped,
    /// It failed too often; the last reason.
    GaveUp(String),
}

/// What the supervisor reports as it goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    /// The task failed and starts again after the pause.
    Restarting {
        /// Why it failed (the panic message, or the task's own reason).
        why: String,
        /// Failures within the window so far.
        failures: usize,
    },
}

/// Runs the task `start` makes, each time in a task of its own, until it
/// ends without failing or `shutdown`; starts it again after a failure (an
/// `Err`, or a panic), within `patience`.
pub async fn supervise<F, Fut>(
    mut start: F,
    shutdown: CancellationToken,
    patience: Patience,
    mut report: impl FnMut(Report),
) -> Outcome
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    let mut recent: VecDeque<Instant> = VecDeque::new();
    loop {
        let why = match tokio::spawn(start()).await {
            Ok(Ok(())) => return Outcome::Stopped,
            Ok(Err(why)) => why,
            Err(error) => panic_message(error),
        };
        if shutdown.is_cancelled() {
            return Outcome::Stopped;
        }
        let now = Instant::now();
        recent.push_back(now);
        while recent.front().is_some_and(|&t| now.duration_since(t) > patience.within) {
            recent.pop_front();
        }
        if recent.len() >= patience.failures {
            return Outcome::GaveUp(why);
        }
        report(Report::Restarting { why, failures: recent.len() });
        tokio::select! {
            () = sleep(patience.pause) => {}
            () = shutdown.cancelled() => return Outcome::Stopped,
        }
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    match error.try_into_panic() {
        Ok(payload) => {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            format!("panicked: {text} (a bug: please report it with the board's capture)")
        }
        Err(error) => format!("its task was cancelled: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    };

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_task_that_panics_is_started_again_and_then_stops_normally() {
        let runs = Arc::new(AtomicUsize::new(0));
        let mut reports = Vec::new();
        let counter = runs.clone();
        let outcome = supervise(
            move || {
                let counter = counter.clone();
                async move {
                    if counter.fetch_add(1, Ordering::SeqCst) < 2 {
                        panic!("index out of bounds");
                    }
                    Ok(())
                }
            },
            CancellationToken::new(),
            Patience::default(),
            |r| reports.push(r),
        )
        .await;
        assert_eq!(outcome, Outcome::Stopped);
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        assert_eq!(reports.len(), 2);
        let Report::Restarting { why, failures } = &reports[1];
        assert!(why.contains("index out of bounds"), "{why}");
        assert_eq!(*failures, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_that_keeps_failing_is_given_up() {
        let outcome = supervise(
            || async { Err::<(), _>("the port vanished".to_owned()) },
            CancellationToken::new(),
            Patience { pause: Duration::from_secs(1), failures: 3, within: Duration::from_secs(60) },
            |_| {},
        )
        .await;
        assert_eq!(outcome, Outcome::GaveUp("the port vanished".into()));
    }

    #[tokio::test(start_paused = true)]
    async fn failures_long_apart_are_forgiven() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counter = runs.clone();
        let outcome = supervise(
            move || {
                let counter = counter.clone();
                async move {
                    let n = counter.fetch_add(1, Ordering::SeqCst);
                    if n < 6 {
                        // Each run lasts a minute before failing.
                        sleep(Duration::from_secs(60)).await;
                        return Err("flaky".to_owned());
                    }
                    Ok(())
                }
            },
            CancellationToken::new(),
            Patience { pause: Duration::from_secs(1), failures: 3, within: Duration::from_secs(90) },
            |_| {},
        )
        .await;
        assert_eq!(outcome, Outcome::Stopped, "never three failures within 90 s");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_ends_the_pause() {
        let shutdown = CancellationToken::new();
        let stop = shutdown.clone();
        let outcome = supervise(
            move || {
                let stop = stop.clone();
                async move {
                    stop.cancel();
                    Err("failed while stopping".to_owned())
                }
            },
            shutdown,
            Patience::default(),
            |_| panic!("no restart while stopping"),
        )
        .await;
        assert_eq!(outcome, Outcome::Stopped);
    }
}
