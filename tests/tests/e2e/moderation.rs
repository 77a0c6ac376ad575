//! Reporting messages (`POST /messages/{message_id}/report`): the moderation request posted by
//! the Notification Bot in the organization's moderation request channel, its format, and the
//! checks before it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn message(app: &TestApp, who: &Account, id: i64) -> Value {
    app.get(&format!("/messages/{id}"))
        .as_user(who)
        .send()
        .await
        .success()["message"]
        .clone()
}

/// The newest message of a channel, as `who` reads it.
async fn newest_in(app: &TestApp, who: &Account, channel: &str) -> Value {
    let page = app
        .get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 1)
        .param("num_after", 0)
        .json_param(
            "narrow",
            &json!([{"operator": "channel", "operand": channel}]),
        )
        .send()
        .await
        .success();
    page["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap_or(Value::Null)
}

/// The date a message was sent as the report states it.
fn global_time(unix: i64) -> String {
    // Days since the epoch to a civil date (Howard Hinnant's algorithm).
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "<time:{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00>",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

async fn setup(app: &TestApp) -> (Account, Account, i64) {
    let mod_user = app
        .create_user("mod@parley.test", "Mo", Role::Moderator)
        .await;
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let channel = app
        .create_channel(
            &app.owner,
            "reports",
            &[&app.owner, &mod_user],
            &[("invite_only", json!(true))],
        )
        .await;
    (mod_user, ann, channel)
}

backend_test! {
    async fn channel_message_reports_reach_the_moderators(app) {
        let (mod_user, ann, reports) = setup(&app).await;
        let bob = app.create_user("bob@parley.test", "Bob Rude", Role::Member).await;
        let reported = app.send_to_channel(&bob, "general", "lunch", "I squeeze toothpaste from the middle").await;

        // Reporting is off until the organization names a channel.
        let body = app.post(&format!("/messages/{reported}/report")).as_user(&ann)
            .param("report_type", "harassment").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Message reporting is not enabled in this organization.");

        // The channel must be private.
        let general = app.get("/get_stream_id").as_user(&app.owner).param("stream", "general")
            .send().await.success()["stream_id"].as_i64().unwrap();
        let body = app.patch("/realm").as_user(&app.owner).param("moderation_request_channel_id", general)
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Moderation request channel must be private.");
        let queue = app.register(&mod_user, &[("event_types", json!(["message", "realm"]))]).await;
        assert_eq!(queue["realm_moderation_request_channel_id"], -1);
        app.patch("/realm").as_user(&app.owner).param("moderation_request_channel_id", reports).send().await.success();
        let s = app.register(&ann, &[]).await;
        assert_eq!(s["realm_moderation_request_channel_id"], reports);

        app.post(&format!("/messages/{reported}/report")).as_user(&ann)
            .param("report_type", "harassment").param("description", "this is crime against food")
            .send().await.success();
        let report = newest_in(&app, &mod_user, "reports").await;
        let sent = message(&app, &bob, reported).await["timestamp"].as_i64().unwrap();
        let expected = format!(
            "@_**Ann|{}** reported a message sent by @_**Bob Rude|{}** at {}.\n```quote\n**Harassment**. this is crime against food\n```\n\n``` spoiler Original message at #**general>lunch@{reported}**\nI squeeze toothpaste from the middle\n```",
            ann.user_id.0, bob.user_id.0, global_time(sent));
        let raw = app.get(&format!("/messages/{}", report["id"])).as_user(&mod_user)
            .param("apply_markdown", "false").send().await.success();
        assert_eq!(raw["raw_content"], expected);
        assert_eq!(report["subject"], "Bob Rude moderation");
        assert_eq!(report["sender_email"], "notification-bot@zulip.com");
        assert!(report["content"].as_str().unwrap().contains("spoiler"), "{}", report["content"]);

        // The moderators' queue got the report as a message event.
        let events = app.events_of(&mod_user, queue["queue_id"].as_str().unwrap(), &["message", "realm"]).await;
        assert!(events.iter().any(|e| e["type"] == "realm" && e["property"] == "moderation_request_channel_id"
            && e["value"] == reports), "{events:?}");
        assert!(events.iter().any(|e| e["type"] == "message" && e["message"]["id"] == report["id"]), "{events:?}");

        // The moderation request channel stays private.
        let body = app.patch(&format!("/streams/{reports}")).as_user(&app.owner)
            .param("is_private", "false").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Moderation request channel must be private.");
        app.patch(&format!("/streams/{reports}")).as_user(&app.owner)
            .param("description", "Reports").send().await.success();

        // Ann cannot read the reports channel.
        let page = app.get(&format!("/messages/{}", report["id"])).as_user(&ann).send().await;
        assert_eq!(page.status, 400);

        // Messages of channels one cannot see are invalid, as are unknown ones.
        app.create_channel(&app.owner, "hidden", &[&app.owner], &[("invite_only", json!(true))]).await;
        let hidden = app.send_to_channel(&app.owner, "hidden", "t", "secret").await;
        let body = app.post(&format!("/messages/{hidden}/report")).as_user(&ann)
            .param("report_type", "spam").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid message(s)");
        app.post("/messages/999999/report").as_user(&ann)
            .param("report_type", "spam").send().await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn report_types_and_descriptions_are_checked(app) {
        let (mod_user, ann, reports) = setup(&app).await;
        app.patch("/realm").as_user(&app.owner).param("moderation_request_channel_id", reports).send().await.success();
        let reported = app.send_to_channel(&app.owner, "general", "t", "hello").await;
        let url = format!("/messages/{reported}/report");

        let body = app.post(&url).as_user(&ann).send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "report_type");
        let body = app.post(&url).as_user(&ann).param("report_type", "rude").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "report_type");
        let body = app.post(&url).as_user(&ann).param("report_type", "other").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "An explanation is required.");
        let body = app.post(&url).as_user(&ann).param("report_type", "spam").param("description", "x".repeat(1001))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "description");
        app.post("/messages/abc/report").as_user(&ann).param("report_type", "spam").send().await.error(400, "BAD_REQUEST");

        for (kind, label) in [("spam", "Spam"), ("inappropriate", "Inappropriate content"),
                              ("norms", "Violates community norms"), ("other", "Other reason")] {
            app.post(&url).as_user(&ann).param("report_type", kind).param("description", "why").send().await.success();
            let report = newest_in(&app, &mod_user, "reports").await;
            let raw = app.get(&format!("/messages/{}", report["id"])).as_user(&mod_user)
                .param("apply_markdown", "false").send().await.success();
            assert!(raw["raw_content"].as_str().unwrap().contains(&format!("**{label}**. why")), "{kind}");
        }

        // A channel that allows only the empty topic gets the report there.
        app.patch(&format!("/streams/{reports}")).as_user(&app.owner)
            .param("topics_policy", "empty_topic_only").send().await.success();
        app.post(&url).as_user(&ann).param("report_type", "spam").send().await.success();
        let report = newest_in(&app, &mod_user, "reports").await;
        // The empty topic, as clients without `empty_topic_name` read it.
        assert_eq!(report["subject"], "general chat");

        // Long messages are cut in the report.
        let long = "word ".repeat(1_900);
        let id = app.send_to_channel(&app.owner, "general", "t", &long).await;
        app.post(&format!("/messages/{id}/report")).as_user(&ann).param("report_type", "spam").send().await.success();
        let report = newest_in(&app, &mod_user, "reports").await;
        let raw = app.get(&format!("/messages/{}", report["id"])).as_user(&mod_user)
            .param("apply_markdown", "false").send().await.success();
        assert!(raw["raw_content"].as_str().unwrap().contains("\n[message truncated]\n```"));
    }
}

