//! Operations of the real binary: start-up order, a closed standard output, `--bind` with a host
//! name, file modes, logs, `/metrics`, `change-password`, and backup and restore (with a
//! temporary upload URL that outlives the process that signed it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use parley_storage::testing::{scratch_database, Backend};
use serde_json::Value;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

const TOKEN: &str = "metrics-token-0123456789";

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

fn sqlite_url(data: &Path) -> String {
    format!("sqlite://{}", data.join("parley.db").display())
}

#[test]
fn a_taken_port_fails_the_start_before_anything_is_created() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let output = parley(&data, &sqlite_url(&data), port).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot listen"), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).is_empty());
    assert!(
        !data.exists(),
        "nothing is created before the port is bound"
    );
}

#[test]
fn closed_stdout_host_name_bind_file_modes_logs_and_change_password() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let port = free_port();
    let mut server = Command::new(BINARY)
        .env_remove("DATABASE_URL")
        .env("PARLEY_LOG", "debug")
        .arg("--data-dir")
        .arg(&data)
        .args([
            "--bind",
            &format!("localhost:{port}"),
            "--log-format",
            "json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Nobody reads standard output: every write to it fails (EPIPE).
    drop(server.stdout.take());
    wait_until_up(port, &mut server);
    assert!(server.try_wait().unwrap().is_none(), "still serving");

    // The one-time password is not lost with standard output.
    let password_file = data.join("owner-password.txt");
    let password = std::fs::read_to_string(&password_file).unwrap();
    let password = password.lines().next().unwrap().to_owned();
    let zuliprc = std::fs::read_to_string(data.join("owner.zuliprc")).unwrap();
    let key = zuliprc_value(&zuliprc, "key");
    assert_eq!(
        zuliprc_value(&zuliprc, "site"),
        format!("http://localhost:{port}")
    );
    let login = |password: &str| {
        http(
            port,
            "POST",
            "/api/v1/fetch_api_key",
            None,
            &format!(
                "username=owner%40parley.local&password={}",
                form_encode(password)
            ),
        )
    };
    let (status, body) = login(&password);
    assert_eq!(
        (status, body["api_key"].as_str()),
        (200, Some(key.as_str())),
        "{body}"
    );

    #[cfg(unix)]
    {
        assert_eq!(mode(&data), 0o700);
        for file in [
            "parley.db",
            "parley.db-wal",
            "parley.db-shm",
            "owner.zuliprc",
            "owner-password.txt",
        ] {
            assert_eq!(mode(&data.join(file)), 0o600, "{file}");
        }
    }

    // An operator sets a new password from standard input; the API key stays.
    let mut change = parley(&data, &sqlite_url(&data), free_port())
        .args(["change-password", "--email", "owner@parley.local"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = change.stdin.take().unwrap();
        stdin.write_all(b"a-new-operator-password\n").unwrap();
    }
    let changed = change.wait_with_output().unwrap();
    assert!(
        changed.status.success(),
        "{}",
        String::from_utf8_lossy(&changed.stderr)
    );
    let (status, body) = login("a-new-operator-password");
    assert_eq!(
        (status, body["api_key"].as_str()),
        (200, Some(key.as_str())),
        "{body}"
    );
    let (status, _) = login(&password);
    assert_ne!(status, 200, "the old password no longer works");
    let unknown = parley(&data, &sqlite_url(&data), free_port())
        .args([
            "change-password",
            "--email",
            "nobody@parley.local",
            "--password",
            "whatever-123",
        ])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("nobody@parley.local"));

    let output = stop(server);
    assert!(output.status.success(), "{:?}", output.status);
    #[cfg(unix)]
    assert_eq!(mode(&data.join("event_queues.json")), 0o600);
    // JSON lines, no colour codes, and PARLEY_LOG=debug shows Parley's own debug lines.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains('\u{1b}'),
        "no ANSI colour when stderr is not a terminal"
    );
    let lines: Vec<Value> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["level"] == "DEBUG"
            && l["target"]
                .as_str()
                .unwrap_or_default()
                .starts_with("parley")),
        "{stderr}"
    );
    assert!(!stderr.contains(&key), "the log never holds API keys");

    // Text logs are not coloured either when stderr is a pipe.
    let mut server = parley(&data, &sqlite_url(&data), port)
        .env("PARLEY_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_up(port, &mut server);
    let output = stop(server);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("INFO"), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

#[test]
fn metrics_behind_a_token_and_on_their_own_port() {
    for backend in Backend::available() {
        let database = scratch_database(&backend);
        let data = tempfile::tempdir().unwrap();
        let port = free_port();
        let metrics_port = free_port();
        let mut server = parley(data.path(), &database.url_text, port)
            .args(["--metrics-token", TOKEN, "--metrics-bind"])
            .arg(format!("127.0.0.1:{metrics_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until_up(port, &mut server);
        let auth = owner_auth(data.path());
        let (_, me) = http(port, "GET", "/api/v1/users/me", Some(&auth), "");
        let me = me["user_id"].as_i64().unwrap();
        let (status, body) = http(
            port,
            "POST",
            "/api/v1/messages",
            Some(&auth),
            &format!("type=direct&to=%5B{me}%5D&content=counted"),
        );
        assert_eq!(status, 200, "{body}");
        let (status, body) = http(port, "POST", "/api/v1/register", Some(&auth), "");
        assert_eq!(status, 200, "{body}");

        for port in [port, metrics_port] {
            let refused = request(port, "GET", "/metrics", &[], b"").unwrap();
            assert_eq!(refused.status, 401, "{}", refused.text());
            let wrong = request(
                port,
                "GET",
                "/metrics",
                &[("Authorization", &bearer("x"))],
                b"",
            )
            .unwrap();
            assert_eq!(wrong.status, 401);
        }
        let scraped = request(
            port,
            "GET",
            "/metrics",
            &[("Authorization", &bearer(TOKEN))],
            b"",
        )
        .unwrap();
        assert_eq!(scraped.status, 200);
        let text = scraped.text();
        for expected in [
            "parley_messages_sent_total 1",
            "parley_event_queues 1",
            "parley_event_polls_waiting 0",
            "parley_http_requests_total{method=\"POST\",route=\"/api/v1/messages\",status=\"200\"} 1",
            "parley_http_request_duration_seconds_bucket{method=\"GET\",route=\"/api/v1/users/me\"",
            "parley_db_pool_connections{state=\"idle\"}",
            "parley_db_pool_max_connections 8",
            "parley_db_pool_wait_seconds_bucket",
        ] {
            assert!(text.contains(expected), "{}: no {expected} in\n{text}", backend.name());
        }
        assert!(
            !text.contains(&format!("/api/v1/users/{me}")),
            "route patterns, not paths"
        );
        let own_port = request(
            metrics_port,
            "GET",
            "/metrics",
            &[("Authorization", &bearer(TOKEN))],
            b"",
        )
        .unwrap();
        assert_eq!(own_port.status, 200);
        assert!(own_port.text().contains("parley_messages_sent_total 1"));
        stop(server);
    }
}

fn upload(port: u16, auth: &str, name: &str, content: &[u8]) -> String {
    let boundary = "parleyboundary7d3";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: text/plain\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(content);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let content_type = format!("multipart/form-data; boundary={boundary}");
    let raw = request(
        port,
        "POST",
        "/api/v1/user_uploads",
        &[
            ("Authorization", &format!("Basic {auth}")),
            ("Content-Type", &content_type),
        ],
        &body,
    )
    .unwrap();
    assert_eq!(raw.status, 200, "{}", raw.text());
    raw.json()["url"].as_str().unwrap().to_owned()
}

fn message_ids(port: u16, auth: &str) -> Vec<(i64, String)> {
    let (status, body) = http(
        port,
        "GET",
        "/api/v1/messages?anchor=oldest&num_before=0&num_after=1000&apply_markdown=false",
        Some(auth),
        "",
    );
    assert_eq!(status, 200, "{body}");
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["id"].as_i64().unwrap(),
                m["content"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn backup_while_serving_then_restore_keeps_messages_users_uploads_and_signed_urls() {
    let root = tempfile::tempdir().unwrap();
    let first = root.path().join("first");
    let port = free_port();
    let mut server = parley(&first, &sqlite_url(&first), port)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_up(port, &mut server);
    let auth = owner_auth(&first);
    let created = parley(&first, &sqlite_url(&first), free_port())
        .args([
            "create-user",
            "--email",
            "kept@parley.local",
            "--full-name",
            "Kept",
            "--password",
            "kept-password",
        ])
        .output()
        .unwrap();
    assert!(created.status.success());
    let (_, me) = http(port, "GET", "/api/v1/users/me", Some(&auth), "");
    let me = me["user_id"].as_i64().unwrap();
    for n in 0..20 {
        let (status, _) = http(
            port,
            "POST",
            "/api/v1/messages",
            Some(&auth),
            &format!("type=direct&to=%5B{me}%5D&content=before+backup+{n}"),
        );
        assert_eq!(status, 200);
    }
    let url = upload(port, &auth, "notes.txt", b"kept across a restore");
    let (status, body) = http(port, "GET", &format!("/api/v1{url}"), Some(&auth), "");
    assert_eq!(status, 200, "{body}");
    let temporary = body["url"].as_str().unwrap().to_owned();
    let messages = message_ids(port, &auth);

    // The backup runs while others keep writing.
    let writer = {
        let auth = auth.clone();
        std::thread::spawn(move || {
            for n in 0..30 {
                let _ = request(
                    port,
                    "POST",
                    "/api/v1/messages",
                    &[
                        ("Authorization", &format!("Basic {auth}")),
                        ("Content-Type", "application/x-www-form-urlencoded"),
                    ],
                    format!("type=direct&to=%5B{me}%5D&content=during+{n}").as_bytes(),
                );
            }
        })
    };
    let backup_dir = root.path().join("backup");
    let backup = parley(&first, &sqlite_url(&first), free_port())
        .arg("backup")
        .arg(&backup_dir)
        .output()
        .unwrap();
    assert!(
        backup.status.success(),
        "{}",
        String::from_utf8_lossy(&backup.stderr)
    );
    writer.join().unwrap();
    let again = parley(&first, &sqlite_url(&first), free_port())
        .arg("backup")
        .arg(&backup_dir)
        .output()
        .unwrap();
    assert!(
        !again.status.success(),
        "a non-empty backup directory is refused"
    );
    stop(server);

    // Restore into another data directory and serve from it.
    let second = root.path().join("second");
    let restore = |force: bool| {
        let mut command = parley(&second, &sqlite_url(&second), free_port());
        command.arg("restore").arg(&backup_dir);
        if force {
            command.arg("--force");
        }
        command.output().unwrap()
    };
    let restored = restore(false);
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    let refused = restore(false);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--force"));
    let forced = restore(true);
    assert!(
        forced.status.success(),
        "{}",
        String::from_utf8_lossy(&forced.stderr)
    );

    let mut server = parley(&second, &sqlite_url(&second), port)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_up(port, &mut server);
    let after = message_ids(port, &auth);
    for message in &messages {
        assert!(
            after.contains(message),
            "{message:?} missing after the restore"
        );
    }
    let (status, users) = http(port, "GET", "/api/v1/users", Some(&auth), "");
    assert_eq!(status, 200);
    let emails: Vec<&str> = users["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u["delivery_email"].as_str().or(u["email"].as_str()))
        .collect();
    assert!(
        users["members"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["full_name"] == "Kept"),
        "{emails:?}"
    );
    let file = request(
        port,
        "GET",
        &url,
        &[("Authorization", &format!("Basic {auth}"))],
        b"",
    )
    .unwrap();
    assert_eq!(
        (file.status, file.body.as_slice()),
        (200, b"kept across a restore".as_slice())
    );
    // Signed by the first process, checked by this one: the key lives in the database.
    let file = request(port, "GET", &temporary, &[], b"").unwrap();
    assert_eq!(file.status, 200, "{}", file.text());
    assert_eq!(file.body, b"kept across a restore");
    #[cfg(unix)]
    assert_eq!(mode(&second.join("parley.db")), 0o600);
    stop(server);
}

#[test]
fn backup_on_postgresql_points_to_pg_dump() {
    let data = tempfile::tempdir().unwrap();
    let output = Command::new(BINARY)
        .env_remove("DATABASE_URL")
        .args(["--data-dir"])
        .arg(data.path())
        .args([
            "--database-url",
            "postgres://root@127.0.0.1:1/none",
            "backup",
        ])
        .arg(data.path().join("b"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("pg_dump"));
}

#[test]
fn ready_says_when_the_schema_is_behind() {
    use diesel::connection::SimpleConnection;
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let url = sqlite_url(data.path());
    let mut server = parley(data.path(), &url, port)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until_up(port, &mut server);
    let ready = request(port, "GET", "/ready", &[], b"").unwrap();
    assert_eq!(ready.status, 200, "{}", ready.text());
    // As if the binary were newer than the database: its newest migration is not recorded.
    let mut conn =
        parley_storage::conn::establish(&parley_storage::DatabaseUrl::parse(&url).unwrap())
            .unwrap();
    conn.batch_execute(
        "DELETE FROM __diesel_schema_migrations \
         WHERE version = (SELECT MAX(version) FROM __diesel_schema_migrations)",
    )
    .unwrap();
    let ready = request(port, "GET", "/ready", &[], b"").unwrap();
    assert_eq!(ready.status, 503, "{}", ready.text());
    assert_eq!(ready.json()["code"], "NOT_READY");
    assert_eq!(ready.json()["msg"], "database migrations pending");
    let health = request(port, "GET", "/health", &[], b"").unwrap();
    assert_eq!(health.status, 200, "alive all the same");
    stop(server);
}
