//! A request dropped after its transaction committed (the client went away, the server's
//! connection closed) still has every consequence of the commit: its events reach the queues,
//! on SQLite as on PostgreSQL. What follows the commit runs in a task of its own
//! (`Context::write`), not in the request's future.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::prelude::*;
use parley_domain::Role;
use parley_storage::schema::messages;
use parley_tests::{backend_test, TestApp};
use serde_json::json;
use std::time::Duration;

/// The ID of the committed message with this content, if there is one.
async fn committed(app: &TestApp, content: &str) -> Option<i64> {
    let content = content.to_owned();
    app.ctx
        .db
        .run(move |conn| {
            messages::table
                .filter(messages::content.eq(content))
                .select(messages::id)
                .first::<i64>(conn)
                .optional()
                .map_err(parley_storage::StorageError::from)
        })
        .await
        .unwrap()
}

backend_test! {
    async fn a_send_dropped_after_its_commit_still_delivers_its_event(app) {
        let reader = app.create_user("reader@parley.test", "Reader", Role::Member).await;
        app.create_channel(&app.owner, "quiet", &[&reader], &[]).await;
        let queue = app.register(&reader, &[("event_types", json!(["message"]))]).await
            ["queue_id"].as_str().unwrap().to_owned();
        for attempt in 0..50 {
            let content = format!("dropped {attempt}");
            let mut request = Box::pin(app.post("/messages").as_user(&app.owner)
                .param("type", "stream").param("to", "quiet").param("topic", "t")
                .param("content", &content).send());
            // The request is polled only until its message is committed, then dropped without
            // being polled again: whatever its future would still have done is never done.
            let dropped = loop {
                if tokio::time::timeout(Duration::ZERO, &mut request).await.is_ok() {
                    break None;
                }
                if let Some(id) = committed(&app, &content).await {
                    break Some(id);
                }
            };
            drop(request);
            let Some(id) = dropped else {
                continue; // it finished within one poll: try again
            };
            let mut arrived = false;
            for _ in 0..100 {
                let events = app.events(&reader, &queue, -1).await;
                arrived = events.iter().any(|e| e["message"]["id"] == id);
                if arrived {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            assert!(arrived, "the event of message {id}, whose request was dropped after its commit");
            return;
        }
        panic!("no request was dropped after its commit");
    }
}
