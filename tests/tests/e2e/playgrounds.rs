//! Code playgrounds: `POST /realm/playgrounds`, `DELETE /realm/playgrounds/{playground_id}`,
//! their `realm_playgrounds` events and the register snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn add(app: &TestApp, who: &Account, name: &str, language: &str, template: &str) -> i64 {
    app.post("/realm/playgrounds")
        .as_user(who)
        .param("name", name)
        .param("pygments_language", language)
        .param("url_template", template)
        .send()
        .await
        .success()["id"]
        .as_i64()
        .unwrap()
}

async fn snapshot(app: &TestApp, who: &Account) -> Value {
    app.register(who, &[("fetch_event_types", json!(["realm_playgrounds"]))])
        .await["realm_playgrounds"]
        .clone()
}

backend_test! {
    async fn playgrounds_are_added_and_removed_with_events_for_everyone(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        assert_eq!(snapshot(&app, &ann).await, json!([]));
        let queue = app.register(&ann, &[("event_types", json!(["realm_playgrounds"]))]).await;
        let q = queue["queue_id"].as_str().unwrap();
        assert_eq!(queue["realm_playgrounds"], json!([]));

        let py = add(&app, &app.owner, " Python playground ", "Python ", " https://python.example.com?code={code}").await;
        let py2 = add(&app, &app.owner, "Other", "Python", "https://other.example.com/{#code}").await;
        let expected = json!([
            {"id": py, "name": "Python playground", "pygments_language": "Python", "url_template": "https://python.example.com?code={code}"},
            {"id": py2, "name": "Other", "pygments_language": "Python", "url_template": "https://other.example.com/{#code}"},
        ]);
        assert_eq!(snapshot(&app, &ann).await, expected);

        app.delete(&format!("/realm/playgrounds/{py}")).as_user(&app.owner).send().await.success();
        let after_delete = json!([expected[1].clone()]);
        assert_eq!(snapshot(&app, &ann).await, after_delete);

        let events = app.events_of(&ann, q, &["realm_playgrounds"]).await;
        let lists: Vec<Value> = events.iter().map(|e| e["realm_playgrounds"].clone()).collect();
        assert_eq!(lists, vec![json!([expected[0].clone()]), expected.clone(), after_delete]);

        for path in [format!("/realm/playgrounds/{py}"), "/realm/playgrounds/424242".to_owned()] {
            let body = app.delete(&path).as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "Invalid playground");
        }
        let body = app.delete("/realm/playgrounds/x").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "playground_id");
        assert_eq!(app.events_of(&ann, q, &["realm_playgrounds"]).await.len(), 3, "failures send nothing");
    }
}

backend_test! {
    async fn invalid_playgrounds_are_refused(app) {
        let ok = "https://e.com/?code={code}";
        let cases: [(&str, &str, &str, &str, &str); 9] = [
            ("", "Python", ok, "name", "name must not be empty"),
            ("P", " ", ok, "pygments_language", "pygments_language must not be empty"),
            ("P", "Py<thon>", ok, "pygments_language", "Invalid characters in pygments language"),
            ("P", &"a".repeat(41), ok, "pygments_language", "pygments_language is too long (limit: 40 characters)"),
            ("P", "Python", "", "url_template", "url_template must not be empty"),
            ("P", "Python", "https://e.com/{code", "url_template", "Invalid URL template."),
            ("P", "Python", "https://e.com/", "url_template", "Missing the required variable \"code\" in the URL template"),
            ("P", "Python", "https://e.com/{code}{?lang}", "url_template", "\"code\" should be the only variable present in the URL template"),
            ("P", "Python", "https://e.com/{lang}", "url_template", "Missing the required variable \"code\" in the URL template"),
        ];
        for (name, language, template, var, msg) in cases {
            let body = app.post("/realm/playgrounds").as_user(&app.owner)
                .param("name", name).param("pygments_language", language).param("url_template", template)
                .send().await.error(400, "BAD_REQUEST");
            assert_eq!((body["var_name"].clone(), body["msg"].clone()), (json!(var), json!(msg)), "{name} {language} {template}");
        }
        let body = app.post("/realm/playgrounds").as_user(&app.owner)
            .param("name", "P").param("url_template", ok)
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "pygments_language");

        add(&app, &app.owner, "P", "Python", ok).await;
        let body = app.post("/realm/playgrounds").as_user(&app.owner)
            .param("name", " P").param("pygments_language", "Python").param("url_template", "https://x.com/{code}")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Realm playground with this Realm, Pygments language and Name already exists.");
        // The same name for another language is fine.
        add(&app, &app.owner, "P", "Rust", ok).await;
        assert_eq!(snapshot(&app, &app.owner).await.as_array().unwrap().len(), 2);
    }
}

backend_test! {
    async fn only_administrators_manage_playgrounds(app) {
        let admin = app.create_user("adm@parley.test", "Adm", Role::Administrator).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        let id = add(&app, &admin, "P", "Python", "https://e.com/{code}").await;
        for who in [&moderator, &member] {
            let body = app.post("/realm/playgrounds").as_user(who)
                .param("name", "Q").param("pygments_language", "Python").param("url_template", "https://e.com/{code}")
                .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
            assert_eq!(body["msg"], "Must be an organization administrator");
            app.delete(&format!("/realm/playgrounds/{id}")).as_user(who)
                .send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
            assert_eq!(snapshot(&app, who).await[0]["id"], id, "everyone sees the playgrounds");
        }
        app.delete(&format!("/realm/playgrounds/{id}")).as_user(&admin).send().await.success();
        assert_eq!(snapshot(&app, &member).await, json!([]));
    }
}
