//! `GET /messages` pages checked against a model: the page a list of matches gives around an
//! anchor, and the IDs the server answers.

use crate::{Account, TestApp};
use parley_domain::UserId;
use parley_storage::messages::NewMessage;
use serde_json::Value;

/// The `i`th message of a history seeded straight into storage, from `sender`, saying
/// `content` (rendered as one paragraph), sent a second after the one before; no channel,
/// topic or conversation yet: the caller sets where it goes.
pub fn seeded_message(sender: UserId, i: usize, content: &str) -> NewMessage {
    NewMessage {
        sender_id: sender,
        channel_id: None,
        topic: String::new(),
        dm_key: None,
        dm_group_id: None,
        recipient_user_id: None,
        content: content.to_owned(),
        rendered_content: format!("<p>{content}</p>"),
        date_sent: 1_700_000_000 + i64::try_from(i).unwrap_or(i64::MAX),
        has_link: false,
        has_image: false,
        has_attachment: false,
        client: "test".into(),
    }
}

/// The page the API must answer: up to `before` matches below the anchor, the anchor if it
/// matches, up to `after` above it, in ID order. `matches` is in ID order.
pub fn expected(matches: &[i64], anchor: i64, before: usize, after: usize) -> Vec<i64> {
    let mut below: Vec<i64> = matches
        .iter()
        .rev()
        .filter(|id| **id < anchor)
        .take(before)
        .copied()
        .collect();
    below.reverse();
    let at = matches.iter().filter(|id| **id == anchor).copied();
    let above = matches
        .iter()
        .filter(|id| **id > anchor)
        .take(after)
        .copied();
    below.into_iter().chain(at).chain(above).collect()
}

/// The IDs of the page `GET /messages` answers for this narrow and anchor.
pub async fn page(
    app: &TestApp,
    who: &Account,
    narrow: &Value,
    anchor: &str,
    before: usize,
    after: usize,
) -> Vec<i64> {
    let body = app
        .get("/messages")
        .as_user(who)
        .param("anchor", anchor)
        .param("num_before", before)
        .param("num_after", after)
        .json_param("narrow", narrow)
        .send()
        .await
        .success();
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["id"].as_i64().expect("id"))
        .collect()
}

/// The pages every page test reads: an anchor (`newest`, `oldest`, or `middle`, `first`, `last`
/// for the IDs given to [`assert_pages`]), how many before and how many after.
pub const SHAPES: [(&str, usize, usize); 12] = [
    ("newest", 100, 0),
    ("newest", 5, 0),
    ("oldest", 0, 100),
    ("oldest", 0, 7),
    ("middle", 50, 50),
    ("middle", 1, 1),
    ("middle", 0, 30),
    ("middle", 30, 0),
    ("first", 10, 10),
    ("last", 10, 10),
    ("newest", 1000, 0),
    ("oldest", 0, 1000),
];

/// Asserts that `GET /messages` answers each of `shapes` for `narrow` with the page the model
/// gives from `matches`; `first`, `middle` and `last` are the IDs those anchors name.
pub async fn assert_pages(
    app: &TestApp,
    who: &Account,
    narrow: &Value,
    matches: &[i64],
    (first, middle, last): (i64, i64, i64),
    shapes: &[(&str, usize, usize)],
) {
    for &(anchor, before, after) in shapes {
        let (text, at) = match anchor {
            "middle" => (middle.to_string(), middle),
            "first" => (first.to_string(), first),
            "last" => (last.to_string(), last),
            "newest" => ("newest".to_owned(), i64::MAX),
            _ => ("oldest".to_owned(), 0),
        };
        let got = page(app, who, narrow, &text, before, after).await;
        assert_eq!(
            got,
            expected(matches, at, before, after),
            "{narrow} {anchor} {before} {after}"
        );
    }
}
