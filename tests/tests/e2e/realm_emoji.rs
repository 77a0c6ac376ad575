//! Custom emoji: adding, listing, deactivating, permissions, name rules, events, the snapshot,
//! rendering `:name:`, and reactions with custom emoji.

use parley_domain::Role;
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

fn png() -> Vec<u8> {
    parley_tests::images::png(32, 32)
}

async fn add_files(
    app: &TestApp,
    who: &Account,
    name: &str,
    files: &[(&str, &str, &[u8])],
) -> Response {
    let path = format!("/realm/emoji/{}", name.replace(' ', "%20"));
    app.post(&path).as_user(who).files(files).send().await
}

async fn add(app: &TestApp, who: &Account, name: &str) -> Response {
    add_files(app, who, name, &[("e.png", "image/png", &png())]).await
}

async fn list(app: &TestApp, who: &Account) -> Value {
    app.get("/realm/emoji").as_user(who).send().await.success()["emoji"].clone()
}

fn by_name<'a>(emoji: &'a Value, name: &str) -> &'a Value {
    emoji
        .as_object()
        .unwrap()
        .values()
        .find(|e| e["name"] == name)
        .unwrap()
}

backend_test! {
    async fn add_list_and_serve(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        add(&app, &alice, "green_tick").await.success();
        add_files(&app, &alice, "party parrot", &[("p.gif", "image/gif", &parley_tests::images::gif(100, 50))]).await.success();

        let emoji = list(&app, &alice).await;
        assert_eq!(emoji.as_object().unwrap().len(), 2);
        let tick = by_name(&emoji, "green_tick");
        let id = tick["id"].as_str().unwrap();
        assert_eq!(emoji[id]["name"], "green_tick");
        assert_eq!(tick["deactivated"], false);
        assert_eq!(tick["author_id"], alice.user_id.0);
        assert_eq!(tick["still_url"], Value::Null);
        let source = tick["source_url"].as_str().unwrap();
        assert!(source.starts_with("/user_avatars/") && source.ends_with(&format!("/emoji/images/{id}.png")), "{source}");
        let image = app.get_page(source).send().await;
        assert_eq!(image.status, 200);
        assert_eq!(image.headers.get("content-type").unwrap(), "image/png");

        // Spaces become underscores; animated images get a still URL.
        let parrot = by_name(&emoji, "party_parrot");
        assert!(parrot["source_url"].as_str().unwrap().ends_with(".gif"));
        let still = parrot["still_url"].as_str().unwrap();
        assert!(still.contains("/emoji/images/still/"), "{still}");
        // The still is the first frame as a 64x64 PNG, made at upload.
        let got = app.get_page(still).send().await;
        assert_eq!(got.status, 200);
        assert_eq!(got.headers.get("content-type").unwrap(), "image/png");
        let still_image = image::load_from_memory_with_format(&got.bytes, image::ImageFormat::Png).unwrap();
        assert_eq!((still_image.width(), still_image.height()), (64, 64));
        let original = app.get_page(parrot["source_url"].as_str().unwrap()).send().await;
        assert_eq!(original.headers.get("content-type").unwrap(), "image/gif");
        assert_eq!(original.bytes, parley_tests::images::gif(100, 50));
        // A still emoji has no still image.
        assert_eq!(app.get_page(&format!("/user_avatars/1/emoji/images/still/{id}.png")).send().await.status, 404);

        assert_eq!(app.get_page("/user_avatars/1/emoji/images/999.png").send().await.status, 404);
    }
}

