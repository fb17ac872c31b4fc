//! `boardcast config default` and `boardcast config check`: the built-in
//! defaults with every key explained, and the configuration the daemon
//! would run with, read and checked without starting it.

use std::{path::PathBuf, process::ExitCode};

use clap::{Args, Subcommand};

use boardcast::config::DEFAULTS;

use super::{daemon::Plan, settings};

/// Shows or checks the configuration.
#[derive(Debug, Args)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    command: ConfigCommand,
}

#[derive(Debug, Subcommand)]
enum ConfigCommand {
    /// Prints the built-in defaults, every key explained: a starting point
    /// for your own file.
    Default,
    /// Reads the configuration as `boardcast run` would (defaults, then
    /// /etc/boardcast/boardcast.toml, then --config, then BOARDCAST__*
    /// variables), checks every value, and says what the daemon would do.
    /// Exits with status 2 and the first problem if something is wrong.
    Check {
        /// Your configuration file.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
}

pub(crate) fn run(args: ConfigArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        ConfigCommand::Default => {
            out!("{DEFAULTS}");
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Check { config } => check(config),
    }
}

fn check(file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let loaded = settings::load(file.as_deref())?;
    let sources = loaded.sources.join(", then ");
    let plan = Plan::from_config(&loaded.config, &sources)?;
    let lines = plan.describe()?;
    outln!("configuration read from {sources}: no problems found");
    outln!();
    for line in lines {
        outln!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}
