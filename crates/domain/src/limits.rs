//! Limits on the work one request may ask for, all in one place. Every list a client sends is
//! bounded, so that no request can hold the database (SQLite's single writer above all), build a
//! query with more terms than the database accepts, or fan out to unbounded rows. A request over
//! a limit is answered `400 BAD_REQUEST` naming the parameter and the limit; nothing is done.
//! `docs/api-coverage.md` ("Limits") lists the same figures.

use crate::RequestError;

/// Any list parameter not named below, and every list nested inside a parameter (a narrow
/// term's operand list, say).
pub const MAX_LIST_ITEMS: usize = 1000;

/// Channels in one subscribe or unsubscribe (`subscriptions`), or in one
/// `subscription_data` of `POST /users/me/subscriptions/properties`.
pub const MAX_SUBSCRIPTION_CHANNELS: usize = 100;

/// Users in one subscribe, unsubscribe or channel creation (`principals`, `subscribers`).
pub const MAX_PRINCIPALS: usize = 1000;

/// Subscriptions one request may add or remove: channels × users. The largest allowed
/// subscribe holds SQLite's writer for the time measured in `docs/api-coverage.md`.
pub const MAX_SUBSCRIPTION_CHANGES: usize = 1_000;

/// Terms of one narrow (`narrow` of `GET /messages`, `POST /messages/flags/narrow`,
/// `GET /messages/matches_narrow` and `POST /register`). Each term is a condition of one query;
/// SQLite refuses expressions deeper than 1000 and PostgreSQL more than 65,535 bound values.
pub const MAX_NARROW_TERMS: usize = 100;

/// Message IDs in one request (`messages` of `POST /messages/flags`, `message_ids` of
/// `GET /messages`, `msg_ids` of `GET /messages/matches_narrow`).
pub const MAX_MESSAGE_IDS: usize = 5000;

/// Drafts created in one `POST /drafts`.
pub const MAX_DRAFTS: usize = 100;

/// Recipients of one direct message or typing notification (`to`).
pub const MAX_RECIPIENTS: usize = 1000;

/// Messages one `POST /streams/{stream_id}/delete_topic` deletes, newest first; with more in
/// the topic it answers `"complete": false` and the client repeats it.
pub const MAX_TOPIC_DELETE_BATCH: usize = 1000;

/// The limit of list parameter `name`.
pub fn list_limit(name: &str) -> usize {
    match name {
        "subscriptions" | "subscription_data" => MAX_SUBSCRIPTION_CHANNELS,
        "principals" | "subscribers" => MAX_PRINCIPALS,
        "narrow" => MAX_NARROW_TERMS,
        "messages" | "message_ids" | "msg_ids" => MAX_MESSAGE_IDS,
        "drafts" => MAX_DRAFTS,
        "to" => MAX_RECIPIENTS,
        _ => MAX_LIST_ITEMS,
    }
}

/// The error for a list parameter longer than its limit.
pub fn too_many(name: &str, limit: usize) -> RequestError {
    RequestError::invalid_param(
        name,
        format!("Too many items in {name}: the limit is {limit}"),
    )
}

/// Checks that list parameter `name` with `len` items is within its limit.
pub fn check_list(name: &str, len: usize) -> Result<(), RequestError> {
    let limit = list_limit(name);
    if len > limit {
        Err(too_many(name, limit))
    } else {
        Ok(())
    }
}

/// Checks that a subscribe or unsubscribe of `channels` channels for `users` users is within
/// [`MAX_SUBSCRIPTION_CHANGES`]; the error names `principals` (or `subscriptions` when the
/// caller subscribes only themselves).
pub fn check_subscription_changes(channels: usize, users: usize) -> Result<(), RequestError> {
    if channels.saturating_mul(users) <= MAX_SUBSCRIPTION_CHANGES {
        return Ok(());
    }
    let name = if users > 1 {
        "principals"
    } else {
        "subscriptions"
    };
    Err(RequestError::invalid_param(
        name,
        format!(
            "Too many subscription changes in {name}: {channels} channels × {users} users; the limit is {MAX_SUBSCRIPTION_CHANGES}"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn lists_are_bounded_by_name_with_a_default() {
        assert!(check_list("narrow", MAX_NARROW_TERMS).is_ok());
        let err = check_list("narrow", MAX_NARROW_TERMS + 1).unwrap_err();
        assert_eq!(err.code, ErrorCode::BadRequest);
        assert_eq!(err.status, 400);
        assert_eq!(err.data["var_name"], "narrow");
        assert!(
            err.msg.contains("narrow") && err.msg.contains("100"),
            "{}",
            err.msg
        );
        assert!(check_list("anything", MAX_LIST_ITEMS).is_ok());
        assert!(check_list("anything", MAX_LIST_ITEMS + 1).is_err());
        assert_eq!(list_limit("messages"), MAX_MESSAGE_IDS);
    }

    #[test]
    fn subscription_changes_are_bounded_as_a_product() {
        assert!(check_subscription_changes(MAX_SUBSCRIPTION_CHANNELS, 10).is_ok());
        assert!(check_subscription_changes(1, MAX_PRINCIPALS).is_ok());
        let err = check_subscription_changes(MAX_SUBSCRIPTION_CHANNELS, 11).unwrap_err();
        assert_eq!(err.data["var_name"], "principals");
        assert!(
            err.msg.contains("principals") && err.msg.contains("1000"),
            "{}",
            err.msg
        );
        assert!(check_subscription_changes(usize::MAX, usize::MAX).is_err());
    }
}
