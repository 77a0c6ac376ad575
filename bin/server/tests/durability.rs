//! Acknowledged means durable: a storm of sends against the real binary, the server killed with
//! SIGKILL mid-storm and restarted, and every message that was answered with an ID is still
//! there, with its content. Several kills per backend, bounded to a few seconds each.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use parley_storage::testing::{scratch_database, Backend};
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Senders at once.
const SENDERS: usize = 4;
/// Kill-and-restart rounds per backend.
const ROUNDS: usize = 3;

#[test]
fn kill_nine_during_a_send_storm_loses_no_acknowledged_message() {
    for backend in Backend::available() {
        let database = scratch_database(&backend);
        let data = tempfile::tempdir().unwrap();
        let port = free_port();
        let acknowledged: Arc<Mutex<BTreeMap<i64, String>>> = Arc::default();
        let mut refused = 0;
        for round in 0..ROUNDS {
            let mut server = parley(data.path(), &database.url_text, port)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            wait_until_up(port, &mut server);
            let auth = owner_auth(data.path());
            let (_, me) = http(port, "GET", "/api/v1/users/me", Some(&auth), "");
            let me = me["user_id"].as_i64().unwrap();
            let before = acknowledged.lock().unwrap().len();
            let stop = Arc::new(AtomicBool::new(false));
            let senders: Vec<_> = (0..SENDERS)
                .map(|sender| {
                    let (auth, stop, acknowledged) =
                        (auth.clone(), stop.clone(), acknowledged.clone());
                    std::thread::spawn(move || {
                        let mut refused = 0;
                        for n in 0.. {
                            if stop.load(Ordering::Relaxed) {
                                break;
                            }
                            let content = format!("round {round} sender {sender} message {n}");
                            let body = format!(
                                "type=direct&to=%5B{me}%5D&content={}",
                                form_encode(&content)
                            );
                            let Ok(raw) = request(
                                port,
                                "POST",
                                "/api/v1/messages",
                                &[
                                    ("Authorization", &format!("Basic {auth}")),
                                    ("Content-Type", "application/x-www-form-urlencoded"),
                                ],
                                body.as_bytes(),
                            ) else {
                                // The server died under this request: not acknowledged.
                                break;
                            };
                            match raw.json()["id"].as_i64() {
                                Some(id) if raw.status == 200 => {
                                    acknowledged.lock().unwrap().insert(id, content);
                                }
                                // Rate-limited: not acknowledged either.
                                _ => refused += 1,
                            }
                        }
                        refused
                    })
                })
                .collect();
            // Kill once the storm is well under way (or after 3 s), while requests are in flight.
            let started = Instant::now();
            while acknowledged.lock().unwrap().len() < before + 60
                && started.elapsed() < Duration::from_secs(3)
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            server.kill().unwrap();
            server.wait().unwrap();
            stop.store(true, Ordering::Relaxed);
            for sender in senders {
                refused += sender.join().unwrap();
            }
            assert!(
                acknowledged.lock().unwrap().len() > before,
                "{}: round {round} acknowledged nothing",
                backend.name()
            );
        }

        // After the last kill: start again and read everything back.
        let mut server = parley(data.path(), &database.url_text, port)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until_up(port, &mut server);
        let auth = owner_auth(data.path());
        let acknowledged = acknowledged.lock().unwrap().clone();
        let (status, body) = http(
            port,
            "GET",
            &format!(
                "/api/v1/messages?anchor=oldest&num_before=0&num_after={}&apply_markdown=false",
                acknowledged.len() + 100
            ),
            Some(&auth),
            "",
        );
        assert_eq!(status, 200, "{body}");
        let stored: BTreeMap<i64, String> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["id"].as_i64().unwrap(),
                    m["content"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let lost: Vec<_> = acknowledged
            .iter()
            .filter(|(id, content)| stored.get(id) != Some(content))
            .collect();
        assert!(
            lost.is_empty(),
            "{}: {} of {} acknowledged messages lost after {ROUNDS} kill -9s: {lost:?}",
            backend.name(),
            lost.len(),
            acknowledged.len()
        );
        eprintln!(
            "{}: {} acknowledged messages all kept across {ROUNDS} kill -9s ({refused} refused)",
            backend.name(),
            acknowledged.len()
        );
        stop(server);
    }
}
