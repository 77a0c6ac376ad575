//! Uploads in an S3-compatible object store (AWS S3, MinIO, Ceph, moto...), through the
//! `object_store` crate: one bucket, every file under an optional key prefix, so that several
//! Parley processes (or a cluster behind a balancer) share their uploads.
//!
//! [`FileStore`] is synchronous and its callers run it on tokio's blocking pool; the object
//! store's API is asynchronous. The store owns a small runtime of its own and every request
//! runs there: a call hands its future to that runtime and waits for the answer. The work never
//! needs the caller's thread (nor its runtime) to make progress, so a call cannot deadlock
//! wherever it comes from; one made on an async executor thread would only stall that thread,
//! and none is (every use in this crate goes through `spawn_blocking`). Connections live on
//! the store's runtime, so they outlast the request (and the actix worker) that opened them.
//!
//! Large files are written with a multipart upload: the first [`S3Config::part_size`] bytes
//! are kept, and only when a file outgrows them is a multipart upload started, at most two parts
//! in flight, so that an upload holds about three parts in memory whatever its size. Nothing is
//! visible at the path until the writer finishes (a small file is one `PUT` then, a large one
//! the upload's completion); a writer dropped unfinished aborts its upload.

use super::{check, FileReader, FileStore, FileStoreError, FileWriter};
use bytes::Bytes;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload, RetryConfig, WriteMultipart};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// The smallest part S3 accepts (but for the last one).
pub const MIN_PART_SIZE: usize = 5 * 1024 * 1024;

/// Parts in flight at once per upload.
const PARTS_IN_FLIGHT: usize = 2;

/// How long the start-up check waits for the bucket.
const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// Where the files go and how to reach them. Credentials missing here are taken from the usual
/// AWS environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, `AWS_REGION`/`AWS_DEFAULT_REGION`), then from the instance's role.
#[derive(Debug, Clone, Default)]
pub struct S3Config {
    /// The bucket.
    pub bucket: String,
    /// Key prefix of every file (`uploads` puts `2/ab/x/a.png` at `uploads/2/ab/x/a.png`);
    /// empty for the bucket's root.
    pub prefix: String,
    /// The service's URL, for S3-compatible servers (`http://127.0.0.1:9000` for MinIO); AWS
    /// when none. Plain `http://` is allowed only here, where it is spelled out.
    pub endpoint: Option<String>,
    /// The region [default: from the environment, else `us-east-1`].
    pub region: Option<String>,
    /// The access key ID (else from the environment).
    pub access_key_id: Option<String>,
    /// The secret access key (else from the environment).
    pub secret_access_key: Option<String>,
    /// Size of a multipart upload's parts; at least [`MIN_PART_SIZE`] (0 means that).
    pub part_size: usize,
}

impl S3Config {
    /// Reads `s3://BUCKET[/PREFIX]`.
    pub fn from_url(url: &str) -> Result<S3Config, String> {
        let rest = url
            .strip_prefix("s3://")
            .ok_or_else(|| format!("'{url}' is not an s3://BUCKET[/PREFIX] URL"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid_bucket = (3..=63).contains(&bucket.len())
            && bucket
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '.'));
        if !valid_bucket {
            return Err(format!("'{bucket}' in '{url}' is not a bucket name"));
        }
        let prefix = prefix.trim_matches('/');
        if !prefix.is_empty() && !super::is_safe_path(prefix) {
            return Err(format!("'{prefix}' in '{url}' is not a key prefix"));
        }
        Ok(S3Config {
            bucket: bucket.to_owned(),
            prefix: prefix.to_owned(),
            ..S3Config::default()
        })
    }

    /// `s3://bucket/prefix`, as logs and errors name the store.
    pub fn url(&self) -> String {
        if self.prefix.is_empty() {
            format!("s3://{}", self.bucket)
        } else {
            format!("s3://{}/{}", self.bucket, self.prefix)
        }
    }
}

