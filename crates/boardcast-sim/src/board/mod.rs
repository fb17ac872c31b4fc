//! A simulated board of any family, sans-I/O: it answers the host's
//! commands as the real board does, and sends what a script (a capture of
//! decoded events, or raw bytes of the same family) says the board showed.
//! `boardcast simulate` puts one behind a pseudo-terminal.

pub mod certabo;
pub mod chessnut;
pub mod chessup;
pub mod dgt;
pub mod ichessone;
pub mod millennium;
pub mod pegasus;
pub mod scan;
pub mod sentio;
pub mod squareoff;

pub use self::{
    certabo::CertaboSim, chessnut::ChessnutSim, chessup::ChessUpSim, dgt::DgtSim, ichessone::IChessOneSim,
    millennium::MillenniumSim, pegasus::PegasusSim, sentio::SentioSim, squareoff::SquareOffSim,
};
use boardcast_core::{
    protocol::{
        Family, Protocol, certabo as certabo_family, chessnut as chessnut_family, chessup as chessup_family,
        dgt as dgt_family, ichessone as ichessone_family, millennium as millennium_family, pegasus as pegasus_family,
        sentio as sentio_family, squareoff as squareoff_family,
    },
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

    /// The cable was pulled (or the Bluetooth link dropped): the board
    /// powers down, or ends its session with the host.
    fn handle_unplugged(&mut self);

    /// How many of its LEDs are lit, for a board whose LEDs it follows.
    fn lit_leds(&self) -> Option<usize> {
        None
    }

    /// Whether the board wants its link to the host dropped now (a ChessUp
    /// whose move messages went unacknowledged): on Bluetooth the simulator
    /// drops it; on a cable the board only falls silent.
    fn drops_host(&self) -> bool {
        false
    }
}

/// Makes a simulated board with this serial number, White's clock on this
/// side.
type MakeSimulator = fn(&str, ClockSide) -> Box<dyn SimulatedBoard>;

/// Every family the simulator plays, with how to make a board of it: one
/// line per family.
const SIMULATORS: [(&Family, MakeSimulator); 9] = [
    (&dgt_family::FAMILY, |serial, side| Box::new(DgtSim::new(serial, side))),
    (&millennium_family::FAMILY, |serial, side| Box::new(MillenniumSim::new(serial, side))),
    (&certabo_family::FAMILY, |serial, side| Box::new(CertaboSim::new(serial, side))),
    (&sentio_family::FAMILY, |serial, side| Box::new(SentioSim::new(serial, side))),
    (&chessnut_family::FAMILY, |serial, side| Box::new(ChessnutSim::new(serial, side))),
    (&pegasus_family::FAMILY, |serial, side| Box::new(PegasusSim::new(serial, side))),
    (&squareoff_family::FAMILY, |serial, side| Box::new(SquareOffSim::new(serial, side))),
    (&ichessone_family::FAMILY, |serial, side| Box::new(IChessOneSim::new(serial, side))),
    (&chessup_family::FAMILY, |serial, side| Box::new(ChessUpSim::new(serial, side))),
];

/// A simulated board of `protocol` with nothing on it yet; `None` for
/// `events`, or a family the simulator cannot play.
pub fn simulator(protocol: Protocol, serial: &str, white_side: ClockSide) -> Option<Box<dyn SimulatedBoard>> {
    let family = protocol.family()?;
    SIMULATORS.iter().find(|(f, _)| *f == family).map(|(_, make)| make(serial, white_side))
}

/// Bytes a board sends, damaged as a noisy line damages them: with chance
/// `noise` a burst of noise comes first, and with chance `noise` the bytes
/// lose their end.
pub fn poll_transmit_noisy(board: &mut dyn SimulatedBoard, noise: f64, rng: &mut crate::Rng) -> Option<Vec<u8>> {
    let mut bytes = board.poll_transmit()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use boardcast_core::protocol::FAMILIES;

    #[test]
    fn every_family_can_be_simulated() {
        for family in FAMILIES {
            assert!(simulator(family.protocol(), "1", ClockSide::Left).is_some(), "{}", family.name);
        }
        assert!(simulator(Protocol::EVENTS, "1", ClockSide::Left).is_none());
    }
}
