//! Reusable invitation links: `POST /invites/multiuse` (every rule of its parameter table),
//! `GET /invites`, `DELETE /invites/multiuse/{invite_id}`, the `invites_changed` event, and
//! signing up through a link: the `/join/{key}/` page and form, and
//! `POST /invites/multiuse/{key}/accept`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_actions::user_groups::{do_create_user_group, NewUserGroup};
use parley_domain::groups::{GroupId, GroupSetting, SystemGroup};
use parley_domain::{Role, UserId};
use parley_tests::{backend_test, Account, Response, TestApp};
use serde_json::{json, Value};

/// Who may create links (a realm group setting), set through storage.
async fn allow_links_for(app: &TestApp, setting: &str, group: SystemGroup) {
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

async fn create_link(app: &TestApp, who: &Account, params: &[(&str, Value)]) -> Response {
    let mut request = app.post("/invites/multiuse").as_user(who);
    for (name, value) in params {
        request = match value {
            Value::String(text) => request.param(name, text),
            other => request.json_param(name, other),
        };
    }
    request.send().await
}

async fn link(app: &TestApp, who: &Account, params: &[(&str, Value)]) -> String {
    create_link(app, who, params).await.success()["invite_link"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn key_of(link: &str) -> String {
    let rest = link.strip_prefix("http://parley.test/join/").unwrap();
    rest.strip_suffix('/').unwrap().to_owned()
}

async fn invites(app: &TestApp, who: &Account) -> Vec<Value> {
    app.get("/invites").as_user(who).send().await.success()["invites"]
        .as_array()
        .unwrap()
        .clone()
}

async fn accept(app: &TestApp, key: &str, email: &str, name: &str) -> Response {
    app.post(&format!("/invites/multiuse/{key}/accept"))
        .param("email", email)
        .param("full_name", name)
        .param("password", "a-long-password")
        .send()
        .await
}

async fn joined(app: &TestApp, key: &str, email: &str, name: &str) -> Account {
    let body = accept(app, key, email, name).await.success();
    assert_eq!(body["email"], email);
    Account {
        user_id: UserId(body["user_id"].as_i64().unwrap()),
        email: email.to_owned(),
        api_key: body["api_key"].as_str().unwrap().to_owned(),
        password: "a-long-password".to_owned(),
    }
}

async fn subscribed_ids(app: &TestApp, who: &Account) -> Vec<i64> {
    let body = app
        .get("/users/me/subscriptions")
        .as_user(who)
        .send()
        .await
        .success();
    let mut ids: Vec<i64> = body["subscriptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stream_id"].as_i64().unwrap())
        .collect();
    ids.sort();
    ids
}

async fn messages_of(app: &TestApp, who: &Account) -> Vec<Value> {
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
        .clone()
}

async fn welcome_messages(app: &TestApp, who: &Account) -> Vec<String> {
    messages_of(app, who)
        .await
        .iter()
        .filter(|m| m["sender_email"] == "welcome-bot@zulip.com")
        .map(|m| {
            assert_eq!(m["type"], "private");
            m["content"].as_str().unwrap().to_owned()
        })
        .collect()
}

/// The default channels (the organization starts with one), sorted.
async fn default_channels(app: &TestApp) -> Vec<i64> {
    let all = app.ctx.db.run(parley_storage::channels::all).await.unwrap();
    let mut ids: Vec<i64> = all
        .iter()
        .filter(|c| c.is_default && !c.is_archived)
        .map(|c| c.id.0)
        .collect();
    ids.sort();
    ids
}

async fn set_default(app: &TestApp, channel: i64) {
    app.post("/default_streams")
        .as_user(&app.owner)
        .param("stream_id", channel)
        .send()
        .await
        .success();
}

async fn create_group(app: &TestApp, name: &str) -> i64 {
    let owner = app.owner.user_id;
    let user = app
        .ctx
        .db
        .run(move |conn| parley_storage::users::by_id(conn, owner))
        .await
        .unwrap()
        .unwrap();
    let id = do_create_user_group(
        &app.ctx,
        user,
        NewUserGroup {
            name: name.to_owned(),
            description: "A group".to_owned(),
            ..NewUserGroup::default()
        },
    )
    .await
    .unwrap();
    id.0
}

async fn group_members(app: &TestApp, group: i64) -> Vec<UserId> {
    let graph = app.ctx.db.run(parley_storage::groups::graph).await.unwrap();
    let mut members: Vec<UserId> = graph.members[&GroupId(group)].iter().copied().collect();
    members.sort();
    members
}

async fn expire(app: &TestApp, id: i64, at: i64) {
    app.ctx
        .db
        .run(move |conn| parley_storage::invites::set_expiry_date(conn, id, Some(at)))
        .await
        .unwrap();
}

backend_test! {
    async fn a_link_has_the_defaults_of_the_parameter_table(app) {
        let before = parley_actions::time::now();
        let url = link(&app, &app.owner, &[]).await;
        assert!(url.starts_with("http://parley.test/join/") && url.ends_with('/'), "{url}");
        let listed = invites(&app, &app.owner).await;
        assert_eq!(listed.len(), 1);
        let invite = &listed[0];
        assert_eq!(invite["is_multiuse"], true);
        assert_eq!(invite["invited_as"], 400);
        assert_eq!(invite["invited_by_user_id"], app.owner.user_id.0);
        assert_eq!(invite["link_url"], url);
        assert!(invite.get("email").is_none());
        let invited = invite["invited"].as_i64().unwrap();
        assert!(invited >= before && invited <= parley_actions::time::now());
        // The server default: 14400 minutes.
        assert_eq!(invite["expiry_date"].as_i64().unwrap() - invited, 14400 * 60);

        // A new member gets no channel (not even the defaults) and the default welcome text.
        let lobby = app.create_channel(&app.owner, "lobby", &[&app.owner], &[]).await;
        set_default(&app, lobby).await;
        assert!(default_channels(&app).await.contains(&lobby));
        let ann = joined(&app, &key_of(&url), "ann@parley.test", "Ann").await;
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["role"], 400);
        assert_eq!(me["full_name"], "Ann");
        assert_eq!(subscribed_ids(&app, &ann).await, Vec::<i64>::new());
        let welcome = welcome_messages(&app, &ann).await;
        assert_eq!(welcome.len(), 1);
        assert!(welcome[0].contains("Welcome Bot"), "{}", welcome[0]);
    }
}

backend_test! {
    async fn expiry_minutes_set_never_and_invalid(app) {
        link(&app, &app.owner, &[("invite_expires_in_minutes", json!(60))]).await;
        link(&app, &app.owner, &[("invite_expires_in_minutes", json!(null))]).await;
        let listed = invites(&app, &app.owner).await;
        let first = &listed[0];
        assert_eq!(first["expiry_date"].as_i64().unwrap() - first["invited"].as_i64().unwrap(), 3600);
        assert_eq!(listed[1]["expiry_date"], Value::Null);
        for bad in [json!(0), json!(-5), json!("soon"), json!(1.5)] {
            let body = create_link(&app, &app.owner, &[("invite_expires_in_minutes", bad.clone())])
                .await
                .error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], "invite_expires_in_minutes", "{bad}: {body}");
        }
        assert_eq!(invites(&app, &app.owner).await.len(), 2);
        // The pre-126 `invite_expires_in_days` is gone, as in the reference: reported as ignored,
        // and the server default applies.
        let body = create_link(&app, &app.owner, &[("invite_expires_in_days", json!(1))]).await.success();
        assert_eq!(body["ignored_parameters_unsupported"], json!(["invite_expires_in_days"]));
        let third = &invites(&app, &app.owner).await[2];
        assert_eq!(third["expiry_date"].as_i64().unwrap() - third["invited"].as_i64().unwrap(), 14400 * 60);
    }
}