/// What a store and its writers share: the client and the runtime its requests run on.
struct Shared {
    store: AmazonS3,
    bucket: String,
    prefix: String,
    part_size: usize,
    described: String,
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Dropping a runtime blocks, which panics on an async thread; let it wind down alone.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl Shared {
    /// Runs `future` on the store's runtime and waits for it on this thread.
    fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = T> + Send + 'static,
    ) -> Result<T, FileStoreError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv()
            .map_err(|_| FileStoreError(format!("{}: the request was cancelled", self.described)))
    }

    fn key(&self, path: &str) -> Result<ObjectPath, FileStoreError> {
        check(path)?;
        let segments = self
            .prefix
            .split('/')
            .filter(|s| !s.is_empty())
            .chain(path.split('/'));
        Ok(ObjectPath::from_iter(segments))
    }

    fn error(&self, what: &str, path: &str, e: object_store::Error) -> FileStoreError {
        FileStoreError(format!("cannot {what} {path} in {}: {e}", self.described))
    }
}

/// Files in an S3 bucket (see the module's description).
#[derive(Clone)]
pub struct S3FileStore {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for S3FileStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("S3FileStore")
            .field("store", &self.shared.described)
            .finish()
    }
}

impl S3FileStore {
    /// A client for the bucket; nothing is sent yet ([`S3FileStore::check`] does).
    pub fn new(config: &S3Config) -> Result<S3FileStore, FileStoreError> {
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(&config.bucket)
            .with_retry(RetryConfig {
                max_retries: 4,
                retry_timeout: Duration::from_secs(60),
                ..RetryConfig::default()
            });
        if let Some(endpoint) = &config.endpoint {
            builder = builder
                .with_endpoint(endpoint.trim_end_matches('/'))
                .with_allow_http(endpoint.starts_with("http://"))
                // Other servers name the bucket in the path, not the host.
                .with_virtual_hosted_style_request(false);
        }
        if let Some(region) = &config.region {
            builder = builder.with_region(region);
        }
        if let Some(key) = &config.access_key_id {
            builder = builder.with_access_key_id(key);
        }
        if let Some(secret) = &config.secret_access_key {
            builder = builder.with_secret_access_key(secret);
        }
        let described = match &config.endpoint {
            Some(endpoint) => format!("{} at {endpoint}", config.url()),
            None => config.url(),
        };
        let store = builder
            .build()
            .map_err(|e| FileStoreError(format!("cannot use {described}: {e}")))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("parley-s3")
            .enable_all()
            .build()
            .map_err(|e| FileStoreError(format!("cannot start the S3 client's threads: {e}")))?;
        let handle = runtime.handle().clone();
        Ok(S3FileStore {
            shared: Arc::new(Shared {
                store,
                bucket: config.bucket.clone(),
                prefix: config.prefix.clone(),
                part_size: config.part_size.max(MIN_PART_SIZE),
                described,
                runtime: Some(runtime),
                handle,
            }),
        })
    }

    /// The bucket's name.
    pub fn bucket(&self) -> &str {
        &self.shared.bucket
    }

    /// The bucket and prefix, as errors name them.
    pub fn described(&self) -> &str {
        &self.shared.described
    }

    /// Checks that the bucket can be reached and written, by writing and deleting a small
    /// object under the prefix; says why not otherwise. Async: it waits on the store's own
    /// runtime, not on a blocking thread.
    pub async fn check(&self) -> Result<(), FileStoreError> {
        let shared = self.shared.clone();
        let key = shared.key(&format!(".parley-check-{}", uuid::Uuid::new_v4().simple()))?;
        let work = self.shared.handle.spawn(async move {
            let attempt = async {
                shared
                    .store
                    .put(&key, PutPayload::from_static(b"ok"))
                    .await?;
                shared.store.delete(&key).await
            };
            match tokio::time::timeout(CHECK_TIMEOUT, attempt).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(format!("cannot write to {}: {e}", shared.described)),
                Err(_) => Err(format!(
                    "no answer from {} in {} seconds",
                    shared.described,
                    CHECK_TIMEOUT.as_secs()
                )),
            }
        });
        work.await
            .map_err(|e| FileStoreError(format!("the S3 check failed: {e}")))?
            .map_err(FileStoreError)
    }
}

