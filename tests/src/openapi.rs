//! Checks response and event bodies against the reference's API description
//! (`tests/data/zulip-openapi-fl420.yaml`, the reference's OpenAPI document at feature level 420),
//! so that every success body and every event the end-to-end suite sees has the documented shape:
//! an undocumented key, a missing required key or a wrong type fails the test.
//!
//! The description is OpenAPI 3.0, whose schemas are almost JSON Schema. It is converted once per
//! process, the way the reference's own test suite reads it (`openapi_core` over the same
//! document):
//!
//! - `$ref`s are inlined (the document has no recursive schema);
//! - `nullable: true` becomes "this schema, or null";
//! - `allOf`, `oneOf` and `anyOf` keep their JSON Schema meaning; the description spells
//!   `additionalProperties: false` on every object it is strict about (repeating the keys that
//!   other `allOf` branches define as `{}`), and JSON Schema's default (anything allowed) holds
//!   where it says nothing;
//! - `format` is an annotation only, as `example` and `description` are.
//!
//! Events are not checked through `GET /events`' single `oneOf` of every event, which would
//! report one unreadable error: each event is checked against the documented event schemas of
//! its `type` (and `op`, where the schema fixes one), and passes when one of them accepts it.
//!
//! Validators are compiled on first use and kept for the life of the process. The places where
//! Parley deliberately differs from the description are [`DEVIATIONS`], the same list as in
//! `docs/api-coverage.md`.

use jsonschema::{Draft, Validator};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The description, as copied from the reference into this repository.
const DESCRIPTION_PATH: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/data/zulip-openapi-fl420.yaml");

/// One documented difference: at `target` (`"POST /register"`, a path as the description spells
/// it, or `"event realm_user"`), the key at `pointer` (a JSON pointer; `*` matches every array
/// element or object member) is Parley's and not the description's, so it is left out of the
/// check.
#[derive(Debug, Clone, Copy)]
pub struct Deviation {
    /// The endpoint (`METHOD /path`) or event (`event TYPE`, `event TYPE OP`).
    pub target: &'static str,
    /// The key Parley sends beyond the description.
    pub pointer: &'static str,
    /// Only when its value is null (the description has the key, but not as nullable).
    pub null_only: bool,
    /// Why.
    pub reason: &'static str,
}

/// Every deliberate difference from the description (listed in `docs/api-coverage.md` too).
pub const DEVIATIONS: &[Deviation] = &[
    Deviation {
        target: "POST /register",
        pointer: "/service_feature_level",
        null_only: false,
        reason:
            "the spec requires the service_* version fields; the description names them zulip_*",
    },
    Deviation {
        target: "POST /register",
        pointer: "/service_version",
        null_only: false,
        reason: "the spec requires the service_* version fields",
    },
    Deviation {
        target: "POST /register",
        pointer: "/service_merge_base",
        null_only: false,
        reason: "the spec requires the service_* version fields",
    },
    Deviation {
        target: "GET /server_settings",
        pointer: "/service_feature_level",
        null_only: false,
        reason: "the spec requires the service_* version fields",
    },
    Deviation {
        target: "GET /server_settings",
        pointer: "/service_version",
        null_only: false,
        reason: "the spec requires the service_* version fields",
    },
    Deviation {
        target: "GET /server_settings",
        pointer: "/service_merge_base",
        null_only: false,
        reason: "the spec requires the service_* version fields",
    },
    Deviation {
        target: "GET /users/{user_id_or_email}/presence",
        pointer: "/presence/active_timestamp",
        null_only: false,
        reason: "slim_presence=true answers in the modern format, as POST /users/me/presence and register do",
    },
    Deviation {
        target: "GET /users/{user_id_or_email}/presence",
        pointer: "/presence/idle_timestamp",
        null_only: false,
        reason: "slim_presence=true answers in the modern format",
    },
    Deviation {
        target: "GET /users/me",
        pointer: "/bot_type",
        null_only: false,
        reason: "a bot's own record carries its bot type, as the reference server sends it",
    },
    Deviation {
        target: "GET /users/me",
        pointer: "/bot_owner_id",
        null_only: false,
        reason: "a bot's own record carries its owner, as the reference server sends it",
    },
    Deviation {
        target: "event message",
        pointer: "/local_message_id",
        null_only: false,
        reason: "local echo: the sending queue gets the client's local ID, as the reference server sends it",
    },
    Deviation {
        target: "event message",
        pointer: "/local_id",
        null_only: false,
        reason: "local echo: the spec's name of the same ID",
    },
    Deviation {
        target: "POST /register",
        pointer: "/reminders",
        null_only: false,
        reason: "the description types register's reminders as scheduled messages; they are reminder objects, as GET /reminders, the reminders events and the reference server give them",
    },
];

