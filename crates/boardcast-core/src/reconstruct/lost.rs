//! Whether the picture can be trusted: bytes lost on the line may have
//! taken a field update with them, so the picture may be wrong until the
//! board's next whole picture (which the link asks for), or for
//! [`LOST_BYTES_WAIT`] if none comes. Meanwhile nobody is accused on the
//! strength of it. A board that answers a request for its whole picture is
//! also asked before a player is blamed ([`LostBytes::ask_board_first`]).
//!
//! The reconstructor hands in what happens (`handle_*`) and asks
//! ([`LostBytes::is_suspect`], the deadlines); it owns no other state of
//! this kind.

use crate::time::Timestamp;

/// How long the picture stays suspect after lost bytes when no whole
/// board comes (the DGT link asks three times, half a second apart).
pub const LOST_BYTES_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long judging waits for the whole board asked for before blaming a
/// player: a DGT board answers a dump request within tens of milliseconds.
pub(super) const BOARD_CHECK_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// Lost bytes, and the whole board asked for and seen.
#[derive(Clone, Debug, Default)]
pub(super) struct LostBytes {
    /// The picture may be wrong until then (bytes lost, or a whole board
    /// asked for and not yet seen): presses are not judged and the board is
    /// not called out of sync meanwhile.
    suspect_until: Option<Timestamp>,
    /// When the picture was last made whole after lost bytes: deadlines
    /// that passed while it was suspect come due then, not in the past.
    resumed_at: Timestamp,
    /// When bytes were last lost.
    lost_at: Timestamp,
    /// The board answers a request for its whole picture (DGT, Millennium).
    board_answers: bool,
    /// When the whole board last came, or was last asked for: asked at most
    /// once for each incident.
    board_seen_at: Option<Timestamp>,
    /// A request for the whole board waits to be passed to the link.
    board_request: bool,
}

impl LostBytes {
    /// Whether the board answers a request for its whole picture.
    pub(super) fn set_board_answers(&mut self, answers: bool) {
        self.board_answers = answers;
    }

    /// Bytes were lost on the line.
    pub(super) fn handle_lost(&mut self, now: Timestamp) {
        self.suspect_until = Some(now + LOST_BYTES_WAIT);
        self.lost_at = now;
    }

    /// The whole board came: the picture is whole again.
    pub(super) fn handle_whole_board(&mut self, now: Timestamp) {
        self.board_seen_at = Some(now);
        if self.suspect_until.take().is_some() {
            self.resumed_at = now;
        }
    }

    /// The wait is over without a whole board: the picture is judged as seen.
    pub(super) fn handle_timeout(&mut self, now: Timestamp) {
        if self.suspect_until.is_some_and(|t| t <= now) {
            self.suspect_until = None;
        }
    }

    /// No whole board will come any more (the end of the stream).
    pub(super) fn handle_end(&mut self) {
        self.suspect_until = None;
    }

    /// Asks for the whole board if none came since the incident began
    /// (`since`); `true` when judging must wait for it.
    pub(super) fn ask_board_first(&mut self, now: Timestamp, since: Timestamp) -> bool {
        if !self.board_answers || self.board_seen_at.is_some_and(|t| t >= since) {
            return false;
        }
        self.board_seen_at = Some(now);
        self.board_request = true;
        self.suspect_until = Some(now + BOARD_CHECK_WAIT);
        true
    }

    /// Whether the whole board should be asked for now (once per request).
    pub(super) fn poll_board_request(&mut self) -> bool {
        std::mem::take(&mut self.board_request)
    }

    /// When the picture stops being suspect, if it is.
    pub(super) const fn poll_timeout(&self) -> Option<Timestamp> {
        self.suspect_until
    }

    /// Whether the picture may be wrong now.
    pub(super) const fn is_suspect(&self) -> bool {
        self.suspect_until.is_some()
    }

    /// Whether it is suspect because bytes were lost (rather than only
    /// waiting for a whole board asked for before blaming a player).
    pub(super) fn bytes_lost(&self) -> bool {
        self.suspect_until.is_some_and(|t| t == self.lost_at + LOST_BYTES_WAIT)
    }

    /// The earliest a board can count as settled (see
    /// `Reconstructor::settle_due`): while the picture is suspect, `settle`
    /// after the loss; otherwise not before it was made whole again.
    pub(super) fn settled_not_before(&self, settle: std::time::Duration) -> Timestamp {
        match self.suspect_until {
            Some(_) => self.lost_at + settle,
            None => self.resumed_at,
        }
    }

    /// A deadline that may have passed while the picture was suspect, moved
    /// to when it was made whole again.
    pub(super) fn resumed(&self, deadline: Timestamp) -> Timestamp {
        deadline.max(self.resumed_at)
    }
}
