//! `boardcast run`: the daemon, as configured.

use std::{path::PathBuf, process::ExitCode};

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::{daemon, settings};

/// Runs the daemon: reads every board in the configuration until stopped
/// (Ctrl-C or SIGTERM), reconstructing the games, recording every byte as a
/// capture, writing each board's games as PGN after every move, and
/// publishing the live feed over MQTT (to the embedded broker unless
/// mqtt.url names one). SIGHUP (`systemctl reload boardcast`) makes the
/// embedded broker (Mosquitto) read the accounts file and its TLS
/// certificate again, without a restart.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The configuration file (TOML; `boardcast config default` prints the
    /// defaults with every key explained).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub(crate) fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let loaded = settings::load(args.config.as_deref())?;
    super::logging::init(loaded.config.log.format, loaded.config.log.level.name());
    let plan = daemon::Plan::from_config(&loaded.config, &loaded.sources.join(", then "))?;
    let runtime = super::daemon_runtime()?;
    runtime.block_on(async {
        // First: a SIGHUP from now on reloads rather than ends the daemon.
        let hangups = super::signals::hangups()
            .map_err(|e| tracing::warn!("SIGHUP cannot be caught ({e}): it stops the daemon instead of reloading"))
            .ok();
        let shutdown = CancellationToken::new();
        let on_signal = shutdown.clone();
        tokio::spawn(async move {
            super::signals::wait().await;
            tracing::info!("stopping: writing games and captures");
            on_signal.cancel();
        });
        daemon::serve(plan, shutdown, hangups, |_| {}).await
    })?;
    Ok(ExitCode::SUCCESS)
}
