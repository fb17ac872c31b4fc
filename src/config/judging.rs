//! `[reconstruction]` and `[link]`: how boards are judged (settle time,
//! touch time, the result gesture …) and how their links are kept alive.

use super::{Config, ConfigError, error};
use boardcast_core::reconstruct::{ReconstructorConfig, RotatedBoard, UncertainOrder, WhiteClock};
use serde::Deserialize;
use std::time::Duration;

/// `[reconstruction]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct ReconstructionConfig {
    pub settle_ms: u64,
    pub touch_min_ms: u64,
    #[serde(default = "default_release_min_ms")]
    pub release_min_ms: u64,
    pub out_of_sync_ms: u64,
    pub gesture_hold_ms: u64,
    pub press_grace_ms: u64,
    pub quiet_completion_ms: u64,
    pub fill_in_plies: usize,
    pub rotated_board: RotatedBoard,
    pub uncertain_order: UncertainOrder,
}

/// `release_min_ms` for configuration files written before it existed.
const fn default_release_min_ms() -> u64 {
    1000
}

/// `[link]`: see `config/default.toml` for each key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct LinkSettings {
    pub keepalive_ms: u64,
    pub silent_ms: u64,
    pub reconnect_max_ms: u64,
    /// A DGT Pegasus's developer key: 12 hex digits, or empty for none.
    #[serde(default)]
    pub pegasus_key: String,
}

/// `link.pegasus_key`: six bytes as 12 hex digits (spaces and colons
/// allowed between them), or none.
fn pegasus_key(text: &str) -> Result<Option<[u8; 6]>, ConfigError> {
    let digits: String = text.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
    if digits.is_empty() {
        return Ok(None);
    }
    let refused = || {
        error(
            "link.pegasus_key".into(),
            &format!("{text:?}"),
            "the developer key DGT gave you, 6 bytes as 12 hex digits (\"0123456789ab\"), or \"\" for none",
        )
    };
    if digits.len() != 12 || !digits.is_ascii() {
        return Err(refused());
    }
    let mut key = [0u8; 6];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| refused())?;
    }
    Ok(Some(key))
}

impl Config {
    /// The reconstructor's settings.
    ///
    /// # Errors
    ///
    /// When a duration is zero where it cannot be, or `fill_in_plies` is out
    /// of range.
    pub fn reconstructor(&self) -> Result<ReconstructorConfig, ConfigError> {
        let r = &self.reconstruction;
        let positive = |key: &str, ms: u64| {
            if ms == 0 {
                Err(error(format!("reconstruction.{key}"), "0", "a positive number of milliseconds"))
            } else {
                Ok(Duration::from_millis(ms))
            }
        };
        if !(1..=4).contains(&r.fill_in_plies) {
            return Err(error(
                "reconstruction.fill_in_plies".into(),
                &r.fill_in_plies.to_string(),
                "1 to 4 (plies filled in at most)",
            ));
        }
        Ok(ReconstructorConfig {
            settle: positive("settle_ms", r.settle_ms)?,
            touch_min: positive("touch_min_ms", r.touch_min_ms)?,
            release_min: positive("release_min_ms", r.release_min_ms)?,
            out_of_sync_after: positive("out_of_sync_ms", r.out_of_sync_ms)?,
            gesture_hold: positive("gesture_hold_ms", r.gesture_hold_ms)?,
            press_grace: positive("press_grace_ms", r.press_grace_ms)?,
            quiet_completion: positive("quiet_completion_ms", r.quiet_completion_ms)?,
            fill_in_plies: r.fill_in_plies,
            rotated_board: r.rotated_board,
            uncertain_order: r.uncertain_order,
            white_clock: WhiteClock::Auto,
        })
    }

    /// The link's settings.
    ///
    /// # Errors
    ///
    /// When a duration is zero, or the board is taken for silent before it
    /// is asked to speak.
    pub fn link(&self) -> Result<boardcast_core::protocol::link::LinkConfig, ConfigError> {
        let l = &self.link;
        if l.keepalive_ms == 0 {
            return Err(error("link.keepalive_ms".into(), "0", "a positive number of milliseconds"));
        }
        if l.silent_ms <= l.keepalive_ms {
            return Err(error(
                "link.silent_ms".into(),
                &l.silent_ms.to_string(),
                &format!(
                    "more than link.keepalive_ms ({}), so that a quiet board is asked before it is given up",
                    l.keepalive_ms
                ),
            ));
        }
        Ok(boardcast_core::protocol::link::LinkConfig {
            keepalive_after: Duration::from_millis(l.keepalive_ms),
            silent_after: Duration::from_millis(l.silent_ms),
            pegasus_key: pegasus_key(&l.pegasus_key)?,
            ..Default::default()
        })
    }
}
