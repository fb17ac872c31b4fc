//! The command line: one module per command. This is binary glue: it reads
//! files and arguments, calls the library and writes results, with `anyhow`
//! errors that say what to do.

#[macro_use]
pub(crate) mod out;

pub(crate) mod accounts;
mod calibrate;
mod completions;
mod config;
mod ctl;
mod daemon;
mod demo;
mod list_ports;
mod logging;
pub(crate) mod malloc;
mod manpages;
mod replay;
mod run;
mod settings;
mod signals;
mod simulate;
mod synth;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Electronic chess boards in, a live tournament feed out.
#[derive(Debug, Parser)]
#[command(name = "boardcast", version = env!("BOARDCAST_LONG_VERSION"), about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: TopLevel,
}

/// The commands, and the man page generator the package build runs:
/// hidden from `--help` and, being outside [`Command`], from the
/// completion scripts too (`completions`).
// One value, made once at start: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum TopLevel {
    #[command(flatten)]
    Command(Command),
    #[command(hide = true)]
    Manpages(manpages::ManpagesArgs),
}

/// The commands a user runs.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    Run(run::RunArgs),
    Demo(demo::DemoArgs),
    Ctl(ctl::CtlArgs),
    Accounts(accounts::AccountsArgs),
    ListPorts(list_ports::ListPortsArgs),
    Config(config::ConfigArgs),
    Replay(replay::ReplayArgs),
    Simulate(simulate::SimulateArgs),
    Synth(synth::SynthArgs),
    Calibrate(calibrate::CalibrateArgs),
    Completions(completions::CompletionsArgs),
}

/// Runs the command; the exit code says whether everything went well.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let command = match cli.command {
        TopLevel::Command(command) => command,
        TopLevel::Manpages(args) => return manpages::run(args),
    };
    match command {
        Command::Run(args) => run::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Ctl(args) => ctl::run(args),
        Command::Accounts(args) => accounts::run(args),
        Command::ListPorts(args) => list_ports::run(args),
        Command::Config(args) => config::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Synth(args) => synth::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Completions(args) => completions::run(args),
    }
}

/// The daemon's event loop (`run` and `demo`): a worker thread a core, and
/// at most 16 threads for file work. Every capture and PGN write passes
/// through that pool, one short job at a time; uncapped, a hall of a
/// hundred boards kept a hundred of its threads alive, and a few more
/// after every restart (RELIABILITY.md, "Long day"). The loop also hands
/// memory the allocator keeps after a burst back to the system
/// (`malloc::hand_back`).
pub(crate) fn daemon_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    use anyhow::Context as _;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(16)
        .enable_all()
        .build()
        .context("starting the event loop")?;
    runtime.spawn(malloc::hand_back());
    Ok(runtime)
}
