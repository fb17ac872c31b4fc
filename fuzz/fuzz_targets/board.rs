//! Shared by the four board targets: bytes from a board of one family,
//! cut into reads at places the fuzzer chooses and spread over time, go
//! through the whole live session (decoder, link, reconstructor) exactly
//! as the daemon feeds it. Whatever the bytes, nothing may panic, hang or
//! grow without bound.

use boardcast_core::{protocol::{Protocol, link::LinkConfig}, reconstruct::{GameSetup, ReconstructorConfig}, session::BoardSession, time::Timestamp};

/// Runs `data` as a board of `protocol` would send it. The first byte of
/// every chunk says how long it is (1–16 bytes) and how long after the
/// previous one it arrives (0–1 s), so that timers fire in between.
pub fn run(protocol: Protocol, data: &[u8]) {
    let mut session =
        BoardSession::live(protocol, ReconstructorConfig::default(), GameSetup::default(), LinkConfig::default());
    let mut now = Timestamp::ZERO;
    session.handle_connected(now);
    let mut rest = data;
    while let Some((&control, tail)) = rest.split_first() {
        let len = usize::from(control & 0x0f) + 1;
        let gap_ms = u64::from(control >> 4) * 70;
        let (chunk, tail) = tail.split_at(len.min(tail.len()));
        rest = tail;
        now = now + std::time::Duration::from_millis(gap_ms);
        if let Some(deadline) = session.poll_timeout()
            && deadline <= now
        {
            session.handle_timeout(deadline);
        }
        session.handle_bytes(now, chunk);
        while session.poll_transmit(now).is_some() {}
        while session.poll_output().is_some() {}
    }
    session.handle_end(now);
    while session.poll_output().is_some() {}
}