/// How much a reader hands out at a time (the network's pieces are smaller).
const READ_PIECE: usize = 256 * 1024;

/// A file being read from S3: a task on the store's runtime reads the object's body and hands
/// it over in pieces of about [`READ_PIECE`], at most two ahead of the reader.
struct S3Reader {
    shared: Arc<Shared>,
    size: u64,
    pieces: Option<tokio::sync::mpsc::Receiver<Result<Vec<u8>, FileStoreError>>>,
}

impl FileReader for S3Reader {
    fn size(&self) -> u64 {
        self.size
    }

    fn next_piece(&mut self) -> Result<Option<Vec<u8>>, FileStoreError> {
        let Some(mut pieces) = self.pieces.take() else {
            return Ok(None);
        };
        let (pieces, next) = self.shared.run(async move {
            let next = pieces.recv().await;
            (pieces, next)
        })?;
        match next {
            Some(Ok(piece)) => {
                self.pieces = Some(pieces);
                Ok(Some(piece))
            }
            Some(Err(e)) => Err(e),
            None => Ok(None),
        }
    }
}

impl FileStore for S3FileStore {
    fn put(&self, path: &str, bytes: &[u8]) -> Result<(), FileStoreError> {
        let key = self.shared.key(path)?;
        let store = self.shared.clone();
        let payload = PutPayload::from(bytes.to_vec());
        self.shared
            .run(async move { store.store.put(&key, payload).await.map(|_| ()) })?
            .map_err(|e| self.shared.error("write", path, e))
    }

