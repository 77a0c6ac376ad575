//! The `parley` binary itself: first start creates the organization and `owner.zuliprc`, the
//! server answers over TCP, `create-user` and `migrate` work beside it, SIGTERM shuts it down
//! cleanly, and a second start reuses everything. Runs on each available backend.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use parley_storage::testing::{scratch_database, Backend};
use std::process::Stdio;

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
