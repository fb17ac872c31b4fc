//! A simulated board of any family, sans-I/O: it answers the host's
//! commands as the real board does, and sends what a script (a capture of
//! decoded events, or raw bytes of the same family) says the board showed.
//! `boardcast simulate` puts one behind a pseudo-terminal.

pub mod certabo;
pub mod dgt;
pub mod millennium;
pub mod sentio;

pub use self::{certabo::CertaboSim, dgt::DgtSim, millennium::MillenniumSim, sentio::SentioSim};
use boardcast_core::{
    protocol::Protocol,
    sensor::{ClockSide, Picture, SensorEvent},
    time::Timestamp,
};

/// A simulated board. The larger ones are boxed so that the enum stays
/// the size of the smallest.
#[derive(Clone, Debug)]
pub enum SimBoard {
    /// A DGT board.
    Dgt(DgtSim),
    /// A Millennium ChessLink board.
    Millennium(Box<MillenniumSim>),
    /// A Certabo RFID board.
    Certabo(Box<CertaboSim>),
    /// An occupancy-only board (Sentio line format).
    Sentio(SentioSim),
}

impl SimBoard {
    /// A board of `protocol` with nothing on it yet; `None` for `events`.
    pub fn new(protocol: Protocol, serial: &str, white_side: ClockSide) -> Option<Self> {
        Some(match protocol {
            Protocol::Dgt => Self::Dgt(DgtSim::new(serial, white_side)),
            Protocol::Millennium => Self::Millennium(Box::new(MillenniumSim::new(serial, white_side))),
            Protocol::Certabo => Self::Certabo(Box::new(CertaboSim::new(serial, white_side))),
            Protocol::Sentio => Self::Sentio(SentioSim::new(serial, white_side)),
            Protocol::Events => return None,
        })
    }

    /// Whether the board is sending what happens (the host has started it,
    /// or it always does).
    pub fn sends_updates(&self) -> bool {
        match self {
            Self::Dgt(b) => b.sends_updates(),
            Self::Millennium(b) => b.sends_updates(),
            Self::Certabo(b) => b.sends_updates(),
            Self::Sentio(b) => b.sends_updates(),
        }
    }

    /// The board as it is now.
    pub fn picture(&self) -> &Picture {
        match self {
            Self::Dgt(b) => b.picture(),
            Self::Millennium(b) => b.picture(),
            Self::Certabo(b) => b.picture(),
            Self::Sentio(b) => b.picture(),
        }
    }

    /// Bytes the host sent.
    pub fn handle_host_bytes(&mut self, bytes: &[u8]) {
        match self {
            Self::Dgt(b) => b.handle_host_bytes(bytes),
            Self::Millennium(b) => b.handle_host_bytes(bytes),
            Self::Certabo(b) => b.handle_host_bytes(bytes),
            Self::Sentio(b) => b.handle_host_bytes(bytes),
        }
    }

    /// Raw bytes a recorded board of the same family sent.
    pub fn handle_script_bytes(&mut self, bytes: &[u8]) {
        match self {
            Self::Dgt(b) => b.handle_script_bytes(bytes),
            Self::Millennium(b) => b.handle_script_bytes(bytes),
            Self::Certabo(b) => b.handle_script_bytes(bytes),
            Self::Sentio(b) => b.handle_script_bytes(bytes),
        }
    }

    /// A decoded sensor event of a script.
    pub fn handle_script_event(&mut self, event: &SensorEvent) {
        match self {
            Self::Dgt(b) => b.handle_script_event(event),
            Self::Millennium(b) => b.handle_script_event(event),
            Self::Certabo(b) => b.handle_script_event(event),
            Self::Sentio(b) => b.handle_script_event(event),
        }
    }

    /// Time passes (in the simulation's own time: boards that stream send
    /// their reports on time).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        match self {
            Self::Dgt(b) => b.handle_timeout(now),
            Self::Millennium(b) => b.handle_timeout(now),
            Self::Certabo(b) => b.handle_timeout(now),
            Self::Sentio(b) => b.handle_timeout(now),
        }
    }

    /// When to call [`SimBoard::handle_timeout`] next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match self {
            Self::Dgt(b) => b.poll_timeout(),
            Self::Millennium(b) => b.poll_timeout(),
            Self::Certabo(b) => b.poll_timeout(),
            Self::Sentio(b) => b.poll_timeout(),
        }
    }

    /// Bytes to send to the host.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        match self {
            Self::Dgt(b) => b.poll_transmit(),
            Self::Millennium(b) => b.poll_transmit(),
            Self::Certabo(b) => b.poll_transmit(),
            Self::Sentio(b) => b.poll_transmit(),
        }
    }

    /// The cable was pulled: the board powers down.
    pub fn handle_unplugged(&mut self) {
        match self {
            Self::Dgt(b) => b.handle_unplugged(),
            Self::Millennium(b) => b.handle_unplugged(),
            Self::Certabo(b) => b.handle_unplugged(),
            Self::Sentio(b) => b.handle_unplugged(),
        }
    }

    /// Bytes to send, damaged as a noisy line damages them: with chance
    /// `noise` a burst of noise comes first, and with chance `noise` the
    /// bytes lose their end.
    pub fn poll_transmit_noisy(&mut self, noise: f64, rng: &mut crate::Rng) -> Option<Vec<u8>> {
        let mut bytes = self.poll_transmit()?;
        if rng.chance(noise) {
            let burst: Vec<u8> = (0..rng.range(1, 6)).map(|_| (rng.next_u64() & 0x7F) as u8).collect();
            bytes.splice(0..0, burst);
        }
        if bytes.len() > 3 && rng.chance(noise) {
            let cut = rng.range(1, bytes.len() as u64 - 1) as usize;
            bytes.truncate(cut);
        }
        Some(bytes)
    }
}
