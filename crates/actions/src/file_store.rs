//! Where uploaded bytes live: a [`FileStore`] keyed by relative paths (`2/ab/xyz/a.png`), with a
//! local-disk implementation under `<data-dir>/uploads/` (the default), an S3-compatible one
//! ([`s3`]) that several server processes can share, and an in-memory one for tests.
//!
//! Large files are written piece by piece through a [`FileWriter`], so that an upload is never
//! held whole in memory; a file appears at its path only when its writer finishes.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub mod s3;

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
    /// Starts writing the file at `path` piece by piece; it replaces any file there when the
    /// writer finishes, and nothing changes if the writer is dropped unfinished.
    fn create(&self, path: &str) -> Result<Box<dyn FileWriter>, FileStoreError>;
    /// The file at `path` for reading piece by piece (a download served without holding the
    /// file whole), if there is one. By default the whole file, as one piece.
    fn open(&self, path: &str) -> Result<Option<Box<dyn FileReader>>, FileStoreError> {
        Ok(self.get(path)?.map(|bytes| {
            Box::new(WholeFile {
                size: bytes.len() as u64,
                bytes: Some(bytes),
            }) as Box<dyn FileReader>
        }))
    }
}

/// A file being read (see [`FileStore::open`]); like the store, called on blocking threads.
pub trait FileReader: Send {
    /// The file's size in bytes.
    fn size(&self) -> u64;
    /// The next piece; `None` at the end.
    fn next_piece(&mut self) -> Result<Option<Vec<u8>>, FileStoreError>;
}

/// A file read whole, handed out as one piece.
struct WholeFile {
    size: u64,
    bytes: Option<Vec<u8>>,
}

impl FileReader for WholeFile {
    fn size(&self) -> u64 {
        self.size
    }

    fn next_piece(&mut self) -> Result<Option<Vec<u8>>, FileStoreError> {
        Ok(self.bytes.take())
    }
}

/// How much a local file's reader reads at a time.
const READ_PIECE: usize = 256 * 1024;

/// A local file being read.
struct LocalReader {
    file: std::fs::File,
    size: u64,
    path: PathBuf,
}

impl FileReader for LocalReader {
    fn size(&self) -> u64 {
        self.size
    }

    fn next_piece(&mut self) -> Result<Option<Vec<u8>>, FileStoreError> {
        use std::io::Read;
        let mut piece = Vec::with_capacity(READ_PIECE);
        (&mut self.file)
            .take(READ_PIECE as u64)
            .read_to_end(&mut piece)
            .map_err(|e| io_error("read", &self.path, e))?;
        Ok((!piece.is_empty()).then_some(piece))
    }
}

/// The pieces of `reader` as a stream, each read on tokio's blocking pool; ends at the first
/// error.
pub fn pieces(
    reader: Box<dyn FileReader>,
) -> impl futures_util::Stream<Item = Result<Vec<u8>, FileStoreError>> + Send + 'static {
    futures_util::stream::unfold(Some(reader), |reader| async move {
        let mut reader = reader?;
        let read = tokio::task::spawn_blocking(move || {
            let piece = reader.next_piece();
            (reader, piece)
        })
        .await;
        match read {
            Ok((reader, Ok(Some(piece)))) => Some((Ok(piece), Some(reader))),
            Ok((_, Ok(None))) => None,
            Ok((_, Err(e))) => Some((Err(e), None)),
            Err(e) => Some((Err(FileStoreError(format!("read task failed: {e}"))), None)),
        }
    })
}

