//! `[speech]`: announcing completed moves and results aloud.

use super::Board;
use super::{Config, ConfigError, error, parse_language, quoted};
use boardcast_core::publish::render::Language;
use serde::Deserialize;
use std::time::Duration;

/// `[speech]`: see `config/default.toml` and docs/speech.md.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SpeechConfig {
    pub enabled: bool,
    /// The program and its arguments; the announcement is added as the
    /// last argument.
    pub command: Vec<String>,
    pub language: String,
    /// The boards that speak (empty: every board).
    #[serde(default)]
    pub boards: Vec<String>,
    pub max_queue: usize,
    pub timeout_ms: u64,
}

/// Announcing moves aloud, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Speech {
    /// The program and its arguments (not empty); the announcement is
    /// added as the last argument.
    pub command: Vec<String>,
    /// The announcements' language, unless a board says otherwise
    /// (`speech_language`).
    pub language: Language,
    /// The boards that speak (empty: every board).
    pub boards: Vec<String>,
    /// Announcements waiting at most per board; older ones are dropped.
    pub max_queue: usize,
    /// The longest one announcement may take.
    pub timeout: Duration,
}

impl Speech {
    /// The language `board` speaks in, if it speaks.
    pub fn language_of(&self, board: &Board) -> Option<Language> {
        if self.boards.is_empty() || self.boards.contains(&board.name) {
            Some(board.speech_language.unwrap_or(self.language))
        } else {
            None
        }
    }
}

impl Config {
    /// Announcing moves aloud (`None`: not enabled).
    ///
    /// # Errors
    ///
    /// An empty command, an unknown language, a board that is not
    /// configured, no room to wait or no time to speak.
    pub fn speech(&self) -> Result<Option<Speech>, ConfigError> {
        let s = &self.speech;
        if !s.enabled {
            return Ok(None);
        }
        if s.command.first().is_none_or(|program| program.trim().is_empty()) {
            return Err(error(
                "speech.command".into(),
                &format!("{:?}", s.command),
                "a program and its arguments, such as [\"espeak-ng\", \"-v\", \"de\"] (the announcement is added as the last argument)",
            ));
        }
        let language = parse_language("speech.language", &s.language)?;
        let boards = self.boards()?;
        for (i, name) in s.boards.iter().enumerate() {
            if !boards.iter().any(|b| &b.name == name) {
                let names: Vec<String> = boards.iter().map(|b| format!("{:?}", b.name)).collect();
                return Err(error(
                    format!("speech.boards[{i}]"),
                    &quoted(name),
                    &format!("the name of a configured board ([[boards]] name: {})", names.join(", ")),
                ));
            }
        }
        if s.max_queue == 0 {
            return Err(error(
                "speech.max_queue".into(),
                "0",
                "at least 1 announcement waiting per board (16 suits a hall)",
            ));
        }
        if s.timeout_ms < 100 {
            return Err(error(
                "speech.timeout_ms".into(),
                &s.timeout_ms.to_string(),
                "at least 100 milliseconds for one announcement (10000 suits espeak-ng)",
            ));
        }
        Ok(Some(Speech {
            command: s.command.clone(),
            language,
            boards: s.boards.clone(),
            max_queue: s.max_queue,
            timeout: Duration::from_millis(s.timeout_ms),
        }))
    }
}
