//! Presence: reporting, the legacy and modern formats, the incremental `last_update_id`
//! protocol, the history window, the register snapshot, and `presence` events in both forms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::presence::PresenceTimes;
use parley_domain::Role;
use parley_storage::presence as stored;
use parley_storage::StorageError;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

async fn report(app: &TestApp, who: &Account, status: &str, extra: &[(&str, &str)]) -> Value {
    let mut request = app
        .post("/users/me/presence")
        .as_user(who)
        .param("status", status);
    for (name, value) in extra {
        request = request.param(name, value);
    }
    request.send().await.success()
}

async fn register(app: &TestApp, who: &Account, extra: &[(&str, Value)]) -> Value {
    let mut request = app.post("/register").as_user(who);
    for (name, value) in extra {
        request = request.json_param(name, value);
    }
    request.send().await.success()
}

async fn queue(app: &TestApp, who: &Account, capabilities: Value) -> String {
    register(
        app,
        who,
        &[
            ("event_types", json!(["presence"])),
            ("client_capabilities", capabilities),
        ],
    )
    .await["queue_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn events(app: &TestApp, who: &Account, queue_id: &str) -> Vec<Value> {
    app.events(who, queue_id, -1).await
}

/// Rewrites a user's stored presence, to put it in the past.
async fn set_stored(app: &TestApp, who: &Account, times: PresenceTimes) {
    let id = who.user_id;
    app.ctx
        .db
        .transaction(move |conn| {
            let update_id = stored::next_update_id(conn)?;
            stored::save(conn, id, times, update_id)?;
            Ok::<_, StorageError>(())
        })
        .await
        .unwrap();
}

fn keys(presences: &Value) -> Vec<String> {
    let mut keys: Vec<String> = presences.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}

fn id_key(account: &Account) -> String {
    account.user_id.0.to_string()
}

backend_test! {
    async fn presence_round_trip_in_both_formats(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let before = now();

        let body = report(&app, &ann, "active", &[]).await;
        assert_eq!(body["zephyr_mirror_active"], false);
        assert!(body["server_timestamp"].is_f64(), "{body}");
        assert!(body["presence_last_update_id"].as_i64().unwrap() >= 1);
        assert_eq!(keys(&body["presences"]), vec![ann.email.clone()]);
        let entry = &body["presences"][&ann.email];
        assert_eq!(entry["aggregated"]["client"], "website");
        assert_eq!(entry["aggregated"]["status"], "active");
        assert!(entry["aggregated"].get("pushable").is_none());
        assert_eq!(entry["website"]["client"], "website");
        assert_eq!(entry["website"]["status"], "active");
        assert_eq!(entry["website"]["pushable"], false);
        let timestamp = entry["website"]["timestamp"].as_i64().unwrap();
        assert!(timestamp >= before && timestamp <= now());

        // Bob only ever reports idle: his activity time reads as his join date.
        let body = report(&app, &bob, "idle", &[("slim_presence", "true")]).await;
        assert_eq!(keys(&body["presences"]), {
            let mut k = vec![id_key(&ann), id_key(&bob)];
            k.sort();
            k
        });
        let bob_entry = &body["presences"][id_key(&bob)];
        let idle = bob_entry["idle_timestamp"].as_i64().unwrap();
        assert!(idle >= before);
        assert!(bob_entry["active_timestamp"].as_i64().unwrap() <= idle);
        let ann_entry = &body["presences"][id_key(&ann)];
        assert_eq!(ann_entry, &json!({"active_timestamp": timestamp, "idle_timestamp": timestamp}));

        // Bob was last active ten minutes ago: the legacy format calls him idle.
        let recent = now();
        set_stored(&app, &bob, PresenceTimes { last_active_time: Some(recent - 600), last_connected_time: recent }).await;

        // The whole organization, legacy format, without the update ID.
        let realm = app.get("/realm/presence").as_user(&bob).send().await.success();
        assert!(realm["server_timestamp"].is_f64());
        assert!(realm.get("presence_last_update_id").is_none());
        assert_eq!(keys(&realm["presences"]), {
            let mut k = vec![ann.email.clone(), bob.email.clone()];
            k.sort();
            k
        });
        assert_eq!(
            realm["presences"][&bob.email]["aggregated"],
            json!({"client": "website", "status": "idle", "timestamp": recent})
        );

        // One user, by ID or by email: no client or pushable fields.
        let one = app.get(&format!("/users/{}/presence", ann.user_id.0)).as_user(&bob).send().await.success();
        assert_eq!(
            one["presence"],
            json!({"aggregated": {"status": "active", "timestamp": timestamp},
                   "website": {"status": "active", "timestamp": timestamp}})
        );
        let by_email = app.get(&format!("/users/{}/presence", bob.email)).as_user(&ann).send().await.success();
        assert_eq!(by_email["presence"]["website"]["status"], "idle");
        let slim = app
            .get(&format!("/users/{}/presence", ann.user_id.0))
            .as_user(&bob)
            .param("slim_presence", true)
            .send()
            .await
            .success();
        assert_eq!(slim["presence"], json!({"active_timestamp": timestamp, "idle_timestamp": timestamp}));
    }
}

backend_test! {
    async fn one_user_presence_errors_and_staleness(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let body = app.get("/users/999999/presence").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such user");
        let body = app.get("/users/nobody@parley.test/presence").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such user");
        let body = app.get(&format!("/users/{}/presence", bob.user_id.0)).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], format!("No presence data for {}", bob.user_id.0));

        // A report older than the offline threshold aggregates as offline.
        let old = now() - 3600;
        set_stored(&app, &bob, PresenceTimes { last_active_time: Some(old), last_connected_time: old }).await;
        let body = app.get(&format!("/users/{}/presence", bob.user_id.0)).as_user(&ann).send().await.success();
        assert_eq!(body["presence"]["aggregated"], json!({"status": "offline", "timestamp": old}));
        assert_eq!(body["presence"]["website"], json!({"status": "active", "timestamp": old}));

        // A deactivated user has no presence to show.
        let id = bob.user_id;
        app.ctx.db.run(move |conn| parley_storage::users::set_active(conn, id, false)).await.unwrap();
        let body = app.get(&format!("/users/{}/presence", bob.user_id.0)).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such user");
        let realm = app.get("/realm/presence").as_user(&ann).send().await.success();
        assert!(realm["presences"].get(&bob.email).is_none());
    }
}

