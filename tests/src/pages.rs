//! `GET /messages` pages checked against a model: the page a list of matches gives around an
//! anchor, and the IDs the server answers.

use crate::{Account, TestApp};
use serde_json::Value;

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
