//! Email invitations: `POST /invites` (who may invite, to which role, channels and groups; the
//! refused addresses and `INVITATION_FAILED`), the mail, `GET /invites` listing them,
//! `DELETE /invites/{id}`, `POST /invites/{id}/resend`, `invites_changed`, and signing up through
//! the mailed link with the invitation's role, channels and groups, after which the inviter hears
//! from the Notification Bot.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::groups::{GroupSetting, SystemGroup};
use parley_domain::{Role, UserId};
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

async fn invite(app: &TestApp, who: &Account, emails: &str, params: &[(&str, Value)]) -> Response {
    let mut request = app
        .post("/invites")
        .as_user(who)
        .param("invitee_emails", emails);
    if !params.iter().any(|(name, _)| *name == "stream_ids") {
        request = request.json_param("stream_ids", &json!([]));
    }
    for (name, value) in params {
        request = match value {
            Value::String(text) => request.param(name, text),
            other => request.json_param(name, other),
        };
    }
    request.send().await
}

async fn invites(app: &TestApp, who: &Account) -> Vec<Value> {
    app.get("/invites").as_user(who).send().await.success()["invites"]
        .as_array()
        .unwrap()
        .clone()
}

/// The keys of the links mailed to `to`, oldest first.
fn mailed_keys(app: &TestApp, to: &str) -> Vec<String> {
    app.mail
        .sent()
        .iter()
        .filter(|m| m.to == to)
        .map(|m| {
            let start = m.body.find("http://parley.test/join/").expect("a link") + 24;
            let rest = &m.body[start..];
            rest[..rest.find('/').unwrap()].to_owned()
        })
        .collect()
}

async fn accept(app: &TestApp, key: &str, email: &str, name: &str) -> Response {
    app.post(&format!("/invites/multiuse/{key}/accept"))
        .param("email", email)
        .param("full_name", name)
        .param("password", "a-long-password")
        .send()
        .await
}

fn account(body: &Value, email: &str) -> Account {
    Account {
        user_id: UserId(body["user_id"].as_i64().unwrap()),
        email: email.to_owned(),
        api_key: body["api_key"].as_str().unwrap().to_owned(),
        password: "a-long-password".to_owned(),
    }
}

async fn set_group_setting(app: &TestApp, setting: &str, group: SystemGroup) {
    let setting = setting.to_owned();
    app.ctx
        .db
        .run(move |conn| {
            let graph = parley_storage::groups::graph(conn)?;
            let id = graph.system_id(group).unwrap();
            parley_storage::realms::set_permission(
                conn,
                &setting,
                &GroupSetting::Group(id).to_json(),
            )
        })
        .await
        .unwrap();
    // Written behind the server's back (no event): the organization cache is told directly.
    app.ctx.events.realm_cache().invalidate();
}

async fn notices_to(app: &TestApp, who: &Account) -> Vec<String> {
    app.get("/messages")
        .as_user(who)
        .param("anchor", "newest")
        .param("num_before", 20)
        .param("num_after", 0)
        .param("apply_markdown", "false")
        .send()
        .await
        .success()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["sender_email"] == "notification-bot@zulip.com")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

