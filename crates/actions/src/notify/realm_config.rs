//! Events and snapshot parts for the organization's linkifiers and code playgrounds: each change
//! sends the whole current list, as the reference server does, so clients simply replace theirs.

use crate::error::ActionResult;
use crate::register::{RegisterRequest, Wanted};
use parley_events::{Body, Capability, Event};
use parley_storage::{linkifiers, playgrounds, DbConn};
use serde_json::{json, Map, Value};

/// A linkifier as the API shows it.
pub fn linkifier_json(l: &linkifiers::Linkifier) -> Value {
    json!({"id": l.id, "pattern": l.pattern, "url_template": l.url_template})
}

/// A code playground as the API shows it.
pub fn playground_json(p: &playgrounds::Playground) -> Value {
    json!({
        "id": p.id,
        "name": p.name,
        "pygments_language": p.pygments_language,
        "url_template": p.url_template,
    })
}

/// Every linkifier, in processing order, as the API shows them.
pub fn linkifier_list(conn: &mut DbConn) -> ActionResult<Vec<Value>> {
    Ok(linkifiers::all(conn)?.iter().map(linkifier_json).collect())
}

/// Every playground as the API shows them.
pub fn playground_list(conn: &mut DbConn) -> ActionResult<Vec<Value>> {
    Ok(playgrounds::all(conn)?
        .iter()
        .map(playground_json)
        .collect())
}

/// `realm_linkifiers` with the current list, for every queue whose client declared
/// `linkifier_url_template`; the others get nothing (they could not read the templates).
pub fn linkifiers_changed(conn: &mut DbConn) -> ActionResult<Event> {
    let body = Body::json(json!({
        "type": "realm_linkifiers",
        "realm_linkifiers": linkifier_list(conn)?,
    }));
    Ok(Event::everyone(Body::by_capability(
        Capability::LinkifierUrlTemplate,
        body,
        None,
    )))
}

/// `realm_playgrounds` with the current list, for everyone.
pub fn playgrounds_changed(conn: &mut DbConn) -> ActionResult<Event> {
    Ok(Event::everyone(Body::json(json!({
        "type": "realm_playgrounds",
        "realm_playgrounds": playground_list(conn)?,
    }))))
}

/// The snapshot's `realm_linkifiers` (empty for clients without `linkifier_url_template`) and
/// `realm_playgrounds`, each when asked for.
pub(crate) fn fill_snapshot(
    conn: &mut DbConn,
    wanted: &Wanted,
    request: &RegisterRequest,
    out: &mut Map<String, Value>,
) -> ActionResult<()> {
    if wanted.wants("realm_linkifiers") {
        let list = if request.client_capabilities.linkifier_url_template {
            linkifier_list(conn)?
        } else {
            Vec::new()
        };
        out.insert("realm_linkifiers".into(), Value::Array(list));
    }
    if wanted.wants("realm_playgrounds") {
        out.insert(
            "realm_playgrounds".into(),
            Value::Array(playground_list(conn)?),
        );
    }
    Ok(())
}