backend_test! {
    async fn the_server_setting_gives_the_default_lifetime(app) {
        let ctx = app.ctx.clone().with_invitation_link_validity_minutes(5);
        assert_eq!(ctx.invitation_link_validity_minutes, 5);
        let owner = app
            .ctx
            .db
            .run({
                let id = app.owner.user_id;
                move |conn| parley_storage::users::by_id(conn, id)
            })
            .await
            .unwrap()
            .unwrap();
        let request = parley_actions::invites::CreateInvite {
            invite_expires_in_minutes: None,
            invite_as: Role::Member,
            stream_ids: vec![],
            group_ids: vec![],
            include_realm_default_subscriptions: false,
            welcome_message_custom_text: None,
        };
        parley_actions::invites::do_create_multiuse_invite(&ctx, owner, request).await.unwrap();
        let invite = &invites(&app, &app.owner).await[0];
        assert_eq!(invite["expiry_date"].as_i64().unwrap() - invite["invited"].as_i64().unwrap(), 300);
    }
}

backend_test! {
    async fn invite_as_must_be_a_role_no_more_powerful_than_the_callers(app) {
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let member = app.create_user("member@parley.test", "Member", Role::Member).await;
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Members).await;

        for bad in ["123", "500", "owner", ""] {
            let body = create_link(&app, &app.owner, &[("invite_as", json!(bad))])
                .await
                .error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], "invite_as", "{bad}: {body}");
        }
        for role in [100, 200, 300, 400, 600] {
            link(&app, &app.owner, &[("invite_as", json!(role))]).await;
        }
        let body = create_link(&app, &admin, &[("invite_as", json!(100))])
            .await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization owner");
        for role in [200, 300, 400, 600] {
            link(&app, &admin, &[("invite_as", json!(role))]).await;
        }
        let body = create_link(&app, &moderator, &[("invite_as", json!(200))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization administrator");
        for role in [300, 400, 600] {
            link(&app, &moderator, &[("invite_as", json!(role))]).await;
        }
        let body = create_link(&app, &member, &[("invite_as", json!(300))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization moderator");
        create_link(&app, &member, &[("invite_as", json!(100))])
            .await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        link(&app, &member, &[("invite_as", json!(600))]).await;
    }
}

backend_test! {
    async fn only_the_create_multiuse_invite_group_may_create_links(app) {
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let member = app.create_user("member@parley.test", "Member", Role::Member).await;
        let guest = app.create_user("guest@parley.test", "Guest", Role::Guest).await;
        // Default: administrators.
        link(&app, &admin, &[]).await;
        for who in [&moderator, &member] {
            let body = create_link(&app, who, &[]).await.error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], "Insufficient permission");
        }
        let body = create_link(&app, &guest, &[("invite_as", json!(600))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Moderators).await;
        link(&app, &moderator, &[]).await;
        create_link(&app, &member, &[]).await.error(400, "BAD_REQUEST");
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Everyone).await;
        link(&app, &member, &[]).await;
        let body = create_link(&app, &guest, &[("invite_as", json!(600))]).await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");
        let body = app.get("/invites").as_user(&guest).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");
    }
}

