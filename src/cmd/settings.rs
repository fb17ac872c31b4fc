//! Loading the configuration: the built-in defaults, then
//! `/etc/boardcast/boardcast.toml` if it exists, then the file given with
//! `--config`, then `BOARDCAST__SECTION__KEY` environment variables.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use boardcast::config::{Config, DEFAULTS};
use config::{Environment, File, FileFormat};

/// The system-wide configuration file, read when it exists.
pub(crate) const SYSTEM_FILE: &str = "/etc/boardcast/boardcast.toml";

/// The configuration, and the sources it was read from (for messages).
pub(crate) struct Loaded {
    pub(crate) config: Config,
    pub(crate) sources: Vec<String>,
}

/// The configuration of `text` (a whole file's worth) over the built-in
/// defaults, for a command that makes its own (`boardcast demo`); `file`
/// names it in messages.
pub(crate) fn from_text(text: &str, file: &Path) -> anyhow::Result<Config> {
    config::Config::builder()
        .add_source(File::from_str(DEFAULTS, FileFormat::Toml))
        .add_source(File::from_str(text, FileFormat::Toml))
        .build()
        .and_then(config::Config::try_deserialize)
        .with_context(|| format!("reading the configuration {}", file.display()))
}

/// Reads the configuration.
pub(crate) fn load(file: Option<&Path>) -> anyhow::Result<Loaded> {
    let mut sources = vec!["built-in defaults".to_owned()];
    let mut builder = config::Config::builder().add_source(File::from_str(DEFAULTS, FileFormat::Toml));
    let system = PathBuf::from(SYSTEM_FILE);
    if system.is_file() {
        builder = builder.add_source(File::from(system.clone()).format(FileFormat::Toml));
        sources.push(system.display().to_string());
    }
    if let Some(file) = file {
        if !file.is_file() {
            bail!(
                "{}: no such configuration file (give the path to a TOML file; `boardcast config default` prints one)",
                file.display()
            );
        }
        builder = builder.add_source(File::from(file.to_path_buf()).format(FileFormat::Toml));
        sources.push(file.display().to_string());
    }
    let environment = Environment::with_prefix("BOARDCAST").prefix_separator("__").separator("__").try_parsing(true);
    if std::env::vars().any(|(k, _)| k.starts_with("BOARDCAST__")) {
        sources.push("BOARDCAST__* environment variables".to_owned());
    }
    builder = builder.add_source(environment);
    let config: Config = builder
        .build()
        .and_then(config::Config::try_deserialize)
        .with_context(|| format!("reading the configuration from {}", sources.join(", then ")))?;
    Ok(Loaded { config, sources })
}
