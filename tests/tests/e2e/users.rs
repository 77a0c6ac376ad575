//! Users: `GET /users`, `GET /users/{id|email}`, `GET /users/me`, `POST /users`, custom profile
//! fields.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::user::EmailAddressVisibility;
use parley_domain::Role;
use parley_storage::users;
use parley_tests::{backend_test, TestApp};
use serde_json::{json, Value};

const USER_FIELDS: [&str; 16] = [
    "user_id",
    "delivery_email",
    "email",
    "full_name",
    "date_joined",
    "is_active",
    "is_owner",
    "is_admin",
    "is_guest",
    "is_bot",
    "bot_type",
    "role",
    "timezone",
    "avatar_url",
    "avatar_version",
    "is_active",
];

fn member(members: &Value, user_id: i64) -> &Value {
    members
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["user_id"] == user_id)
        .unwrap_or_else(|| panic!("user {user_id} not in {members}"))
}

async fn hide_email(
    app: &TestApp,
    user_id: parley_domain::UserId,
    visibility: EmailAddressVisibility,
) {
    app.ctx
        .db
        .run(move |c| users::set_email_address_visibility(c, user_id, visibility))
        .await
        .unwrap();
}

backend_test! {
    async fn get_users_lists_everyone_with_every_field(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.get("/users").as_user(&ann).send().await.success();
        let members = &body["members"];
        assert_eq!(members.as_array().unwrap().len(), 2);
        let owner = member(members, app.owner.user_id.0);
        for field in USER_FIELDS {
            assert!(owner.get(field).is_some(), "missing {field}: {owner}");
        }
        assert_eq!(owner["role"], 100);
        assert_eq!(owner["is_owner"], true);
        assert_eq!(owner["is_admin"], true);
        assert_eq!(owner["bot_type"], Value::Null);
        assert!(owner.get("bot_owner_id").is_none(), "only bots carry bot_owner_id");
        assert!(owner.get("profile_data").is_none());
        let date = owner["date_joined"].as_str().unwrap();
        assert!(date.ends_with("+00:00") && date.contains('T'), "{date}");
        // client_gravatar defaults to true: the client computes visible users' Gravatar URLs.
        assert_eq!(owner["avatar_url"], Value::Null);
        let ann_record = member(members, ann.user_id.0);
        assert_eq!(ann_record["role"], 400);
        assert_eq!(ann_record["full_name"], "Ann");
        assert_eq!(ann_record["is_admin"], false);

        let body = app.get("/users").as_user(&ann).param("client_gravatar", "false").send().await.success();
        let url = member(&body["members"], ann.user_id.0)["avatar_url"].as_str().unwrap().to_owned();
        assert!(url.starts_with("https://secure.gravatar.com/avatar/"), "{url}");
    }
}

backend_test! {
    async fn get_users_filters_by_user_ids(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.get("/users").as_user(&ann).json_param("user_ids", &json!([ann.user_id.0]))
            .send().await.success();
        assert_eq!(body["members"].as_array().unwrap().len(), 1);
        assert_eq!(body["members"][0]["user_id"], ann.user_id.0);
        let body = app.get("/users").as_user(&ann).json_param("user_ids", &json!([ann.user_id.0, 999]))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "user_ids");
        let body = app.get("/users").as_user(&ann).param("user_ids", "1,2").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "user_ids");
    }
}

