//! The `boardcast` command: parses the command line and runs one of the
//! commands in `cmd/`. Everything else lives in the library.

mod cmd;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    cmd::malloc::cap_arenas();
    cmd::malloc::keep_large_blocks_apart();
    let cli = cmd::Cli::parse();
    match cmd::run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("boardcast: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