    fn get(&self, path: &str) -> Result<Option<Vec<u8>>, FileStoreError> {
        let key = self.shared.key(path)?;
        let shared = self.shared.clone();
        let found = self.shared.run(async move {
            match shared.store.get(&key).await {
                Ok(found) => found.bytes().await.map(Some),
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })?;
        found
            .map(|bytes| bytes.map(|b| b.to_vec()))
            .map_err(|e| self.shared.error("read", path, e))
    }

    fn delete(&self, path: &str) -> Result<bool, FileStoreError> {
        let key = self.shared.key(path)?;
        let shared = self.shared.clone();
        // S3 answers a delete the same whether there was an object or not: ask first.
        self.shared
            .run(async move {
                match shared.store.head(&key).await {
                    Ok(_) => shared.store.delete(&key).await.map(|()| true),
                    Err(object_store::Error::NotFound { .. }) => Ok(false),
                    Err(e) => Err(e),
                }
            })?
            .map_err(|e| self.shared.error("delete", path, e))
    }

    fn create(&self, path: &str) -> Result<Box<dyn FileWriter>, FileStoreError> {
        let key = self.shared.key(path)?;
        Ok(Box::new(S3Writer {
            shared: self.shared.clone(),
            path: path.to_owned(),
            key,
            state: WriterState::Buffering(Vec::new()),
        }))
    }

    fn open(&self, path: &str) -> Result<Option<Box<dyn FileReader>>, FileStoreError> {
        let key = self.shared.key(path)?;
        let shared = self.shared.clone();
        let owned = path.to_owned();
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        let (size_tx, size_rx) = tokio::sync::oneshot::channel();
        // Stops when the reader is dropped (the client went away).
        self.shared.handle.spawn(async move {
            use futures_util::StreamExt;
            let found = match shared.store.get(&key).await {
                Ok(found) => found,
                Err(object_store::Error::NotFound { .. }) => {
                    let _ = size_tx.send(Ok(None));
                    return;
                }
                Err(e) => {
                    let _ = size_tx.send(Err(shared.error("read", &owned, e)));
                    return;
                }
            };
            let _ = size_tx.send(Ok(Some(found.meta.size)));
            let mut body = found.into_stream();
            let mut piece = Vec::with_capacity(READ_PIECE);
            loop {
                let next = body.next().await;
                let done = match next {
                    Some(Ok(bytes)) => {
                        piece.extend_from_slice(&bytes);
                        false
                    }
                    Some(Err(e)) => {
                        let _ = tx.send(Err(shared.error("read", &owned, e))).await;
                        return;
                    }
                    None => true,
                };
                if (done && !piece.is_empty()) || piece.len() >= READ_PIECE {
                    let full = std::mem::replace(&mut piece, Vec::with_capacity(READ_PIECE));
                    if tx.send(Ok(full)).await.is_err() {
                        return;
                    }
                }
                if done {
                    return;
                }
            }
        });
        let size = self.shared.run(size_rx)?.map_err(|_| {
            FileStoreError(format!("{}: the read was cancelled", self.described()))
        })??;
        Ok(size.map(|size| {
            Box::new(S3Reader {
                shared: self.shared.clone(),
                size,
                pieces: Some(rx),
            }) as Box<dyn FileReader>
        }))
    }
}

/// Where a writer is: still holding the start of the file, or streaming parts.
enum WriterState {
    Buffering(Vec<u8>),
    Uploading(WriteMultipart),
    Done,
}

/// A file being written to S3 (see the module's description).
struct S3Writer {
    shared: Arc<Shared>,
    path: String,
    key: ObjectPath,
    state: WriterState,
}

impl S3Writer {
    fn error(&self, what: &str, e: object_store::Error) -> FileStoreError {
        self.shared.error(what, &self.path, e)
    }
}

impl FileWriter for S3Writer {
    fn write(&mut self, bytes: &[u8]) -> Result<(), FileStoreError> {
        match std::mem::replace(&mut self.state, WriterState::Done) {
            WriterState::Buffering(mut buffer) => {
                buffer.extend_from_slice(bytes);
                if buffer.len() < self.shared.part_size {
                    self.state = WriterState::Buffering(buffer);
                    return Ok(());
                }
                // Outgrown one part: start the multipart upload with what is held.
                let shared = self.shared.clone();
                let key = self.key.clone();
                let part_size = self.shared.part_size;
                let started = self.shared.run(async move {
                    let upload = shared.store.put_multipart(&key).await?;
                    let mut writer = WriteMultipart::new_with_chunk_size(upload, part_size);
                    writer.put(Bytes::from(buffer));
                    Ok::<_, object_store::Error>(writer)
                })?;
                self.state = WriterState::Uploading(started.map_err(|e| self.error("write", e))?);
                Ok(())
            }
            WriterState::Uploading(mut writer) => {
                let piece = Bytes::copy_from_slice(bytes);
                // Waits while two parts are in flight, so that memory stays bounded.
                let (writer, waited) = self.shared.run(async move {
                    let waited = writer.wait_for_capacity(PARTS_IN_FLIGHT).await;
                    if waited.is_ok() {
                        writer.put(piece);
                    }
                    (writer, waited)
                })?;
                match waited {
                    Ok(()) => {
                        self.state = WriterState::Uploading(writer);
                        Ok(())
                    }
                    Err(e) => {
                        abort_later(&self.shared, writer);
                        Err(self.error("write", e))
                    }
                }
            }
            WriterState::Done => Err(FileStoreError("write after finish".to_owned())),
        }
    }

