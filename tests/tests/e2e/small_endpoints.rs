//! Small endpoints of the reference API: a channel's incoming-email address and the Welcome
//! Bot's test message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::backend_test;
use serde_json::json;

backend_test! {
    async fn channel_email_address_without_a_gateway_is_empty(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let general = app.get("/get_stream_id").as_user(&ann).param("stream", "general")
            .send().await.success()["stream_id"].as_i64().unwrap();
        let body = app.get(&format!("/streams/{general}/email_address")).as_user(&ann).send().await.success();
        assert_eq!(body["email"], "");
        // As oneself.
        app.get(&format!("/streams/{general}/email_address")).as_user(&ann)
            .param("sender_id", ann.user_id.0).send().await.success();

        // Channels one may not see read as nonexistent.
        let secret = app.create_channel(&app.owner, "secret", &[&app.owner], &[("invite_only", json!(true))]).await;
        let body = app.get(&format!("/streams/{secret}/email_address")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID");
        let body = app.get("/streams/999999/email_address").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID");
        let body = app.get("/streams/x/email_address").as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "stream_id");
        app.get(&format!("/streams/{secret}/email_address")).as_user(&app.owner).send().await.success();

        // The sender must be oneself or a bot one administers.
        let body = app.get(&format!("/streams/{general}/email_address")).as_user(&ann)
            .param("sender_id", app.owner.user_id.0).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such bot");
        let bot = app.post("/bots").as_user(&app.owner).param("full_name", "Helper")
            .param("short_name", "helper").send().await.success()["user_id"].as_i64().unwrap();
        let body = app.get(&format!("/streams/{general}/email_address")).as_user(&ann)
            .param("sender_id", bot).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");
        app.get(&format!("/streams/{general}/email_address")).as_user(&app.owner)
            .param("sender_id", bot).send().await.success();
        app.get(&format!("/streams/{general}/email_address")).as_user(&ann)
            .param("sender_id", "many").send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn welcome_bot_test_message_reaches_the_administrator(app) {
        let queue = app.register(&app.owner, &[("event_types", json!(["message"]))]).await;
        let text = "Welcome to **Test Org**! Read #**general** first.";
        let body = app.post("/realm/test_welcome_bot_custom_message").as_user(&app.owner)
            .param("welcome_message_custom_text", text).send().await.success();
        let id = body["message_id"].as_i64().unwrap();
        let message = app.get(&format!("/messages/{id}")).as_user(&app.owner)
            .param("apply_markdown", "false").send().await.success();
        assert_eq!(message["raw_content"], text);
        assert_eq!(message["message"]["sender_email"], "welcome-bot@zulip.com");
        assert_eq!(message["message"]["type"], "private");
        let events = app.events_of(&app.owner, queue["queue_id"].as_str().unwrap(), &["message"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["message"]["id"], id);

        let body = app.post("/realm/test_welcome_bot_custom_message").as_user(&app.owner)
            .param("welcome_message_custom_text", "").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Message must not be empty");
        let body = app.post("/realm/test_welcome_bot_custom_message").as_user(&app.owner)
            .param("welcome_message_custom_text", "x".repeat(8001)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "welcome_message_custom_text");
        let body = app.post("/realm/test_welcome_bot_custom_message").as_user(&app.owner)
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "welcome_message_custom_text");

        // Administrators only.
        let ann = app.create_user("ann@parley.test", "Ann", Role::Moderator).await;
        let body = app.post("/realm/test_welcome_bot_custom_message").as_user(&ann)
            .param("welcome_message_custom_text", "hi").send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let admin = app.create_user("adm@parley.test", "Adm", Role::Administrator).await;
        app.post("/realm/test_welcome_bot_custom_message").as_user(&admin)
            .param("welcome_message_custom_text", "hi").send().await.success();
    }
}
