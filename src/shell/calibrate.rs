//! A calibration a Certabo board learnt while the daemon reads it (the
//! `calibrate` command: the console's Calibrate, `boardcast ctl BOARD
//! calibrate`), written to the board's calibration file as `boardcast
//! calibrate` writes it (JSON, tag → piece letter), atomically, so that the
//! next start reads it. The answer the operator gets says where.

use std::{collections::BTreeMap, path::Path};

use super::files::write_atomic;

/// Writes `learnt` to `file`; the operator's answer.
pub(crate) async fn write(learnt: Result<Vec<(String, char)>, String>, file: Option<&Path>) -> Result<String, String> {
    let entries = learnt.map_err(|why| format!("not calibrated: {why} (the calibration in use stays)"))?;
    let pieces = entries.len();
    let Some(file) = file else {
        return Ok(format!("calibrated: {pieces} pieces learnt, in use until the board stops (no calibration file)"));
    };
    let map: BTreeMap<String, String> = entries.into_iter().map(|(tag, letter)| (tag, letter.to_string())).collect();
    let mut text = serde_json::to_string_pretty(&map).map_err(|e| e.to_string())?;
    text.push('\n');
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = tokio::fs::create_dir_all(dir).await;
    }
    match write_atomic(file, &text).await {
        Ok(()) => {
            tracing::info!("calibrated: {pieces} pieces learnt, written to {}", file.display());
            Ok(format!("calibrated: {pieces} pieces learnt, written to {}", file.display()))
        }
        Err(e) => Err(format!(
            "calibrated: {pieces} pieces learnt and in use now, but {} cannot be written ({e}): a restart would not have them; give the daemon's user access to its folder, or set the board's calibration = \"…\"",
            file.display()
        )),
    }
}
