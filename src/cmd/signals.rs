//! The signals the daemon answers: Ctrl-C (SIGINT) and SIGTERM (systemd's
//! stop) stop it; SIGHUP (systemd's reload) asks `boardcast run` to read its
//! broker's accounts and certificates again (src/cmd/daemon/reload.rs).

use tokio::signal::unix::{Signal, SignalKind, signal};

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

/// Takes SIGHUP from its default (ending the process): from this call on,
/// for the rest of the process, each SIGHUP is one `recv()` of the answer,
/// a request to reload. Call it inside the runtime, before anything else
/// starts, so that no SIGHUP can end the daemon.
///
/// # Errors
///
/// When the handler cannot be installed (not on Linux in practice).
pub(crate) fn hangups() -> std::io::Result<Signal> {
    signal(SignalKind::hangup())
}
