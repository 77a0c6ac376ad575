//! `GET /server_settings` and the versions real clients read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_tests::backend_test;

backend_test! {
    async fn server_settings_needs_no_auth_and_has_every_field(app) {
        let body = app.get("/server_settings").send().await.success();
        for field in [
            "authentication_methods", "external_authentication_methods", "service_feature_level",
            "service_version", "service_merge_base", "push_notifications_enabled",
            "is_incompatible", "email_auth_enabled", "require_email_format_usernames",
            "realm_uri", "realm_url", "realm_name", "realm_icon", "realm_description",
            "realm_web_public_access_enabled", "zulip_version", "zulip_feature_level",
            "zulip_merge_base",
        ] {
            assert!(body.get(field).is_some(), "missing {field}: {body}");
        }
        assert_eq!(body["service_feature_level"], 420);
        assert_eq!(body["zulip_feature_level"], body["service_feature_level"]);
        assert_eq!(body["zulip_version"], body["service_version"]);
        assert_eq!(body["zulip_merge_base"], body["service_merge_base"]);
        assert_eq!(body["realm_url"], "http://parley.test");
        assert_eq!(body["realm_uri"], body["realm_url"]);
        assert_eq!(body["realm_name"], "Test Org");
        assert_eq!(body["authentication_methods"]["password"], true);
        assert_eq!(body["authentication_methods"]["openid connect"], false);
        assert_eq!(body["email_auth_enabled"], true);
    }
}

backend_test! {
    async fn server_settings_ignores_but_reports_unknown_parameters(app) {
        let body = app.get("/server_settings").param("bogus", "1").send().await.success();
        assert_eq!(body["ignored_parameters_unsupported"], serde_json::json!(["bogus"]));
    }
}

async fn web_public_access(app: &parley_tests::TestApp) -> serde_json::Value {
    app.get("/server_settings").send().await.success()["realm_web_public_access_enabled"].clone()
}

backend_test! {
    async fn web_public_access_needs_spectators_and_a_web_public_channel(app) {
        assert_eq!(web_public_access(&app).await, false);
        app.patch("/realm").as_user(&app.owner).json_param("enable_spectator_access", &serde_json::json!(true))
            .send().await.success();
        // Spectators are allowed but there is nothing for them to read yet.
        assert_eq!(web_public_access(&app).await, false);
        app.post("/channels/create").as_user(&app.owner).param("name", "open house")
            .json_param("subscribers", &serde_json::json!([])).json_param("is_web_public", &serde_json::json!(true))
            .send().await.success();
        assert_eq!(web_public_access(&app).await, true);
        app.patch("/realm").as_user(&app.owner).json_param("enable_spectator_access", &serde_json::json!(false))
            .send().await.success();
        assert_eq!(web_public_access(&app).await, false);
    }
}

backend_test! {
    async fn server_emoji_data_url_serves_the_emoji_table(app) {
        let state = app.register(&app.owner, &[("fetch_event_types", serde_json::json!(["realm"]))]).await;
        let url = state["server_emoji_data_url"].as_str().expect("a URL, as the mobile app requires");
        let realm_url = state["realm_url"].as_str().unwrap();
        let path = url.strip_prefix(realm_url).expect("on this server");
        let response = app.get_page(path).send().await;
        assert_eq!(response.status, 200, "{}", response.text);
        let table = response.json["code_to_names"].as_object().expect("code_to_names");
        assert!(table.len() > 1000, "{} emoji", table.len());
        // Every name resolves back to its code through the server's own emoji handling.
        let names = table["1f419"].as_array().unwrap();
        assert_eq!(names[0], "octopus");
        let id = app.send_to_channel(&app.owner, "general", "emoji", ":octopus:").await;
        let message = app.get(&format!("/messages/{id}")).as_user(&app.owner).send().await.success();
        assert!(message["message"]["content"].as_str().unwrap().contains("emoji-1f419"), "{message}");
    }
}
