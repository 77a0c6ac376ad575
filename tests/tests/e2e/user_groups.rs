//! User groups: `/user_groups/create`, `/user_groups`, `PATCH /user_groups/{id}`,
//! `/user_groups/{id}/deactivate`, members and subgroups, the `user_group` events and the
//! `realm_user_groups` snapshot, group mentions, and user groups deciding channel and
//! organization permissions through nested subgroups.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::groups::GroupId;
use parley_domain::Role;
use parley_tests::{backend_test, Account, TestApp};
use serde_json::{json, Value};

async fn people(app: &TestApp) -> (Account, Account, Account) {
    let ann = app
        .create_user("ann@parley.test", "Ann", Role::Member)
        .await;
    let bob = app
        .create_user("bob@parley.test", "Bob", Role::Member)
        .await;
    let cy = app.create_user("cy@parley.test", "Cy", Role::Member).await;
    (ann, bob, cy)
}

fn id(a: &Account) -> i64 {
    a.user_id.0
}

async fn create(
    app: &TestApp,
    who: &Account,
    name: &str,
    members: &[i64],
    extra: &[(&str, Value)],
) -> i64 {
    let mut request = app
        .post("/user_groups/create")
        .as_user(who)
        .param("name", name)
        .param("description", format!("About {name}"))
        .json_param("members", &json!(members));
    for (key, value) in extra {
        request = request.json_param(key, value);
    }
    request.send().await.success()["group_id"].as_i64().unwrap()
}

async fn all_groups(app: &TestApp, who: &Account, include_deactivated: bool) -> Vec<Value> {
    app.get("/user_groups")
        .as_user(who)
        .param("include_deactivated_groups", include_deactivated)
        .send()
        .await
        .success()["user_groups"]
        .as_array()
        .unwrap()
        .clone()
}

async fn group(app: &TestApp, group: i64) -> Value {
    all_groups(app, &app.owner, true)
        .await
        .into_iter()
        .find(|g| g["id"] == group)
        .unwrap()
}

async fn system_id(app: &TestApp, name: &str) -> i64 {
    all_groups(app, &app.owner, true)
        .await
        .into_iter()
        .find(|g| g["name"] == name)
        .unwrap()["id"]
        .as_i64()
        .unwrap()
}

async fn set_realm_permission(app: &TestApp, name: &'static str, value: Value) {
    let text = value.to_string();
    app.ctx
        .db
        .run(move |c| parley_storage::realms::set_permission(c, name, &text))
        .await
        .unwrap();
    // Written behind the server's back (no event): the organization cache is told directly.
    app.ctx.events.realm_cache().invalidate();
}

async fn members_update(
    app: &TestApp,
    who: &Account,
    group: i64,
    params: &[(&str, Value)],
) -> parley_tests::Response {
    let mut request = app
        .post(&format!("/user_groups/{group}/members"))
        .as_user(who);
    for (key, value) in params {
        request = request.json_param(key, value);
    }
    request.send().await
}

backend_test! {
    async fn groups_are_created_with_the_reference_defaults(app) {
        let (ann, bob, _) = people(&app).await;
        let before = parley_actions::time::now();
        let g = create(&app, &ann, "support", &[id(&bob)], &[]).await;
        let got = group(&app, g).await;
        assert_eq!(got["name"], "support");
        assert_eq!(got["description"], "About support");
        assert_eq!(got["members"], json!([id(&bob)]));
        assert_eq!(got["direct_subgroup_ids"], json!([]));
        assert_eq!(got["is_system_group"], false);
        assert_eq!(got["deactivated"], false);
        assert_eq!(got["creator_id"], id(&ann));
        assert!(got["date_created"].as_i64().unwrap() >= before);
        let creator_only = json!({"direct_members": [id(&ann)], "direct_subgroups": []});
        assert_eq!(got["can_manage_group"], creator_only);
        assert_eq!(got["can_add_members_group"], creator_only);
        let nobody = system_id(&app, "role:nobody").await;
        let everyone = system_id(&app, "role:everyone").await;
        assert_eq!(got["can_join_group"], nobody);
        assert_eq!(got["can_remove_members_group"], nobody);
        assert_eq!(got["can_leave_group"], everyone);
        assert_eq!(got["can_mention_group"], everyone);
        // System groups carry role:nobody for every setting.
        let members = group(&app, system_id(&app, "role:members").await).await;
        assert_eq!(members["is_system_group"], true);
        assert_eq!(members["can_manage_group"], nobody);

        // Settings and subgroups given at creation; a one-subgroup anonymous value is that group.
        let h = create(&app, &ann, "helpers", &[], &[
            ("subgroups", json!([g])),
            ("can_join_group", json!({"direct_members": [], "direct_subgroups": [g]})),
            ("can_mention_group", json!({"direct_members": [id(&bob)], "direct_subgroups": []})),
        ]).await;
        let got = group(&app, h).await;
        assert_eq!(got["direct_subgroup_ids"], json!([g]));
        assert_eq!(got["can_join_group"], g);
        assert_eq!(got["can_mention_group"], json!({"direct_members": [id(&bob)], "direct_subgroups": []}));
    }
}

