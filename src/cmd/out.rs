//! Standard output for commands that print (`config check`, `replay`,
//! `list-ports`, …): a reader that stops early (`boardcast config check |
//! head`) closes the pipe, and the command then stops quietly with status 0
//! (it was not asked for more) instead of panicking as `println!` does.
//! Any other failure to write (a full disk under a redirection) is said on
//! standard error, with status 1.

use std::io::{ErrorKind, Write};

/// Writes `bytes` to standard output, or ends the process as above.
pub(crate) fn write_all(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        if error.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        // Standard error may be gone too: nothing more can be said then.
        let _ = writeln!(std::io::stderr(), "boardcast: error: cannot write to standard output: {error}");
        std::process::exit(1);
    }
}

/// `print!` that stops quietly when the reader has gone (see the module).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cmd::out::write_all(format!($($arg)*).as_bytes())
    };
}

/// `println!` that stops quietly when the reader has gone (see the module).
macro_rules! outln {
    () => {
        $crate::cmd::out::write_all(b"\n")
    };
    ($($arg:tt)*) => {
        $crate::cmd::out::write_all(format!("{}\n", format_args!($($arg)*)).as_bytes())
    };
}
