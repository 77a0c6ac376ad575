//! Events for the organization's linkifiers and code playgrounds: each change sends the whole
//! current list, as the reference server does, so clients simply replace theirs.

use super::emit::{body, to_everyone};
use crate::error::ActionResult;
use crate::present;
use parley_events::{Body, Capability, Event};
use parley_storage::DbConn;
use parley_wire as wire;

/// `realm_linkifiers` with the current list, for every queue whose client declared
/// `linkifier_url_template`; the others get nothing (they could not read the templates).
pub fn linkifiers_changed(conn: &mut DbConn) -> ActionResult<Event> {
    let event = wire::Event::RealmLinkifiers {
        realm_linkifiers: present::realm::linkifiers(conn)?,
    };
    Ok(Event::everyone(Body::by_capability(
        Capability::LinkifierUrlTemplate,
        body(event),
        None,
    )))
}

/// `realm_playgrounds` with the current list, for everyone.
pub fn playgrounds_changed(conn: &mut DbConn) -> ActionResult<Event> {
    Ok(to_everyone(wire::Event::RealmPlaygrounds {
        realm_playgrounds: present::realm::playgrounds(conn)?,
    }))
}