backend_test! {
    async fn last_update_id_returns_only_what_changed(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;

        let first = report(&app, &ann, "active", &[("last_update_id", "-1")]).await;
        assert_eq!(keys(&first["presences"]), vec![id_key(&ann)]);
        let id1 = first["presence_last_update_id"].as_i64().unwrap();
        assert!(id1 >= 1);

        // Nothing changed (and a report this soon writes nothing): same ID back, no data.
        let again = report(&app, &ann, "active", &[("last_update_id", &id1.to_string())]).await;
        assert_eq!(again["presences"], json!({}));
        assert_eq!(again["presence_last_update_id"], id1);
        let idle_soon = report(&app, &ann, "idle", &[("last_update_id", &id1.to_string())]).await;
        assert_eq!(idle_soon["presences"], json!({}));
        assert_eq!(idle_soon["presence_last_update_id"], id1);

        // Bob's first report is a change; Ann gets only Bob's entry and the new ID.
        report(&app, &bob, "active", &[("ping_only", "true")]).await;
        let next = report(&app, &ann, "active", &[("last_update_id", &id1.to_string())]).await;
        assert_eq!(keys(&next["presences"]), vec![id_key(&bob)]);
        let id2 = next["presence_last_update_id"].as_i64().unwrap();
        assert!(id2 > id1);

        // An old connection time moves: Ann's row changes and gets a newer ID.
        let old = now() - 600;
        set_stored(&app, &ann, PresenceTimes { last_active_time: Some(old), last_connected_time: old }).await;
        let id3 = report(&app, &bob, "active", &[("last_update_id", &id2.to_string())]).await["presence_last_update_id"].as_i64().unwrap();
        assert!(id3 > id2);
        let after = report(&app, &ann, "idle", &[("last_update_id", &id3.to_string())]).await;
        assert_eq!(keys(&after["presences"]), vec![id_key(&ann)]);
        let entry = &after["presences"][id_key(&ann)];
        assert_eq!(entry["active_timestamp"], old);
        assert!(entry["idle_timestamp"].as_i64().unwrap() > old);
        assert!(after["presence_last_update_id"].as_i64().unwrap() > id3);

        // No history at all, when asked for.
        let none = report(&app, &bob, "active", &[("last_update_id", "-1"), ("history_limit_days", "0")]).await;
        assert_eq!(none["presences"], json!({}));
        assert_eq!(none["presence_last_update_id"], -1);
    }
}

