//! Uploaded files: upload, who may read them, size limit, attachments, claiming and detaching,
//! temporary URLs, events, and avatars.

use parley_domain::Role;
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

async fn upload_raw(app: &TestApp, who: &Account, files: &[(&str, &str, &[u8])]) -> Response {
    app.post("/user_uploads")
        .as_user(who)
        .files(files)
        .send()
        .await
}

/// Uploads a text file; returns the URL (`/user_uploads/...`).
async fn upload(app: &TestApp, who: &Account, name: &str, text: &str) -> String {
    let body = upload_raw(app, who, &[(name, "text/plain", text.as_bytes())])
        .await
        .success();
    body["url"].as_str().unwrap().to_owned()
}

async fn fetch(app: &TestApp, who: &Account, url: &str) -> Response {
    app.get_page(url).as_user(who).send().await
}

backend_test! {
    async fn upload_and_fetch_as_owner(app) {
        let body = upload_raw(&app, &app.owner, &[("my notes.txt", "text/plain", b"hello file")])
            .await
            .success();
        let url = body["url"].as_str().unwrap();
        assert_eq!(body["uri"], body["url"]);
        assert_eq!(body["filename"], "my-notes.txt");
        // <realm>/<2 hex>/<24 random>/<name>
        let path: Vec<&str> = url.strip_prefix("/user_uploads/").unwrap().split('/').collect();
        assert_eq!(path.len(), 4, "{url}");
        assert!(path[0].parse::<i64>().is_ok());
        assert_eq!(path[1].len(), 2);
        assert!(path[1].chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(path[2].len(), 24);
        assert_eq!(path[3], "my-notes.txt");

        let got = fetch(&app, &app.owner, url).await;
        assert_eq!(got.status, 200, "{}", got.text);
        assert_eq!(got.text, "hello file");
        assert_eq!(got.headers.get("content-type").unwrap(), "text/plain");
        let disposition = got.headers.get("content-disposition").unwrap().to_str().unwrap();
        assert!(disposition.starts_with("inline"), "{disposition}");
        assert!(disposition.contains("my-notes.txt"), "{disposition}");

        // Types browsers could run are downloaded, not shown.
        let html = upload_raw(&app, &app.owner, &[("page.html", "text/html", b"<script>x</script>")])
            .await
            .success();
        let got = fetch(&app, &app.owner, html["url"].as_str().unwrap()).await;
        let disposition = got.headers.get("content-disposition").unwrap().to_str().unwrap();
        assert!(disposition.starts_with("attachment"), "{disposition}");
        assert_eq!(got.headers.get("x-content-type-options").unwrap(), "nosniff");

        // Without credentials: 401.
        let anonymous = app.get_page(url).send().await;
        assert_eq!(anonymous.status, 401);
        // Unknown file: 404.
        let missing = fetch(&app, &app.owner, "/user_uploads/1/ab/nothere/x.txt").await;
        assert_eq!(missing.status, 404);
    }
}

backend_test! {
    async fn upload_errors(app) {
        // No file at all.
        let none = app
            .post("/user_uploads")
            .as_user(&app.owner)
            .files(&[])
            .send()
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(none["msg"], "You must specify a file to upload");
        let form = app.post("/user_uploads").as_user(&app.owner).param("x", "y").send().await;
        form.error(400, "BAD_REQUEST");
        // Two files.
        let two = upload_raw(&app, &app.owner, &[("a.txt", "text/plain", b"a"), ("b.txt", "text/plain", b"b")])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(two["msg"], "You may only upload one file at a time");
        // Over 25 MiB.
        let big = vec![b'x'; 25 * 1024 * 1024 + 1];
        let too_big = upload_raw(&app, &app.owner, &[("big.bin", "application/octet-stream", &big)])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(too_big["msg"], "Uploaded file is larger than the allowed limit of 25 MiB");
        let list = app.get("/attachments").as_user(&app.owner).send().await.success();
        assert_eq!(list["attachments"], json!([]));
    }
}

backend_test! {
    async fn readers_of_a_linking_message_may_fetch(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let carol = app.create_user("carol@parley.test", "Carol", Role::Member).await;
        let url = upload(&app, &alice, "plan.txt", "the plan").await;

        // Before any message links it, only the owner may read it.
        assert_eq!(fetch(&app, &bob, &url).await.status, 403);

        // A private channel with Alice and Bob only.
        app.create_channel(&alice, "secret", &[&alice, &bob], &[("invite_only", json!(true))]).await;
        app.send_to_channel(&alice, "secret", "t", &format!("see [plan]({url})")).await;
        let as_bob = fetch(&app, &bob, &url).await;
        assert_eq!(as_bob.status, 200, "{}", as_bob.text);
        assert_eq!(as_bob.text, "the plan");
        let as_carol = fetch(&app, &carol, &url).await;
        assert_eq!(as_carol.status, 403, "{}", as_carol.text);

        // A direct message to Carol, as an absolute link, shares another file with her only.
        let url2 = upload(&app, &alice, "dm.txt", "for carol").await;
        app.post("/messages")
            .as_user(&alice)
            .param("type", "direct")
            .json_param("to", &json!([carol.user_id.0]))
            .param("content", format!("http://parley.test{url2}"))
            .send()
            .await
            .success();
        assert_eq!(fetch(&app, &carol, &url2).await.status, 200);
        assert_eq!(fetch(&app, &bob, &url2).await.status, 403);

        // Someone else linking a file they cannot read does not share it.
        app.create_channel(&bob, "open", &[&bob, &carol], &[]).await;
        let url3 = upload(&app, &alice, "mine.txt", "alice only").await;
        app.send_to_channel(&bob, "open", "t", &format!("[x]({url3})")).await;
        assert_eq!(fetch(&app, &carol, &url3).await.status, 403);

        // Public channel history is readable by everyone, subscribed or not.
        app.create_channel(&alice, "public", &[&alice], &[]).await;
        let url4 = upload(&app, &alice, "pub.txt", "public").await;
        app.send_to_channel(&alice, "public", "t", &format!("[x]({url4})")).await;
        assert_eq!(fetch(&app, &carol, &url4).await.status, 200);
    }
}

backend_test! {
    async fn temporary_urls(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let url = upload(&app, &alice, "t.txt", "temporary").await;
        let api_path = url.strip_prefix("/user_uploads").unwrap();
        let body = app
            .get(&format!("/user_uploads{api_path}"))
            .as_user(&alice)
            .send()
            .await
            .success();
        let temp = body["url"].as_str().unwrap();
        assert!(temp.starts_with("/user_uploads/temporary/"), "{temp}");
        let got = app.get_page(temp).send().await;
        assert_eq!(got.status, 200);
        assert_eq!(got.text, "temporary");
        // A tampered token is refused.
        let bad = format!("{}0/t.txt", temp.rsplit_once('/').unwrap().0);
        assert_eq!(app.get_page(&bad).send().await.status, 404);
        // Someone who may not read the file gets no URL.
        app.get(&format!("/user_uploads{api_path}"))
            .as_user(&app.owner)
            .send()
            .await
            .error(403, "BAD_REQUEST");
    }
}

backend_test! {
    async fn attachments_list_claims_and_delete(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        app.create_channel(&alice, "notes", &[&alice], &[]).await;
        let register = app.register(&alice, &[("event_types", json!(["attachment"]))]).await;
        let queue = register["queue_id"].as_str().unwrap().to_owned();
        let url = upload(&app, &alice, "a.txt", "12345").await;
        let message = app.send_to_channel(&alice, "notes", "t", &format!("[a]({url})")).await;

        let list = app.get("/attachments").as_user(&alice).send().await.success();
        let attachments = list["attachments"].as_array().unwrap();
        assert_eq!(attachments.len(), 1);
        let a = &attachments[0];
        assert_eq!(a["name"], "a.txt");
        assert_eq!(a["size"], 5);
        assert_eq!(format!("/user_uploads/{}", a["path_id"].as_str().unwrap()), url);
        assert!(a["create_time"].as_i64().unwrap() > 1_000_000_000_000);
        assert_eq!(a["messages"][0]["id"], message);
        assert!(a["messages"][0]["date_sent"].as_i64().unwrap() > 1_000_000_000_000);
        assert_eq!(list["upload_space_used"], 5);
        let id = a["id"].as_i64().unwrap();

        // Someone else's attachment or an unknown one.
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let other = app.delete(&format!("/attachments/{id}")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(other["msg"], "Invalid attachment");
        app.delete("/attachments/999999").as_user(&alice).send().await.error(400, "BAD_REQUEST");
        assert_eq!(app.get("/attachments").as_user(&bob).send().await.success()["attachments"], json!([]));

        app.delete(&format!("/attachments/{id}")).as_user(&alice).send().await.success();
        let list = app.get("/attachments").as_user(&alice).send().await.success();
        assert_eq!(list["attachments"], json!([]));
        assert_eq!(list["upload_space_used"], 0);
        assert_eq!(fetch(&app, &alice, &url).await.status, 404);

        let events = app.events_of(&alice, &queue, &["attachment"]).await;
        let ops: Vec<&str> = events.iter().map(|e| e["op"].as_str().unwrap()).collect();
        assert_eq!(ops, ["add", "update", "remove"]);
        assert_eq!(events[0]["attachment"]["name"], "a.txt");
        assert_eq!(events[0]["attachment"]["messages"], json!([]));
        assert_eq!(events[0]["upload_space_used"], 5);
        assert_eq!(events[1]["attachment"]["messages"][0]["id"], message);
        assert_eq!(events[2]["attachment"], json!({"id": id}));
        assert_eq!(events[2]["upload_space_used"], 0);
        // Bob's queue would not see Alice's attachments.
        let bob_register = app.register(&bob, &[("event_types", json!(["attachment"]))]).await;
        let bob_queue = bob_register["queue_id"].as_str().unwrap().to_owned();
        upload(&app, &alice, "b.txt", "x").await;
        assert!(app.events_of(&bob, &bob_queue, &["attachment"]).await.is_empty());
    }
}

backend_test! {
    async fn edits_report_detached_uploads(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        app.create_channel(&alice, "notes", &[&alice], &[]).await;
        let kept = upload(&app, &alice, "kept.txt", "k").await;
        let gone = upload(&app, &alice, "gone.txt", "g").await;
        let shared = upload(&app, &alice, "shared.txt", "s").await;
        let first = app
            .send_to_channel(&alice, "notes", "t", &format!("[k]({kept}) [g]({gone}) [s]({shared})"))
            .await;
        app.send_to_channel(&alice, "notes", "t", &format!("again [s]({shared})")).await;

        // Editing the topic only detaches nothing.
        let moved = app.patch(&format!("/messages/{first}")).as_user(&alice).param("topic", "t2").send().await.success();
        assert_eq!(moved["detached_uploads"], json!([]));

        let edited = app
            .patch(&format!("/messages/{first}"))
            .as_user(&alice)
            .param("content", format!("only [k]({kept})"))
            .send()
            .await
            .success();
        let detached = edited["detached_uploads"].as_array().unwrap();
        // `shared.txt` is still linked by the second message.
        assert_eq!(detached.len(), 1, "{edited}");
        assert_eq!(detached[0]["name"], "gone.txt");
        assert_eq!(format!("/user_uploads/{}", detached[0]["path_id"].as_str().unwrap()), gone);
        assert_eq!(detached[0]["messages"], json!([]));
        assert_eq!(detached[0]["size"], 1);
        assert!(detached[0]["id"].is_i64());
        assert!(detached[0]["create_time"].as_i64().unwrap() > 1_000_000_000_000);

        let list = app.get("/attachments").as_user(&alice).send().await.success();
        let by_name = |name: &str| -> Value {
            list["attachments"].as_array().unwrap().iter().find(|a| a["name"] == name).unwrap().clone()
        };
        assert_eq!(by_name("kept.txt")["messages"].as_array().unwrap().len(), 1);
        assert_eq!(by_name("gone.txt")["messages"], json!([]));
        assert_eq!(by_name("shared.txt")["messages"].as_array().unwrap().len(), 1);

        // Adding a link in an edit claims it.
        let edited = app
            .patch(&format!("/messages/{first}"))
            .as_user(&alice)
            .param("content", format!("[k]({kept}) [g]({gone})"))
            .send()
            .await
            .success();
        assert_eq!(edited["detached_uploads"], json!([]));
        let list = app.get("/attachments").as_user(&alice).send().await.success();
        let gone_now = list["attachments"].as_array().unwrap().iter().find(|a| a["name"] == "gone.txt").unwrap().clone();
        assert_eq!(gone_now["messages"][0]["id"], first);
    }
}

backend_test! {
    async fn avatar_upload_and_delete(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let register = app.register(&app.owner, &[("event_types", json!(["realm_user"]))]).await;
        let queue = register["queue_id"].as_str().unwrap().to_owned();
        let png: &[u8] = b"\x89PNG\r\n\x1a\nrest-of-image";

        let not_image = app
            .post("/users/me/avatar")
            .as_user(&alice)
            .files(&[("a.txt", "text/plain", b"hello")])
            .send()
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(not_image["msg"], "Invalid image format");
        app.post("/users/me/avatar")
            .as_user(&alice)
            .files(&[])
            .send()
            .await
            .error(400, "BAD_REQUEST");

        let body = app
            .post("/users/me/avatar")
            .as_user(&alice)
            .files(&[("me.png", "image/png", png)])
            .send()
            .await
            .success();
        let url = body["avatar_url"].as_str().unwrap().to_owned();
        assert!(url.contains(&format!("/user_avatars/{}.png?version=2", alice.user_id.0)), "{url}");
        let path = url.strip_prefix("http://parley.test").unwrap().split('?').next().unwrap();
        let image = app.get_page(path).send().await;
        assert_eq!(image.status, 200);
        assert_eq!(image.headers.get("content-type").unwrap(), "image/png");
        // The harness reads bodies as text; the image's first byte is not UTF-8.
        assert!(image.text.ends_with("PNG\r\n\x1a\nrest-of-image"), "{}", image.text);

        let me = app.get("/users/me").as_user(&alice).send().await.success();
        assert_eq!(me["avatar_url"], url);

        let medium = app.get_page(&format!("/user_avatars/{}-medium.png", alice.user_id.0)).send().await;
        assert_eq!(medium.status, 200);
        app.delete("/users/me/avatar").as_user(&alice).send().await.success();
        assert_eq!(app.get_page(path).send().await.status, 404);

        let events = app.events_of(&app.owner, &queue, &["realm_user"]).await;
        let avatar: Vec<&Value> = events.iter().filter(|e| e["person"].get("avatar_source").is_some()).collect();
        assert_eq!(avatar.len(), 2, "{events:?}");
        assert_eq!(avatar[0]["op"], "update");
        assert_eq!(avatar[0]["person"]["user_id"], alice.user_id.0);
        assert_eq!(avatar[0]["person"]["avatar_source"], "U");
        assert_eq!(avatar[0]["person"]["avatar_url"], url);
        let medium = avatar[0]["person"]["avatar_url_medium"].as_str().unwrap();
        assert!(medium.contains(&format!("/user_avatars/{}-medium.png", alice.user_id.0)), "{medium}");

        assert_eq!(avatar[0]["person"]["avatar_version"], 2);
        assert_eq!(avatar[1]["person"]["avatar_source"], "G");
        assert_eq!(avatar[1]["person"]["avatar_version"], 3);
        assert!(avatar[1]["person"]["avatar_url"].as_str().unwrap().contains("gravatar"));
    }
}
