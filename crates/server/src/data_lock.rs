//! The exclusive lock on a data folder: one service per log. A second service on the same
//! folder would append to the same games (two "Black passes (move 1)"), so it refuses to start
//! and names the process that holds the folder.
//!
//! The lock is the operating system's advisory lock on `tengen.lock` (`flock` on Unix,
//! `LockFileEx` on Windows), so it disappears with the process however it ends — a `kill -9`
//! leaves no stale lock to clean up. The file's text (process id and program) is
//! only there to name the holder: its process id and program.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside the data folder.
pub const LOCK_FILE: &str = "tengen.lock";

/// Why the folder could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the folder.
    #[error("the data folder {folder} is in use by another Tengen service ({holder}); stop it, or give this one another --data-dir")]
    InUse {
        /// The folder.
        folder: PathBuf,
        /// What the lock file says about its holder.
        holder: String,
    },
    /// The lock file could not be opened or written.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Holds a data folder for as long as it lives.
#[derive(Debug)]
pub struct DataDirLock {
    // Kept open: closing the file releases the lock.
    _file: File,
}

impl DataDirLock {
    /// Takes the folder's lock (the folder must exist), or says who holds it.
    pub fn acquire(folder: &Path) -> Result<Self, LockError> {
        let path = folder.join(LOCK_FILE);
        let io = |source| LockError::Io { path: path.clone(), source };
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                // The holder writes its line right after locking; an empty file means it is
                // just starting.
                let _ = file.read_to_string(&mut text);
                let holder = text.trim();
                let holder = if holder.is_empty() { "starting up" } else { holder };
                return Err(LockError::InUse { folder: folder.to_owned(), holder: holder.to_owned() });
            }
            Err(TryLockError::Error(source)) => return Err(io(source)),
        }
        // The program, not its arguments: a token given on the command line must not land in
        // a file.
        let program = std::env::args().next().unwrap_or_default();
        let line = format!("pid {}, {program}\n", std::process::id());
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = std::env::temp_dir().join(format!("tengen-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let first = DataDirLock::acquire(&dir).expect("the first lock");
        match DataDirLock::acquire(&dir) {
            Err(LockError::InUse { holder, .. }) => {
                assert!(holder.contains(&format!("pid {}", std::process::id())), "{holder}");
            }
            other => panic!("expected InUse, got {other:?}"),
        }
        drop(first);
        assert!(DataDirLock::acquire(&dir).is_ok(), "free again once dropped");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
