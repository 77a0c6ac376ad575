//! Custom profile fields: editing, deleting and reordering definitions, and setting, validating
//! and clearing values, with the `custom_profile_fields` and `realm_user` events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, TestApp};
use serde_json::{json, Value};

async fn field(app: &TestApp, name: &str, field_type: i64, data: Option<Value>) -> i64 {
    let mut request = app
        .post("/realm/profile_fields")
        .as_user(&app.owner)
        .param("name", name)
        .param("field_type", field_type);
    if let Some(data) = data {
        request = request.json_param("field_data", &data);
    }
    request.send().await.success()["id"].as_i64().unwrap()
}

async fn fields(app: &TestApp) -> Vec<Value> {
    app.get("/realm/profile_fields")
        .as_user(&app.owner)
        .send()
        .await
        .success()["custom_fields"]
        .as_array()
        .unwrap()
        .clone()
}

backend_test! {
    async fn edit_reorder_and_delete_definitions(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let a = field(&app, "Phone", 1, None).await;
        let b = field(&app, "Bio", 2, None).await;
        let q = app.register(&ann, &[("event_types", json!(["custom_profile_fields"]))]).await;
        let q = q["queue_id"].as_str().unwrap().to_owned();
        app.patch(&format!("/realm/profile_fields/{a}")).as_user(&app.owner)
            .param("name", "Mobile").param("hint", "Your number").send().await.success();
        let list = fields(&app).await;
        assert_eq!(list[0]["name"], "Mobile");
        assert_eq!(list[0]["hint"], "Your number");
        app.patch("/realm/profile_fields").as_user(&app.owner).json_param("order", &json!([b, a]))
            .send().await.success();
        let list = fields(&app).await;
        assert_eq!(list.iter().map(|f| f["id"].as_i64().unwrap()).collect::<Vec<_>>(), vec![b, a]);
        let events = app.events_of(&ann, &q, &["custom_profile_fields"]).await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[1]["fields"][0]["id"], b);
        // Errors.
        let body = app.patch("/realm/profile_fields").as_user(&app.owner).json_param("order", &json!([a]))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Invalid order mapping.");
        let body = app.patch(&format!("/realm/profile_fields/{a}")).as_user(&app.owner)
            .param("name", "Bio").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "A field with that label already exists.");
        let body = app.patch(&format!("/realm/profile_fields/{a}")).as_user(&app.owner)
            .param("name", " ").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "name");
        let body = app.patch("/realm/profile_fields/9999").as_user(&app.owner)
            .param("name", "X").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Field id 9999 not found.");
        app.patch(&format!("/realm/profile_fields/{a}")).as_user(&ann)
            .param("name", "X").send().await.error(400, "UNAUTHORIZED_PRINCIPAL");
        // Deleting removes the field and its values.
        app.patch("/users/me/profile_data").as_user(&ann)
            .json_param("data", &json!([{"id": a, "value": "555"}])).send().await.success();
        app.delete(&format!("/realm/profile_fields/{a}")).as_user(&ann).send().await
            .error(400, "UNAUTHORIZED_PRINCIPAL");
        app.delete(&format!("/realm/profile_fields/{a}")).as_user(&app.owner).send().await.success();
        assert_eq!(fields(&app).await.len(), 1);
        let me = app.get(&format!("/users/{}", ann.user_id.0)).as_user(&ann)
            .param("include_custom_profile_fields", "true").send().await.success();
        assert_eq!(me["user"]["profile_data"], json!({}));
        app.delete(&format!("/realm/profile_fields/{a}")).as_user(&app.owner).send().await
            .error(400, "BAD_REQUEST");
    }
}

backend_test! {
    async fn summary_display_is_limited_to_two(app) {
        for name in ["A", "B"] {
            app.post("/realm/profile_fields").as_user(&app.owner).param("name", name)
                .param("field_type", 1).param("display_in_profile_summary", "true").send().await.success();
        }
        let c = field(&app, "C", 1, None).await;
        let body = app.patch(&format!("/realm/profile_fields/{c}")).as_user(&app.owner)
            .param("display_in_profile_summary", "true").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "display_in_profile_summary");
    }
}