backend_test! {
    async fn hidden_delivery_email_is_null_with_placeholder_email(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let mod_ = app.create_user("mod@parley.test", "Mo", Role::Moderator).await;
        let guest = app.create_user("guest@parley.test", "Gus", Role::Guest).await;
        let placeholder = format!("user{}@parley.test", ann.user_id.0);

        hide_email(&app, ann.user_id, EmailAddressVisibility::Moderators).await;
        let app = &app;
        let seen = |viewer: &parley_tests::Account| {
            let viewer = viewer.clone();
            async move {
                let body = app.get("/users").as_user(&viewer).send().await.success();
                member(&body["members"], ann.user_id.0).clone()
            }
        };
        let by_guest = seen(&guest).await;
        assert_eq!(by_guest["delivery_email"], Value::Null);
        assert_eq!(by_guest["email"], placeholder.as_str());
        // Without access to the real address the client cannot compute the Gravatar URL.
        assert!(by_guest["avatar_url"].is_string());
        let by_mod = seen(&mod_).await;
        assert_eq!(by_mod["delivery_email"], "ann@parley.test");
        assert_eq!(by_mod["email"], placeholder.as_str());
        assert_eq!(seen(&ann).await["delivery_email"], "ann@parley.test");

        hide_email(app, ann.user_id, EmailAddressVisibility::Nobody).await;
        assert_eq!(seen(&mod_).await["delivery_email"], Value::Null);
        assert_eq!(seen(&app.owner).await["delivery_email"], "ann@parley.test", "administrators see everything");

        hide_email(app, ann.user_id, EmailAddressVisibility::Members).await;
        assert_eq!(seen(&guest).await["delivery_email"], Value::Null);
        assert_eq!(seen(&mod_).await["delivery_email"], "ann@parley.test");
    }
}

backend_test! {
    async fn get_user_by_id_and_by_email(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let path = format!("/users/{}", ann.user_id.0);
        let body = app.get(&path).as_user(&app.owner).send().await.success();
        assert_eq!(body["user"]["full_name"], "Ann");
        assert_eq!(body["user"]["delivery_email"], "ann@parley.test");

        let body = app.get("/users/ann@parley.test").as_user(&app.owner).send().await.success();
        assert_eq!(body["user"]["user_id"], ann.user_id.0);

        let body = app.get("/users/9999").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "No such user");
        app.get("/users/ghost@parley.test").as_user(&app.owner).send().await.error(400, "BAD_REQUEST");
        let body = app.get("/users/99999999999999999999999").as_user(&app.owner).send().await
            .error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "user_id");
    }
}

backend_test! {
    async fn hidden_email_cannot_be_probed_by_lookup(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let bob = app.create_user("bob@parley.test", "Bob", Role::Member).await;
        hide_email(&app, ann.user_id, EmailAddressVisibility::Admins).await;
        app.get("/users/ann@parley.test").as_user(&bob).send().await.error(400, "BAD_REQUEST");
        let placeholder = format!("/users/user{}@parley.test", ann.user_id.0);
        let body = app.get(&placeholder).as_user(&bob).send().await.success();
        assert_eq!(body["user"]["user_id"], ann.user_id.0);
        app.get("/users/ann@parley.test").as_user(&app.owner).send().await.success();
    }
}

backend_test! {
    async fn users_me_returns_own_record(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Guest).await;
        let body = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(body["user_id"], ann.user_id.0);
        assert_eq!(body["email"], "ann@parley.test");
        assert_eq!(body["delivery_email"], "ann@parley.test");
        assert_eq!(body["is_guest"], true);
        assert_eq!(body["role"], 600);
        assert_eq!(body["max_message_id"], -1);
        assert_eq!(body["profile_data"], json!({}));
        assert!(body["avatar_url"].is_string());
    }
}

backend_test! {
    async fn owner_creates_users_that_can_then_log_in(app) {
        let body = app.post("/users").as_user(&app.owner)
            .param("email", "New@Parley.test").param("password", "s3cret-pass").param("full_name", " Newton ")
            .send().await.success();
        let user_id = body["user_id"].as_i64().unwrap();
        let body = app.post("/fetch_api_key").param("username", "new@parley.test")
            .param("password", "s3cret-pass").send().await.success();
        assert_eq!(body["user_id"], user_id);
        let key = body["api_key"].as_str().unwrap().to_owned();
        assert!(key.len() >= 32);
        let me = app.get("/users/me").basic_auth("new@parley.test", &key).send().await.success();
        assert_eq!(me["full_name"], "Newton");
        assert_eq!(me["role"], 400);

        let body = app.post("/users").as_user(&app.owner)
            .param("email", "new@parley.test").param("password", "another1").param("full_name", "Dup")
            .send().await.error(400, "BAD_REQUEST");
        assert!(body["msg"].as_str().unwrap().contains("already in use"), "{body}");
    }
}

