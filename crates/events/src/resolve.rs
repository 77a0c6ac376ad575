//! Resolution of a body against one queue's capabilities, at delivery: which shared leaves
//! (JSON objects or messages) the queue gets, in order. Nothing is copied or serialized here.

use crate::event::{Body, MessagePayload};
use crate::options::ClientCapabilities;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A leaf of a body: what one queued event will hold.
pub(crate) enum Leaf<'a> {
    Json(&'a Arc<Map<String, Value>>),
    Message(&'a Arc<MessagePayload>),
}

/// Calls `visit` for each leaf this client gets, in order.
pub(crate) fn for_each_leaf<'a>(
    body: &'a Body,
    capabilities: &ClientCapabilities,
    visit: &mut impl FnMut(Leaf<'a>),
) {
    match body {
        Body::Json(map) => visit(Leaf::Json(map)),
        Body::Message(payload) => visit(Leaf::Message(payload)),
        Body::Many(bodies) => {
            for b in bodies {
                for_each_leaf(b, capabilities, visit);
            }
        }
        Body::ByCapability {
            capability,
            with,
            without,
        } => {
            if capabilities.has(*capability) {
                for_each_leaf(with, capabilities, visit);
            } else if let Some(without) = without {
                for_each_leaf(without, capabilities, visit);
            }
        }
    }
}

/// The first message anywhere in a body, whichever branch: decides whether all_public_streams
/// queues are part of a message's audience.
pub(crate) fn first_message(body: &Body) -> Option<&MessagePayload> {
    match body {
        Body::Message(payload) => Some(payload),
        Body::Json(_) => None,
        Body::Many(bodies) => bodies.iter().find_map(first_message),
        Body::ByCapability { with, without, .. } => {
            first_message(with).or_else(|| without.as_deref().and_then(first_message))
        }
    }
}