backend_test! {
    async fn direct_message_reports_name_the_conversation(app) {
        let (mod_user, ann, reports) = setup(&app).await;
        app.patch("/realm").as_user(&app.owner).param("moderation_request_channel_id", reports).send().await.success();
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        let cat = app.create_user("cat@parley.test", "Cat", Role::Member).await;

        let dm = app.send_direct(&bob, json!([ann.user_id.0]), "```\nfenced\n```").await;
        app.post(&format!("/messages/{dm}/report")).as_user(&ann).param("report_type", "spam").send().await.success();
        let report = newest_in(&app, &mod_user, "reports").await;
        let raw = app.get(&format!("/messages/{}", report["id"])).as_user(&mod_user)
            .param("apply_markdown", "false").send().await.success()["raw_content"].as_str().unwrap().to_owned();
        let (a, b) = (ann.user_id.0.min(bob.user_id.0), ann.user_id.0.max(bob.user_id.0));
        assert!(raw.starts_with(&format!("@_**Ann|{}** reported a message sent by @_**Bob|{}** at <time:", ann.user_id.0, bob.user_id.0)), "{raw}");
        assert!(raw.contains(&format!("```` spoiler [Original message](http://parley.test/#narrow/dm/{a},{b}-pm/near/{dm})\n```\nfenced\n```\n````")), "{raw}");
        assert_eq!(report["subject"], "Bob moderation");

        // One's own message names the other person.
        app.post(&format!("/messages/{dm}/report")).as_user(&bob).param("report_type", "spam").send().await.success();
        let report = newest_in(&app, &mod_user, "reports").await;
        let raw = app.get(&format!("/messages/{}", report["id"])).as_user(&mod_user)
            .param("apply_markdown", "false").send().await.success()["raw_content"].as_str().unwrap().to_owned();
        assert!(raw.starts_with(&format!("@_**Bob|{0}** reported a message sent by @_**Bob|{0}** to @_**Ann|{1}** at", bob.user_id.0, ann.user_id.0)), "{raw}");

        // Group conversations list the other participants.
        let group = app.send_direct(&bob, json!([ann.user_id.0, cat.user_id.0]), "hi all").await;
        app.post(&format!("/messages/{group}/report")).as_user(&ann).param("report_type", "spam").send().await.success();
        let report = newest_in(&app, &mod_user, "reports").await;
        let raw = app.get(&format!("/messages/{}", report["id"])).as_user(&mod_user)
            .param("apply_markdown", "false").send().await.success()["raw_content"].as_str().unwrap().to_owned();
        assert!(raw.contains(&format!("sent by @_**Bob|{}** to @_**Ann|{}** and @_**Cat|{}** at", bob.user_id.0, ann.user_id.0, cat.user_id.0)), "{raw}");

        // Outsiders cannot report a conversation they are not in.
        let body = app.post(&format!("/messages/{dm}/report")).as_user(&cat).param("report_type", "spam")
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid message(s)");
    }
}
