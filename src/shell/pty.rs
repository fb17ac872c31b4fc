//! A pseudo-terminal standing in for a board's serial port: the daemon
//! opens the terminal's device (through a symlink at a path of the user's
//! choosing, as udev would make one) and the simulator holds the other end.
//!
//! The simulator's end is polled every few milliseconds rather than
//! registered with tokio's reactor: registering a raw descriptor needs
//! `unsafe`, which this crate forbids, and a board's traffic is a few
//! hundred bytes a second. Dropping the [`Pty`] closes its end at once,
//! which is what the daemon sees as a pulled cable.

use std::{
    io::{self, Read, Write},
    os::fd::{AsFd, OwnedFd},
    path::{Path, PathBuf},
    time::Duration,
};

use nix::{
    fcntl::{self, FcntlArg, OFlag},
    pty::{grantpt, posix_openpt, ptsname_r, unlockpt},
    sys::termios::{self, SetArg},
};

/// How often the simulator's end is looked at when there is nothing to
/// read: soon after activity, less and less often while it stays quiet.
const POLL_MIN: Duration = Duration::from_millis(2);
const POLL_MAX: Duration = Duration::from_millis(40);

/// The simulator's end of a pseudo-terminal, with the device's path linked
/// at a chosen path.
#[derive(Debug)]
pub struct Pty {
    master: std::fs::File,
    link: PathBuf,
}

impl Pty {
    /// Opens a pseudo-terminal and links its device at `link` (replacing a
    /// link already there).
    ///
    /// # Errors
    ///
    /// When no pseudo-terminal can be opened or the link cannot be made.
    pub fn open(link: &Path) -> io::Result<Self> {
        let master = posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY)?;
        grantpt(&master)?;
        unlockpt(&master)?;
        let device = ptsname_r(&master)?;
        // Raw mode on the terminal, so that bytes pass as they are even
        // before the daemon opens it and sets its own mode (the default
        // line discipline would echo them and wait for newlines).
        {
            use std::os::unix::fs::OpenOptionsExt;
            let slave =
                std::fs::OpenOptions::new().read(true).write(true).custom_flags(nix::libc::O_NOCTTY).open(&device)?;
            let mut attrs = termios::tcgetattr(slave.as_fd())?;
            termios::cfmakeraw(&mut attrs);
            termios::tcsetattr(slave.as_fd(), SetArg::TCSANOW, &attrs)?;
        }
        let flags = OFlag::from_bits_truncate(fcntl::fcntl(&master, FcntlArg::F_GETFL)?);
        fcntl::fcntl(&master, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
        let _ = std::fs::remove_file(link);
        std::os::unix::fs::symlink(&device, link)?;
        Ok(Self { master: std::fs::File::from(OwnedFd::from(master)), link: link.to_path_buf() })
    }

    /// Reads what the daemon wrote, waiting until there is something.
    /// `Ok(None)` means the daemon does not have the device open now.
    ///
    /// # Errors
    ///
    /// When the pseudo-terminal fails.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let mut poll = POLL_MIN;
        loop {
            match (&self.master).read(buf) {
                Ok(n) => return Ok(Some(n)),
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                    tokio::time::sleep(poll).await;
                    poll = (poll * 2).min(POLL_MAX);
                }
                // EIO: no process has the device open.
                Err(error) if error.raw_os_error() == Some(nix::libc::EIO) => return Ok(None),
                Err(error) => return Err(error),
            }
        }
    }

    /// Whether a program has the device open (the simulator's end reports
    /// a hang-up when the last one closes it).
    pub fn host_present(&self) -> bool {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let mut fds = [PollFd::new(self.master.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::ZERO) {
            Ok(_) => !fds[0].revents().is_some_and(|r| r.contains(PollFlags::POLLHUP)),
            Err(_) => true,
        }
    }

    /// Writes to the daemon. Bytes written while nobody has the device open
    /// are lost, as they would be on a cable to an idle computer.
    ///
    /// # Errors
    ///
    /// When the pseudo-terminal fails.
    pub async fn write_all(&self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            match (&self.master).write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(error) if error.kind() == io::ErrorKind::WouldBlock => tokio::time::sleep(POLL_MIN).await,
                Err(error) if error.raw_os_error() == Some(nix::libc::EIO) => return Ok(()),
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

impl Drop for Pty {
    /// The cable is pulled: the link goes away with the terminal.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.link);
    }
}
