//! Bots: `POST /bots`, `GET /bots`, `PATCH /bots/{id}`, `DELETE /bots/{id}`, key rotation, the
//! `realm_bot` events and the `realm_bots` snapshot part, and bots using the API.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn create_bot(app: &TestApp, owner: &Account, short: &str, extra: &[(&str, &str)]) -> Value {
    let mut request = app
        .post("/bots")
        .as_user(owner)
        .param("full_name", format!("{short} bot"))
        .param("short_name", short);
    for (key, value) in extra {
        request = request.param(key, value);
    }
    request.send().await.success()
}

fn bot_account(app: &TestApp, created: &Value, short: &str) -> Account {
    Account {
        user_id: parley_domain::UserId(created["user_id"].as_i64().unwrap()),
        email: format!("{short}-bot@{}", app.ctx.realm.host),
        api_key: created["api_key"].as_str().unwrap().to_owned(),
        password: String::new(),
    }
}

backend_test! {
    async fn create_bot_and_use_its_key(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let other = app.create_user("o@parley.test", "O", Role::Member).await;
        let owner_q = app.register(&app.owner, &[("event_types", json!(["realm_user", "realm_bot"]))]).await;
        let other_q = app.register(&other, &[("event_types", json!(["realm_user", "realm_bot"]))]).await;
        let created = create_bot(&app, &ann, "helper", &[("default_sending_stream", "general")]).await;
        for key in ["user_id", "api_key", "avatar_url", "default_sending_stream",
                    "default_events_register_stream", "default_all_public_streams"] {
            assert!(created.get(key).is_some(), "{key} missing: {created}");
        }
        assert_eq!(created["default_sending_stream"], "general");
        assert_eq!(created["default_all_public_streams"], false);
        let bot = bot_account(&app, &created, "helper");
        // The bot authenticates with its key and sends a message.
        let me = app.get("/users/me").as_user(&bot).send().await.success();
        assert_eq!(me["is_bot"], true);
        assert_eq!(me["bot_owner_id"], ann.user_id.0);
        app.send_to_channel(&bot, "general", "bots", "beep").await;
        // Administrators and the owner get realm_bot add; everyone gets realm_user add.
        let events = app.events_of(&app.owner, owner_q["queue_id"].as_str().unwrap(), &["realm_user", "realm_bot"]).await;
        let add = events.iter().find(|e| e["type"] == "realm_bot" && e["op"] == "add").expect("realm_bot add");
        assert_eq!(add["bot"]["user_id"], bot.user_id.0);
        assert_eq!(add["bot"]["owner_id"], ann.user_id.0);
        assert_eq!(add["bot"]["email"], bot.email.as_str());
        assert_eq!(add["bot"]["bot_type"], 1);
        assert_eq!(add["bot"]["services"], json!([]));
        assert_eq!(add["bot"]["is_active"], true);
        assert_eq!(add["bot"]["default_sending_stream"], "general");
        assert!(events.iter().any(|e| e["type"] == "realm_user" && e["op"] == "add" && e["person"]["user_id"] == bot.user_id.0));
        let events = app.events_of(&other, other_q["queue_id"].as_str().unwrap(), &["realm_user", "realm_bot"]).await;
        assert!(events.iter().all(|e| e["type"] != "realm_bot"), "{events:?}");
        assert!(events.iter().any(|e| e["type"] == "realm_user" && e["person"]["is_bot"] == true));
        // GET /bots lists the caller's own bots.
        let list = app.get("/bots").as_user(&ann).send().await.success();
        assert_eq!(list["bots"].as_array().unwrap().len(), 1);
        assert_eq!(list["bots"][0]["username"], bot.email.as_str());
        assert_eq!(list["bots"][0]["api_key"], bot.api_key.as_str());
        let list = app.get("/bots").as_user(&other).send().await.success();
        assert_eq!(list["bots"], json!([]));
        // Snapshot: administrators see every bot, owners their own, others none.
        for (who, count) in [(&app.owner, 1), (&ann, 1), (&other, 0)] {
            let snap = app.register(who, &[("fetch_event_types", json!(["realm_bot", "realm_user"]))]).await;
            assert_eq!(snap["realm_bots"].as_array().unwrap().len(), count, "{snap}");
            let user = snap["realm_users"].as_array().unwrap().iter()
                .find(|u| u["user_id"] == bot.user_id.0).expect("bot in realm_users");
            assert_eq!(user["is_bot"], true);
            assert_eq!(user["bot_owner_id"], ann.user_id.0);
        }
    }
}

