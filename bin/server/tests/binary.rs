//! The `parley` binary itself: first start creates the organization and `owner.zuliprc`, the
//! server answers over TCP, `create-user` and `migrate` work beside it, SIGTERM shuts it down
//! cleanly, and a second start reuses everything. Runs on each available backend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_storage::testing::{scratch_database, Backend};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BINARY: &str = env!("CARGO_BIN_EXE_parley");

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn parley(data_dir: &Path, database_url: &str, port: u16) -> Command {
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

/// One HTTP/1.1 request over a fresh connection; returns status and JSON body.
fn http(port: u16, method: &str, path: &str, auth: Option<&str>, body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let auth = auth
        .map(|a| format!("Authorization: Basic {a}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n{auth}\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let json = response
        .split_once("\r\n\r\n")
        .and_then(|(_, b)| serde_json::from_str(b).ok())
        .unwrap_or(Value::Null);
    (status, json)
}

fn wait_until_up(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("parley exited early with {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("parley did not start listening on {port}");
}

fn stop(child: Child) -> Output {
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    child.wait_with_output().unwrap()
}

fn zuliprc_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {text}"))
        .to_owned()
}

fn basic(email: &str, key: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{email}:{key}"))
}

#[test]
fn first_start_restart_create_user_and_shutdown() {
    for backend in Backend::available() {
        let database = scratch_database(&backend);
        let data = tempfile::tempdir().unwrap();
        let port = free_port();

        let mut server = parley(data.path(), &database.url_text, port)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until_up(port, &mut server);
        let zuliprc_path = data.path().join("owner.zuliprc");
        let zuliprc = std::fs::read_to_string(&zuliprc_path).unwrap();
        assert!(zuliprc.starts_with("[api]\n"), "{zuliprc}");
        let email = zuliprc_value(&zuliprc, "email");
        let key = zuliprc_value(&zuliprc, "key");
        assert_eq!(
            zuliprc_value(&zuliprc, "site"),
            format!("http://127.0.0.1:{port}")
        );
        assert!(key.len() >= 32);

        let (status, body) = http(port, "GET", "/api/v1/server_settings", None, "");
        assert_eq!(status, 200, "{}", backend.name());
        assert_eq!(body["zulip_feature_level"], 420);
        let (status, body) = http(port, "GET", "/api/v1/users", Some(&basic(&email, &key)), "");
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["members"][0]["role"], 100);

        // create-user works beside the running server, and its zuliprc points at that server
        // whatever address the command itself was given.
        let created = parley(data.path(), &database.url_text, free_port())
            .args([
                "create-user",
                "--email",
                "cli@parley.local",
                "--full-name",
                "Cli User",
                "--role",
                "admin",
                "--password",
                "cli-password",
            ])
            .output()
            .unwrap();
        assert!(
            created.status.success(),
            "{}",
            String::from_utf8_lossy(&created.stderr)
        );
        let printed = String::from_utf8(created.stdout).unwrap();
        let cli_key = zuliprc_value(&printed, "key");
        assert_eq!(
            zuliprc_value(&printed, "site"),
            format!("http://127.0.0.1:{port}")
        );
        let (status, body) = http(
            port,
            "GET",
            "/api/v1/users/me",
            Some(&basic("cli@parley.local", &cli_key)),
            "",
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["role"], 200);
        let (status, body) = http(
            port,
            "POST",
            "/api/v1/fetch_api_key",
            None,
            "username=cli%40parley.local&password=cli-password",
        );
        assert_eq!(
            (status, body["api_key"].as_str()),
            (200, Some(cli_key.as_str()))
        );

        let bad_role = parley(data.path(), &database.url_text, port)
            .args([
                "create-user",
                "--email",
                "x@parley.local",
                "--full-name",
                "X",
                "--role",
                "boss",
            ])
            .output()
            .unwrap();
        assert!(!bad_role.status.success());
        assert!(String::from_utf8_lossy(&bad_role.stderr).contains("--role"));

        let output = stop(server);
        assert!(output.status.success(), "exit: {:?}", output.status);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&zuliprc_path.display().to_string()),
            "{stdout}"
        );
        assert!(stdout.contains("password:"), "{stdout}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains(&key), "the log must never hold API keys");

        // A second start reuses the organization, the owner and the zuliprc.
        let mut server = parley(data.path(), &database.url_text, port)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until_up(port, &mut server);
        assert_eq!(std::fs::read_to_string(&zuliprc_path).unwrap(), zuliprc);
        let (status, body) = http(port, "GET", "/api/v1/users", Some(&basic(&email, &key)), "");
        assert_eq!(status, 200);
        assert_eq!(body["members"].as_array().unwrap().len(), 2);
        let output = stop(server);
        assert!(output.status.success());
        assert!(!String::from_utf8_lossy(&output.stdout).contains("password:"));

        let migrated = parley(data.path(), &database.url_text, port)
            .arg("migrate")
            .output()
            .unwrap();
        assert!(migrated.status.success());
        assert!(String::from_utf8_lossy(&migrated.stdout).contains("0 migration(s) applied"));
    }
}

#[test]
fn wrong_database_urls_are_reported_plainly() {
    let data = tempfile::tempdir().unwrap();
    let output = parley(data.path(), "mysql://root@localhost/x", free_port())
        .arg("migrate")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unsupported scheme 'mysql'"), "{stderr}");

    let output = parley(data.path(), "postgres://root@127.0.0.1:1/none", free_port())
        .arg("migrate")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("PostgreSQL") && stderr.contains("cannot"),
        "{stderr}"
    );
}