backend_test! {
    async fn name_rules_and_upload_errors(app) {
        let cases = [
            ("Upper", "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."),
            ("dot.name", "Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores."),
            ("tick_", "Emoji names must end with either a letter or digit."),
            ("tick-", "Emoji names must end with either a letter or digit."),
        ];
        for (name, msg) in cases {
            let body = add(&app, &app.owner, name).await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], msg, "{name}");
        }
        let body = add(&app, &app.owner, "%20").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Emoji name is missing");

        let none = add_files(&app, &app.owner, "nofile", &[]).await.error(400, "BAD_REQUEST");
        assert_eq!(none["msg"], "You must upload exactly one file.");
        let two = add_files(&app, &app.owner, "twofiles", &[("a.png", "image/png", &png()), ("b.png", "image/png", &png())])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(two["msg"], "You must upload exactly one file.");
        let text = add_files(&app, &app.owner, "text", &[("a.txt", "text/plain", b"hello")]).await.error(400, "BAD_REQUEST");
        assert_eq!(text["msg"], "Invalid image format");
        let broken = add_files(&app, &app.owner, "broken", &[("b.png", "image/png", b"\x89PNG\r\n\x1a\nnot-really")])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(broken["msg"], "Could not decode image; did you upload an image file?");
        let mut big = png();
        big.resize(5 * 1024 * 1024 + 1, 0);
        let big = add_files(&app, &app.owner, "big", &[("b.png", "image/png", &big)]).await.error(400, "BAD_REQUEST");
        assert_eq!(big["msg"], "Uploaded file is larger than the allowed limit of 5 MiB");

        add(&app, &app.owner, "dup").await.success();
        let dup = add(&app, &app.owner, "dup").await.error(400, "BAD_REQUEST");
        assert_eq!(dup["msg"], "A custom emoji with this name already exists.");

        // Built-in names: administrators only.
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let builtin = add(&app, &alice, "smile").await.error(400, "BAD_REQUEST");
        assert_eq!(builtin["msg"], "Only administrators can override built-in emoji.");
        add(&app, &app.owner, "smile").await.success();
        assert_eq!(list(&app, &app.owner).await.as_object().unwrap().len(), 2);
    }
}

backend_test! {
    async fn permissions(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Guest", Role::Guest).await;
        let body = add(&app, &guest, "guest_emoji").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");

        add(&app, &alice, "alices").await.success();
        // Neither author nor administrator.
        let body = app.delete("/realm/emoji/alices").as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization administrator or emoji author");
        app.delete("/realm/emoji/alices").as_user(&alice).send().await.success();
        let body = app.delete("/realm/emoji/alices").as_user(&alice).send().await.error(404, "BAD_REQUEST");
        assert_eq!(body["msg"], "Emoji 'alices' does not exist");

        add(&app, &alice, "again").await.success();
        app.delete("/realm/emoji/again").as_user(&app.owner).send().await.success();
        let emoji = list(&app, &bob).await;
        assert_eq!(by_name(&emoji, "again")["deactivated"], true);
        assert_eq!(by_name(&emoji, "alices")["deactivated"], true);
        // A deactivated name can be used again.
        add(&app, &alice, "alices").await.success();

        // Restricting the setting to the owner alone.
        app.patch("/realm")
            .as_user(&app.owner)
            .json_param("can_add_custom_emoji_group", &json!({"new": {"direct_members": [app.owner.user_id.0], "direct_subgroups": []}}))
            .send()
            .await
            .success();
        let body = add(&app, &alice, "blocked").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");
        add(&app, &app.owner, "allowed").await.success();
    }
}

backend_test! {
    async fn events_and_snapshot(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let register = app.register(&alice, &[("event_types", json!(["realm_emoji"]))]).await;
        assert_eq!(register["realm_emoji"], json!({}));
        let queue = register["queue_id"].as_str().unwrap().to_owned();
        add(&app, &app.owner, "wave2").await.success();
        app.delete("/realm/emoji/wave2").as_user(&app.owner).send().await.success();
        let events = app.events_of(&alice, &queue, &["realm_emoji"]).await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["op"], "update");
        let first = by_name(&events[0]["realm_emoji"], "wave2");
        assert_eq!(first["deactivated"], false);
        assert_eq!(by_name(&events[1]["realm_emoji"], "wave2")["deactivated"], true);

        let again = app.register(&alice, &[("event_types", json!(["realm_emoji"]))]).await;
        assert_eq!(again["realm_emoji"], events[1]["realm_emoji"]);
        assert_eq!(again["realm_emoji"], list(&app, &alice).await);
    }
}