backend_test! {
    async fn history_limit_days_bounds_the_first_fetch(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let long_ago = now() - 20 * 86_400;
        set_stored(&app, &bob, PresenceTimes { last_active_time: Some(long_ago), last_connected_time: long_ago }).await;

        let body = report(&app, &ann, "active", &[]).await;
        assert_eq!(keys(&body["presences"]), vec![ann.email.clone()]);
        let body = report(&app, &ann, "active", &[("history_limit_days", "30")]).await;
        assert_eq!(body["presences"][&bob.email]["website"]["status"], "active");
        assert_eq!(body["presences"][&bob.email]["website"]["timestamp"], long_ago);
        let snapshot = register(&app, &ann, &[("event_types", json!(["presence"])), ("presence_history_limit_days", json!(30))]).await;
        assert!(snapshot["presences"].get(&bob.email).is_some());
        let snapshot = register(&app, &ann, &[("event_types", json!(["presence"]))]).await;
        assert!(snapshot["presences"].get(&bob.email).is_none());
    }
}

backend_test! {
    async fn ping_only_records_without_returning_data(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let body = report(&app, &ann, "active", &[("ping_only", "true")]).await;
        assert!(body.get("presences").is_none(), "{body}");
        assert!(body.get("server_timestamp").is_none(), "{body}");
        assert_eq!(body["presence_last_update_id"], -1);
        assert_eq!(body["zephyr_mirror_active"], false);
        let seen = app.get(&format!("/users/{}/presence", ann.email)).as_user(&bob).send().await.success();
        assert_eq!(seen["presence"]["aggregated"]["status"], "active");
        let body = report(&app, &ann, "idle", &[("ping_only", "true"), ("last_update_id", "7")]).await;
        assert_eq!(body["presence_last_update_id"], 7);
    }
}

backend_test! {
    async fn bad_parameters_are_refused(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.post("/users/me/presence").as_user(&ann).send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "status");
        let body = app.post("/users/me/presence").as_user(&ann).param("status", "offline").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "status");
        assert_eq!(body["msg"], "Invalid status: offline");
        let body = app.post("/users/me/presence").as_user(&ann).param("status", "active").param("ping_only", "maybe").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "ping_only");
        let body = app.post("/users/me/presence").as_user(&ann).param("status", "active").param("last_update_id", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "last_update_id");
        // Nothing was recorded by the refused reports.
        let realm = app.get("/realm/presence").as_user(&ann).send().await.success();
        assert_eq!(realm["presences"], json!({}));
        app.get("/users/me/presence").as_user(&ann).send().await.error(405, "BAD_REQUEST");
    }
}

