//! Images, videos and math in messages: thumbnails of uploaded images and who may fetch them,
//! the previews messages show, `/thumbnail`, `server_thumbnail_formats`, the camo proxy,
//! KaTeX math, and the cleanup of uploads no message claims.

use image::ImageFormat;
use parley_domain::Role;
use parley_tests::images::{gif, png};
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn upload(app: &TestApp, who: &Account, name: &str, kind: &str, bytes: &[u8]) -> String {
    let body = app
        .post("/user_uploads")
        .as_user(who)
        .files(&[(name, kind, bytes)])
        .send()
        .await
        .success();
    body["url"].as_str().unwrap().to_owned()
}

/// Sends `content` to a new public channel of `who` and returns the message as `GET
/// /messages` shows it.
async fn send_and_read(app: &TestApp, who: &Account, channel: &str, content: &str) -> Value {
    app.create_channel(who, channel, &[who], &[]).await;
    let id = app.send_to_channel(who, channel, "t", content).await;
    app.get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success()["message"]
        .clone()
}

backend_test! {
    async fn uploaded_images_get_thumbnails_and_previews(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let url = upload(&app, &alice, "cat.png", "image/png", &png(1200, 900)).await;
        let path_id = url.strip_prefix("/user_uploads/").unwrap();
        let thumbnail = format!("/user_uploads/thumbnail/{path_id}/840x560.webp");

        // Before any message links it, only the owner may fetch the thumbnail.
        let got = app.get_page(&thumbnail).as_user(&alice).send().await;
        assert_eq!(got.status, 200, "{}", got.text);
        assert_eq!(got.headers.get("content-type").unwrap(), "image/webp");
        let small = image::load_from_memory_with_format(&got.bytes, ImageFormat::WebP).unwrap();
        assert_eq!((small.width(), small.height()), (747, 560));
        assert_eq!(app.get_page(&thumbnail).as_user(&bob).send().await.status, 403);
        assert_eq!(app.get_page(&thumbnail).send().await.status, 401);

        let message = send_and_read(&app, &alice, "pictures", &format!("[cat.png]({url})")).await;
        let rendered = message["content"].as_str().unwrap();
        assert!(
            rendered.contains(&format!(
                "<div class=\"message_inline_image\"><a href=\"{url}\" title=\"cat.png\" target=\"_blank\" rel=\"noopener noreferrer\">\
                 <img data-original-content-type=\"image/png\" data-original-dimensions=\"1200x900\" src=\"{thumbnail}\"></a></div>"
            )),
            "{rendered}"
        );
        // Readers of the message may now fetch it; the animated name of a still image gives
        // the still thumbnail; unknown formats are not found.
        assert_eq!(app.get_page(&thumbnail).as_user(&bob).send().await.status, 200);
        let anim = format!("/user_uploads/thumbnail/{path_id}/840x560-anim.webp");
        assert_eq!(app.get_page(&anim).as_user(&bob).send().await.status, 200);
        for other in ["300x200.webp", "840x560.jpg", "nonsense"] {
            let missing = format!("/user_uploads/thumbnail/{path_id}/{other}");
            assert_eq!(app.get_page(&missing).as_user(&bob).send().await.status, 404, "{other}");
        }

        // Links may percent-encode the name.
        let cafe = upload(&app, &alice, "café.png", "image/png", &png(10, 10)).await;
        assert!(cafe.ends_with("/café.png"), "{cafe}");
        let encoded = cafe.replace('é', "%C3%A9");
        let message = send_and_read(&app, &alice, "encoded", &format!("[café]({encoded})")).await;
        let rendered = message["content"].as_str().unwrap();
        assert!(rendered.contains("data-original-dimensions=\"10x10\""), "{rendered}");
    }
}

backend_test! {
    async fn animated_images_get_animated_thumbnails(app) {
        let url = upload(&app, &app.owner, "party.gif", "image/gif", &gif(120, 90)).await;
        let path_id = url.strip_prefix("/user_uploads/").unwrap();
        let message = send_and_read(&app, &app.owner, "gifs", &format!("[party]({url})")).await;
        let rendered = message["content"].as_str().unwrap();
        let animated = format!("/user_uploads/thumbnail/{path_id}/840x560-anim.webp");
        assert!(
            rendered.contains(&format!(
                "<img data-animated=\"true\" data-original-content-type=\"image/gif\" data-original-dimensions=\"120x90\" src=\"{animated}\">"
            )),
            "{rendered}"
        );
        let got = app.get_page(&animated).as_user(&app.owner).send().await;
        assert_eq!(got.status, 200);
        // An animated WebP has an ANIM chunk.
        assert!(got.bytes.windows(4).any(|w| w == b"ANIM"));
        let still = format!("/user_uploads/thumbnail/{path_id}/840x560.webp");
        let got = app.get_page(&still).as_user(&app.owner).send().await;
        assert_eq!(got.status, 200);
        assert!(!got.bytes.windows(4).any(|w| w == b"ANIM"));
    }
}

