//! Recognising a board on a port, sans-I/O: what to send, and what the
//! answer means, from each family's [`Probe`] data. The shell opens the
//! port at the family's speed, sends [`Probing::ask`], hands in what comes
//! back, and stops at [`Probing::is_done`] or when its wait is over.

use super::{BoardDecoder, BoardInfo, Decoded, FAMILIES, Family, Probe};

/// A board found on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// Its family.
    pub family: &'static Family,
    /// Its serial number, if the family's answer names one.
    pub serial: Option<String>,
    /// Its firmware version, if the family's answer names one.
    pub(crate) version: Option<String>,
}

impl Found {
    /// Its firmware version, if the family's answer names one.
    pub fn firmware(&self) -> Option<&str> {
        self.version.as_deref()
    }
}

impl std::fmt::Display for Found {
    /// What `list-ports` says: `DGT board, serial 03921, firmware 1.2`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.family.title)?;
        if let Some(serial) = &self.serial {
            write!(f, ", serial {serial}")?;
        }
        if let Some(version) = &self.version {
            write!(f, ", firmware {version}")?;
        }
        Ok(())
    }
}

/// One family's probe of one port, under way.
#[derive(Debug)]
pub struct Probing {
    family: &'static Family,
    decoder: Box<dyn BoardDecoder>,
    answered: bool,
    serial: Option<String>,
    version: Option<String>,
}

impl Probing {
    /// A probe for `family`'s boards.
    pub fn new(family: &'static Family) -> Self {
        Self { family, decoder: (family.decoder)(), answered: false, serial: None, version: None }
    }

    /// The family probed for.
    pub const fn family(&self) -> &'static Family {
        self.family
    }

    /// What to send first (nothing, for a board that streams by itself).
    pub fn ask(&self) -> Vec<u8> {
        (self.family.probe.ask)()
    }

    /// Bytes the port gave.
    pub fn handle_bytes(&mut self, bytes: &[u8]) {
        self.decoder.handle_bytes(bytes);
        let probe: &Probe = &self.family.probe;
        while let Some(decoded) = self.decoder.poll_decoded() {
            if (probe.answers)(&decoded) {
                self.answered = true;
            }
            match decoded {
                Decoded::Info(BoardInfo::Serial(serial)) if probe.tells_serial => self.serial = Some(serial),
                Decoded::Info(BoardInfo::Version(version)) if probe.tells_version => self.version = Some(version),
                _ => {}
            }
        }
    }

    /// Whether everything the family's answer can say has been said (no
    /// need to wait longer).
    pub fn is_done(&self) -> bool {
        let probe = &self.family.probe;
        self.answered
            && (!probe.tells_serial || self.serial.is_some())
            && (!probe.tells_version || self.version.is_some())
    }

    /// The board, if one of the family answered.
    pub fn found(&self) -> Option<Found> {
        self.answered.then(|| Found { family: self.family, serial: self.serial.clone(), version: self.version.clone() })
    }
}

/// The probes to run on a port, in order, grouped into rounds that can
/// share one opening of the port: the families that only listen at the same
/// speed are listened for together.
pub fn rounds() -> Vec<Vec<&'static Family>> {
    let mut families: Vec<&'static Family> = FAMILIES.into_iter().filter(|f| f.on_serial).collect();
    families.sort_by_key(|f| f.probe.rank);
    let mut rounds: Vec<Vec<&'static Family>> = Vec::new();
    for family in families {
        let listens = (family.probe.ask)().is_empty();
        match rounds.last_mut() {
            Some(round) if listens && round.iter().all(|f| (f.probe.ask)().is_empty() && f.baud == family.baud) => {
                round.push(family);
            }
            _ => rounds.push(vec![family]),
        }
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::dgt;

    #[test]
    fn streaming_boards_are_listened_for_first_and_together() {
        let names: Vec<Vec<&str>> = rounds().iter().map(|r| r.iter().map(|f| f.name).collect()).collect();
        assert_eq!(names, [vec!["certabo", "sentio"], vec!["millennium"], vec!["dgt"]]);
    }

    #[test]
    fn a_dgt_answer_names_serial_and_version() {
        use dgt::message::Message;
        let mut probe = Probing::new(&dgt::FAMILY);
        assert!(!probe.ask().is_empty());
        let mut bytes = Vec::new();
        Message::SerialNumber("03921".into()).encode(&mut bytes);
        probe.handle_bytes(&bytes);
        assert!(!probe.is_done(), "the version is still to come");
        bytes.clear();
        Message::Version { major: 1, minor: 2 }.encode(&mut bytes);
        probe.handle_bytes(&bytes);
        assert!(probe.is_done());
        assert_eq!(probe.found().unwrap().to_string(), "DGT board, serial 03921, firmware 1.2");
    }

    #[test]
    fn silence_and_noise_find_nothing() {
        for family in FAMILIES {
            let mut probe = Probing::new(family);
            probe.handle_bytes(b"\x00\x13garbage\xff");
            assert_eq!(probe.found(), None, "{}", family.name);
        }
    }
}