backend_test! {
    async fn presence_events_in_modern_and_legacy_form(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let modern_q = queue(&app, &bob, json!({"simplified_presence_events": true})).await;
        let legacy_q = queue(&app, &bob, json!({})).await;
        let ann_q = queue(&app, &ann, json!({})).await;

        let body = report(&app, &ann, "active", &[]).await;
        let ts = body["presences"][&ann.email]["website"]["timestamp"].as_i64().unwrap();

        let modern = events(&app, &bob, &modern_q).await;
        assert_eq!(modern.len(), 1, "{modern:?}");
        let mut expected = serde_json::Map::new();
        expected.insert(id_key(&ann), json!({"active_timestamp": ts, "idle_timestamp": ts}));
        assert_eq!(modern[0]["type"], "presence");
        assert_eq!(modern[0]["presences"], Value::Object(expected));
        assert!(modern[0].get("email").is_none());

        let legacy = events(&app, &bob, &legacy_q).await;
        assert_eq!(legacy.len(), 1, "{legacy:?}");
        let e = &legacy[0];
        assert_eq!(e["type"], "presence");
        assert_eq!(e["user_id"], ann.user_id.0);
        assert_eq!(e["email"], ann.email.as_str());
        assert!(e["server_timestamp"].is_f64());
        assert_eq!(e["presence"], json!({"website": {"client": "website", "status": "active", "timestamp": ts, "pushable": false}}));
        assert!(e.get("presences").is_none());
        // Like the reference, everybody in the organization hears it, the user included.
        assert_eq!(events(&app, &ann, &ann_q).await.len(), 1);

        // Reports that change nothing, or only refresh a time, are not pushed.
        report(&app, &ann, "active", &[]).await;
        report(&app, &ann, "idle", &[]).await;
        assert_eq!(events(&app, &bob, &modern_q).await.len(), 1);

        // Coming back after a while is pushed at once.
        let old = now() - 3600;
        set_stored(&app, &ann, PresenceTimes { last_active_time: Some(old), last_connected_time: old }).await;
        report(&app, &ann, "active", &[]).await;
        let modern = events(&app, &bob, &modern_q).await;
        assert_eq!(modern.len(), 2, "{modern:?}");
        assert!(modern[1]["presences"][id_key(&ann)]["active_timestamp"].as_i64().unwrap() > old);
        assert_eq!(events(&app, &bob, &legacy_q).await.len(), 2);

        // Idle after a while refreshes the time but is not "coming online".
        set_stored(&app, &ann, PresenceTimes { last_active_time: Some(old), last_connected_time: old }).await;
        report(&app, &ann, "idle", &[]).await;
        assert_eq!(events(&app, &bob, &modern_q).await.len(), 2);
    }
}

backend_test! {
    async fn register_snapshot_carries_presence(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let body = report(&app, &ann, "active", &[("last_update_id", "-1")]).await;
        let id = body["presence_last_update_id"].as_i64().unwrap();
        let ts = body["presences"][id_key(&ann)]["active_timestamp"].as_i64().unwrap();

        let legacy = register(&app, &bob, &[("event_types", json!(["presence"]))]).await;
        assert_eq!(keys(&legacy["presences"]), vec![ann.email.clone()]);
        assert_eq!(legacy["presences"][&ann.email]["aggregated"], json!({"client": "website", "status": "active", "timestamp": ts}));
        assert!(legacy["server_timestamp"].is_f64());
        assert_eq!(legacy["presence_last_update_id"], id);

        let slim = app.post("/register").as_user(&bob)
            .json_param("event_types", &json!(["presence"]))
            .param("slim_presence", true)
            .send().await.success();
        assert_eq!(slim["presences"][id_key(&ann)], json!({"active_timestamp": ts, "idle_timestamp": ts}));

        let capable = register(&app, &bob, &[
            ("event_types", json!(["presence"])),
            ("client_capabilities", json!({"simplified_presence_events": true})),
        ]).await;
        assert_eq!(keys(&capable["presences"]), vec![id_key(&ann)]);

        let nothing = register(&app, &bob, &[("event_types", json!(["presence"])), ("presence_history_limit_days", json!(0))]).await;
        assert_eq!(nothing["presences"], json!({}));
        assert_eq!(nothing["presence_last_update_id"], -1);

        let other = register(&app, &bob, &[("event_types", json!(["message"]))]).await;
        assert!(other.get("presences").is_none());
        assert!(other.get("presence_last_update_id").is_none());
    }
}