/// A file being written (see [`FileStore::create`]).
pub trait FileWriter: Send {
    /// Appends bytes.
    fn write(&mut self, bytes: &[u8]) -> Result<(), FileStoreError>;
    /// Makes the file visible at its path.
    fn finish(self: Box<Self>) -> Result<(), FileStoreError>;
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

/// A local file being written: a temporary file beside its final path, renamed on finish and
/// removed when dropped unfinished.
struct LocalWriter {
    file: Option<std::io::BufWriter<std::fs::File>>,
    tmp: PathBuf,
    full: PathBuf,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> FileStoreError {
    FileStoreError(format!("cannot {what} {}: {e}", path.display()))
}

impl FileWriter for LocalWriter {
    fn write(&mut self, bytes: &[u8]) -> Result<(), FileStoreError> {
        match &mut self.file {
            Some(file) => file
                .write_all(bytes)
                .map_err(|e| io_error("write", &self.tmp, e)),
            None => Err(FileStoreError("write after finish".to_owned())),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<(), FileStoreError> {
        let file = self
            .file
            .take()
            .ok_or_else(|| FileStoreError("finished twice".to_owned()))?;
        let file = file
            .into_inner()
            .map_err(|e| io_error("write", &self.tmp, e.into_error()))?;
        file.sync_all()
            .map_err(|e| io_error("write", &self.tmp, e))?;
        std::fs::rename(&self.tmp, &self.full).map_err(|e| io_error("write", &self.full, e))
    }
}

impl Drop for LocalWriter {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
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

    fn create(&self, path: &str) -> Result<Box<dyn FileWriter>, FileStoreError> {
        let full = self.full(path)?;
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_error("create", parent, e))?;
        }
        let tmp = full.with_extension(format!(
            "part-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let file = std::fs::File::create(&tmp).map_err(|e| io_error("create", &tmp, e))?;
        Ok(Box::new(LocalWriter {
            file: Some(std::io::BufWriter::with_capacity(256 * 1024, file)),
            tmp,
            full,
        }))
    }

    fn open(&self, path: &str) -> Result<Option<Box<dyn FileReader>>, FileStoreError> {
        let full = self.full(path)?;
        let file = match std::fs::File::open(&full) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error("read", &full, e)),
        };
        let size = file
            .metadata()
            .map_err(|e| io_error("read", &full, e))?
            .len();
        Ok(Some(Box::new(LocalReader {
            file,
            size,
            path: full,
        })))
    }
}

/// Files in memory: the default of a bare [`crate::Context`] and what tests use.
#[derive(Debug, Default)]
pub struct MemoryFileStore {
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
}

/// A file being written into a [`MemoryFileStore`].
struct MemoryWriter {
    files: Arc<Mutex<HashMap<String, Vec<u8>>>>,
    path: String,
    bytes: Vec<u8>,
}

impl FileWriter for MemoryWriter {
    fn write(&mut self, bytes: &[u8]) -> Result<(), FileStoreError> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<(), FileStoreError> {
        let MemoryWriter { files, path, bytes } = *self;
        files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(path, bytes);
        Ok(())
    }
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

    fn create(&self, path: &str) -> Result<Box<dyn FileWriter>, FileStoreError> {
        check(path)?;
        Ok(Box::new(MemoryWriter {
            files: self.files.clone(),
            path: path.to_owned(),
            bytes: Vec::new(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What every store must do; the S3 store's tests run it too.
    pub(crate) fn exercise(store: &dyn FileStore) {
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

        // Written in pieces, visible only when finished; dropped writers leave nothing.
        let mut writer = store.create("1/cd/y/big.bin").unwrap();
        writer.write(b"one ").unwrap();
        writer.write(b"two").unwrap();
        assert_eq!(store.get("1/cd/y/big.bin").unwrap(), None);
        writer.finish().unwrap();
        assert_eq!(store.get("1/cd/y/big.bin").unwrap().unwrap(), b"one two");
        let mut abandoned = store.create("1/cd/y/gone.bin").unwrap();
        abandoned.write(b"x").unwrap();
        drop(abandoned);
        assert_eq!(store.get("1/cd/y/gone.bin").unwrap(), None);
        assert!(store.create("../x").is_err());

        // Read back in pieces.
        let big: Vec<u8> = (0..700_000u32).map(|i| (i % 253) as u8).collect();
        store.put("1/ef/z/read.bin", &big).unwrap();
        let mut reader = store.open("1/ef/z/read.bin").unwrap().unwrap();
        assert_eq!(reader.size(), big.len() as u64);
        let mut read = Vec::new();
        while let Some(piece) = reader.next_piece().unwrap() {
            assert!(!piece.is_empty());
            read.extend_from_slice(&piece);
        }
        assert!(read == big);
        assert!(store.open("1/ef/z/none.bin").unwrap().is_none());
        assert!(store.open("../x").is_err());
        store.delete("1/ef/z/read.bin").unwrap();
    }

    #[test]
    fn memory_store() {
        exercise(&MemoryFileStore::default());
    }

    #[test]
    fn local_store() {
        let dir = std::env::temp_dir().join(format!("parley-files-{}", std::process::id()));
        exercise(&LocalFileStore::new(&dir));
        let leftovers = std::fs::read_dir(dir.join("1/cd/y")).unwrap().count();
        assert_eq!(leftovers, 1, "only the finished file remains");
        let _ = std::fs::remove_dir_all(dir);
    }
}
