//! Events about people: `realm_user` (a new account, changed profile values) and
//! `custom_profile_fields` (the field definitions).

use crate::context::Context;
use crate::error::ActionResult;
use parley_domain::user::{User, UserRecord, UserRecordOptions};
use parley_domain::{ProfileFieldId, UserId};
use parley_events::{Body, Event};
use parley_storage::{profile_fields, DbConn};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// `realm_user` `add` for a new account, to every active user. The person is built for each
/// viewer (what they may see of the address differs) and viewers who see the same object share
/// one event. As in the reference, `avatar_url` is always filled in (the event cannot know which
/// clients compute Gravatar URLs themselves) and `profile_data` is empty.
pub fn user_created(ctx: &Context, created: &User, people: &[User]) -> Vec<Event> {
    let options = UserRecordOptions {
        client_gravatar: false,
        include_custom_profile_fields: true,
    };
    let mut groups: BTreeMap<String, (Value, Vec<UserId>)> = BTreeMap::new();
    for viewer in people {
        let record = UserRecord::build(
            created,
            Some(viewer),
            options,
            &ctx.realm.host,
            &ctx.realm.url,
            Some(Map::new()),
        );
        let person = serde_json::to_value(record).unwrap_or(Value::Null);
        let key = person.to_string();
        groups
            .entry(key)
            .or_insert_with(|| (person, Vec::new()))
            .1
            .push(viewer.id);
    }
    groups
        .into_values()
        .map(|(person, viewers)| {
            Event::json(
                viewers,
                json!({"type": "realm_user", "op": "add", "person": person}),
            )
        })
        .collect()
}

/// `custom_profile_fields` with every definition, in display order, to everyone.
pub fn profile_fields_changed(conn: &mut DbConn) -> ActionResult<Event> {
    let fields = profile_fields::all(conn)?;
    let fields = serde_json::to_value(&fields).unwrap_or(Value::Array(Vec::new()));
    Ok(Event::everyone(Body::json(json!({
        "type": "custom_profile_fields",
        "fields": fields,
    }))))
}

/// `realm_user` `update` of one of a user's profile field values, to every active user
/// (`rendered_value` only for Markdown-capable types).
pub fn profile_value_changed(
    user: UserId,
    field: ProfileFieldId,
    value: Option<&str>,
    rendered_value: Option<&str>,
    people: &[User],
) -> Event {
    let mut data = Map::new();
    data.insert("id".into(), field.0.into());
    data.insert("value".into(), value.into());
    if let Some(rendered) = rendered_value {
        data.insert("rendered_value".into(), rendered.into());
    }
    Event::json(
        people.iter().map(|u| u.id).collect(),
        json!({
            "type": "realm_user",
            "op": "update",
            "person": {"user_id": user.0, "custom_profile_field": data},
        }),
    )
}
