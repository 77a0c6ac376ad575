//! Uploads kept in an S3-compatible bucket (`--upload-store s3://...`): the API's uploads,
//! thumbnails, avatars and deletes over the bucket, a file larger than a multipart part, and a
//! file uploaded through one node of a cluster downloaded through another. They run when
//! `TEST_S3_ENDPOINT` names a test server (CI starts moto's) and print a note otherwise; the
//! cluster test needs PostgreSQL (`TEST_DATABASE_URL`) too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::images::png;
use parley_tests::{s3, Account, Backend, TestApp};

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

/// `app` with its uploads in the bucket `config` describes.
async fn on_bucket(app: TestApp, config: &s3::S3Config) -> TestApp {
    let store = s3::store(config).await;
    app.reconfigured(move |ctx| ctx.with_files(store)).await
}

#[actix_web::test]
async fn uploads_thumbnails_and_avatars_live_in_the_bucket() {
    let Some(bucket) = s3::fresh_bucket() else {
        return;
    };
    for backend in Backend::available() {
        let app = on_bucket(TestApp::start(backend).await, &bucket).await;
        let alice = app
            .create_user("alice@parley.test", "Alice", Role::Member)
            .await;

        let url = upload(&app, &alice, "notes.txt", "text/plain", b"kept in S3").await;
        let got = app.get_page(&url).as_user(&alice).send().await;
        assert_eq!(got.status, 200, "{}", got.text);
        assert_eq!(got.text, "kept in S3");
        let path_id = url.strip_prefix("/user_uploads/").unwrap().to_owned();
        // Any node reading the bucket sees it, under the prefix.
        let other = s3::store(&bucket).await;
        use parley_actions::file_store::FileStore;
        assert_eq!(
            other.get(&path_id).unwrap().as_deref(),
            Some(&b"kept in S3"[..])
        );

        // Images get their thumbnails there too.
        let image = upload(&app, &alice, "cat.png", "image/png", &png(300, 200)).await;
        let image_path = image.strip_prefix("/user_uploads/").unwrap().to_owned();
        let thumbnail = app
            .get_page(&format!(
                "/user_uploads/thumbnail/{image_path}/840x560.webp"
            ))
            .as_user(&alice)
            .send()
            .await;
        assert_eq!(thumbnail.status, 200, "{}", thumbnail.text);
        assert_eq!(thumbnail.headers.get("content-type").unwrap(), "image/webp");

        // An avatar.
        let avatar = png(64, 64);
        let body = app
            .post("/users/me/avatar")
            .as_user(&alice)
            .files(&[("me.png", "image/png", avatar.as_slice())])
            .send()
            .await
            .success();
        let avatar_url = body["avatar_url"].as_str().unwrap();
        let path = avatar_url
            .strip_prefix("http://parley.test")
            .unwrap()
            .split('?')
            .next()
            .unwrap();
        let served = app.get_page(path).send().await;
        assert_eq!(served.status, 200);
        assert_eq!(served.bytes, avatar);

        // Deleting an attachment deletes its object and its thumbnails' objects.
        let list = app
            .get("/attachments")
            .as_user(&alice)
            .send()
            .await
            .success();
        let id = list["attachments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == "cat.png")
            .unwrap()["id"]
            .as_i64()
            .unwrap();
        app.delete(&format!("/attachments/{id}"))
            .as_user(&alice)
            .send()
            .await
            .success();
        assert_eq!(other.get(&image_path).unwrap(), None);
        assert_eq!(
            other
                .get(&format!("thumbnail/{image_path}/840x560.webp"))
                .unwrap(),
            None
        );
        let gone = app.get_page(&image).as_user(&alice).send().await;
        assert_eq!(gone.status, 404);
    }
}

#[actix_web::test]
async fn a_file_larger_than_a_part_goes_up_in_parts_and_comes_back_whole() {
    let Some(bucket) = s3::fresh_bucket() else {
        return;
    };
    let backend = Backend::available().into_iter().next().unwrap();
    let app = on_bucket(TestApp::start(backend).await, &bucket).await;
    // 11 MiB: three parts of the 5 MiB minimum.
    let bytes: Vec<u8> = (0..11 * 1024 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let url = upload(
        &app,
        &app.owner,
        "big.bin",
        "application/octet-stream",
        &bytes,
    )
    .await;
    let got = app.get_page(&url).as_user(&app.owner).send().await;
    assert_eq!(got.status, 200);
    assert_eq!(got.bytes.len(), bytes.len());
    assert!(got.bytes == bytes, "the file came back changed");
}

/// Two server processes on one PostgreSQL database and one bucket: what one stores, the other
/// serves, and what one deletes is gone for both.
#[actix_web::test]
async fn a_file_uploaded_through_one_node_downloads_through_another() {
    let Some(backend) = Backend::postgres() else {
        eprintln!("TEST_DATABASE_URL is not set: S3 cluster upload test skipped");
        return;
    };
    let Some(bucket) = s3::fresh_bucket() else {
        return;
    };
    let mut nodes = Vec::new();
    for node in TestApp::start_cluster(backend, 2).await {
        nodes.push(on_bucket(node, &bucket).await);
    }
    let (first, second) = (&nodes[0], &nodes[1]);
    let owner = first.owner.clone();
    let url = upload(first, &owner, "shared.txt", "text/plain", b"from node one").await;
    let got = second.get_page(&url).as_user(&owner).send().await;
    assert_eq!(got.status, 200, "{}", got.text);
    assert_eq!(got.text, "from node one");
    let image = upload(second, &owner, "dot.png", "image/png", &png(40, 30)).await;
    let image_path = image.strip_prefix("/user_uploads/").unwrap();
    let thumbnail = first
        .get_page(&format!(
            "/user_uploads/thumbnail/{image_path}/840x560.webp"
        ))
        .as_user(&owner)
        .send()
        .await;
    assert_eq!(thumbnail.status, 200, "{}", thumbnail.text);

    let list = second
        .get("/attachments")
        .as_user(&owner)
        .send()
        .await
        .success();
    let id = list["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "shared.txt")
        .unwrap()["id"]
        .as_i64()
        .unwrap();
    second
        .delete(&format!("/attachments/{id}"))
        .as_user(&owner)
        .send()
        .await
        .success();
    let gone = first.get_page(&url).as_user(&owner).send().await;
    assert_eq!(gone.status, 404);
}