backend_test! {
    async fn values_are_validated_per_type(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let short = field(&app, "Short", 1, None).await;
        let long = field(&app, "Long", 2, None).await;
        let select = field(&app, "Pick", 3, Some(json!({"0": {"text": "Vim", "order": "1"}, "1": {"text": "Emacs", "order": "2"}}))).await;
        let date = field(&app, "Born", 4, None).await;
        let link = field(&app, "Site", 5, None).await;
        let users = field(&app, "Mentor", 6, None).await;
        let external = field(&app, "GitHub", 7, Some(json!({"subtype": "github"}))).await;
        let pronouns = field(&app, "Pronouns", 8, None).await;
        let set = |id: i64, value: Value| {
            app.patch("/users/me/profile_data").as_user(&ann).json_param("data", &json!([{"id": id, "value": value}]))
        };
        for (id, value) in [
            (short, json!("x".repeat(51))),
            (long, json!("x".repeat(501))),
            (select, json!("7")),
            (date, json!("2001-02-30")),
            (link, json!("not a url")),
            (users, json!([9999])),
            (pronouns, json!("x".repeat(51))),
        ] {
            let body = set(id, value.clone()).send().await.error(400, "BAD_REQUEST");
            assert_eq!(body["var_name"], "data", "{id} {value}: {body}");
        }
        let q = app.register(&app.owner, &[("event_types", json!(["realm_user"]))]).await;
        let q = q["queue_id"].as_str().unwrap().to_owned();
        app.patch("/users/me/profile_data").as_user(&ann).json_param("data", &json!([
            {"id": short, "value": "**hi**"},
            {"id": long, "value": "A *long* text"},
            {"id": select, "value": "1"},
            {"id": date, "value": "2000-02-29"},
            {"id": link, "value": "https://parley.test/x"},
            {"id": users, "value": [app.owner.user_id.0]},
            {"id": external, "value": "octocat"},
            {"id": pronouns, "value": "they/them"},
        ])).send().await.success();
        let me = app.get(&format!("/users/{}", ann.user_id.0)).as_user(&ann)
            .param("include_custom_profile_fields", "true").send().await.success();
        let data = &me["user"]["profile_data"];
        assert_eq!(data[short.to_string()], json!({"value": "**hi**", "rendered_value": "<p><strong>hi</strong></p>"}));
        assert!(data[long.to_string()]["rendered_value"].as_str().unwrap().contains("<em>long</em>"));
        assert_eq!(data[select.to_string()], json!({"value": "1"}));
        assert_eq!(data[users.to_string()], json!({"value": format!("[{}]", app.owner.user_id.0)}));
        assert_eq!(data[pronouns.to_string()], json!({"value": "they/them"}));
        let events = app.events_of(&app.owner, &q, &["realm_user"]).await;
        assert_eq!(events.len(), 8);
        assert_eq!(events[0]["person"]["custom_profile_field"]["rendered_value"], "<p><strong>hi</strong></p>");
        assert!(events[2]["person"]["custom_profile_field"].get("rendered_value").is_none());
        // DELETE /users/me/profile_data clears values, with value null events.
        let q = app.register(&app.owner, &[("event_types", json!(["realm_user"]))]).await;
        let q = q["queue_id"].as_str().unwrap().to_owned();
        app.delete("/users/me/profile_data").as_user(&ann).json_param("data", &json!([short, date]))
            .send().await.success();
        let events = app.events_of(&app.owner, &q, &["realm_user"]).await;
        assert_eq!(events.len(), 2);
        assert_eq!(events[0]["person"]["custom_profile_field"], json!({"id": short, "value": null}));
        let me = app.get(&format!("/users/{}", ann.user_id.0)).as_user(&ann)
            .param("include_custom_profile_fields", "true").send().await.success();
        assert!(me["user"]["profile_data"].get(short.to_string()).is_none());
        let body = app.delete("/users/me/profile_data").as_user(&ann).json_param("data", &json!([9999]))
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Field id 9999 not found.");
    }
}

backend_test! {
    async fn select_and_external_field_data_are_checked(app) {
        let body = app.post("/realm/profile_fields").as_user(&app.owner).param("name", "Pick")
            .param("field_type", 3).json_param("field_data", &json!({})).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "field_data");
        let body = app.post("/realm/profile_fields").as_user(&app.owner).param("name", "Acct")
            .param("field_type", 7).json_param("field_data", &json!({})).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "field_data");
    }
}