    fn finish(mut self: Box<Self>) -> Result<(), FileStoreError> {
        let shared = self.shared.clone();
        let key = self.key.clone();
        let done = match std::mem::replace(&mut self.state, WriterState::Done) {
            WriterState::Buffering(buffer) => self.shared.run(async move {
                shared
                    .store
                    .put(&key, PutPayload::from(buffer))
                    .await
                    .map(|_| ())
            })?,
            // On a failed completion the upload aborts itself.
            WriterState::Uploading(writer) => self
                .shared
                .run(async move { writer.finish().await.map(|_| ()) })?,
            WriterState::Done => return Err(FileStoreError("finished twice".to_owned())),
        };
        done.map_err(|e| self.error("write", e))
    }
}

/// Aborts a multipart upload in the background (its parts are deleted; nothing was visible).
fn abort_later(shared: &Shared, writer: WriteMultipart) {
    shared.handle.spawn(async move {
        if let Err(e) = writer.abort().await {
            tracing::warn!(error = %e, "cannot abort an unfinished S3 upload");
        }
    });
}

impl Drop for S3Writer {
    fn drop(&mut self) {
        // Dropped unfinished (the client went away, or the file was too large).
        if let WriterState::Uploading(writer) =
            std::mem::replace(&mut self.state, WriterState::Done)
        {
            abort_later(&self.shared, writer);
        }
    }
}

/// Tests against a real S3-compatible server: they run when `TEST_S3_ENDPOINT` names one (CI
/// starts moto's server) and print a note and pass otherwise.
#[cfg(test)]
mod tests {
    use super::*;

    /// A store on a fresh bucket of the test server, when there is one.
    pub(crate) fn test_store(part_size: usize) -> Option<S3FileStore> {
        let Ok(endpoint) = std::env::var("TEST_S3_ENDPOINT") else {
            eprintln!("TEST_S3_ENDPOINT is not set: S3 store test skipped");
            return None;
        };
        let bucket = format!("parley-test-{}", uuid::Uuid::new_v4().simple());
        let config = S3Config {
            bucket,
            prefix: "uploads".to_owned(),
            endpoint: Some(endpoint.clone()),
            region: Some("us-east-1".to_owned()),
            access_key_id: Some("testing".to_owned()),
            secret_access_key: Some("testing".to_owned()),
            part_size,
        };
        let store = S3FileStore::new(&config).unwrap();
        create_bucket(&store, &endpoint);
        Some(store)
    }

    /// How many multipart uploads of the store's bucket are neither completed nor aborted
    /// (`GET /<bucket>?uploads`, unsigned: moto does not check signatures).
    fn pending_uploads(store: &S3FileStore) -> usize {
        let endpoint = std::env::var("TEST_S3_ENDPOINT").unwrap();
        let bucket = store.shared.bucket.clone();
        let url = format!("{}/{bucket}?uploads", endpoint.trim_end_matches('/'));
        let listing = store
            .shared
            .run(async move { reqwest::get(&url).await?.text().await })
            .unwrap()
            .unwrap();
        listing.matches("<Upload>").count()
    }

    /// Creates the store's bucket with a plain `PUT /<bucket>` (moto does not check
    /// signatures), on the store's runtime.
    fn create_bucket(store: &S3FileStore, endpoint: &str) {
        let url = format!("{}/{}", endpoint.trim_end_matches('/'), store.shared.bucket);
        let status = store
            .shared
            .run(async move {
                reqwest::Client::new()
                    .put(&url)
                    .send()
                    .await
                    .map(|r| r.status())
            })
            .unwrap()
            .unwrap();
        assert!(
            status.is_success(),
            "cannot create the test bucket: {status}"
        );
    }