/// The converted description and the validators compiled from it so far.
struct Description {
    /// The whole document with `$ref`s still in place (resolved on demand).
    document: Value,
    /// `(template, matcher)` for every path, literal paths first.
    paths: Vec<(String, PathMatcher)>,
    /// The event schemas of `GET /events`, each with the `type` and `op` values it accepts.
    events: Vec<EventSchema>,
    /// Compiled response validators by `METHOD template` (None: nothing to check).
    responses: Mutex<HashMap<String, Option<Arc<Validator>>>>,
    /// Compiled event validators by index into `events`.
    event_validators: Mutex<HashMap<usize, Arc<Validator>>>,
}

struct EventSchema {
    types: Vec<String>,
    ops: Option<Vec<String>>,
    schema: Value,
}

/// A path template as a list of segments: literal, numeric ID, email address or anything.
struct PathMatcher(Vec<Segment>);

enum Segment {
    Literal(String),
    Id,
    Email,
    Any,
}

impl PathMatcher {
    fn new(template: &str) -> Self {
        PathMatcher(
            template
                .trim_start_matches('/')
                .split('/')
                .map(
                    |part| match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                        Some(name) if name.ends_with("id") => Segment::Id,
                        Some("email") => Segment::Email,
                        Some(_) => Segment::Any,
                        None => Segment::Literal(part.to_owned()),
                    },
                )
                .collect(),
        )
    }

    fn literal(&self) -> bool {
        self.0.iter().all(|s| matches!(s, Segment::Literal(_)))
    }

    fn matches(&self, path: &str) -> bool {
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        parts.len() == self.0.len()
            && self
                .0
                .iter()
                .zip(parts)
                .all(|(segment, part)| match segment {
                    Segment::Literal(l) => l == part,
                    Segment::Id => !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()),
                    Segment::Email => part.contains('@'),
                    Segment::Any => !part.is_empty(),
                })
    }
}

fn description() -> &'static Description {
    static DESCRIPTION: OnceLock<Description> = OnceLock::new();
    DESCRIPTION.get_or_init(|| {
        let text = std::fs::read_to_string(DESCRIPTION_PATH)
            .unwrap_or_else(|e| panic!("reading {DESCRIPTION_PATH}: {e}"));
        let document: Value = serde_yaml_ng::from_str(&text)
            .unwrap_or_else(|e| panic!("parsing {DESCRIPTION_PATH}: {e}"));
        Description::new(document)
    })
}

impl Description {
    fn new(document: Value) -> Self {
        let mut paths: Vec<(String, PathMatcher)> = document["paths"]
            .as_object()
            .map(|paths| {
                paths
                    .keys()
                    .map(|t| (t.clone(), PathMatcher::new(t)))
                    .collect()
            })
            .unwrap_or_default();
        paths.sort_by_key(|(_, m)| !m.literal());
        let mut description = Description {
            document,
            paths,
            events: Vec::new(),
            responses: Mutex::new(HashMap::new()),
            event_validators: Mutex::new(HashMap::new()),
        };
        description.events = description.event_schemas();
        description
    }

    /// The value a local `$ref` points at.
    fn pointer(&self, reference: &str) -> &Value {
        let pointer = reference.strip_prefix('#').unwrap_or(reference);
        self.document
            .pointer(pointer)
            .unwrap_or_else(|| panic!("dangling $ref {reference} in the API description"))
    }

