//! Waiting for the signals that stop the daemon: Ctrl-C (SIGINT) and SIGTERM
//! (systemd's stop).

use tokio::signal::unix::{SignalKind, signal};

/// Returns when SIGINT or SIGTERM arrives.
pub(crate) async fn wait() {
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        // No SIGTERM handler to be had (it cannot fail on Linux, but if it
        // did, Ctrl-C still works).
        let _ = tokio::signal::ctrl_c().await;
        return;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