backend_test! {
    async fn an_invitation_is_mailed_listed_and_signs_the_invitee_up(app) {
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        let admin_queue = app.register(&admin, &[("event_types", json!(["invites_changed"]))]).await;
        let member_queue = app.register(&member, &[("event_types", json!(["invites_changed"]))]).await;
        let design = app.create_channel(&app.owner, "design", &[&app.owner], &[]).await;

        invite(&app, &app.owner, "ann@example.org, Bee <bee@example.org>\n", &[
            ("invite_as", json!(300)),
            ("stream_ids", json!([design])),
            ("invite_expires_in_minutes", json!(60)),
        ]).await.success();

        let listed = invites(&app, &app.owner).await;
        assert_eq!(listed.len(), 2, "{listed:?}");
        let mut emails: Vec<&str> = listed.iter().map(|i| i["email"].as_str().unwrap()).collect();
        emails.sort();
        assert_eq!(emails, ["ann@example.org", "bee@example.org"]);
        for i in &listed {
            assert_eq!(i["is_multiuse"], false);
            assert_eq!(i["invited_as"], 300);
            assert_eq!(i["invited_by_user_id"], app.owner.user_id.0);
            assert_eq!(i["notify_referrer_on_join"], true);
            assert_eq!(i["expiry_date"].as_i64().unwrap() - i["invited"].as_i64().unwrap(), 3600);
            assert!(i.get("link_url").is_none());
        }
        // Administrators see everyone's; a member only their own (none).
        assert_eq!(invites(&app, &admin).await.len(), 2);
        assert!(invites(&app, &member).await.is_empty());
        let events = app.events_of(&admin, admin_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await;
        assert_eq!(events.len(), 1);
        assert!(app.events_of(&member, member_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await.is_empty());

        // One mail each, naming the inviter and the organization, with a one-use link.
        let mail = app.mail.sent();
        let to_ann: Vec<_> = mail.iter().filter(|m| m.to == "ann@example.org").collect();
        assert_eq!(to_ann.len(), 1);
        assert!(to_ann[0].subject.contains("Test Org"), "{}", to_ann[0].subject);
        assert!(to_ann[0].body.contains("owner@parley.test"), "{}", to_ann[0].body);
        let key = mailed_keys(&app, "ann@example.org").remove(0);
        let page = app.get_page(&format!("/join/{key}/")).send().await;
        assert_eq!(page.status, 200, "{}", page.text);

        // The link is for its address only.
        let body = accept(&app, &key, "other@example.org", "Other").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "This invitation is for ann@example.org.");
        let body = accept(&app, &key, "ANN@example.org", "Ann").await.success();
        let ann = account(&body, "ann@example.org");
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["role"], 300);
        let subs = app.get("/users/me/subscriptions").as_user(&ann).send().await.success();
        let ids: Vec<i64> = subs["subscriptions"].as_array().unwrap().iter()
            .map(|s| s["stream_id"].as_i64().unwrap()).collect();
        assert_eq!(ids, vec![design]);

        // Used: gone from the list, and the link no longer works.
        let listed = invites(&app, &app.owner).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["email"], "bee@example.org");
        accept(&app, &key, "ann@example.org", "Ann").await.error(400, "BAD_REQUEST");
        let page = app.get_page(&format!("/join/{key}/")).send().await;
        assert_eq!(page.status, 404);
        let events = app.events_of(&admin, admin_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await;
        assert_eq!(events.len(), 2, "{events:?}");

        // The inviter asked to be told.
        let notices = notices_to(&app, &app.owner).await;
        assert_eq!(notices, vec![format!("@_**Ann|{}** accepted your invitation to join Zulip!", ann.user_id.0)]);
    }
}