    /// Follows `$ref`s at the top of a value (response objects, media types).
    fn deref<'a>(&'a self, mut value: &'a Value) -> &'a Value {
        while let Some(reference) = value.get("$ref").and_then(Value::as_str) {
            value = self.pointer(reference);
        }
        value
    }

    /// A schema of the description as plain JSON Schema (see the module comment).
    fn convert(&self, schema: &Value) -> Value {
        let Value::Object(object) = schema else {
            return schema.clone();
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            return self.convert(self.pointer(reference));
        }
        let mut out = Map::new();
        for (key, value) in object {
            let converted = match key.as_str() {
                "nullable" | "example" | "examples" | "description" | "format" | "deprecated"
                | "default" => continue,
                "properties" => Value::Object(
                    value
                        .as_object()
                        .map(|props| {
                            props
                                .iter()
                                .map(|(name, s)| (name.clone(), self.convert(s)))
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                "items" | "additionalProperties" | "not" => self.convert(value),
                "allOf" | "oneOf" | "anyOf" => Value::Array(
                    value
                        .as_array()
                        .map(|list| list.iter().map(|s| self.convert(s)).collect())
                        .unwrap_or_default(),
                ),
                _ => value.clone(),
            };
            out.insert(key.clone(), converted);
        }
        if object.get("nullable").and_then(Value::as_bool) == Some(true) {
            let mut either = Map::new();
            either.insert(
                "anyOf".into(),
                Value::Array(vec![
                    Value::Object(out),
                    serde_json::json!({"type": "null"}),
                ]),
            );
            return Value::Object(either);
        }
        Value::Object(out)
    }

    /// The documented event schemas, from `GET /events`' list of event kinds.
    fn event_schemas(&self) -> Vec<EventSchema> {
        let Some(schema) = self.success_schema("/events", "get") else {
            return Vec::new();
        };
        let events = self.convert(&schema);
        let Some(items) = find_property(&events, "events").and_then(|e| e.get("items")) else {
            return Vec::new();
        };
        let kinds = items
            .get("oneOf")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        kinds
            .into_iter()
            .map(|schema| EventSchema {
                types: find_property(&schema, "type")
                    .and_then(enum_values)
                    .unwrap_or_default(),
                ops: find_property(&schema, "op").and_then(enum_values),
                schema,
            })
            .collect()
    }

    /// The schema of a 200 JSON response, unconverted; None when the description has none.
    fn success_schema(&self, template: &str, method: &str) -> Option<Value> {
        let operation = self.document["paths"][template].get(method)?;
        let response = self.deref(operation["responses"].get("200")?);
        let media = response.get("content")?.get("application/json")?;
        media.get("schema").cloned()
    }

    /// The description's template for a request path (without `/api/v1`).
    fn template(&self, path: &str) -> Option<&str> {
        self.paths
            .iter()
            .find(|(_, matcher)| matcher.matches(path))
            .map(|(template, _)| template.as_str())
    }

    /// The compiled validator of a success response, or None when the description does not
    /// document one.
    fn response_validator(&self, template: &str, method: &str) -> Option<Arc<Validator>> {
        let key = format!("{method} {template}");
        let mut cache = self.responses.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = cache.get(&key) {
            return found.clone();
        }
        let compiled = self.success_schema(template, method).map(|schema| {
            let mut schema = self.convert(&schema);
            if template == "/events" {
                // Events are checked one by one against their own schema (see `check_event`).
                if let Some(events) = find_property_mut(&mut schema, "events") {
                    events["items"] = Value::Bool(true);
                }
            }
            Arc::new(compile(&schema, &key))
        });
        cache.insert(key, compiled.clone());
        compiled
    }

    fn event_validator(&self, index: usize) -> Arc<Validator> {
        let mut cache = self
            .event_validators
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        cache
            .entry(index)
            .or_insert_with(|| {
                Arc::new(compile(
                    &self.events[index].schema,
                    &format!("event #{index}"),
                ))
            })
            .clone()
    }
}

fn compile(schema: &Value, what: &str) -> Validator {
    jsonschema::options()
        .with_draft(Draft::Draft7)
        .should_validate_formats(false)
        .build(schema)
        .unwrap_or_else(|e| panic!("the API description's schema of {what} does not compile: {e}"))
}

/// The schema of property `name`, looking through `allOf` branches.
fn find_property<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    if let Some(found) = schema.get("properties").and_then(|p| p.get(name)) {
        if found.as_object().is_some_and(|o| !o.is_empty()) {
            return Some(found);
        }
    }
    schema
        .get("allOf")
        .and_then(Value::as_array)?
        .iter()
        .find_map(|branch| find_property(branch, name))
}

fn find_property_mut<'a>(schema: &'a mut Value, name: &str) -> Option<&'a mut Value> {
    let here = schema
        .get("properties")
        .and_then(|p| p.get(name))
        .is_some_and(|found| found.as_object().is_some_and(|o| !o.is_empty()));
    if here {
        return schema.get_mut("properties")?.get_mut(name);
    }
    schema
        .get_mut("allOf")
        .and_then(Value::as_array_mut)?
        .iter_mut()
        .find_map(|branch| find_property_mut(branch, name))
}

