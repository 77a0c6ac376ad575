//! Dumping and restoring queues across a restart.
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use parley_domain::UserId;
use parley_events::{Body, Capability, ClientCapabilities, Event, NarrowFilter};
use serde_json::json;

#[tokio::test]
async fn dump_and_restore_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queues.json");
    let before = engine();
    let mut options = opts(1);
    options.apply_markdown = true;
    options.narrow = vec![NarrowFilter::Channel("a".to_owned())];
    options.capabilities = ClientCapabilities {
        bulk_message_deletion: true,
        ..ClientCapabilities::default()
    };
    let (q1, _) = before.register(options);
    let q2 = register(&before, 2);
    before.deliver(&json_event(&[1, 2], "a"));
    before.deliver(&Event::message(
        vec![to(1, &["read"]), to(2, &[])],
        message(Some("a"), "t"),
    ));
    before.deliver(&json_event(&[1], "b"));
    assert_eq!(ids(&poll(&before, 1, &q1, 0).await), [1, 2]);
    let expected1 = poll(&before, 1, &q1, 0).await;
    let expected2 = poll(&before, 2, &q2, -1).await;
    assert_eq!(before.dump(&path).unwrap(), 2);
    #[cfg(unix)]
    {
        // The dump holds message contents: its owner's only.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let after = engine();
    assert_eq!(after.restore(&path).unwrap(), 2);
    assert_eq!(after.queue_count(), 2);
    assert_eq!(poll(&after, 1, &q1, 0).await, expected1);
    assert_eq!(poll(&after, 2, &q2, -1).await, expected2);
    // Acknowledgement state survives: event 0 was pruned.
    assert!(after
        .get_events(UserId(1), &q1, Some(-1), true)
        .await
        .is_err());
    // IDs continue, options (capabilities, narrow) survive.
    after.deliver(&Event::to_users(
        vec![UserId(1)],
        Body::by_capability(
            Capability::BulkMessageDeletion,
            Body::json(json!({"type": "bulk"})),
            None,
        ),
    ));
    after.deliver(&Event::message(vec![to(1, &[])], message(Some("b"), "t")));
    let events = poll(&after, 1, &q1, 2).await;
    assert_eq!(events, [json!({"type": "bulk", "id": 3})]);
    // The file was set aside so a crash cannot restore it again.
    assert!(!path.exists());
    assert_eq!(engine().restore(&path).unwrap(), 0);
}

#[tokio::test]
async fn a_missing_file_restores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(engine().restore(&dir.path().join("none.json")).unwrap(), 0);
}

#[tokio::test]
async fn a_corrupt_file_restores_nothing_and_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queues.json");
    for content in [
        "{not json",
        r#"{"format": 99, "bodies": [], "queues": []}"#,
        r#"{"format": 1, "bodies": [], "queues": [{"queue_id": "q", "options": {"user_id": 1, "apply_markdown": false, "client_gravatar": false, "all_public_streams": false, "event_types": null}, "next_event_id": 1, "newest_pruned_id": -1, "handed_out": -1, "events": [{"id": 0, "body": 3}]}]}"#,
    ] {
        std::fs::write(&path, content).unwrap();
        let engine = engine();
        assert_eq!(engine.restore(&path).unwrap(), 0);
        assert_eq!(engine.queue_count(), 0);
    }
}

#[tokio::test]
async fn a_dumped_message_stays_shared() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("queues.json");
    let before = engine();
    for user in 1..=20 {
        register(&before, user);
    }
    let mut payload = message(Some("a"), "t");
    payload.content_html = "x".repeat(100_000);
    before.deliver(&Event::message(
        (1..=20).map(|u| to(u, &[])).collect(),
        payload,
    ));
    before.dump(&path).unwrap();
    // Written once, not once per queue.
    assert!(std::fs::metadata(&path).unwrap().len() < 200_000);
}
