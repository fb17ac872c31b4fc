//! The operator key file (`[operator] key_file`): read by the daemon and
//! by `boardcast ctl`, created by the daemon when missing. One line of 64
//! lowercase hex characters, readable by its owner only.

use std::{
    fs::OpenOptions,
    io::{Read, Write},
    os::unix::fs::{MetadataExt, OpenOptionsExt},
    path::{Path, PathBuf},
};

use boardcast_core::publish::guard::{BadKey, OperatorKey};

/// Why the key file cannot be used; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Not readable.
    #[error(
        "cannot read the operator key file {path}: {source} ([operator] key_file; the daemon creates it when missing, `ctl` on another machine needs a copy)"
    )]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Not a key.
    #[error(
        "the operator key file {path} is not a key: {bad}; remove it to let the daemon make a new one (then copy it again to the machines that run `boardcast ctl`)"
    )]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        bad: BadKey,
    },
    /// Others may read it.
    #[error(
        "the operator key file {path} can be read by others (mode {mode:o}): anyone who reads it can change games; run `chmod 600 {path}`"
    )]
    Exposed {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// Cannot be created.
    #[error("cannot create the operator key file {path}: {source} ([operator] key_file)")]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Reads the key at `path`.
///
/// # Errors
///
/// Unreadable, malformed, or readable by group or others.
pub fn load(path: &Path) -> Result<OperatorKey, KeyFileError> {
    let read = |source| KeyFileError::Read { path: path.to_owned(), source };
    let mut file = std::fs::File::open(path).map_err(read)?;
    let mode = file.metadata().map_err(read)?.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(KeyFileError::Exposed { path: path.to_owned(), mode });
    }
    // A key is 65 bytes; more is not a key, and is not read whole.
    let mut text = String::new();
    let _ = (&mut file).take(4096).read_to_string(&mut text).map_err(read)?;
    OperatorKey::from_hex(&text).map_err(|bad| KeyFileError::Malformed { path: path.to_owned(), bad })
}

/// Reads the key at `path`, or creates it (32 random bytes from the
/// operating system, mode 0600, never over an existing file) when there
/// is none. Says whether it was created.
///
/// # Errors
///
/// As [`load`], or the file cannot be created.
pub fn load_or_create(path: &Path) -> Result<(OperatorKey, bool), KeyFileError> {
    if path.exists() {
        return load(path).map(|key| (key, false));
    }
    let create = |source| KeyFileError::Create { path: path.to_owned(), source };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(create)?;
    }
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom").and_then(|mut random| random.read_exact(&mut bytes)).map_err(create)?;
    let key = OperatorKey::from_bytes(bytes);
    let mut file = match OpenOptions::new().write(true).create_new(true).mode(0o600).open(path) {
        Ok(file) => file,
        // Another process made it meanwhile: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return load(path).map(|key| (key, false)),
        Err(e) => return Err(create(e)),
    };
    file.write_all(format!("{}\n", key.to_hex()).as_bytes()).and_then(|()| file.sync_all()).map_err(create)?;
    Ok((key, true))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_missing_key_is_created_private_and_then_read_back() {
        let dir = std::env::temp_dir().join(format!("boardcast-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let path = dir.join("sub/operator.key");
        let (key, created) = load_or_create(&path).unwrap();
        assert!(created);
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), format!("{}\n", key.to_hex()));
        assert_eq!(load_or_create(&path).unwrap(), (key.clone(), false));
        assert_eq!(load(&path).unwrap(), key);

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = load(&path).unwrap_err().to_string();
        assert!(error.contains("can be read by others (mode 644)") && error.contains("chmod 600"), "{error}");

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, "not a key\n").unwrap();
        let error = load_or_create(&path).unwrap_err().to_string();
        assert!(error.contains("is not a key") && error.contains("remove it"), "{error}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