backend_test! {
    async fn files_that_are_not_images_get_no_preview(app) {
        let fake = upload(&app, &app.owner, "fake.png", "image/png", b"\x89PNG\r\n\x1a\nnot really").await;
        let text = upload(&app, &app.owner, "notes.png", "text/plain", b"hello").await;
        let content = format!("[fake]({fake}) and [notes]({text})");
        let message = send_and_read(&app, &app.owner, "files", &content).await;
        let rendered = message["content"].as_str().unwrap();
        assert!(!rendered.contains("message_inline_image"), "{rendered}");
        // Both are still ordinary files.
        let got = app.get_page(&fake).as_user(&app.owner).send().await;
        assert_eq!(got.status, 200);
        let path_id = fake.strip_prefix("/user_uploads/").unwrap();
        let thumbnail = format!("/user_uploads/thumbnail/{path_id}/840x560.webp");
        assert_eq!(app.get_page(&thumbnail).as_user(&app.owner).send().await.status, 404);
    }
}

backend_test! {
    async fn the_thumbnail_endpoint_serves_uploads_and_redirects_links(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let url = upload(&app, &alice, "a.png", "image/png", &png(40, 30)).await;
        let query = |u: &str, size: &str| {
            format!("/thumbnail?url={}&size={size}", percent_encoding::utf8_percent_encode(u, percent_encoding::NON_ALPHANUMERIC))
        };
        let got = app.get_page(&query(&url, "full")).as_user(&alice).send().await;
        assert_eq!(got.status, 200);
        assert_eq!(got.headers.get("content-type").unwrap(), "image/png");
        // Same access rules as the file.
        assert_eq!(app.get_page(&query(&url, "thumbnail")).as_user(&app.owner).send().await.status, 403);
        let external = "https://example.com/pic.png";
        let got = app.get_page(&query(external, "thumbnail")).as_user(&alice).send().await;
        assert_eq!(got.status, 302);
        assert_eq!(got.headers.get("location").unwrap(), external);
        assert_eq!(app.get_page(&query(external, "huge")).as_user(&alice).send().await.status, 403);
        assert_eq!(app.get_page(&query("javascript:alert(1)", "full")).as_user(&alice).send().await.status, 403);
        // Also under /api/v1.
        let api = app.get("/thumbnail").as_user(&alice).param("url", external).param("size", "full").send().await;
        assert_eq!(api.status, 302);

        // With a camo proxy, links go through it.
        let app = app
            .reconfigured(|ctx| {
                ctx.with_camo(Some(parley_markdown::Camo::new("https://camo.parley.test/", "k")))
            })
            .await;
        let got = app.get_page(&query(external, "thumbnail")).as_user(&alice).send().await;
        let location = got.headers.get("location").unwrap().to_str().unwrap();
        assert!(location.starts_with("https://camo.parley.test/"), "{location}");
        assert!(location.ends_with(&format!("/{}", hex_of(external))), "{location}");
    }
}

fn hex_of(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}

backend_test! {
    async fn videos_math_and_camo_in_messages(app) {
        let message = send_and_read(
            &app,
            &app.owner,
            "media",
            "https://v.example.com/clip.mp4\n\n$$x^2$$\n\n```math\n\\frac{a}{b}\n```",
        )
        .await;
        let rendered = message["content"].as_str().unwrap();
        assert!(rendered.starts_with(
            "<div class=\"message_inline_image message_inline_video\"><a href=\"https://v.example.com/clip.mp4\""
        ), "{rendered}");
        assert!(rendered.contains(
            "<video data-video-original-url=\"https://v.example.com/clip.mp4\" preload=\"metadata\" src=\"https://v.example.com/clip.mp4\"></video>"
        ));
        assert!(rendered.contains("<p><span class=\"katex\"><span class=\"katex-mathml\"><math xmlns=\"http://www.w3.org/1998/Math/MathML\"><semantics><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow>"), "{rendered}");
        assert!(rendered.contains("<span class=\"katex-display\">"));

        let app = app
            .reconfigured(|ctx| {
                ctx.with_camo(Some(parley_markdown::Camo::new("https://camo.parley.test/", "k")))
            })
            .await;
        let message = send_and_read(&app, &app.owner, "proxied", "https://v.example.com/clip.mp4").await;
        let rendered = message["content"].as_str().unwrap();
        assert!(rendered.contains("src=\"https://camo.parley.test/"), "{rendered}");
        assert!(rendered.contains(&hex_of("https://v.example.com/clip.mp4")));
        // The preview endpoint renders the same way.
        let preview = app
            .post("/messages/render")
            .as_user(&app.owner)
            .param("content", "$$\\alpha$$")
            .send()
            .await
            .success();
        assert!(preview["rendered"].as_str().unwrap().contains("<span class=\"katex\">"));
    }
}