backend_test! {
    async fn channels_must_be_default_or_ones_the_caller_may_subscribe_others_to(app) {
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Moderators).await;
        let open = app.create_channel(&app.owner, "open", &[&app.owner], &[]).await;
        let default = app.create_channel(&app.owner, "lobby", &[&app.owner], &[]).await;
        set_default(&app, default).await;
        let secret = app
            .create_channel(&app.owner, "secret", &[&app.owner], &[("invite_only", json!(true))])
            .await;

        for bad in [9999, secret] {
            let body = create_link(&app, &moderator, &[("stream_ids", json!([bad]))])
                .await
                .error(400, "BAD_REQUEST");
            assert_eq!(body["msg"], format!("Invalid channel ID {bad}. No invites were sent."));
            assert_eq!(body["var_name"], "stream_ids");
        }
        let body = create_link(&app, &moderator, &[("stream_ids", json!("[1,"))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "stream_ids");
        // With the permission to subscribe others (members, by default), any visible channel.
        link(&app, &moderator, &[("stream_ids", json!([open, default]))]).await;

        // Without it, only default channels; the defaults may still be included.
        allow_links_for(&app, "can_add_subscribers_group", SystemGroup::Administrators).await;
        let body = create_link(&app, &moderator, &[("stream_ids", json!([open]))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "You do not have permission to subscribe other users to channels.");
        let body = create_link(&app, &moderator, &[("stream_ids", json!([default, open]))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "stream_ids");
        link(&app, &moderator, &[("stream_ids", json!([default]))]).await;
        let url = link(&app, &moderator, &[("include_realm_default_subscriptions", json!(true))]).await;
        let body = create_link(&app, &moderator, &[("include_realm_default_subscriptions", json!("maybe"))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "include_realm_default_subscriptions");
        // The owner (an administrator) may still add any visible channel.
        link(&app, &app.owner, &[("stream_ids", json!([open, secret]))]).await;

        // include_realm_default_subscriptions: the new account joins the default channels.
        let ann = joined(&app, &key_of(&url), "ann@parley.test", "Ann").await;
        let defaults = default_channels(&app).await;
        assert!(defaults.contains(&default) && !defaults.contains(&open));
        assert_eq!(subscribed_ids(&app, &ann).await, defaults);
    }
}

backend_test! {
    async fn groups_need_the_permission_to_add_members(app) {
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Administrators).await;
        let group = create_group(&app, "Support").await;
        // can_manage_all_groups is the owners': an administrator who did not create the group may
        // not add members to it.
        let body = create_link(&app, &admin, &[("group_ids", json!([group]))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "group_ids");
        let body = create_link(&app, &app.owner, &[("group_ids", json!([424242]))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid user group");
        let members_group = app
            .ctx
            .db
            .run(parley_storage::groups::graph)
            .await
            .unwrap()
            .system_id(SystemGroup::Members)
            .unwrap();
        let body = create_link(&app, &app.owner, &[("group_ids", json!([members_group.0]))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "group_ids");
        link(&app, &app.owner, &[("group_ids", json!([group]))]).await;
    }
}

backend_test! {
    async fn welcome_text_is_for_administrators_and_limited(app) {
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Moderators).await;
        let long = "x".repeat(8001);
        let body = create_link(&app, &app.owner, &[("welcome_message_custom_text", json!(long))])
            .await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "welcome_message_custom_text");
        let limit = "y".repeat(8000);
        let url = link(&app, &app.owner, &[("welcome_message_custom_text", json!(limit))]).await;
        let a = joined(&app, &key_of(&url), "a@parley.test", "A").await;
        assert_eq!(welcome_messages(&app, &a).await, vec![limit]);

        // An empty text: no welcome message.
        let url = link(&app, &app.owner, &[("welcome_message_custom_text", json!(""))]).await;
        let b = joined(&app, &key_of(&url), "b@parley.test", "B").await;
        assert_eq!(welcome_messages(&app, &b).await, Vec::<String>::new());

        // A moderator's text is ignored: the organization default is sent.
        let url = link(&app, &moderator, &[("welcome_message_custom_text", json!("Hi from mod"))]).await;
        let c = joined(&app, &key_of(&url), "c@parley.test", "C").await;
        let welcome = welcome_messages(&app, &c).await;
        assert_eq!(welcome.len(), 1);
        assert_ne!(welcome[0], "Hi from mod");
        assert!(welcome[0].contains("Welcome Bot"));
        // A moderator's empty text is ignored too.
        let url = link(&app, &moderator, &[("welcome_message_custom_text", json!(""))]).await;
        let d = joined(&app, &key_of(&url), "d@parley.test", "D").await;
        assert_eq!(welcome_messages(&app, &d).await.len(), 1);
    }
}

backend_test! {
    async fn full_flow_through_the_api_and_the_form(app) {
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let bystander = app.create_user("member@parley.test", "Member", Role::Member).await;
        let engineering = app.create_channel(&app.owner, "engineering", &[&app.owner], &[]).await;
        let design = app.create_channel(&app.owner, "design", &[&app.owner], &[]).await;
        let lobby = app.create_channel(&app.owner, "lobby", &[&app.owner], &[]).await;
        set_default(&app, lobby).await;
        let group = create_group(&app, "Engineers").await;

        let admin_queue = app.register(&admin, &[("event_types", json!(["invites_changed"]))]).await;
        let member_queue = app.register(&bystander, &[("event_types", json!(["invites_changed"]))]).await;
        let owner_queue = app
            .register(&app.owner, &[("event_types", json!(["realm_user", "subscription", "user_group"]))])
            .await;

        let url = link(&app, &app.owner, &[
            ("invite_as", json!(300)),
            ("stream_ids", json!([engineering, design])),
            ("group_ids", json!([group])),
            ("welcome_message_custom_text", json!("Welcome to **engineering**!")),
        ]).await;
        let key = key_of(&url);
        let events = app.events_of(&admin, admin_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["type"], "invites_changed");
        assert!(app.events_of(&bystander, member_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await.is_empty());

        // Through the API.
        let ann = joined(&app, &key, "ann@parley.test", "Ann").await;
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["role"], 300);
        let mut want = vec![engineering, design];
        want.sort();
        assert_eq!(subscribed_ids(&app, &ann).await, want);
        assert_eq!(group_members(&app, group).await, vec![ann.user_id]);
        assert_eq!(welcome_messages(&app, &ann).await, vec!["Welcome to **engineering**!".to_owned()]);
        let owner_events = app
            .events_of(&app.owner, owner_queue["queue_id"].as_str().unwrap(), &["realm_user", "subscription", "user_group"])
            .await;
        assert!(owner_events.iter().any(|e| e["type"] == "realm_user" && e["op"] == "add"
            && e["person"]["user_id"] == ann.user_id.0), "{owner_events:?}");
        assert!(owner_events.iter().any(|e| e["type"] == "subscription" && e["op"] == "peer_add"
            && e["user_ids"].as_array().unwrap().contains(&json!(ann.user_id.0))), "{owner_events:?}");
        assert!(owner_events.iter().any(|e| e["type"] == "user_group" && e["op"] == "add_members"
            && e["group_id"] == group && e["user_ids"] == json!([ann.user_id.0])), "{owner_events:?}");

        // Through the page and its form: the same link works again.
        let browser = app.browser();
        let page = browser.get(&format!("/join/{key}/")).await;
        assert_eq!(page.status, 200);
        assert!(page.text.contains("<form method=\"post\""), "{}", page.text);
        for field in ["name=\"email\"", "name=\"full_name\"", "name=\"password\"", "name=\"csrfmiddlewaretoken\""] {
            assert!(page.text.contains(field), "{field}");
        }
        let token = browser.cookie("csrftoken").unwrap();
        let done = browser
            .post_form(&format!("/join/{key}/"), &[
                ("email", "bob@parley.test"),
                ("full_name", "Bob & Co"),
                ("password", "another-long-password"),
                ("csrfmiddlewaretoken", &token),
            ])
            .await;
        // The new account is signed in and sent to the app.
        assert_eq!(done.status, 303, "{}", done.text);
        assert_eq!(done.headers.get("location").unwrap(), "/");
        let shell = browser.get("/").await;
        assert!(shell.text.contains("\"full_name\":\"Bob \\u0026 Co\""), "{}", shell.text);
        let grant = app
            .post("/fetch_api_key")
            .param("username", "bob@parley.test")
            .param("password", "another-long-password")
            .send()
            .await
            .success();
        let bob = Account {
            user_id: UserId(grant["user_id"].as_i64().unwrap()),
            email: "bob@parley.test".to_owned(),
            api_key: grant["api_key"].as_str().unwrap().to_owned(),
            password: "another-long-password".to_owned(),
        };
        let me = app.get("/users/me").as_user(&bob).send().await.success();
        assert_eq!(me["role"], 300);
        assert_eq!(me["full_name"], "Bob & Co");
        assert_eq!(subscribed_ids(&app, &bob).await, want);
        let mut members = vec![ann.user_id, bob.user_id];
        members.sort();
        assert_eq!(group_members(&app, group).await, members);
        assert_eq!(welcome_messages(&app, &bob).await, vec!["Welcome to **engineering**!".to_owned()]);

        // A taken address fails on the page and through the API.
        let again = browser
            .post_form(&format!("/join/{key}/"), &[
                ("email", "ann@parley.test"),
                ("full_name", "Ann again"),
                ("password", "a-long-password"),
                ("csrfmiddlewaretoken", &browser.cookie("csrftoken").unwrap()),
            ])
            .await;
        assert_eq!(again.status, 400);
        assert!(again.text.contains("already in use"), "{}", again.text);
        assert!(again.text.contains("<form"), "{}", again.text);
        let body = accept(&app, &key, "ann@parley.test", "Ann again").await.error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("already in use"), "{body}");
        accept(&app, &key, "not-an-email", "X").await.error(400, "BAD_REQUEST");
        let body = app.post(&format!("/invites/multiuse/{key}/accept"))
            .param("email", "x@parley.test").param("full_name", "X")
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "password");

        // The listing: the owner and administrators see it, the member does not.
        let listed = invites(&app, &admin).await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0]["invited_as"], 300);
        assert_eq!(listed[0]["link_url"], url);
        assert!(invites(&app, &bystander).await.is_empty());

        // Revoking: the link stops working, the page says so.
        let id = listed[0]["id"].as_i64().unwrap();
        app.delete(&format!("/invites/multiuse/{id}")).as_user(&admin).send().await.success();
        let events = app.events_of(&admin, admin_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await;
        assert_eq!(events.len(), 2);
        assert!(invites(&app, &admin).await.is_empty());
        let page = app.get_page(&format!("/join/{key}/")).send().await;
        assert_eq!(page.status, 404);
        assert!(page.text.contains("This invitation link has been revoked"), "{}", page.text);
        assert!(!page.text.contains("<form"));
        let posted = app
            .post_page(&format!("/join/{key}/"))
            .param("email", "carl@parley.test")
            .param("full_name", "Carl")
            .param("password", "a-long-password")
            .send()
            .await;
        assert_eq!(posted.status, 404);
        assert!(posted.text.contains("has been revoked"));
        let body = accept(&app, &key, "carl@parley.test", "Carl").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "This invitation link has been revoked.");
        // Nobody was created.
        let users = app.get("/users").as_user(&admin).send().await.success();
        assert!(!users["members"].as_array().unwrap().iter().any(|u| u["email"] == "carl@parley.test"));
    }
}