    #[test]
    fn bucket_urls() {
        let c = S3Config::from_url("s3://my-bucket/parley/uploads/").unwrap();
        assert_eq!(
            (c.bucket.as_str(), c.prefix.as_str()),
            ("my-bucket", "parley/uploads")
        );
        assert_eq!(c.url(), "s3://my-bucket/parley/uploads");
        let c = S3Config::from_url("s3://my-bucket").unwrap();
        assert_eq!((c.bucket.as_str(), c.prefix.as_str()), ("my-bucket", ""));
        for bad in ["http://x/y", "s3://", "s3://UPPER", "s3://ok-bucket/a/../b"] {
            assert!(S3Config::from_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn s3_store_behaves_like_the_others() {
        let Some(store) = test_store(0) else { return };
        super::super::tests::exercise(&store);
    }

    #[test]
    fn s3_store_streams_large_files_in_parts() {
        let Some(store) = test_store(MIN_PART_SIZE) else {
            return;
        };
        // 12.5 MiB in 1 MiB pieces: three parts, the last one short.
        let piece: Vec<u8> = (0..1024 * 1024).map(|i| (i % 251) as u8).collect();
        let mut writer = store.create("1/ab/big/file.bin").unwrap();
        for _ in 0..12 {
            writer.write(&piece).unwrap();
        }
        writer.write(&piece[..512 * 1024]).unwrap();
        assert_eq!(
            store.get("1/ab/big/file.bin").unwrap(),
            None,
            "not visible yet"
        );
        writer.finish().unwrap();
        let got = store.get("1/ab/big/file.bin").unwrap().unwrap();
        assert_eq!(got.len(), 12 * 1024 * 1024 + 512 * 1024);
        assert!(got.chunks(piece.len()).all(|c| c == &piece[..c.len()]));

        // Several parts written, then dropped: nothing appears, the upload is aborted.
        let mut abandoned = store.create("1/ab/big/gone.bin").unwrap();
        for _ in 0..7 {
            abandoned.write(&piece).unwrap();
        }
        drop(abandoned);
        assert_eq!(store.get("1/ab/big/gone.bin").unwrap(), None);
        // The abort runs in the background: give it a moment.
        let mut pending = usize::MAX;
        for _ in 0..50 {
            pending = pending_uploads(&store);
            if pending == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        assert_eq!(pending, 0, "the unfinished upload was aborted");
    }

    #[tokio::test]
    async fn s3_store_reads_in_pieces_and_is_safe_on_an_async_thread() {
        let Some(store) = test_store(0) else { return };
        // Called right on this (single-threaded) runtime's thread: the work runs on the
        // store's own runtime, so this blocks for a moment but cannot deadlock.
        store.put("1/cd/x/a.txt", b"hello world").unwrap();
        store.check().await.unwrap();
        let mut reader = store.open("1/cd/x/a.txt").unwrap().unwrap();
        assert_eq!(reader.size(), 11);
        assert_eq!(reader.next_piece().unwrap().unwrap(), b"hello world");
        assert_eq!(reader.next_piece().unwrap(), None);
        assert!(store.open("1/cd/x/none.txt").unwrap().is_none());
        // Through the stream the server sends a download with.
        use futures_util::StreamExt;
        let mut pieces = Box::pin(super::super::pieces(
            store.open("1/cd/x/a.txt").unwrap().unwrap(),
        ));
        assert_eq!(pieces.next().await.unwrap().unwrap(), b"hello world");
        assert!(pieces.next().await.is_none());
        // The store dropped on an async thread (its runtime winds down in the background).
        drop(store);
    }

    #[tokio::test]
    async fn an_unreachable_bucket_is_refused_with_its_name() {
        let Ok(endpoint) = std::env::var("TEST_S3_ENDPOINT") else {
            eprintln!("TEST_S3_ENDPOINT is not set: S3 store test skipped");
            return;
        };
        let config = S3Config {
            bucket: "parley-no-such-bucket".to_owned(),
            endpoint: Some(endpoint),
            region: Some("us-east-1".to_owned()),
            access_key_id: Some("testing".to_owned()),
            secret_access_key: Some("testing".to_owned()),
            ..S3Config::default()
        };
        let err = S3FileStore::new(&config)
            .unwrap()
            .check()
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("s3://parley-no-such-bucket"), "{err}");
    }
}