backend_test! {
    async fn create_bot_errors(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let guest = app.create_user("g@parley.test", "G", Role::Guest).await;
        create_bot(&app, &ann, "helper", &[]).await;
        let post = |who: &Account| app.post("/bots").as_user(who).param("full_name", "Other bot");
        let body = post(&ann).param("short_name", "helper").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Username already in use");
        let body = app.post("/bots").as_user(&ann).param("full_name", "helper bot")
            .param("short_name", "x2").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Name is already in use!");
        let body = post(&ann).param("short_name", "a b").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Bad name or username");
        let body = post(&ann).param("short_name", "t").param("bot_type", "9").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "bot_type");
        let body = post(&ann).param("short_name", "t").param("bot_type", "3")
            .param("payload_url", "\"nope\"").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "payload_url");
        let body = post(&ann).param("short_name", "t").param("bot_type", "4")
            .param("service_name", "nothing").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid embedded bot name.");
        let body = post(&ann).param("short_name", "t").param("default_sending_stream", "nowhere")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel name 'nowhere'");
        let body = post(&guest).param("short_name", "t").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");
    }
}

backend_test! {
    async fn creation_follows_the_bot_group_settings(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let admins = app.ctx.db.run(parley_storage::groups::rows).await.unwrap()
            .into_iter().find(|g| g.name == "role:administrators").unwrap().id;
        app.ctx.db.run(move |c| parley_storage::realms::set_permission(c, "can_create_bots_group", &admins.to_string()))
            .await.unwrap();
        // Written behind the server's back (no event): the organization cache is told directly.
        app.ctx.events.realm_cache().invalidate();
        let body = app.post("/bots").as_user(&ann).param("full_name", "G bot").param("short_name", "g")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");
        // Incoming webhook bots still follow can_create_write_only_bots_group (members).
        create_bot(&app, &ann, "hook", &[("bot_type", "2")]).await;
        create_bot(&app, &app.owner, "admin", &[]).await;
    }
}

backend_test! {
    async fn outgoing_and_embedded_bots_have_services(app) {
        let created = create_bot(&app, &app.owner, "out", &[("bot_type", "3"),
            ("payload_url", "\"https://hooks.example/x\""), ("interface_type", "2")]).await;
        let embedded = create_bot(&app, &app.owner, "emb", &[("bot_type", "4"),
            ("service_name", "helloworld"), ("config_data", "{\"key\": \"v\"}")]).await;
        let snap = app.register(&app.owner, &[("fetch_event_types", json!(["realm_bot"]))]).await;
        let bots = snap["realm_bots"].as_array().unwrap();
        let out = bots.iter().find(|b| b["user_id"] == created["user_id"]).unwrap();
        assert_eq!(out["services"][0]["base_url"], "https://hooks.example/x");
        assert_eq!(out["services"][0]["interface"], 2);
        assert!(out["services"][0]["token"].as_str().unwrap().len() >= 32);
        let emb = bots.iter().find(|b| b["user_id"] == embedded["user_id"]).unwrap();
        assert_eq!(emb["services"], json!([{"service_name": "helloworld", "config_data": {"key": "v"}}]));
        // Changing the URL sends realm_bot update with the services list.
        let q = app.register(&app.owner, &[("event_types", json!(["realm_bot"]))]).await;
        app.patch(&format!("/bots/{}", created["user_id"])).as_user(&app.owner)
            .param("service_payload_url", "\"https://hooks.example/y\"").send().await.success();
        let events = app.events_of(&app.owner, q["queue_id"].as_str().unwrap(), &["realm_bot"]).await;
        assert_eq!(events[0]["op"], "update");
        assert_eq!(events[0]["bot"]["services"][0]["base_url"], "https://hooks.example/y");
        assert_eq!(events[0]["bot"]["services"][0]["interface"], 1);
    }
}