/// The string values a schema's `enum` allows (also inside `allOf` or a nullable wrapper).
fn enum_values(schema: &Value) -> Option<Vec<String>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(
            values
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
        );
    }
    ["allOf", "anyOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(enum_values)
}

/// Removes the keys that `pointer` names (with `*` wildcards) from `value`.
fn remove_pointer(value: &mut Value, pointer: &str, null_only: bool) {
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    remove_parts(value, &parts, null_only);
}

fn remove_parts(value: &mut Value, parts: &[&str], null_only: bool) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    if rest.is_empty() {
        if let Value::Object(map) = value {
            if !null_only || map.get(*first).is_some_and(Value::is_null) {
                map.remove(*first);
            }
        }
        return;
    }
    match (value, *first) {
        (Value::Array(list), "*") => list
            .iter_mut()
            .for_each(|v| remove_parts(v, rest, null_only)),
        (Value::Object(map), "*") => map
            .values_mut()
            .for_each(|v| remove_parts(v, rest, null_only)),
        (Value::Object(map), key) => {
            if let Some(v) = map.get_mut(key) {
                remove_parts(v, rest, null_only);
            }
        }
        _ => {}
    }
}

/// `body` without the keys the deviations for `target` allow.
fn without_deviations(body: &Value, targets: &[&str]) -> Value {
    let mut body = body.clone();
    for deviation in DEVIATIONS.iter().filter(|d| targets.contains(&d.target)) {
        remove_pointer(&mut body, deviation.pointer, deviation.null_only);
    }
    body
}

fn report(validator: &Validator, instance: &Value) -> Option<String> {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .take(8)
        .map(|e| format!("at {}: {}", e.instance_path(), short(&e.to_string())))
        .collect();
    (!errors.is_empty()).then(|| errors.join("\n  "))
}

/// Error messages quote the offending value whole; a register snapshot is too long to read.
fn short(message: &str) -> String {
    shorten(message, 4000)
}

/// The first `max` bytes of `text` (on a character boundary), marked when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Checks a success body of `method path` (path below `/api/v1`, query string allowed) against
/// the description. Paths the description does not document pass unchecked.
pub fn check_response(method: &str, path: &str, body: &Value) -> Result<(), String> {
    let description = description();
    let path = path.split('?').next().unwrap_or(path);
    let path = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    let method = method.to_ascii_lowercase();
    let Some(template) = description.template(&path) else {
        return Ok(());
    };
    let Some(validator) = description.response_validator(template, &method) else {
        return Ok(());
    };
    let target = format!("{} {template}", method.to_ascii_uppercase());
    let body = without_deviations(body, &[&target]);
    match report(&validator, &body) {
        None => Ok(()),
        Some(errors) => Err(format!(
            "{target}: the response does not match the API description:\n  {errors}"
        )),
    }
}

