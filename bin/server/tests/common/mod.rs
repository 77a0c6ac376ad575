//! Helpers shared by the tests of the `parley` binary: starting it, raw HTTP over TCP (no client
//! library, so the requests are exactly what is written), stopping it.

#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

pub const BINARY: &str = env!("CARGO_BIN_EXE_parley");

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn parley(data_dir: &Path, database_url: &str, port: u16) -> Command {
    let mut command = Command::new(BINARY);
    command
        .env_remove("DATABASE_URL")
        .env("PARLEY_LOG", "warn")
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--database-url")
        .arg(database_url)
        .arg("--bind")
        .arg(format!("127.0.0.1:{port}"));
    command
}

/// A raw response: status, header block and body (chunked bodies decoded).
pub struct Raw {
    pub status: u16,
    pub headers: String,
    pub body: Vec<u8>,
}

impl Raw {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size_text = String::from_utf8_lossy(&body[..end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        let start = end + 2;
        out.extend_from_slice(&body[start..start + size]);
        body = &body[start + size + 2..];
    }
}

/// One HTTP/1.1 request over a fresh connection.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<Raw> {
    // By name, so a server bound to whichever address `localhost` resolves to is reached.
    let mut stream = TcpStream::connect(("localhost", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("no header end"))?;
    let headers = String::from_utf8_lossy(&response[..split]).into_owned();
    let status = headers
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status"))?;
    let mut body = response[split + 4..].to_vec();
    if headers
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    Ok(Raw {
        status,
        headers,
        body,
    })
}

/// A form request; returns status and JSON body.
pub fn http(port: u16, method: &str, path: &str, auth: Option<&str>, body: &str) -> (u16, Value) {
    let auth_header = auth.map(|a| format!("Basic {a}"));
    let mut headers = vec![("Content-Type", "application/x-www-form-urlencoded")];
    if let Some(a) = &auth_header {
        headers.push(("Authorization", a));
    }
    let raw = request(port, method, path, &headers, body.as_bytes()).unwrap();
    (raw.status, raw.json())
}

pub fn wait_until_up(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        // The port is bound before start-up finishes; /health answers once it serves.
        if request(port, "GET", "/health", &[], b"").is_ok_and(|r| r.status == 200) {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("parley exited early with {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("parley did not start listening on {port}");
}

pub fn stop(child: Child) -> Output {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    child.wait_with_output().unwrap()
}

pub fn zuliprc_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        .to_owned()
}

pub fn basic(email: &str, key: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{email}:{key}"))
}

/// The owner's Basic credentials from `owner.zuliprc` in `data`.
pub fn owner_auth(data: &Path) -> String {
    let zuliprc = std::fs::read_to_string(data.join("owner.zuliprc")).unwrap();
    basic(
        &zuliprc_value(&zuliprc, "email"),
        &zuliprc_value(&zuliprc, "key"),
    )
}

pub fn form_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
