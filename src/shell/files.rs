//! Writing output files so that a reader never sees half of one: write a
//! temporary file beside it, then rename it over the old one (a rename
//! within a folder is atomic on every filesystem the daemon runs on).

use std::path::Path;

/// Replaces `path` with `text`, atomically.
///
/// # Errors
///
/// When the folder cannot be created or the file cannot be written.
pub async fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        tokio::fs::create_dir_all(dir).await?;
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("output");
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    tokio::fs::write(&tmp, text).await?;
    tokio::fs::rename(&tmp, path).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn replaces_the_file_whole() {
        let dir = std::env::temp_dir().join(format!("boardcast-files-{}", std::process::id()));
        let path = dir.join("deep/game.pgn");
        write_atomic(&path, "first").await.unwrap();
        write_atomic(&path, "second").await.unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
