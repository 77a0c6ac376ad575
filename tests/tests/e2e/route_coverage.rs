//! Every operation of the reference's API description (`tests/data/zulip-openapi-fl420.yaml`)
//! is routed: asked with placeholder IDs, none answers the "no such route" 404 or a 405, except
//! the few the description lists that are not endpoints of a production server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use actix_web::http::Method;
use parley_tests::backend_test;
use serde_json::Value;

/// Operations Parley does not serve, and why (the same list as `docs/api-coverage.md`).
const NOT_SERVED: &[(&str, &str, &str)] = &[
    (
        "POST",
        "/dev_fetch_api_key",
        "development servers only, in the reference too",
    ),
    ("GET", "/export/realm", "realm export is out of scope"),
    ("POST", "/export/realm", "realm export is out of scope"),
    (
        "GET",
        "/export/realm/consents",
        "realm export is out of scope",
    ),
    (
        "POST",
        "/real-time",
        "documentation of the event system, not an endpoint",
    ),
    (
        "POST",
        "/rest-error-handling",
        "documentation of common errors, not an endpoint",
    ),
    (
        "POST",
        "/zulip-outgoing-webhook",
        "the payload Parley POSTs to outgoing webhook bots",
    ),
];

/// `(method, path)` of every operation in the description.
fn operations() -> Vec<(String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/zulip-openapi-fl420.yaml");
    let description: Value =
        serde_yaml_ng::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut found = Vec::new();
    for (path, item) in description["paths"].as_object().unwrap() {
        for method in ["get", "post", "patch", "put", "delete"] {
            if item.get(method).is_some() {
                found.push((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

/// The placeholder-filled path: `{message_id}` and every other parameter become 1.
fn filled(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push('1');
            }
            '}' => inside = false,
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

backend_test! {
    async fn every_described_operation_is_routed(app) {
        let operations = operations();
        assert!(operations.len() > 130, "{} operations", operations.len());
        let mut missing = Vec::new();
        for (method, path) in &operations {
            let response = app
                .request(Method::from_bytes(method.as_bytes()).unwrap(), &filled(path))
                .as_user(&app.owner)
                .send()
                .await;
            let unrouted = response.status == 405
                || (response.status == 404 && response.json["msg"] == "Not Found");
            let excused = NOT_SERVED.iter().any(|(m, p, _)| m == method && p == path);
            assert!(!excused || unrouted, "{method} {path} is served now: drop it from NOT_SERVED");
            if unrouted && !excused {
                missing.push(format!("{method} {path} -> {}", response.status));
            }
        }
        assert!(missing.is_empty(), "not routed: {missing:#?}");
    }
}