/// Checks one event (as `GET /events` returns it) against the documented schemas of its type.
pub fn check_event(event: &Value) -> Result<(), String> {
    let description = description();
    let kind = event["type"].as_str().unwrap_or_default();
    let op = event["op"].as_str();
    let candidates: Vec<usize> = description
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.types.iter().any(|t| t == kind))
        .filter(|(_, e)| match (&e.ops, op) {
            (Some(ops), Some(op)) => ops.iter().any(|o| o == op),
            (Some(_), None) => false,
            (None, _) => true,
        })
        .map(|(i, _)| i)
        .collect();
    let name = match op {
        Some(op) => format!("{kind} {op}"),
        None => kind.to_owned(),
    };
    if candidates.is_empty() {
        return Err(format!(
            "event {name}: no such event in the API description: {event}"
        ));
    }
    let typed = format!("event {kind}");
    let full = format!("event {name}");
    let body = without_deviations(event, &[&typed, &full]);
    let mut reports = Vec::new();
    for index in candidates {
        match report(&description.event_validator(index), &body) {
            None => return Ok(()),
            Some(errors) => reports.push(errors),
        }
    }
    Err(format!(
        "event {name} does not match the API description:\n  {}",
        reports.join("\n  -- or --\n  ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn alert_words(body: Value) -> Result<(), String> {
        check_response("GET", "/users/me/alert_words", &body)
    }

    #[test]
    fn a_documented_body_passes() {
        alert_words(json!({"result": "success", "msg": "", "alert_words": ["a", "b"]})).unwrap();
    }

    #[test]
    fn an_extra_key_fails() {
        let err = alert_words(json!({"result": "success", "msg": "", "alert_words": [], "x": 1}))
            .unwrap_err();
        assert!(err.contains("x"), "{err}");
    }

    #[test]
    fn a_missing_required_key_fails() {
        let err = alert_words(json!({"result": "success", "alert_words": []})).unwrap_err();
        assert!(err.contains("\"msg\" is a required property"), "{err}");
    }

    #[test]
    fn a_wrong_type_fails() {
        let err =
            alert_words(json!({"result": "success", "msg": "", "alert_words": [1]})).unwrap_err();
        assert!(err.contains("string"), "{err}");
    }

    #[test]
    fn null_only_where_nullable() {
        let event = |id: Value| {
            json!({"id": 1, "type": "realm_user", "op": "update",
                   "person": {"user_id": 3, "delivery_email": id}})
        };
        check_event(&event(json!("a@b.c"))).unwrap();
        check_event(&event(Value::Null)).unwrap();
        assert!(check_event(&event(json!(5))).is_err());
    }

    #[test]
    fn events_are_checked_by_type_and_op() {
        check_event(&json!({"id": 0, "type": "heartbeat"})).unwrap();
        let err = check_event(&json!({"id": 0, "type": "heartbeat", "extra": true})).unwrap_err();
        assert!(err.contains("extra"), "{err}");
        assert!(check_event(&json!({"id": 0, "type": "no_such_event"})).is_err());
        assert!(check_event(&json!({"id": 0, "type": "subscription", "op": "nope"})).is_err());
    }

    #[test]
    fn deviations_are_removed_before_the_check() {
        let mut body = json!({"a": {"b": [{"c": 1, "d": 2}]}});
        remove_pointer(&mut body, "/a/b/*/c", false);
        assert_eq!(body, json!({"a": {"b": [{"d": 2}]}}));
        let mut body = json!({"v": 1, "w": null});
        remove_pointer(&mut body, "/v", true);
        remove_pointer(&mut body, "/w", true);
        assert_eq!(body, json!({"v": 1}));
    }

    #[test]
    fn paths_match_templates() {
        let d = description();
        assert_eq!(d.template("/users/me"), Some("/users/me"));
        assert_eq!(d.template("/users/12"), Some("/users/{user_id}"));
        assert_eq!(d.template("/users/a@b.c"), Some("/users/{email}"));
        assert_eq!(d.template("/no/such/path"), None);
    }
}