backend_test! {
    async fn creating_users_needs_admin_with_permission(app) {
        let member = app.create_user("m@parley.test", "Mem", Role::Member).await;
        let admin = app.create_user("a@parley.test", "Adm", Role::Administrator).await;
        fn params(b: parley_tests::RequestBuilder<'_>) -> parley_tests::RequestBuilder<'_> {
            b.param("email", "x@parley.test").param("password", "longenough").param("full_name", "X")
        }
        let body = params(app.post("/users").as_user(&member)).send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let body = params(app.post("/users").as_user(&admin)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Insufficient permission");
    }
}

backend_test! {
    async fn create_user_validates_each_parameter(app) {
        let owner = app.owner.clone();
        for (email, password, name, var) in [
            ("not-an-email", "longenough", "X", "email"),
            ("x@parley.test", "short", "X", "password"),
            ("x@parley.test", "longenough", "", "full_name"),
            ("x@parley.test", "longenough", "a@b", "full_name"),
        ] {
            let body = app.post("/users").as_user(&owner)
                .param("email", email).param("password", password).param("full_name", name)
                .send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], var, "{body}");
        }
        let body = app.post("/users").as_user(&owner).param("email", "x@parley.test")
            .param("password", "longenough").send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "full_name");
        let body = app.get("/users").as_user(&owner).send().await.success();
        assert_eq!(body["members"].as_array().unwrap().len(), 1, "nothing was created");
    }
}

backend_test! {
    async fn custom_profile_fields_and_profile_data(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let body = app.post("/realm/profile_fields").as_user(&app.owner)
            .param("name", "Biography").param("field_type", 2).param("hint", "About you")
            .send().await.success();
        let bio = body["id"].as_i64().unwrap();
        let body = app.post("/realm/profile_fields").as_user(&app.owner)
            .param("name", "Phone").param("field_type", 1).send().await.success();
        let phone = body["id"].as_i64().unwrap();
        app.post("/realm/profile_fields").as_user(&ann)
            .param("name", "Nope").param("field_type", 1).send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        let body = app.post("/realm/profile_fields").as_user(&app.owner)
            .param("name", "Bad").param("field_type", 42).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "field_type");

        let body = app.get("/realm/profile_fields").as_user(&ann).send().await.success();
        let fields = body["custom_fields"].as_array().unwrap();
        assert_eq!(fields.len(), 2);
        assert_eq!(fields[0]["name"], "Biography");
        assert_eq!(fields[0]["type"], 2);
        assert_eq!(fields[0]["hint"], "About you");
        assert_eq!(fields[1]["order"].as_i64().unwrap(), fields[0]["order"].as_i64().unwrap() + 1);

        app.patch("/users/me/profile_data").as_user(&ann)
            .json_param("data", &json!([{"id": bio, "value": "I like **bold** text"}, {"id": phone, "value": "555"}]))
            .send().await.success();
        let body = app.get("/users").as_user(&app.owner).param("include_custom_profile_fields", "true")
            .send().await.success();
        let data = &member(&body["members"], ann.user_id.0)["profile_data"];
        assert_eq!(data[bio.to_string()]["value"], "I like **bold** text");
        assert_eq!(data[bio.to_string()]["rendered_value"], "<p>I like <strong>bold</strong> text</p>");
        assert_eq!(data[phone.to_string()]["value"], "555");
        assert_eq!(member(&body["members"], app.owner.user_id.0)["profile_data"], json!({}));

        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["profile_data"][phone.to_string()]["value"], "555");
        let body = app.patch("/users/me/profile_data").as_user(&ann)
            .json_param("data", &json!([{"id": 777, "value": "x"}])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "data");
        // A NUL inside JSON text is refused before it reaches a text column.
        let body = app.patch("/users/me/profile_data").as_user(&ann)
            .json_param("data", &json!([{"id": phone, "value": "a\u{0}b"}])).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "data");
        let me = app.get("/users/me").as_user(&ann).send().await.success();
        assert_eq!(me["profile_data"][phone.to_string()]["value"], "555");
    }
}
