//! Statements per `GET /messages` page (issue 15: on PostgreSQL each is a round trip with its
//! parsing and planning, and a page must stay under 3 ms). Every statement the test's own
//! database runs is counted (diesel's instrumentation, per connection URL, so that the tests
//! running beside it do not count), and each page kind must take exactly the statements listed
//! in `docs/benchmarks.md` ("Statements per page"). Whatever a page does
//! not read again must still be current: a sender's new name, a channel's new name and a new
//! reaction show in the very next page.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use diesel::connection::{set_default_instrumentation, Instrumentation, InstrumentationEvent};
use parley_domain::Role;
use parley_storage::DatabaseUrl;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};

/// Every connection the process opened since counting started, by URL, with its statements.
static CONNECTIONS: Mutex<Vec<(String, Arc<AtomicU64>)>> = Mutex::new(Vec::new());

/// Counts one connection's statements.
struct Counter(Option<Arc<AtomicU64>>);

impl Instrumentation for Counter {
    fn on_connection_event(&mut self, event: InstrumentationEvent<'_>) {
        match event {
            InstrumentationEvent::StartEstablishConnection { url, .. } => {
                let counter = Arc::new(AtomicU64::new(0));
                CONNECTIONS
                    .lock()
                    .unwrap()
                    .push((url.to_owned(), counter.clone()));
                self.0 = Some(counter);
            }
            InstrumentationEvent::StartQuery { .. } => {
                if let Some(counter) = &self.0 {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
            _ => {}
        }
    }
}

/// Counts statements on every connection opened from now on (before the app starts, so that
/// all of its pool is counted).
fn count_statements() {
    static START: Once = Once::new();
    START.call_once(|| {
        set_default_instrumentation(|| Some(Box::new(Counter(None)))).unwrap();
    });
}

/// Statements run so far on the connections to `app`'s database.
fn statements(app: &TestApp) -> u64 {
    let wanted = match app.ctx.db.url() {
        DatabaseUrl::Sqlite(path) => path.to_string_lossy().into_owned(),
        DatabaseUrl::Postgres(url) => url.split('?').next().unwrap().to_owned(),
    };
    CONNECTIONS
        .lock()
        .unwrap()
        .iter()
        .filter(|(url, _)| url.split('?').next() == Some(wanted.as_str()))
        .map(|(_, counter)| counter.load(Ordering::Relaxed))
        .sum()
}

async fn page(app: &TestApp, who: &Account, narrow: &Value) -> Value {
    app.get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 20)
        .param("num_after", 0)
        .param("narrow", narrow.to_string())
        .send()
        .await
        .success()
}

/// The fewest statements a page took in three requests: the node's own background work (the
/// event log's heartbeat on PostgreSQL), a rate-limit lease (one request in ten) and the pool's
/// test of a connection idle for a second can fall into one request, not into all three.
async fn page_statements(app: &TestApp, who: &Account, narrow: &Value) -> u64 {
    let mut fewest = u64::MAX;
    for _ in 0..3 {
        let before = statements(app);
        page(app, who, narrow).await;
        fewest = fewest.min(statements(app) - before);
    }
    fewest
}

fn messages(page: &Value) -> &Vec<Value> {
    page["messages"].as_array().unwrap()
}

backend_test! {
    async fn pages_take_few_statements_and_show_current_names_and_reactions(app) {
        count_statements();
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let channel = app.create_channel(&app.owner, "town", &[&ann, &bob], &[]).await;
        let mut ids = Vec::new();
        for i in 0..3 {
            ids.push(app.send_to_channel(&ann, "town", "t1", &format!("ann {i}")).await);
            ids.push(app.send_to_channel(&bob, "town", "t2", &format!("bob {i}")).await);
        }
        app.post("/messages").as_user(&bob).param("type", "direct")
            .param("to", json!([ann.user_id.0]).to_string()).param("content", "psst")
            .send().await.success();
        app.post(&format!("/messages/{}/reactions", ids[1])).as_user(&bob)
            .param("emoji_name", "smile").send().await.success();
        app.post("/messages/flags").as_user(&ann).param("op", "add").param("flag", "starred")
            .param("messages", json!([ids[0], ids[1]]).to_string()).send().await.success();

        let in_channel = json!([{"operator": "channel", "operand": channel}]);
        let in_topic = json!([{"operator": "channel", "operand": channel},
                              {"operator": "topic", "operand": "t2"}]);
        let own = json!([{"operator": "sender", "operand": ann.user_id.0}]);
        let unread = json!([{"operator": "is", "operand": "unread"}]);
        let starred = json!([{"operator": "is", "operand": "starred"}]);
        // (narrow, messages on the page, statements): authentication; for a channel or topic
        // the channel with the reader's subscription, for the others (but starred and unread)
        // the channels in which the reader has spans; for `is:unread` the unread IDs (spans,
        // read ranges, the gaps' messages, the rows no span covers), for `is:starred` the
        // starred IDs; the page; the people, channel names and reactions it shows.
        let kinds: [(&str, &Value, usize, u64); 6] = [
            ("all", &json!([]), 7, 4),
            ("channel", &in_channel, 6, 4),
            ("topic", &in_topic, 3, 4),
            ("own", &own, 3, 4),
            ("unread", &unread, 7, 7),
            ("starred", &starred, 2, 4),
        ];
        for (name, narrow, count, expected) in kinds {
            assert_eq!(messages(&page(&app, &ann, narrow).await).len(), count, "{name}");
            let took = page_statements(&app, &ann, narrow).await;
            assert_eq!(took, expected, "statements of the {name} page ({})", app.backend.name());
        }

        // What the page does not read again is still current in the very next page.
        app.patch("/settings").as_user(&bob).param("full_name", "Robert").send().await.success();
        app.patch(&format!("/streams/{channel}")).as_user(&app.owner)
            .param("new_name", "city").send().await.success();
        app.post(&format!("/messages/{}/reactions", ids[3])).as_user(&ann)
            .param("emoji_name", "tada").send().await.success();
        let shown = page(&app, &ann, &in_channel).await;
        for message in messages(&shown) {
            assert_eq!(message["display_recipient"], "city", "{message}");
            if message["sender_id"] == bob.user_id.0 {
                assert_eq!(message["sender_full_name"], "Robert", "{message}");
            }
            let reactions: Vec<&str> = message["reactions"].as_array().unwrap().iter()
                .map(|r| r["emoji_name"].as_str().unwrap()).collect();
            let want: &[&str] = if message["id"] == ids[1] {
                &["smile"]
            } else if message["id"] == ids[3] {
                &["tada"]
            } else {
                &[]
            };
            assert_eq!(reactions, want, "{message}");
        }
        let all = page(&app, &ann, &json!([])).await;
        let direct = messages(&all).iter().find(|m| m["type"] == "private").unwrap();
        assert_eq!(direct["sender_full_name"], "Robert", "{direct}");
        let names: Vec<&str> = direct["display_recipient"].as_array().unwrap().iter()
            .map(|r| r["full_name"].as_str().unwrap()).collect();
        assert!(names.contains(&"Robert") && names.contains(&"Ann"), "{direct}");
        // Ann's own name, from her authentication, is current too.
        app.patch("/settings").as_user(&ann).param("full_name", "Annie").send().await.success();
        let shown = page(&app, &ann, &own).await;
        assert!(messages(&shown).iter().all(|m| m["sender_full_name"] == "Annie"), "{shown}");
        let took = page_statements(&app, &ann, &in_channel).await;
        assert_eq!(took, 4, "statements of the channel page after the changes");
    }
}
