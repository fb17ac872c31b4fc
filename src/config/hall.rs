//! `[hall]` and the state file: boards plugged in but not configured are
//! looked for at an interval, and the boards the operator console assigns
//! are kept in a JSON state file that the daemon reads at every start, so
//! that an assignment outlasts a restart. A board of the state file is a
//! `[[boards]]` board: the same keys, checked by the same rules, with the
//! same defaults; one that clashes with the configuration (its name, port,
//! serial number or label) is refused with the reason.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Board, BoardConfig, Config, ConfigError, boards::BoardKeys};

/// `[hall]`: see `config/default.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HallConfig {
    /// The boards assigned in the operator console (a JSON file the daemon
    /// writes; relative paths are from its working directory).
    pub state_file: PathBuf,
    /// How often the serial ports no board holds are asked what is behind
    /// them; 0: never.
    pub probe_interval_s: u64,
}

/// One board of the state file: what the operator console's Assign gives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssignedBoard {
    /// Its name (logs, captures, commands).
    pub name: String,
    /// Its family (`dgt`, `millennium`, …).
    pub protocol: String,
    /// The device, for a family whose boards tell no serial number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<PathBuf>,
    /// Its serial number, found on any port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Its label in topics and PGN (the pairings' board number ends it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board: Option<String>,
    /// The player with the white pieces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub white: Option<String>,
    /// The player with the black pieces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub black: Option<String>,
    /// When and by whom it was assigned (for people reading the file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assigned: Option<String>,
}

impl AssignedBoard {
    /// The `[[boards]]` table it stands for.
    fn table(&self) -> BoardConfig {
        BoardConfig {
            name: self.name.clone(),
            protocol: Some(self.protocol.clone()),
            port: self.port.clone(),
            bluetooth: None,
            serial: self.serial.clone(),
            white_clock: Default::default(),
            chess960: false,
            event: None,
            round: None,
            board: self.board.clone(),
            white: self.white.clone(),
            black: self.black.clone(),
            time_control: None,
            rules: None,
            supervised: None,
            rotated_board: None,
            leds: Default::default(),
            clock_display: None,
            clock_display_show_ms: None,
            clock_display_min_left_s: None,
            calibration: None,
            speech_language: None,
            mirror_of: None,
            diverge_after_ms: None,
        }
    }
}

/// The state file's content.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateFile {
    /// What the file is (for people who open it).
    #[serde(default)]
    pub about: String,
    /// The assigned boards, in the order they were assigned.
    #[serde(default)]
    pub boards: Vec<AssignedBoard>,
}

/// What the file says about itself.
const ABOUT: &str = "boards assigned in the operator console; written by boardcast (docs/operator.md, \"Assigning a board\"): stop the daemon before editing";

/// A state file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// It could not be read.
    #[error("the state file {} (hall.state_file) cannot be read: {source}; give the daemon's user access to it, or point hall.state_file elsewhere", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// It is not the JSON the daemon writes.
    #[error("the state file {}, line {line} column {column}: {what}; correct it, or remove the file (its boards are then no longer assigned: assign them again in the console)", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line of the mistake.
        line: usize,
        /// Its column.
        column: usize,
        /// What is wrong.
        what: String,
    },
    /// A board in it is refused.
    #[error("the state file {}: {error}; correct or remove that board's entry (or the configuration's board it clashes with)", path.display())]
    Board {
        /// The file.
        path: PathBuf,
        /// The refusal, its key naming the entry (`boards[0].name`).
        error: ConfigError,
    },
}

impl StateFile {
    /// The file at `path`; empty when there is none yet.
    ///
    /// # Errors
    ///
    /// It cannot be read, or is not the JSON the daemon writes.
    pub fn read(path: &Path) -> Result<Self, StateError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(StateError::Read { path: path.to_owned(), source }),
        };
        Self::parse(path, &text)
    }

    /// The file's `text`.
    ///
    /// # Errors
    ///
    /// Not the JSON the daemon writes: the line and column of the mistake.
    pub fn parse(path: &Path, text: &str) -> Result<Self, StateError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_json::from_str(text).map_err(|e| StateError::Parse {
            path: path.to_owned(),
            line: e.line(),
            column: e.column(),
            what: e.to_string().split(" at line ").next().unwrap_or_default().to_owned(),
        })
    }

    /// The file's text, as written.
    pub fn text(&self) -> String {
        let file = Self { about: ABOUT.to_owned(), boards: self.boards.clone() };
        serde_json::to_string_pretty(&file).unwrap_or_default() + "\n"
    }

    /// Writes it to `path` so that no reader, and no start after a power
    /// cut, sees half of it: a temporary file beside it, flushed to the
    /// disk, renamed over the old one, and the folder flushed.
    ///
    /// # Errors
    ///
    /// When the folder cannot be created or the file cannot be written.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        use std::io::Write as _;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("state");
        let tmp = dir.join(format!(".{name}.tmp"));
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(self.text().as_bytes())?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, path)?;
        // The rename itself is on the disk only once the folder is.
        std::fs::File::open(dir)?.sync_all()
    }
}