backend_test! {
    async fn creation_is_refused_with_the_reference_errors(app) {
        let (ann, bob, _) = people(&app).await;
        let guest = app.create_user("gus@parley.test", "Gus", Role::Guest).await;
        create(&app, &ann, "taken", &[], &[]).await;
        let attempt = |who: &Account, name: &str, members: Value, extra: Vec<(&'static str, Value)>| {
            let mut r = app.post("/user_groups/create").as_user(who)
                .param("name", name).param("description", "d").json_param("members", &members);
            for (k, v) in extra { r = r.json_param(k, &v); }
            r
        };
        let err = attempt(&ann, "taken", json!([]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group 'taken' already exists.");
        let err = attempt(&ann, "  ", json!([]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group name can't be empty!");
        let err = attempt(&ann, "role:mine", json!([]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group name cannot start with 'role:'.");
        let err = attempt(&ann, &"x".repeat(101), json!([]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group name cannot exceed 100 characters.");
        let err = attempt(&ann, "a", json!([99999]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user ID: 99999");
        assert_eq!(err["var_name"], "members");
        let bob_id = bob.user_id;
        app.ctx.db.run(move |c| parley_storage::users::set_active(c, bob_id, false)).await.unwrap();
        let err = attempt(&ann, "a", json!([id(&bob)]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("Invalid user ID: {}", id(&bob)));
        let err = attempt(&guest, "a", json!([]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Not allowed for guest users");
        let everyone = system_id(&app, "role:everyone").await;
        let err = attempt(&ann, "a", json!([]), vec![("can_join_group", json!(everyone))])
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "'can_join_group' setting cannot be set to 'role:everyone' group.");
        let err = attempt(&ann, "a", json!([]), vec![("can_manage_group", json!(99999))])
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user group");
        let err = attempt(&ann, "a", json!([]), vec![("subgroups", json!([99999]))])
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user group ID: 99999");
        let err = app.post("/user_groups/create").as_user(&ann).param("name", "a")
            .param("description", "d").send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(err["var_name"], "members");
        // can_create_groups decides who may create.
        let admins = system_id(&app, "role:administrators").await;
        set_realm_permission(&app, "can_create_groups", json!(admins)).await;
        let err = attempt(&ann, "a", json!([]), vec![]).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        create(&app, &app.owner, "by-owner", &[], &[]).await;
        // Nothing half-made was left behind by the failures.
        let names: Vec<Value> = all_groups(&app, &app.owner, true).await.iter()
            .filter(|g| g["is_system_group"] == false).map(|g| g["name"].clone()).collect();
        assert_eq!(names, vec![json!("taken"), json!("by-owner")]);
    }
}

backend_test! {
    async fn groups_are_updated_by_those_who_manage_them(app) {
        let (ann, bob, cy) = people(&app).await;
        let g = create(&app, &ann, "support", &[], &[]).await;
        create(&app, &ann, "other", &[], &[]).await;
        let path = format!("/user_groups/{g}");
        let err = app.patch(&path).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "No new data supplied");
        app.patch(&path).as_user(&ann).param("name", "help").param("description", "New")
            .send().await.success();
        let got = group(&app, g).await;
        assert_eq!((got["name"].clone(), got["description"].clone()), (json!("help"), json!("New")));
        let err = app.patch(&path).as_user(&ann).param("name", "other").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group 'other' already exists.");
        // Bob manages nothing; the owner manages every group through can_manage_all_groups.
        let err = app.patch(&path).as_user(&bob).param("name", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        app.patch(&path).as_user(&app.owner).param("description", "By owner").send().await.success();
        // System groups cannot be edited.
        let members = system_id(&app, "role:members").await;
        let err = app.patch(&format!("/user_groups/{members}")).as_user(&app.owner)
            .param("description", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        let err = app.patch("/user_groups/99999").as_user(&ann).param("name", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user group");

        // can_manage_group given to a group whose nested subgroup holds Cy.
        let inner = create(&app, &ann, "inner", &[id(&cy)], &[]).await;
        let outer = create(&app, &ann, "outer", &[], &[("subgroups", json!([inner]))]).await;
        let creator_only = json!({"direct_members": [id(&ann)], "direct_subgroups": []});
        let err = app.patch(&path).as_user(&ann)
            .json_param("can_manage_group", &json!({"new": outer, "old": 12345}))
            .send().await.error(400, "EXPECTATION_MISMATCH");
        assert_eq!(err["msg"], "'old' value does not match the expected value.");
        app.patch(&path).as_user(&ann)
            .json_param("can_manage_group", &json!({"new": outer, "old": creator_only}))
            .send().await.success();
        assert_eq!(group(&app, g).await["can_manage_group"], outer);
        app.patch(&path).as_user(&cy).param("name", "renamed by cy").send().await.success();
        // Ann created the group but no longer manages it.
        let err = app.patch(&path).as_user(&ann).param("name", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        let everyone = system_id(&app, "role:everyone").await;
        let err = app.patch(&path).as_user(&cy)
            .json_param("can_add_members_group", &json!({"new": everyone}))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "'can_add_members_group' setting cannot be set to 'role:everyone' group.");
    }
}

backend_test! {
    async fn members_are_added_removed_joined_and_left(app) {
        let (ann, bob, cy) = people(&app).await;
        let g = create(&app, &ann, "support", &[id(&bob)], &[]).await;
        let err = members_update(&app, &ann, g, &[]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Nothing to do. Specify at least one of \"add\", \"delete\", \"add_subgroups\" or \"delete_subgroups\".");
        members_update(&app, &ann, g, &[("add", json!([id(&cy)]))]).await.success();
        assert_eq!(group(&app, g).await["members"], json!([id(&bob), id(&cy)]));
        let err = members_update(&app, &ann, g, &[("add", json!([id(&cy)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("User {} is already a member of this group", id(&cy)));
        let err = members_update(&app, &ann, g, &[("delete", json!([id(&ann)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("There is no member '{}' in this user group", id(&ann)));
        let err = members_update(&app, &ann, g, &[("add", json!([99999]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user ID: 99999");
        // Bob may not add others, nor join by default, but may leave (can_leave_group = everyone).
        let dee = app.create_user("dee@parley.test", "Dee", Role::Member).await;
        let err = members_update(&app, &bob, g, &[("add", json!([id(&dee)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        let err = members_update(&app, &dee, g, &[("add", json!([id(&dee)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        let err = members_update(&app, &bob, g, &[("delete", json!([id(&cy)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        members_update(&app, &bob, g, &[("delete", json!([id(&bob)]))]).await.success();
        assert_eq!(group(&app, g).await["members"], json!([id(&cy)]));
        // can_join_group opens the group to Dee; can_remove_members_group lets Cy remove others.
        let members = system_id(&app, "role:members").await;
        app.patch(&format!("/user_groups/{g}")).as_user(&ann)
            .json_param("can_join_group", &json!({"new": members}))
            .json_param("can_remove_members_group", &json!({"new": {"direct_members": [id(&cy)], "direct_subgroups": []}}))
            .send().await.success();
        members_update(&app, &dee, g, &[("add", json!([id(&dee)]))]).await.success();
        members_update(&app, &cy, g, &[("delete", json!([id(&dee)]))]).await.success();
        assert_eq!(group(&app, g).await["members"], json!([id(&cy)]));
        // Deactivated users cannot be added; system groups never change directly.
        let dee_id = dee.user_id;
        app.ctx.db.run(move |c| parley_storage::users::set_active(c, dee_id, false)).await.unwrap();
        let err = members_update(&app, &ann, g, &[("add", json!([id(&dee)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("Invalid user ID: {}", id(&dee)));
        let err = members_update(&app, &app.owner, members, &[("add", json!([id(&ann)]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        // A failed request changes nothing, even its earlier parts.
        let err = members_update(&app, &ann, g, &[("add", json!([id(&bob)])), ("delete", json!([id(&ann)]))])
            .await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("There is no member '{}' in this user group", id(&ann)));
        assert_eq!(group(&app, g).await["members"], json!([id(&cy)]));

        // may_add_members, which invitations use, follows the same rules.
        let policy_check = |who: parley_domain::UserId, group: i64| {
            let ctx = app.ctx.clone();
            async move {
                ctx.db.run(move |conn| {
                    let policy = parley_actions::policy::load(conn)?;
                    let user = parley_storage::users::by_id(conn, who)?.unwrap();
                    parley_actions::user_groups::may_add_members(conn, &policy, &user, GroupId(group))
                }).await.unwrap()
            }
        };
        assert!(policy_check(ann.user_id, g).await);
        assert!(!policy_check(bob.user_id, g).await);
        assert!(policy_check(app.owner.user_id, g).await);
        assert!(!policy_check(app.owner.user_id, members).await);
    }
}

backend_test! {
    async fn subgroups_are_managed_without_cycles(app) {
        let (ann, bob, cy) = people(&app).await;
        let a = create(&app, &ann, "a", &[id(&ann)], &[]).await;
        let b = create(&app, &ann, "b", &[id(&bob)], &[]).await;
        let c = create(&app, &ann, "c", &[id(&cy)], &[]).await;
        members_update(&app, &ann, a, &[("add_subgroups", json!([b]))]).await.success();
        app.post(&format!("/user_groups/{b}/subgroups")).as_user(&ann)
            .json_param("add", &json!([c])).send().await.success();
        let err = members_update(&app, &ann, c, &[("add_subgroups", json!([a]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("User group {c} is already a subgroup of one of the passed subgroups."));
        let err = members_update(&app, &ann, a, &[("add_subgroups", json!([a]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("User group {a} is already a subgroup of one of the passed subgroups."));
        let err = members_update(&app, &ann, a, &[("add_subgroups", json!([b]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("User group {b} is already a subgroup of this group."));
        let err = members_update(&app, &ann, a, &[("delete_subgroups", json!([c]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], format!("User group {c} is not a subgroup of this group."));
        let err = members_update(&app, &ann, a, &[("add_subgroups", json!([99999]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user group ID: 99999");
        let err = app.post(&format!("/user_groups/{a}/subgroups")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Nothing to do. Specify at least one of \"add\" or \"delete\".");

        // Reading members and subgroups, direct or through nesting.
        let get = |path: String, key: &'static str| {
            let app = &app;
            let ann = &ann;
            async move { app.get(&path).as_user(ann).send().await.success()[key].clone() }
        };
        assert_eq!(get(format!("/user_groups/{a}/members?direct_member_only=true"), "members").await, json!([id(&ann)]));
        assert_eq!(get(format!("/user_groups/{a}/members"), "members").await, json!([id(&ann), id(&bob), id(&cy)]));
        assert_eq!(get(format!("/user_groups/{a}/subgroups"), "subgroups").await, json!([b, c]));
        assert_eq!(get(format!("/user_groups/{a}/subgroups?direct_subgroup_only=true"), "subgroups").await, json!([b]));
        assert_eq!(get(format!("/user_groups/{a}/members/{}", id(&cy)), "is_user_group_member").await, true);
        assert_eq!(get(format!("/user_groups/{a}/members/{}?direct_member_only=true", id(&cy)), "is_user_group_member").await, false);
        let err = app.get(&format!("/user_groups/{a}/members/99999")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "No such user");

        // Removing a subgroup needs can_manage_group; adding one can_add_members_group.
        app.patch(&format!("/user_groups/{a}")).as_user(&ann)
            .json_param("can_add_members_group", &json!({"new": {"direct_members": [id(&bob)], "direct_subgroups": []}}))
            .send().await.success();
        let d = create(&app, &bob, "d", &[], &[]).await;
        members_update(&app, &bob, a, &[("add_subgroups", json!([d]))]).await.success();
        let err = members_update(&app, &bob, a, &[("delete_subgroups", json!([d]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        app.post(&format!("/user_groups/{a}/subgroups")).as_user(&ann)
            .json_param("delete", &json!([b, d])).send().await.success();
        assert_eq!(group(&app, a).await["direct_subgroup_ids"], json!([]));
        assert_eq!(get(format!("/user_groups/{a}/members"), "members").await, json!([id(&ann)]));
    }
}

backend_test! {
    async fn groups_in_use_cannot_be_deactivated(app) {
        let (ann, bob, _) = people(&app).await;
        let used = create(&app, &ann, "posters", &[id(&bob)], &[]).await;
        let channel = app.create_channel(&app.owner, "news", &[&ann], &[
            ("can_send_message_group", json!({"direct_members": [], "direct_subgroups": [used]})),
        ]).await;
        let err = app.post(&format!("/user_groups/{used}/deactivate")).as_user(&ann).send().await
            .error(400, "CANNOT_DEACTIVATE_GROUP_IN_USE");
        assert_eq!(err["msg"], "Cannot deactivate user group in use.");
        assert_eq!(err["objections"], json!([{"type": "channel", "channel_id": channel, "settings": ["can_send_message_group"]}]));

        let sub = create(&app, &ann, "sub", &[], &[]).await;
        let sup = create(&app, &ann, "sup", &[], &[("subgroups", json!([sub]))]).await;
        let err = app.post(&format!("/user_groups/{sub}/deactivate")).as_user(&ann).send().await
            .error(400, "CANNOT_DEACTIVATE_GROUP_IN_USE");
        assert_eq!(err["objections"], json!([{"type": "subgroup", "supergroup_ids": [sup]}]));
        let mentioners = create(&app, &ann, "mentioners", &[], &[]).await;
        create(&app, &ann, "quiet", &[], &[("can_mention_group", json!(mentioners))]).await;
        set_realm_permission(&app, "can_create_groups", json!({"direct_members": [], "direct_subgroups": [mentioners, sup]})).await;
        let err = app.post(&format!("/user_groups/{mentioners}/deactivate")).as_user(&ann).send().await
            .error(400, "CANNOT_DEACTIVATE_GROUP_IN_USE");
        let objections = err["objections"].as_array().unwrap();
        assert_eq!(objections.len(), 2);
        assert_eq!(objections[0]["type"], "user_group");
        assert_eq!(objections[0]["settings"], json!(["can_mention_group"]));
        assert_eq!(objections[1], json!({"type": "realm", "settings": ["can_create_groups"]}));

        // Once the supergroup is deactivated, the subgroup may be too.
        let err = app.post(&format!("/user_groups/{sup}/deactivate")).as_user(&bob).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Insufficient permission");
        set_realm_permission(&app, "can_create_groups", json!(system_id(&app, "role:members").await)).await;
        app.post(&format!("/user_groups/{sup}/deactivate")).as_user(&ann).send().await.success();
        app.post(&format!("/user_groups/{sub}/deactivate")).as_user(&ann).send().await.success();
        let err = app.post(&format!("/user_groups/{sub}/deactivate")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group is deactivated.");
        let active: Vec<i64> = all_groups(&app, &ann, false).await.iter().map(|g| g["id"].as_i64().unwrap()).collect();
        assert!(!active.contains(&sub) && active.contains(&used));
        assert_eq!(group(&app, sub).await["deactivated"], true);
        // Deactivated groups cannot be read or used, but can still be renamed and reactivated.
        let err = app.get(&format!("/user_groups/{sub}/members")).as_user(&ann).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group is deactivated.");
        let err = members_update(&app, &ann, used, &[("add_subgroups", json!([sub]))]).await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "User group is deactivated.");
        app.patch(&format!("/user_groups/{sub}")).as_user(&ann).param("name", "old sub").send().await.success();
        app.patch(&format!("/user_groups/{sub}")).as_user(&ann).json_param("deactivated", &json!(false)).send().await.success();
        assert_eq!(group(&app, sub).await["deactivated"], false);
    }
}

backend_test! {
    async fn events_and_snapshot_follow_the_include_deactivated_groups_capability(app) {
        let (ann, bob, _) = people(&app).await;
        let with = app.register(&bob, &[
            ("event_types", json!(["user_group"])),
            ("client_capabilities", json!({"include_deactivated_groups": true})),
        ]).await;
        let without = app.register(&bob, &[("event_types", json!(["user_group"]))]).await;
        let (qw, qo) = (with["queue_id"].as_str().unwrap().to_owned(), without["queue_id"].as_str().unwrap().to_owned());
        let g = create(&app, &ann, "support", &[id(&ann)], &[]).await;
        let h = create(&app, &ann, "helpers", &[], &[]).await;
        members_update(&app, &ann, g, &[("add", json!([id(&bob)])), ("add_subgroups", json!([h]))]).await.success();
        members_update(&app, &ann, g, &[("delete", json!([id(&bob)]))]).await.success();
        app.post(&format!("/user_groups/{g}/subgroups")).as_user(&ann).json_param("delete", &json!([h])).send().await.success();
        app.patch(&format!("/user_groups/{g}")).as_user(&ann).param("description", "Desk").send().await.success();
        app.post(&format!("/user_groups/{h}/deactivate")).as_user(&ann).send().await.success();
        app.patch(&format!("/user_groups/{h}")).as_user(&ann).param("name", "gone").send().await.success();

        let strip = |events: Vec<Value>| -> Vec<Value> {
            events.into_iter().map(|mut e| { e.as_object_mut().unwrap().remove("id"); e }).collect()
        };
        let got_with = strip(app.events_of(&bob, &qw, &["user_group"]).await);
        let got_without = strip(app.events_of(&bob, &qo, &["user_group"]).await);
        assert_eq!(got_with[0]["op"], "add");
        assert_eq!(got_with[0]["group"]["id"], g);
        assert_eq!(got_with[0]["group"]["members"], json!([id(&ann)]));
        assert_eq!(got_with[0]["group"]["can_manage_group"], json!({"direct_members": [id(&ann)], "direct_subgroups": []}));
        let tail = |events: &[Value]| events[2..].to_vec();
        let common = vec![
            json!({"type": "user_group", "op": "add_members", "group_id": g, "user_ids": [id(&bob)]}),
            json!({"type": "user_group", "op": "add_subgroups", "group_id": g, "direct_subgroup_ids": [h]}),
            json!({"type": "user_group", "op": "remove_members", "group_id": g, "user_ids": [id(&bob)]}),
            json!({"type": "user_group", "op": "remove_subgroups", "group_id": g, "direct_subgroup_ids": [h]}),
            json!({"type": "user_group", "op": "update", "group_id": g, "data": {"description": "Desk"}}),
        ];
        let mut expected_with = common.clone();
        expected_with.push(json!({"type": "user_group", "op": "update", "group_id": h, "data": {"deactivated": true}}));
        expected_with.push(json!({"type": "user_group", "op": "update", "group_id": h, "data": {"name": "gone"}}));
        let mut expected_without = common;
        expected_without.push(json!({"type": "user_group", "op": "remove", "group_id": h}));
        assert_eq!(tail(&got_with), expected_with);
        assert_eq!(tail(&got_without), expected_without);

        // The snapshot lists deactivated groups only for clients that handle them.
        let ids = |snapshot: &Value| -> Vec<i64> {
            snapshot["realm_user_groups"].as_array().unwrap().iter().map(|g| g["id"].as_i64().unwrap()).collect()
        };
        let with = app.register(&bob, &[
            ("fetch_event_types", json!(["realm_user_groups"])),
            ("client_capabilities", json!({"include_deactivated_groups": true})),
        ]).await;
        let without = app.register(&bob, &[("fetch_event_types", json!(["realm_user_groups"]))]).await;
        assert!(ids(&with).contains(&h) && ids(&with).contains(&g));
        assert!(!ids(&without).contains(&h) && ids(&without).contains(&g));
        let snap = with["realm_user_groups"].as_array().unwrap().iter().find(|x| x["id"] == g).unwrap().clone();
        assert_eq!(snap, group(&app, g).await);

        // Reactivation: an update for capable clients, the whole group again for the others.
        let qw = with["queue_id"].as_str().unwrap().to_owned();
        let qo = without["queue_id"].as_str().unwrap().to_owned();
        app.patch(&format!("/user_groups/{h}")).as_user(&ann).json_param("deactivated", &json!(false)).send().await.success();
        let got_with = strip(app.events_of(&bob, &qw, &["user_group"]).await);
        let got_without = strip(app.events_of(&bob, &qo, &["user_group"]).await);
        assert_eq!(got_with, vec![json!({"type": "user_group", "op": "update", "group_id": h, "data": {"deactivated": false}})]);
        assert_eq!(got_without.len(), 1);
        assert_eq!(got_without[0]["op"], "add");
        assert_eq!(got_without[0]["group"]["name"], "gone");
    }
}

backend_test! {
    async fn user_groups_with_nested_subgroups_decide_permissions(app) {
        let (ann, bob, _) = people(&app).await;
        let inner = create(&app, &app.owner, "inner", &[id(&ann)], &[]).await;
        let outer = create(&app, &app.owner, "outer", &[], &[("subgroups", json!([inner]))]).await;
        // A channel only the outer group may post in: Ann is in it through the inner group.
        app.create_channel(&app.owner, "announce", &[&ann, &bob], &[("can_send_message_group", json!(outer))]).await;
        app.send_to_channel(&ann, "announce", "t", "hello").await;
        let err = app.post("/messages").as_user(&bob).param("type", "stream").param("to", "announce")
            .param("topic", "t").param("content", "hi").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "You do not have permission to post in this channel.");
        // Removing Ann from the inner group takes the permission away.
        members_update(&app, &app.owner, inner, &[("delete", json!([id(&ann)]))]).await.success();
        app.post("/messages").as_user(&ann).param("type", "stream").param("to", "announce")
            .param("topic", "t").param("content", "hi").send().await.error(400, "BAD_REQUEST");
        members_update(&app, &app.owner, inner, &[("add", json!([id(&ann)]))]).await.success();

        // The organization's can_create_public_channel_group set to the outer group.
        set_realm_permission(&app, "can_create_public_channel_group", json!(outer)).await;
        app.create_channel(&ann, "by-ann", &[&ann], &[]).await;
        let err = app.post("/channels/create").as_user(&bob).param("name", "by-bob")
            .json_param("subscribers", &json!([id(&bob)])).send().await;
        assert_eq!(err.status, 400, "{}", err.text);
    }
}

backend_test! {
    async fn active_user_groups_can_be_mentioned(app) {
        let (ann, bob, _) = people(&app).await;
        let g = create(&app, &ann, "Support Team", &[id(&bob)], &[]).await;
        let render = |content: &'static str| {
            let app = &app;
            let ann = &ann;
            async move {
                app.post("/messages/render").as_user(ann).param("content", content)
                    .send().await.success()["rendered"].as_str().unwrap().to_owned()
            }
        };
        let html = render("hi @*support team*").await;
        assert!(html.contains(&format!("<span class=\"user-group-mention\" data-user-group-id=\"{g}\">@Support Team</span>")), "{html}");
        let html = render("hi @_*Support Team*").await;
        assert!(html.contains("user-group-mention silent"), "{html}");
        // System groups and deactivated groups are not mentionable.
        assert!(!render("@*role:members*").await.contains("user-group-mention"));
        app.post(&format!("/user_groups/{g}/deactivate")).as_user(&ann).send().await.success();
        assert!(!render("hi @*Support Team*").await.contains("user-group-mention"));
    }
}

backend_test! {
    async fn guests_and_unknown_groups_are_refused(app) {
        let guest = app.create_user("gus@parley.test", "Gus", Role::Guest).await;
        let err = app.get("/user_groups").as_user(&guest).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Not allowed for guest users");
        let err = app.get("/user_groups/99999/members").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user group");
        let err = app.get("/user_groups/abc/members").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["var_name"], "user_group_id");
        let err = app.post("/user_groups/99999/deactivate").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "Invalid user group");
    }
}

backend_test! {
    async fn mention_helpers_for_the_message_pipeline(app) {
        let (ann, bob, cy) = people(&app).await;
        let inner = create(&app, &ann, "inner", &[id(&cy)], &[]).await;
        let g = create(&app, &ann, "support", &[id(&bob)], &[
            ("subgroups", json!([inner])),
            ("can_mention_group", json!({"direct_members": [id(&ann)], "direct_subgroups": []})),
        ]).await;
        let members = system_id(&app, "role:members").await;
        let (ann_id, bob_id) = (ann.user_id, bob.user_id);
        let (reached, ann_may, bob_err) = app.ctx.db.run(move |conn| {
            let policy = parley_actions::policy::load(conn)?;
            let reached = parley_actions::user_groups::group_mention_user_ids(conn, &policy, &[g, members])?;
            let ann = parley_storage::users::by_id(conn, ann_id)?.unwrap();
            let bob = parley_storage::users::by_id(conn, bob_id)?.unwrap();
            let ann_may = parley_actions::user_groups::check_can_mention_groups(conn, &policy, &ann, &[g]).is_ok();
            let bob_err = match parley_actions::user_groups::check_can_mention_groups(conn, &policy, &bob, &[g]) {
                Err(parley_actions::ActionError::Request(e)) => e.msg,
                other => format!("{other:?}"),
            };
            Ok::<_, parley_actions::ActionError>((reached, ann_may, bob_err))
        }).await.unwrap();
        // Members of nested subgroups are reached; system groups reach nobody.
        assert_eq!(reached, vec![bob.user_id, cy.user_id]);
        assert!(ann_may);
        assert_eq!(bob_err, "You are not allowed to mention user group 'support'.");
    }
}

backend_test! {
    async fn the_notification_bot_tells_people_they_were_added_or_removed(app) {
        let (ann, bob, _) = people(&app).await;
        let g = create(&app, &ann, "support", &[], &[]).await;
        let q = app.register(&bob, &[("event_types", json!(["message"])), ("apply_markdown", json!(true))]).await;
        let queue = q["queue_id"].as_str().unwrap().to_owned();
        let own = app.register(&ann, &[("event_types", json!(["message"]))]).await;
        let own_queue = own["queue_id"].as_str().unwrap().to_owned();
        members_update(&app, &ann, g, &[("add", json!([id(&bob), id(&ann)]))]).await.success();
        members_update(&app, &ann, g, &[("delete", json!([id(&bob)]))]).await.success();
        let got = app.events_of(&bob, &queue, &["message"]).await;
        assert_eq!(got.len(), 2);
        let texts: Vec<String> = got.iter().map(|e| e["message"]["content"].as_str().unwrap().to_owned()).collect();
        assert!(texts[0].contains("added you to the group"), "{texts:?}");
        assert!(texts[0].contains(&format!("data-user-group-id=\"{g}\"")), "{texts:?}");
        assert!(texts[1].contains("removed you from the group"), "{texts:?}");
        assert_eq!(got[0]["message"]["sender_email"], "notification-bot@zulip.com");
        assert_eq!(got[0]["message"]["type"], "private");
        // Nobody is told about their own change.
        assert!(app.events_of(&ann, &own_queue, &["message"]).await.is_empty());
    }
}

backend_test! {
    async fn group_mentions_flag_members_and_follow_can_mention_group(app) {
        let (ann, bob, cy) = people(&app).await;
        let inner = create(&app, &ann, "inner", &[id(&cy)], &[]).await;
        create(&app, &ann, "support", &[id(&bob)], &[
            ("subgroups", json!([inner])),
            ("can_mention_group", json!({"direct_members": [id(&ann)], "direct_subgroups": []})),
        ]).await;
        let stream_id = app.create_channel(&app.owner, "help", &[&ann, &bob, &cy], &[]).await;
        let flags_of = |who: &'static str, message_id: i64| {
            let app = &app;
            let account = match who { "bob" => &bob, "cy" => &cy, _ => &ann };
            async move {
                let got = app.get(&format!("/messages/{message_id}")).as_user(account).send().await.success();
                got["message"]["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_owned()).collect::<Vec<_>>()
            }
        };
        let sent = app.post("/messages").as_user(&ann)
            .param("type", "stream").param("to", stream_id).param("topic", "t")
            .param("content", "ping @*support*").send().await.success();
        let message_id = sent["id"].as_i64().unwrap();
        // Direct members and members of nested subgroups are mentioned; the sender is not.
        assert!(flags_of("bob", message_id).await.contains(&"mentioned".to_owned()));
        assert!(flags_of("cy", message_id).await.contains(&"mentioned".to_owned()));
        assert!(!flags_of("ann", message_id).await.contains(&"mentioned".to_owned()));
        // A silent mention flags nobody.
        let silent = app.post("/messages").as_user(&ann)
            .param("type", "stream").param("to", stream_id).param("topic", "t")
            .param("content", "fyi @_*support*").send().await.success();
        assert!(!flags_of("bob", silent["id"].as_i64().unwrap()).await.contains(&"mentioned".to_owned()));
        // Bob is not in the group's can_mention_group: sending and editing a mention fail.
        let err = app.post("/messages").as_user(&bob)
            .param("type", "stream").param("to", stream_id).param("topic", "t")
            .param("content", "@*support* help").send().await.error(400, "BAD_REQUEST");
        assert_eq!(err["msg"], "You are not allowed to mention user group 'support'.");
        let own = app.post("/messages").as_user(&bob)
            .param("type", "stream").param("to", stream_id).param("topic", "t")
            .param("content", "plain").send().await.success();
        let own_id = own["id"].as_i64().unwrap();
        app.patch(&format!("/messages/{own_id}")).as_user(&bob)
            .param("content", "now @*support*").send().await.error(400, "BAD_REQUEST");
        // An edit that adds a permitted group mention flags the members.
        let mine = app.post("/messages").as_user(&ann)
            .param("type", "stream").param("to", stream_id).param("topic", "t")
            .param("content", "plain").send().await.success();
        let mine_id = mine["id"].as_i64().unwrap();
        assert!(!flags_of("cy", mine_id).await.contains(&"mentioned".to_owned()));
        app.patch(&format!("/messages/{mine_id}")).as_user(&ann)
            .param("content", "now @*support*").send().await.success();
        assert!(flags_of("cy", mine_id).await.contains(&"mentioned".to_owned()));
    }
}

backend_test! {
    async fn register_describes_the_group_permission_settings(app) {
        let state = app.register(&app.owner, &[("fetch_event_types", json!(["realm"]))]).await;
        let group = &state["server_supported_permission_settings"]["group"];
        assert_eq!(group["can_manage_group"]["default_group_name"], "group_creator");
        assert_eq!(group["can_join_group"]["default_group_name"], "role:nobody");
        assert_eq!(group["can_mention_group"]["allow_everyone_group"], true);
    }
}
