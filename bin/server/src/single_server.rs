//! One server process per SQLite database: SQLite keeps the event queues, the publish gate and
//! the rate limits in the process, so a second `parley serve` on the same file would split
//! them and clients would miss events. The first server holds an exclusive `flock(2)` on
//! `<database>.serve-lock` for as long as it runs (the kernel releases it when the process
//! ends, even by `kill -9`); a second one is refused with a message saying what to do. The
//! other subcommands (`create-user`, `backup`, ...) do not take it and run beside a server.

use anyhow::{bail, Context as _};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Held while this process serves the database.
#[derive(Debug)]
pub struct ServeLock {
    _file: File,
    /// The lock file.
    pub path: PathBuf,
}

/// The lock file of the SQLite database at `database`.
pub fn lock_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".serve-lock");
    PathBuf::from(name)
}

/// Takes the serve lock of the SQLite database at `database`, or fails saying which process
/// holds it.
pub fn lock(database: &Path) -> anyhow::Result<ServeLock> {
    let path = lock_path(database);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    if !try_lock(&file) {
        let mut holder = String::new();
        let _ = file.read_to_string(&mut holder);
        let holder = match holder.trim() {
            "" => String::new(),
            pid => format!(" (process {pid})"),
        };
        bail!(
            "another Parley server{holder} is already serving the SQLite database {}. \
             A SQLite database is served by one process; stop the other server first, or use \
             PostgreSQL (--database-url postgres://...) to run several servers on one database \
             (docs/deployment.md).",
            database.display()
        );
    }
    file.set_len(0)?;
    file.rewind()?;
    write!(file, "{}", std::process::id())?;
    file.flush()?;
    Ok(ServeLock { _file: file, path })
}

#[cfg(unix)]
fn try_lock(file: &File) -> bool {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a file descriptor this function borrows for the call; no memory is
    // shared with the kernel.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

#[cfg(not(unix))]
fn try_lock(_file: &File) -> bool {
    true
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_second_server_on_the_same_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("parley.db");
        let first = lock(&db).unwrap();
        let refused = lock(&db).unwrap_err().to_string();
        assert!(
            refused.contains("already serving the SQLite database"),
            "{refused}"
        );
        assert!(
            refused.contains(&std::process::id().to_string()),
            "{refused}"
        );
        drop(first);
        lock(&db).unwrap();
    }
}