backend_test! {
    async fn who_may_invite_and_as_what(app) {
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let guest = app.create_user("guest@parley.test", "Guest", Role::Guest).await;
        let body = invite(&app, &guest, "x@example.org", &[]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");

        // Members may by default, but only as members or guests.
        invite(&app, &member, "a@example.org", &[("invite_as", json!(600))]).await.success();
        let body = invite(&app, &member, "b@example.org", &[("invite_as", json!(300))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization moderator");
        let body = invite(&app, &moderator, "b@example.org", &[("invite_as", json!(200))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let body = invite(&app, &moderator, "b@example.org", &[("invite_as", json!(100))]).await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization owner");
        invite(&app, &app.owner, "b@example.org", &[("invite_as", json!(100))]).await.success();

        // `can_invite_users_group` decides.
        set_group_setting(&app, "can_invite_users_group", SystemGroup::Administrators).await;
        let body = invite(&app, &member, "c@example.org", &[]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");
        invite(&app, &app.owner, "c@example.org", &[]).await.success();

        // Parameters.
        let body = app.post("/invites").as_user(&app.owner).param("invitee_emails", "d@example.org")
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "stream_ids");
        let body = invite(&app, &app.owner, "", &[]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You must specify at least one email address.");
        let body = invite(&app, &app.owner, "d@example.org", &[("stream_ids", json!([987654]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid channel ID 987654. No invites were sent.");
        let body = invite(&app, &app.owner, "d@example.org", &[("invite_expires_in_minutes", json!(0))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "invite_expires_in_minutes");
        let body = invite(&app, &app.owner, "d@example.org", &[("group_ids", json!([987654]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid user group");
        assert_eq!(invites(&app, &app.owner).await.len(), 3);
    }
}

backend_test! {
    async fn refused_addresses_are_listed(app) {
        let gone = app.create_user("gone@parley.test", "Gone", Role::Member).await;
        app.delete(&format!("/users/{}", gone.user_id.0)).as_user(&app.owner).send().await.success();
        app.create_user("here@parley.test", "Here", Role::Member).await;

        // An invalid address: nobody is invited, every problem listed.
        let body = invite(&app, &app.owner, "new@example.org, not-an-address, here@parley.test", &[])
            .await
            .error(400, "INVITATION_FAILED");
        assert_eq!(body["msg"], "Some emails did not validate, so we didn't send any invitations.");
        assert_eq!(body["errors"], json!([
            ["not-an-address", "Invalid address.", false],
            ["here@parley.test", "Already has an account.", false],
        ]));
        assert_eq!(body["sent_invitations"], false);
        assert_eq!(body["daily_limit_reached"], false);
        assert_eq!(body["license_limit_reached"], false);
        assert!(invites(&app, &app.owner).await.is_empty());
        assert!(app.mail.sent().is_empty());

        // Existing accounts are skipped; the others are invited.
        let body = invite(&app, &app.owner, "new@example.org\nHERE@parley.test\ngone@parley.test", &[])
            .await
            .error(400, "INVITATION_FAILED");
        assert_eq!(body["sent_invitations"], true);
        assert_eq!(body["errors"], json!([
            ["HERE@parley.test", "Already has an account.", false],
            ["gone@parley.test", "Account has been deactivated.", true],
        ]));
        let listed = invites(&app, &app.owner).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["email"], "new@example.org");
        assert_eq!(mailed_keys(&app, "new@example.org").len(), 1);

        // Nobody left to invite.
        let body = invite(&app, &app.owner, "here@parley.test", &[]).await.error(400, "INVITATION_FAILED");
        assert_eq!(body["msg"], "We weren't able to invite anyone.");
        assert_eq!(body["sent_invitations"], false);
    }
}

backend_test! {
    async fn revoking_and_resending(app) {
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        let other = app.create_user("other@parley.test", "Other", Role::Member).await;
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        invite(&app, &member, "a@example.org, b@example.org", &[("notify_referrer_on_join", json!(false))]).await.success();
        invite(&app, &app.owner, "o@example.org", &[("invite_as", json!(100))]).await.success();
        let mine = invites(&app, &member).await;
        assert_eq!(mine.len(), 2);
        assert_eq!(mine[0]["notify_referrer_on_join"], false);
        let a = mine[0]["id"].as_i64().unwrap();
        let owners = invites(&app, &app.owner).await.iter()
            .find(|i| i["email"] == "o@example.org").unwrap()["id"].as_i64().unwrap();

        // Resending mails the same link again.
        app.post(&format!("/invites/{a}/resend")).as_user(&member).send().await.success();
        let keys = mailed_keys(&app, "a@example.org");
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[0], keys[1]);

        // Someone else's: only administrators, and only owners for invitations of owners.
        let body = app.delete(&format!("/invites/{a}")).as_user(&other).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization administrator");
        app.post(&format!("/invites/{a}/resend")).as_user(&other).send().await.error(400, "BAD_REQUEST");
        let body = app.delete(&format!("/invites/{owners}")).as_user(&admin).send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization owner");
        let queue = app.register(&member, &[("event_types", json!(["invites_changed"]))]).await;
        app.delete(&format!("/invites/{a}")).as_user(&admin).send().await.success();
        assert_eq!(app.events_of(&member, queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await.len(), 1);
        let body = app.delete(&format!("/invites/{a}")).as_user(&admin).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such invitation");
        app.post(&format!("/invites/{a}/resend")).as_user(&member).send().await.error(400, "BAD_REQUEST");
        app.delete("/invites/987654").as_user(&admin).send().await.error(400, "BAD_REQUEST");
        // A reusable link's ID is not an email invitation's.
        let page = app.get_page(&format!("/join/{}/", keys[0])).send().await;
        assert_eq!(page.status, 404);
        assert!(page.text.contains("revoked"), "{}", page.text);
        accept(&app, &keys[0], "a@example.org", "A").await.error(400, "BAD_REQUEST");

        // Accepting without notify_referrer_on_join: no notice to the inviter.
        let key_b = mailed_keys(&app, "b@example.org").remove(0);
        accept(&app, &key_b, "b@example.org", "B").await.success();
        assert!(notices_to(&app, &member).await.is_empty());
        assert_eq!(invites(&app, &member).await.len(), 0);
    }
}

backend_test! {
    async fn an_account_made_another_way_revokes_pending_invitations(app) {
        invite(&app, &app.owner, "zed@example.org", &[]).await.success();
        let key = mailed_keys(&app, "zed@example.org").remove(0);
        let queue = app.register(&app.owner, &[("event_types", json!(["invites_changed"]))]).await;
        app.create_user("zed@example.org", "Zed", Role::Member).await;
        assert!(invites(&app, &app.owner).await.is_empty());
        assert_eq!(app.events_of(&app.owner, queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await.len(), 1);
        accept(&app, &key, "zed@example.org", "Zed").await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn groups_and_default_channels_come_with_the_invitation(app) {
        let lobby = app.create_channel(&app.owner, "lobby", &[&app.owner], &[]).await;
        app.post("/default_streams").as_user(&app.owner).param("stream_id", lobby).send().await.success();
        let owner = app.ctx.db.run({
            let id = app.owner.user_id;
            move |conn| parley_storage::users::by_id(conn, id)
        }).await.unwrap().unwrap();
        let group = parley_actions::user_groups::do_create_user_group(
            &app.ctx,
            owner,
            parley_actions::user_groups::NewUserGroup {
                name: "Crew".into(),
                description: "d".into(),
                ..Default::default()
            },
        ).await.unwrap();
        invite(&app, &app.owner, "crew@example.org", &[
            ("group_ids", json!([group.0])),
            ("include_realm_default_subscriptions", json!(true)),
        ]).await.success();
        let key = mailed_keys(&app, "crew@example.org").remove(0);
        let body = accept(&app, &key, "crew@example.org", "Crew").await.success();
        let crew = account(&body, "crew@example.org");
        let graph = app.ctx.db.run(parley_storage::groups::graph).await.unwrap();
        assert!(graph.members[&group].contains(&crew.user_id));
        let subs = app.get("/users/me/subscriptions").as_user(&crew).send().await.success();
        assert!(subs["subscriptions"].as_array().unwrap().iter().any(|s| s["stream_id"] == lobby));
    }
}

backend_test! {
    async fn a_deactivated_inviters_invitations_stop_working(app) {
        let member = app.create_user("mem@parley.test", "Mem", Role::Member).await;
        invite(&app, &member, "late@example.org", &[]).await.success();
        let key = mailed_keys(&app, "late@example.org").remove(0);
        assert_eq!(invites(&app, &app.owner).await.len(), 1);
        let queue = app.register(&app.owner, &[("event_types", json!(["invites_changed"]))]).await;
        app.delete(&format!("/users/{}", member.user_id.0)).as_user(&app.owner).send().await.success();
        assert!(invites(&app, &app.owner).await.is_empty());
        assert_eq!(app.events_of(&app.owner, queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await.len(), 1);
        accept(&app, &key, "late@example.org", "Late").await.error(400, "BAD_REQUEST");
    }
}
