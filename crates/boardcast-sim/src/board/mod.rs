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

/// A simulated board of one family, as [`SimBoard`] drives it.
pub trait SimulatedBoard: std::fmt::Debug + Send {
    /// Whether the board is sending what happens (the host has started it,
    /// or it always does).
    fn sends_updates(&self) -> bool;

    /// The board as it is now.
    fn picture(&self) -> &Picture;

    /// Bytes the host sent.
    fn handle_host_bytes(&mut self, bytes: &[u8]);

    /// Raw bytes a recorded board of the same family sent.
    fn handle_script_bytes(&mut self, bytes: &[u8]);

    /// A decoded sensor event of a script.
    fn handle_script_event(&mut self, event: &SensorEvent);

    /// Time passes (in the simulation's own time: boards that stream send
    /// their reports on time).
    fn handle_timeout(&mut self, now: Timestamp);

    /// When to call `handle_timeout` next.
    fn poll_timeout(&self) -> Option<Timestamp>;

    /// Bytes to send to the host.
    fn poll_transmit(&mut self) -> Option<Vec<u8>>;

    /// The cable was pulled: the board powers down.
    fn handle_unplugged(&mut self);
}

/// Each family's simulator is a [`SimulatedBoard`] through its own methods
/// of the same names (which its tests call directly).
macro_rules! simulated_board_by_its_methods {
    ($($sim:ty),*) => {$(
        impl SimulatedBoard for $sim {
            fn sends_updates(&self) -> bool { <$sim>::sends_updates(self) }
            fn picture(&self) -> &Picture { <$sim>::picture(self) }
            fn handle_host_bytes(&mut self, bytes: &[u8]) { <$sim>::handle_host_bytes(self, bytes) }
            fn handle_script_bytes(&mut self, bytes: &[u8]) { <$sim>::handle_script_bytes(self, bytes) }
            fn handle_script_event(&mut self, event: &SensorEvent) { <$sim>::handle_script_event(self, event) }
            fn handle_timeout(&mut self, now: Timestamp) { <$sim>::handle_timeout(self, now) }
            fn poll_timeout(&self) -> Option<Timestamp> { <$sim>::poll_timeout(self) }
            fn poll_transmit(&mut self) -> Option<Vec<u8>> { <$sim>::poll_transmit(self) }
            fn handle_unplugged(&mut self) { <$sim>::handle_unplugged(self) }
        }
    )*};
}

simulated_board_by_its_methods!(DgtSim, MillenniumSim, CertaboSim, SentioSim);

/// A simulated board of any family (the family's own, behind
/// [`SimulatedBoard`]).
#[derive(Debug)]
pub struct SimBoard(Box<dyn SimulatedBoard>);

impl SimBoard {
    /// A board of `protocol` with nothing on it yet; `None` for `events`.
    /// One line per board family.
    pub fn new(protocol: Protocol, serial: &str, white_side: ClockSide) -> Option<Self> {
        Some(Self(match protocol {
            Protocol::Dgt => Box::new(DgtSim::new(serial, white_side)),
            Protocol::Millennium => Box::new(MillenniumSim::new(serial, white_side)),
            Protocol::Certabo => Box::new(CertaboSim::new(serial, white_side)),
            Protocol::Sentio => Box::new(SentioSim::new(serial, white_side)),
            Protocol::Events => return None,
        }))
    }

    /// Whether the board is sending what happens (the host has started it,
    /// or it always does).
    pub fn sends_updates(&self) -> bool {
        self.0.sends_updates()
    }

    /// The board as it is now.
    pub fn picture(&self) -> &Picture {
        self.0.picture()
    }

    /// Bytes the host sent.
    pub fn handle_host_bytes(&mut self, bytes: &[u8]) {
        self.0.handle_host_bytes(bytes);
    }

    /// Raw bytes a recorded board of the same family sent.
    pub fn handle_script_bytes(&mut self, bytes: &[u8]) {
        self.0.handle_script_bytes(bytes);
    }

    /// A decoded sensor event of a script.
    pub fn handle_script_event(&mut self, event: &SensorEvent) {
        self.0.handle_script_event(event);
    }

    /// Time passes (in the simulation's own time: boards that stream send
    /// their reports on time).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.0.handle_timeout(now);
    }

    /// When to call `handle_timeout` next.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.0.poll_timeout()
    }

    /// Bytes to send to the host.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.0.poll_transmit()
    }

    /// The cable was pulled: the board powers down.
    pub fn handle_unplugged(&mut self) {
        self.0.handle_unplugged();
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
