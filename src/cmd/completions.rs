//! `boardcast completions <shell>`: the shell's tab-completion script,
//! made from the same command definitions as `--help`, so that it can
//! never offer a command or option the binary does not have.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use clap_complete::Shell;

/// Prints the tab-completion script for a shell.
///
/// The Debian package installs those for bash, zsh and fish; after `cargo install`, for
/// example: `boardcast completions bash >
/// ~/.local/share/bash-completion/completions/boardcast`, `boardcast
/// completions zsh > ~/.zfunc/_boardcast` (a folder on your fpath) or
/// `boardcast completions fish > ~/.config/fish/completions/boardcast.fish`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    shell: Shell,
}

pub(crate) fn run(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    // The command line without the hidden man page generator: `Cli`'s
    // --version and the user's commands.
    let mut command = super::Command::augment_subcommands(
        clap::Command::new("boardcast").version(env!("BOARDCAST_LONG_VERSION")).subcommand_required(true),
    );
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "boardcast", &mut script);
    super::out::write_all(&script);
    Ok(ExitCode::SUCCESS)
}