backend_test! {
    async fn expired_links_stop_working_and_are_not_listed(app) {
        let url = link(&app, &app.owner, &[("invite_expires_in_minutes", json!(30))]).await;
        let key = key_of(&url);
        let id = invites(&app, &app.owner).await[0]["id"].as_i64().unwrap();
        joined(&app, &key, "early@parley.test", "Early").await;
        expire(&app, id, parley_actions::time::now() - 1).await;
        assert!(invites(&app, &app.owner).await.is_empty());
        let page = app.get_page(&format!("/join/{key}/")).send().await;
        assert_eq!(page.status, 404);
        assert!(page.text.contains("This invitation link has expired"), "{}", page.text);
        let posted = app
            .post_page(&format!("/join/{key}"))
            .param("email", "late@parley.test")
            .param("full_name", "Late")
            .param("password", "a-long-password")
            .send()
            .await;
        assert_eq!(posted.status, 404);
        assert!(posted.text.contains("has expired"));
        let body = accept(&app, &key, "late@parley.test", "Late").await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "This invitation link has expired.");
        // An expired link can still be revoked, once.
        app.delete(&format!("/invites/multiuse/{id}")).as_user(&app.owner).send().await.success();
        let page = app.get_page(&format!("/join/{key}/")).send().await;
        assert!(page.text.contains("has been revoked"));

        // Unknown keys.
        let page = app.get_page("/join/nosuchkey/").send().await;
        assert_eq!(page.status, 404);
        assert!(page.text.contains("Invalid invitation link"), "{}", page.text);
        accept(&app, "nosuchkey", "x@parley.test", "X").await.error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn revoking_follows_the_reference_rules(app) {
        let admin = app.create_user("admin@parley.test", "Admin", Role::Administrator).await;
        let moderator = app.create_user("mod@parley.test", "Mod", Role::Moderator).await;
        let other = app.create_user("other@parley.test", "Other", Role::Moderator).await;
        let guest = app.create_user("guest@parley.test", "Guest", Role::Guest).await;
        allow_links_for(&app, "create_multiuse_invite_group", SystemGroup::Moderators).await;
        link(&app, &moderator, &[]).await;
        link(&app, &app.owner, &[("invite_as", json!(100))]).await;
        link(&app, &admin, &[]).await;
        let all = invites(&app, &app.owner).await;
        let (mod_link, owner_link, admin_link) =
            (all[0]["id"].as_i64().unwrap(), all[1]["id"].as_i64().unwrap(), all[2]["id"].as_i64().unwrap());
        // A non-administrator sees only their own links.
        let own = invites(&app, &moderator).await;
        assert_eq!(own.len(), 1);
        assert_eq!(own[0]["id"], mod_link);
        assert!(invites(&app, &other).await.is_empty());
        assert_eq!(invites(&app, &admin).await.len(), 3);

        let mod_queue = app.register(&moderator, &[("event_types", json!(["invites_changed"]))]).await;
        let other_queue = app.register(&other, &[("event_types", json!(["invites_changed"]))]).await;

        let body = app.delete(&format!("/invites/multiuse/{mod_link}")).as_user(&other).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let body = app.delete(&format!("/invites/multiuse/{admin_link}")).as_user(&guest).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Not allowed for guest users");
        let body = app.delete(&format!("/invites/multiuse/{owner_link}")).as_user(&admin).send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization owner");
        let body = app.delete("/invites/multiuse/987654").as_user(&admin).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such invitation");
        let body = app.delete("/invites/multiuse/abc").as_user(&admin).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "invite_id");

        // The creator revokes their own link; the creator and administrators are told.
        app.delete(&format!("/invites/multiuse/{mod_link}")).as_user(&moderator).send().await.success();
        let events = app.events_of(&moderator, mod_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await;
        assert_eq!(events.len(), 1);
        assert!(app.events_of(&other, other_queue["queue_id"].as_str().unwrap(), &["invites_changed"]).await.is_empty());
        let body = app.delete(&format!("/invites/multiuse/{mod_link}")).as_user(&moderator).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invitation has already been revoked");
        // An administrator revokes someone else's link; the owner revokes the owner link.
        app.delete(&format!("/invites/multiuse/{admin_link}")).as_user(&app.owner).send().await.success();
        app.delete(&format!("/invites/multiuse/{owner_link}")).as_user(&app.owner).send().await.success();
        assert!(invites(&app, &app.owner).await.is_empty());
    }
}
