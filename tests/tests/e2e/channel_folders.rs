//! Channel folders: administrators create, rename, describe, order and archive them; channels
//! are put in and out of them; the snapshot and the events follow.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, TestApp};
use serde_json::{json, Value};

async fn folders(app: &TestApp, include_archived: bool) -> Vec<Value> {
    app.get("/channel_folders")
        .as_user(&app.owner)
        .param("include_archived", include_archived)
        .send()
        .await
        .success()["channel_folders"]
        .as_array()
        .unwrap()
        .clone()
}

fn names(list: &[Value]) -> Vec<&str> {
    list.iter().map(|f| f["name"].as_str().unwrap()).collect()
}

backend_test! {
    async fn administrators_manage_folders_and_everyone_hears(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let queue = app.register(&ann, &[("event_types", json!(["channel_folder", "stream"]))]).await;
        let queue_id = queue["queue_id"].as_str().unwrap().to_owned();
        let snapshot = app.register(&ann, &[("fetch_event_types", json!(["channel_folders", "realm"]))]).await;
        assert_eq!(snapshot["channel_folders"], json!([]));
        assert_eq!(snapshot["max_channel_folder_name_length"], 60);

        let body = app.post("/channel_folders/create").as_user(&ann).param("name", "Frontend").send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["msg"], "Must be an organization administrator");
        let front = app.post("/channel_folders/create").as_user(&app.owner).param("name", " Frontend ")
            .param("description", "The **web** app").send().await.success()["channel_folder_id"].as_i64().unwrap();
        let back = app.post("/channel_folders/create").as_user(&app.owner).param("name", "Backend")
            .send().await.success()["channel_folder_id"].as_i64().unwrap();
        app.post("/channel_folders/create").as_user(&app.owner).param("name", "frontend").send().await.error(400, "BAD_REQUEST");
        let body = app.post("/channel_folders/create").as_user(&app.owner).param("name", "x".repeat(61)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "name");
        let list = folders(&app, false).await;
        assert_eq!(names(&list), ["Frontend", "Backend"]);
        assert_eq!(list[0]["rendered_description"], "<p>The <strong>web</strong> app</p>");
        assert_eq!(list[0]["creator_id"], app.owner.user_id.0);
        assert_eq!((list[0]["order"].clone(), list[1]["order"].clone()), (json!(0), json!(1)));

        // Order: every folder once.
        app.patch("/channel_folders").as_user(&app.owner).json_param("order", &json!([back])).send().await.error(400, "BAD_REQUEST");
        app.patch("/channel_folders").as_user(&ann).json_param("order", &json!([back, front])).send().await.error(400, "BAD_REQUEST");
        app.patch("/channel_folders").as_user(&app.owner).json_param("order", &json!([back, front])).send().await.success();
        assert_eq!(names(&folders(&app, false).await), ["Backend", "Frontend"]);

        // Channels go in and out of folders; a folder with channels cannot be archived.
        let web = app.create_channel(&app.owner, "web", &[&app.owner, &ann], &[("folder_id", json!(front))]).await;
        let body = app.post("/channels/create").as_user(&app.owner).param("name", "nowhere").json_param("subscribers", &json!([]))
            .json_param("folder_id", &json!(999_999)).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "folder_id");
        let stream = app.get(&format!("/streams/{web}")).as_user(&ann).send().await.success()["stream"].clone();
        assert_eq!(stream["folder_id"], front);
        app.patch(&format!("/channel_folders/{front}")).as_user(&app.owner).param("is_archived", true).send().await.error(400, "BAD_REQUEST");
        app.patch(&format!("/streams/{web}")).as_user(&app.owner).param("folder_id", back).send().await.success();
        app.patch(&format!("/streams/{web}")).as_user(&app.owner).param("folder_id", "null").send().await.success();
        let stream = app.get(&format!("/streams/{web}")).as_user(&ann).send().await.success()["stream"].clone();
        assert_eq!(stream["folder_id"], Value::Null);

        // Rename, describe, archive.
        app.patch(&format!("/channel_folders/{front}")).as_user(&app.owner).param("name", "Web")
            .param("description", "all of it").send().await.success();
        app.patch(&format!("/channel_folders/{front}")).as_user(&app.owner).param("is_archived", true).send().await.success();
        app.patch("/channel_folders/999999").as_user(&app.owner).param("name", "x").send().await.error(400, "BAD_REQUEST");
        assert_eq!(names(&folders(&app, false).await), ["Backend"]);
        assert_eq!(names(&folders(&app, true).await), ["Backend", "Web"]);
        let body = app.patch(&format!("/streams/{web}")).as_user(&app.owner).param("folder_id", front).send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "folder_id");
        let snapshot = app.register(&ann, &[("fetch_event_types", json!(["channel_folders"]))]).await;
        assert_eq!(names(snapshot["channel_folders"].as_array().unwrap()), ["Backend", "Web"]);

        let events = app.events_of(&ann, &queue_id, &["channel_folder", "stream"]).await;
        let summary: Vec<String> = events.iter().map(|e| match e["type"].as_str().unwrap() {
            "stream" => format!("stream:{}", e["property"].as_str().unwrap_or(e["op"].as_str().unwrap())),
            _ => format!("folder:{}", e["op"].as_str().unwrap()),
        }).collect();
        assert_eq!(summary, ["folder:add", "folder:add", "folder:reorder", "stream:create", "stream:folder_id",
            "stream:folder_id", "folder:update", "folder:update"]);
        assert_eq!(events[2]["order"], json!([back, front]));
        assert_eq!(events[6]["data"], json!({"name": "Web", "description": "all of it", "rendered_description": "<p>all of it</p>"}));
        assert_eq!(events[7]["data"], json!({"is_archived": true}));
    }
}