backend_test! {
    async fn patch_bot_name_owner_and_defaults(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let created = create_bot(&app, &ann, "helper", &[]).await;
        let bot_id = created["user_id"].as_i64().unwrap();
        let path = format!("/bots/{bot_id}");
        let types = json!(["realm_user", "realm_bot"]);
        let ann_q = app.register(&ann, &[("event_types", types.clone())]).await;
        let bob_q = app.register(&bob, &[("event_types", types.clone())]).await;
        let owner_q = app.register(&app.owner, &[("event_types", types)]).await;
        // Others may not touch it.
        let body = app.patch(&path).as_user(&bob).param("full_name", "X").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");
        let body = app.patch("/bots/9999").as_user(&ann).param("full_name", "X").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such bot");
        let body = app.patch(&format!("/bots/{}", bob.user_id.0)).as_user(&app.owner)
            .param("full_name", "X").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such bot");
        let response = app.patch(&path).as_user(&ann).param("full_name", "Helper Two")
            .param("default_sending_stream", "general")
            .param("default_all_public_streams", "true").send().await.success();
        assert_eq!(response["full_name"], "Helper Two");
        assert_eq!(response["default_sending_stream"], "general");
        assert_eq!(response["default_all_public_streams"], true);
        assert_eq!(response["bot_owner"], ann.email.as_str());
        // Transfer to Bob: Ann loses it (delete), Bob gains it (add), admins get the update,
        // everyone gets realm_user bot_owner_id.
        let body = app.patch(&path).as_user(&ann).json_param("bot_owner_id", &json!(9999)).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Failed to change owner, no such user");
        app.patch(&path).as_user(&ann).json_param("bot_owner_id", &json!(bob.user_id.0)).send().await.success();
        let ann_events = app.events_of(&ann, ann_q["queue_id"].as_str().unwrap(), &["realm_user", "realm_bot"]).await;
        let bob_events = app.events_of(&bob, bob_q["queue_id"].as_str().unwrap(), &["realm_user", "realm_bot"]).await;
        let owner_events = app.events_of(&app.owner, owner_q["queue_id"].as_str().unwrap(), &["realm_user", "realm_bot"]).await;
        let bot_ops = |events: &[Value]| -> Vec<String> {
            events.iter().filter(|e| e["type"] == "realm_bot").map(|e| e["op"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(bot_ops(&ann_events), ["update", "update", "update", "delete"]);
        assert_eq!(bot_ops(&bob_events), ["add"]);
        assert_eq!(bot_ops(&owner_events), ["update", "update", "update", "update"]);
        assert_eq!(owner_events.last().unwrap()["person"], json!({"user_id": bot_id, "bot_owner_id": bob.user_id.0}));
        assert!(bob_events.iter().any(|e| e["type"] == "realm_user" && e["person"]["full_name"] == "Helper Two"));
        let list = app.get("/bots").as_user(&bob).send().await.success();
        assert_eq!(list["bots"][0]["user_id"], bot_id);
        // Only administrators change bot roles.
        let body = app.patch(&path).as_user(&bob).json_param("role", &json!(300)).send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        app.patch(&path).as_user(&app.owner).json_param("role", &json!(300)).send().await.success();
    }
}

backend_test! {
    async fn delete_bot_deactivates_and_reactivation_restores(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let created = create_bot(&app, &ann, "helper", &[]).await;
        let bot = bot_account(&app, &created, "helper");
        let q = app.register(&ann, &[("event_types", json!(["realm_user", "realm_bot"]))]).await;
        app.delete(&format!("/bots/{}", bot.user_id.0)).as_user(&ann).send().await.success();
        app.get("/users/me").as_user(&bot).send().await.error(401, "USER_DEACTIVATED");
        let events = app.events_of(&ann, q["queue_id"].as_str().unwrap(), &["realm_user", "realm_bot"]).await;
        assert!(events.iter().any(|e| e["type"] == "realm_user" && e["person"] == json!({"user_id": bot.user_id.0, "is_active": false})));
        assert!(events.iter().any(|e| e["type"] == "realm_bot" && e["bot"] == json!({"user_id": bot.user_id.0, "is_active": false})));
        assert_eq!(app.get("/bots").as_user(&ann).send().await.success()["bots"], json!([]));
        let snap = app.register(&ann, &[("fetch_event_types", json!(["realm_bot"]))]).await;
        assert_eq!(snap["realm_bots"][0]["is_active"], false);
        app.post(&format!("/users/{}/reactivate", bot.user_id.0)).as_user(&app.owner).send().await.success();
        app.get("/users/me").as_user(&bot).send().await.success();
        // Key rotation: the old key stops working.
        let key = app.post(&format!("/bots/{}/api_key/regenerate", bot.user_id.0)).as_user(&ann).send().await.success();
        let new_key = key["api_key"].as_str().unwrap().to_owned();
        assert_ne!(new_key, bot.api_key);
        app.get("/users/me").as_user(&bot).send().await.error(401, "INVALID_API_KEY");
        let rotated = Account { api_key: new_key, ..bot.clone() };
        app.get("/users/me").as_user(&rotated).send().await.success();
    }
}

backend_test! {
    async fn a_bots_default_channels_steer_sending_and_registering(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let created = create_bot(&app, &ann, "steer", &[]).await;
        let bot = bot_account(&app, &created, "steer");
        let dev = app.create_channel(&ann, "dev", &[&ann, &bot], &[]).await;
        app.create_channel(&ann, "ops", &[&ann, &bot], &[]).await;
        // The defaults name channels the owner may use; set them now that they exist.
        app.patch(&format!("/bots/{}", bot.user_id.0)).as_user(&ann)
            .param("default_sending_stream", "dev").param("default_events_register_stream", "dev")
            .send().await.success();

        // A queue registered without a narrow follows the default channel only.
        let queue = app.register(&bot, &[("event_types", json!(["message"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        let in_ops = app.send_to_channel(&ann, "ops", "t", "elsewhere").await;
        // A channel message without `to` goes to the default channel.
        let sent = app.post("/messages").as_user(&bot).param("type", "stream").param("topic", "t")
            .param("content", "to my default").send().await.success();
        let id = sent["id"].as_i64().unwrap();
        let message = app.get(&format!("/messages/{id}")).as_user(&ann).send().await.success();
        assert_eq!(message["message"]["stream_id"], dev);
        let events = app.events_of(&bot, &queue_id, &["message"]).await;
        let ids: Vec<i64> = events.iter().map(|e| e["message"]["id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![id], "not {in_ops}");
        // An explicit narrow wins.
        let queue = app.register(&bot, &[("event_types", json!(["message"])), ("narrow", json!([["channel", "ops"]]))]).await;
        let again = app.send_to_channel(&ann, "ops", "t", "here").await;
        let events = app.events_of(&bot, queue["queue_id"].as_str().unwrap(), &["message"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["message"]["id"], again);

        // A person has no default channel; nor has a bot without one.
        let body = app.post("/messages").as_user(&ann).param("type", "stream").param("topic", "t")
            .param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Missing channel");
        let plain = create_bot(&app, &ann, "plain", &[]).await;
        let plain = bot_account(&app, &plain, "plain");
        let body = app.post("/messages").as_user(&plain).param("type", "stream").json_param("to", &json!([]))
            .param("topic", "t").param("content", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Missing channel");
        // Direct messages still need recipients.
        let body = app.post("/messages").as_user(&bot).param("type", "direct")
            .param("content", "x").send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "to");
    }
}

backend_test! {
    async fn a_bots_default_all_public_streams_applies_when_register_does_not_say(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Administrator).await;
        let created = create_bot(&app, &ann, "watch", &[("default_all_public_streams", "true")]).await;
        let bot = bot_account(&app, &created, "watch");
        app.create_channel(&ann, "open", &[&ann], &[]).await;
        let all = app.register(&bot, &[("event_types", json!(["message"]))]).await;
        let explicit = app.register(&bot, &[("event_types", json!(["message"])), ("all_public_streams", json!(false))]).await;
        let id = app.send_to_channel(&ann, "open", "t", "for everyone").await;
        let events = app.events_of(&bot, all["queue_id"].as_str().unwrap(), &["message"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["message"]["id"], id);
        assert!(app.events_of(&bot, explicit["queue_id"].as_str().unwrap(), &["message"]).await.is_empty());
    }
}
