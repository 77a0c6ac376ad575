//! `realm` events: organization settings changed. Every user of the organization gets them, in
//! the shapes the reference server sends (`op: update` for most plain settings, `op:
//! update_dict` for the message-editing settings, the description, `topics_policy` and every
//! group setting).

use super::emit::to_everyone;
use parley_events::Event;
use parley_wire as wire;
use parley_wire::event::RealmEvent;
use parley_wire::Object;
use serde_json::Value;

/// `{"type":"realm","op":"update","property":name,"value":value}` for everyone.
pub fn realm_update(property: &str, value: Value) -> Event {
    to_everyone(wire::Event::Realm(RealmEvent::Update {
        property: property.to_owned(),
        value,
    }))
}

/// `{"type":"realm","op":"update_dict","property":"default","data":data}` for everyone.
pub fn realm_update_dict(data: Object) -> Event {
    to_everyone(wire::Event::Realm(RealmEvent::UpdateDict {
        property: "default",
        data,
    }))
}