backend_test! {
    async fn rendering_and_reactions(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        app.create_channel(&alice, "fun", &[&alice], &[]).await;
        add(&app, &alice, "zzblob").await.success();
        let emoji = list(&app, &alice).await;
        let parrot = by_name(&emoji, "zzblob").clone();
        let id = parrot["id"].as_str().unwrap().to_owned();

        let message = app.send_to_channel(&alice, "fun", "t", "hello :zzblob: and :nothere:").await;
        let got = app.get(&format!("/messages/{message}")).as_user(&alice).send().await.success();
        let html = got["message"]["content"].as_str().unwrap();
        assert!(html.contains("class=\"emoji\""), "{html}");
        assert!(html.contains(parrot["source_url"].as_str().unwrap()), "{html}");
        assert!(html.contains(":nothere:"), "{html}");

        let path = format!("/messages/{message}/reactions");
        // By name alone, the custom emoji is found.
        app.post(&path).as_user(&alice).param("emoji_name", "zzblob").send().await.success();
        let got = app.get(&format!("/messages/{message}")).as_user(&alice).send().await.success();
        let reaction = &got["message"]["reactions"][0];
        assert_eq!(reaction["reaction_type"], "realm_emoji");
        assert_eq!(reaction["emoji_code"], id);
        app.delete(&path).as_user(&alice).param("emoji_name", "zzblob").send().await.success();

        let wrong = app.post(&path).as_user(&alice)
            .param("emoji_name", "other").param("emoji_code", &id).param("reaction_type", "realm_emoji")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(wrong["msg"], "Invalid custom emoji name.");
        let unknown = app.post(&path).as_user(&alice)
            .param("emoji_name", "zzblob").param("emoji_code", "99999").param("reaction_type", "realm_emoji")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(unknown["msg"], "Invalid custom emoji.");
        // With type and code (checked above while no reaction used it).
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        app.post(&path).as_user(&bob)
            .param("emoji_name", "zzblob").param("emoji_code", &id).param("reaction_type", "realm_emoji")
            .send().await.success();

        // Deactivated emoji cannot be used in new reactions.
        app.delete("/realm/emoji/zzblob").as_user(&alice).send().await.success();
        let message2 = app.send_to_channel(&alice, "fun", "t", "second").await;
        let gone = app.post(&format!("/messages/{message2}/reactions")).as_user(&alice)
            .param("emoji_name", "zzblob").param("emoji_code", &id).param("reaction_type", "realm_emoji")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(gone["msg"], "This custom emoji has been deactivated.");
    }
}

backend_test! {
    async fn statuses_with_custom_emoji(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        add(&app, &alice, "zzblob").await.success();
        let emoji = list(&app, &alice).await;
        let id = by_name(&emoji, "zzblob")["id"].as_str().unwrap().to_owned();

        // A name alone finds the custom emoji.
        app.post("/users/me/status").as_user(&alice).param("emoji_name", "zzblob").send().await.success();
        let status = app.get(&format!("/users/{}/status", alice.user_id.0)).as_user(&alice).send().await.success();
        assert_eq!(status["status"]["reaction_type"], "realm_emoji");
        assert_eq!(status["status"]["emoji_code"], id);

        let wrong = app.post("/users/me/status").as_user(&alice)
            .param("emoji_name", "other").param("emoji_code", &id).param("reaction_type", "realm_emoji")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(wrong["msg"], "Invalid custom emoji name.");
        let unknown = app.post("/users/me/status").as_user(&alice)
            .param("emoji_name", "zzblob").param("emoji_code", "424242").param("reaction_type", "realm_emoji")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(unknown["msg"], "Invalid custom emoji.");

        app.delete("/realm/emoji/zzblob").as_user(&alice).send().await.success();
        let gone = app.post("/users/me/status").as_user(&alice)
            .param("emoji_name", "zzblob").param("emoji_code", &id).param("reaction_type", "realm_emoji")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(gone["msg"], "This custom emoji has been deactivated.");
    }
}
