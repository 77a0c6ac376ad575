//! A fresh bucket on the S3-compatible test server named by `TEST_S3_ENDPOINT` (CI runs moto's
//! server), for tests of the S3 upload store; without it those tests print a note and pass.

pub use parley_actions::file_store::s3::S3Config;
use parley_actions::file_store::s3::S3FileStore;
use std::io::{Read, Write};
use std::sync::Arc;

/// The test server's URL, or a printed note that the calling test is skipped.
pub fn endpoint() -> Option<String> {
    match std::env::var("TEST_S3_ENDPOINT") {
        Ok(endpoint) if !endpoint.trim().is_empty() => {
            Some(endpoint.trim().trim_end_matches('/').to_owned())
        }
        _ => {
            eprintln!("TEST_S3_ENDPOINT is not set: S3 upload store test skipped");
            None
        }
    }
}

/// A new empty bucket on the test server (with dummy credentials, which moto accepts), as the
/// configuration of a store under the prefix `uploads`; `None` without a test server.
pub fn fresh_bucket() -> Option<S3Config> {
    let endpoint = endpoint()?;
    let bucket = format!("parley-e2e-{}-{:x}", std::process::id(), rand_suffix());
    create_bucket(&endpoint, &bucket);
    Some(S3Config {
        bucket,
        prefix: "uploads".to_owned(),
        endpoint: Some(endpoint),
        region: Some("us-east-1".to_owned()),
        access_key_id: Some("testing".to_owned()),
        secret_access_key: Some("testing".to_owned()),
        part_size: 0,
    })
}

/// A store on the bucket `config` describes (one per node: each server process has its own
/// client), checked as the server checks it at start.
pub async fn store(config: &S3Config) -> Arc<S3FileStore> {
    let store = S3FileStore::new(config).expect("S3 client");
    store.check().await.expect("the test bucket is reachable");
    Arc::new(store)
}

fn rand_suffix() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    nanos ^ (u128::from(COUNTER.fetch_add(1, Ordering::Relaxed)) << 96)
}

/// `PUT /<bucket>` over plain HTTP (moto does not check signatures).
fn create_bucket(endpoint: &str, bucket: &str) {
    let host = endpoint
        .strip_prefix("http://")
        .expect("TEST_S3_ENDPOINT is an http:// URL")
        .trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host).expect("connect to TEST_S3_ENDPOINT");
    write!(
        stream,
        "PUT /{bucket} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("send to TEST_S3_ENDPOINT");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("read from TEST_S3_ENDPOINT");
    assert!(
        answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
        "cannot create bucket {bucket}: {answer}"
    );
}
