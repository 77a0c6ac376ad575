//! Where uploaded bytes live: a [`FileStore`] keyed by relative paths (`2/ab/xyz/a.png`), with a
//! local-disk implementation under `<data-dir>/uploads/` and an in-memory one for tests. The
//! trait is small so that an S3-compatible store can follow.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A failure of the store itself (disk full, permissions): never the client's fault.
#[derive(Debug, thiserror::Error)]
#[error("file store: {0}")]
pub struct FileStoreError(pub String);

/// Stores files by relative path. Paths are `/`-separated, never absolute and never contain
/// `..`; implementations refuse others.
pub trait FileStore: Send + Sync {
    /// Writes (or replaces) the file at `path`.
    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), FileStoreError>;
    /// The file at `path`, if there is one.
    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, FileStoreError>;
    /// Removes the file at `path`; false when there was none.
    fn delete(&self, path: &str) -> Result<bool, FileStoreError>;
}

/// Whether a store path is relative, `/`-separated and free of `.`/`..`/empty segments.
pub fn is_safe_path(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|p| !p.is_empty() && p != "." && p != ".." && !p.contains(['\\', '\0']))
}

fn check(path: &str) -> Result<(), FileStoreError> {
    if is_safe_path(path) {
        Ok(())
    } else {
        Err(FileStoreError(format!("unsafe path {path:?}")))
    }
}

/// Files in a folder on the local disk.
#[derive(Debug, Clone)]
pub struct LocalFileStore {
    root: PathBuf,
}

impl LocalFileStore {
    /// A store under `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalFileStore { root: root.into() }
    }

    /// The folder files are kept in.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, path: &str) -> Result<PathBuf, FileStoreError> {
        check(path)?;
        Ok(path.split('/').fold(self.root.clone(), |p, s| p.join(s)))
    }
}

impl FileStore for LocalFileStore {
    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), FileStoreError> {
        let full = self.full(path)?;
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| FileStoreError(format!("cannot create {}: {e}", parent.display())))?;
        }
        // Write aside, then rename, so that a reader never sees half a file.
        let tmp = full.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&tmp, bytes)
            .map_err(|e| FileStoreError(format!("cannot write {}: {e}", tmp.display())))?;
        std::fs::rename(&tmp, &full)
            .map_err(|e| FileStoreError(format!("cannot write {}: {e}", full.display())))
    }

    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, FileStoreError> {
        let full = self.full(path)?;
        match std::fs::read(&full) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(FileStoreError(format!(
                "cannot read {}: {e}",
                full.display()
            ))),
        }
    }

    fn delete(&self, path: &str) -> Result<bool, FileStoreError> {
        let full = self.full(path)?;
        match std::fs::remove_file(&full) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(FileStoreError(format!(
                "cannot delete {}: {e}",
                full.display()
            ))),
        }
    }
}

/// Files in memory: the default of a bare [`crate::Context`] and what tests use.
#[derive(Debug, Default)]
pub struct MemoryFileStore {
    files: Mutex<HashMap<String, Vec<u8>>>,
}

impl MemoryFileStore {
    fn files(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<u8>>> {
        // A panic while holding the lock leaves the map intact; keep using it.
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl FileStore for MemoryFileStore {
    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), FileStoreError> {
        check(path)?;
        self.files().insert(path.to_owned(), bytes.to_vec());
        Ok(())
    }

    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, FileStoreError> {
        check(path)?;
        Ok(self.files().get(path).cloned())
    }

    fn delete(&self, path: &str) -> Result<bool, FileStoreError> {
        check(path)?;
        Ok(self.files().remove(path).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(store: &dyn FileStore) {
        assert_eq!(store.get("1/ab/x/a.txt").unwrap(), None);
        store.put("1/ab/x/a.txt", b"hello").unwrap();
        assert_eq!(store.get("1/ab/x/a.txt").unwrap().unwrap(), b"hello");
        store.put("1/ab/x/a.txt", b"again").unwrap();
        assert_eq!(store.get("1/ab/x/a.txt").unwrap().unwrap(), b"again");
        assert!(store.delete("1/ab/x/a.txt").unwrap());
        assert!(!store.delete("1/ab/x/a.txt").unwrap());
        assert!(store.put("../escape", b"x").is_err());
        assert!(store.get("/etc/passwd").is_err());
        assert!(store.get("a//b").is_err());
    }

    #[test]
    fn memory_store() {
        exercise(&MemoryFileStore::default());
    }

    #[test]
    fn local_store() {
        let dir = std::env::temp_dir().join(format!("parley-files-{}", std::process::id()));
        exercise(&LocalFileStore::new(&dir));
        let _ = std::fs::remove_dir_all(dir);
    }
}
