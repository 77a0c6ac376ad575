//! `realm` events: organization settings changed. Every user of the organization gets them, in
//! the shapes the reference server sends (`op: update` for most plain settings, `op:
//! update_dict` for the message-editing settings, the description, `topics_policy` and every
//! group setting).

use parley_events::{Body, Event};
use serde_json::{json, Map, Value};

/// `{"type":"realm","op":"update","property":name,"value":value}` for everyone.
pub fn realm_update(property: &str, value: Value) -> Event {
    Event::everyone(Body::json(json!({
        "type": "realm",
        "op": "update",
        "property": property,
        "value": value,
    })))
}

/// `{"type":"realm","op":"update_dict","property":"default","data":data}` for everyone.
pub fn realm_update_dict(data: Map<String, Value>) -> Event {
    Event::everyone(Body::json(json!({
        "type": "realm",
        "op": "update_dict",
        "property": "default",
        "data": data,
    })))
}