backend_test! {
    async fn register_advertises_thumbnail_formats(app) {
        let state = app
            .post("/register")
            .as_user(&app.owner)
            .json_param("fetch_event_types", &json!(["realm"]))
            .send()
            .await
            .success();
        assert_eq!(
            state["server_thumbnail_formats"],
            json!([
                {"name": "840x560-anim.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": true},
                {"name": "840x560.webp", "max_width": 840, "max_height": 560, "format": "webp", "animated": false},
            ])
        );
    }
}

backend_test! {
    async fn unclaimed_uploads_are_deleted_with_their_thumbnails(app) {
        let alice = app.create_user("alice@parley.test", "Alice", Role::Member).await;
        let kept = upload(&app, &alice, "kept.png", "image/png", &png(20, 20)).await;
        let dropped = upload(&app, &alice, "dropped.png", "image/png", &png(20, 20)).await;
        let fresh = upload(&app, &alice, "fresh.txt", "text/plain", b"fresh").await;
        app.create_channel(&alice, "c", &[&alice], &[]).await;
        app.send_to_channel(&alice, "c", "t", &format!("[kept]({kept})")).await;
        let state = app.register(&alice, &[("event_types", json!(["attachment"]))]).await;
        let queue = state["queue_id"].as_str().unwrap().to_owned();

        // Uploads newer than the cutoff stay, claimed or not.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        let deleted = parley_actions::uploads::delete_unclaimed_uploads(&app.ctx, now - 3600).await.unwrap();
        assert_eq!(deleted, 0);
        // As if weeks had passed: the two unclaimed ones go, the claimed one stays.
        let deleted = parley_actions::uploads::delete_unclaimed_uploads(&app.ctx, now + 60).await.unwrap();
        assert_eq!(deleted, 2);
        assert_eq!(app.get_page(&kept).as_user(&alice).send().await.status, 200);
        for url in [&dropped, &fresh] {
            assert_eq!(app.get_page(url).as_user(&alice).send().await.status, 404, "{url}");
        }
        let dropped_path = dropped.strip_prefix("/user_uploads/").unwrap();
        for path in [dropped_path.to_owned(), format!("thumbnail/{dropped_path}/840x560.webp")] {
            assert_eq!(app.ctx.files.get(&path).unwrap(), None, "{path}");
        }
        let kept_path = kept.strip_prefix("/user_uploads/").unwrap();
        assert!(app.ctx.files.get(&format!("thumbnail/{kept_path}/840x560.webp")).unwrap().is_some());
        let names: Vec<String> = app.get("/attachments").as_user(&alice).send().await.success()["attachments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, ["kept.png"]);
        let events = app.events_of(&alice, &queue, &["attachment"]).await;
        let removed: Vec<&Value> = events.iter().filter(|e| e["op"] == "remove").collect();
        assert_eq!(removed.len(), 2, "{events:?}");
    }
}

backend_test! {
    async fn deleting_an_image_upload_deletes_its_thumbnails(app) {
        let url = upload(&app, &app.owner, "x.png", "image/png", &png(50, 50)).await;
        let path_id = url.strip_prefix("/user_uploads/").unwrap().to_owned();
        let thumbnail_path = format!("thumbnail/{path_id}/840x560.webp");
        assert!(app.ctx.files.get(&thumbnail_path).unwrap().is_some());
        let list = app.get("/attachments").as_user(&app.owner).send().await.success();
        let id = list["attachments"][0]["id"].as_i64().unwrap();
        app.delete(&format!("/attachments/{id}")).as_user(&app.owner).send().await.success();
        assert_eq!(app.ctx.files.get(&thumbnail_path).unwrap(), None);
        assert_eq!(app.ctx.files.get(&path_id).unwrap(), None);
    }
}