impl Config {
    /// The configuration's boards, then the state file's, each checked as
    /// a `[[boards]]` table against every board before it.
    ///
    /// # Errors
    ///
    /// The configuration's first refused value, or the state file's first
    /// refused board, naming the file.
    pub fn boards_with(&self, state: &StateFile, path: &Path) -> Result<Vec<Board>, StateOrConfig> {
        let mut boards = self.boards().map_err(StateOrConfig::Config)?;
        for (i, assigned) in state.boards.iter().enumerate() {
            let board = self
                .assigned_board(i, assigned, &boards)
                .map_err(|error| StateOrConfig::State(StateError::Board { path: path.to_owned(), error }))?;
            boards.push(board);
        }
        Ok(boards)
    }

    /// Board `index` of the state file, checked against `before` (the
    /// boards of the configuration and the state file's before it).
    ///
    /// # Errors
    ///
    /// What a `[[boards]]` table with its keys would be refused for: a name,
    /// port, serial number or label another board has, an unknown family.
    pub fn assigned_board(
        &self,
        index: usize,
        assigned: &AssignedBoard,
        before: &[Board],
    ) -> Result<Board, ConfigError> {
        let mut board = self.board(&BoardKeys(format!("boards[{index}]")), &assigned.table(), before)?;
        board.assigned = true;
        Ok(board)
    }
}

/// What stops the boards from being known: the configuration, or the state
/// file.
#[derive(Debug, thiserror::Error)]
pub enum StateOrConfig {
    /// A value of the configuration.
    #[error(transparent)]
    Config(ConfigError),
    /// The state file.
    #[error(transparent)]
    State(StateError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn millennium(name: &str, port: &str) -> AssignedBoard {
        AssignedBoard {
            name: name.into(),
            protocol: "millennium".into(),
            port: Some(port.into()),
            serial: None,
            board: Some("7".into()),
            white: Some("Carlsen, Magnus".into()),
            black: None,
            assigned: None,
        }
    }

    #[test]
    fn a_state_file_is_read_back_as_written_and_a_missing_one_is_empty() {
        let dir = std::env::temp_dir().join(format!("boardcast-state-{}", std::process::id()));
        let path = dir.join("deep/assigned-boards.json");
        assert_eq!(StateFile::read(&path).unwrap(), StateFile::default());
        let state = StateFile { about: String::new(), boards: vec![millennium("mil", "/dev/ttyACM3")] };
        state.write(&path).unwrap();
        let read = StateFile::read(&path).unwrap();
        assert_eq!(read.boards, state.boards);
        assert!(!dir.join("deep/.assigned-boards.json.tmp").exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    fn config(boards: &str) -> Config {
        config::Config::builder()
            .add_source(config::File::from_str(
                &format!("{}\n{boards}", super::super::DEFAULTS),
                config::FileFormat::Toml,
            ))
            .build()
            .unwrap()
            .try_deserialize()
            .unwrap()
    }

    #[test]
    fn an_assigned_board_is_a_configured_one_and_a_clash_is_refused_with_the_reason() {
        let config = config("[[boards]]\nname = \"b1\"\nprotocol = \"dgt\"\nserial = \"03921\"\n");
        let path = Path::new("assigned-boards.json");
        let state = StateFile { about: String::new(), boards: vec![millennium("mil", "/dev/ttyACM3")] };
        let boards = config.boards_with(&state, path).unwrap();
        assert_eq!(boards[1].path.board, "7");
        assert_eq!(boards[1].find, crate::config::FindBoard::Port("/dev/ttyACM3".into()));
        assert!(boards[1].tags.contains(&("White".into(), "Carlsen, Magnus".into())), "{:?}", boards[1].tags);
        // The defaults of a [[boards]] table: the broadcast's event and round.
        assert_eq!(boards[1].tags[0], ("Event".into(), config.broadcast.event.clone()));
        let same_name = StateFile { about: String::new(), boards: vec![millennium("b1", "/dev/ttyACM3")] };
        let said = config.boards_with(&same_name, path).unwrap_err().to_string();
        assert!(
            said.contains("the state file assigned-boards.json: boards[0].name = \"b1\": a name no other board has"),
            "{said}"
        );
        let mut dgt = millennium("dgt", "/dev/ttyACM4");
        (dgt.protocol, dgt.port, dgt.serial, dgt.board) = ("dgt".into(), None, Some("3921".into()), None);
        let said = config.assigned_board(0, &dgt, &boards).unwrap_err().to_string();
        assert!(said.contains("the serial number of another board (board \"b1\""), "{said}");
    }

    #[test]
    fn a_bad_state_file_is_reported_with_its_path_line_and_what_to_do() {
        let text = "{\n  \"boards\": [\n    {\"name\": \"x\", \"protocol\": \"dgt\", \"colour\": 1}\n  ]\n}\n";
        let error = StateFile::parse(Path::new("/var/lib/boardcast/assigned-boards.json"), text).unwrap_err();
        let said = error.to_string();
        assert!(said.starts_with("the state file /var/lib/boardcast/assigned-boards.json, line 3 column"), "{said}");
        assert!(said.contains("unknown field `colour`") && said.contains("remove the file"), "{said}");
    }
}
