//! `GET /messages` anchors, read as the reference reads them: every combination of anchor,
//! `num_before`, `num_after`, `include_anchor` and `use_first_unread_anchor` against a model of
//! the reference's rules (`parse_anchor_value`, `limit_query_to_range` and
//! `post_process_limited_query` in the reference server), over a narrow whose message IDs have
//! gaps.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use parley_domain::Role;
use parley_tests::{backend_test, busy_backend_test, Account, TestApp};
use serde_json::{json, Value};

/// The reference's "larger than any message ID".
const NEWEST: i64 = 10_000_000_000_000_000;

/// What the reference answers for one query over the visible IDs `visible` (ascending), with
/// `anchor` already resolved to a number.
#[derive(Debug, PartialEq)]
struct Expected {
    ids: Vec<i64>,
    anchor: i64,
    found_anchor: bool,
    found_oldest: bool,
    found_newest: bool,
}

fn model(
    visible: &[i64],
    anchor: i64,
    num_before: usize,
    num_after: usize,
    include: bool,
) -> Expected {
    let left = anchor == 0;
    let right = anchor >= NEWEST;
    let num_after = if right { 0 } else { num_after };
    let need_before = !left && num_before > 0;
    let need_after = num_after > 0;
    let below: Vec<i64> = visible.iter().copied().filter(|&id| id < anchor).collect();
    let before = match need_before {
        true => below[below.len().saturating_sub(num_before)..].to_vec(),
        false => Vec::new(),
    };
    let after: Vec<i64> = match need_after {
        true => visible
            .iter()
            .copied()
            .filter(|&id| id > anchor)
            .take(num_after)
            .collect(),
        false => Vec::new(),
    };
    let with_anchor =
        !right && visible.contains(&anchor) && (include || (!need_before && !need_after));
    let mut ids = before.clone();
    ids.extend(with_anchor.then_some(anchor));
    ids.extend(&after);
    Expected {
        ids,
        anchor,
        found_anchor: with_anchor,
        found_oldest: left || before.len() < num_before,
        found_newest: right || after.len() < num_after,
    }
}

fn answer(page: &Value) -> Expected {
    Expected {
        ids: page["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_i64().unwrap())
            .collect(),
        anchor: page["anchor"].as_i64().unwrap(),
        found_anchor: page["found_anchor"].as_bool().unwrap(),
        found_oldest: page["found_oldest"].as_bool().unwrap(),
        found_newest: page["found_newest"].as_bool().unwrap(),
    }
}

/// A channel of 12 messages, with messages in another channel between them (gaps in the IDs);
/// the first 5 are read. Returns the IDs in the channel and one ID in a gap.
async fn history(app: &TestApp, ann: &Account) -> (Vec<i64>, i64) {
    app.create_channel(ann, "log", &[ann], &[]).await;
    app.create_channel(ann, "other", &[ann], &[]).await;
    let mut visible = Vec::new();
    let mut gap = 0;
    for i in 0..12 {
        visible.push(app.send_to_channel(ann, "log", "t", &format!("m{i}")).await);
        if i % 3 == 0 {
            gap = app.send_to_channel(ann, "other", "t", "elsewhere").await;
        }
    }
    // Sending marks the sender's own messages read; mark all unread, then the first five read.
    app.post("/messages/flags")
        .as_user(ann)
        .json_param("messages", &json!(visible))
        .param("op", "remove")
        .param("flag", "read")
        .send()
        .await
        .success();
    app.post("/messages/flags")
        .as_user(ann)
        .json_param("messages", &json!(visible[..5]))
        .param("op", "add")
        .param("flag", "read")
        .send()
        .await
        .success();
    (visible, gap)
}

busy_backend_test! {
    async fn every_anchor_combination_follows_the_reference(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let (visible, gap) = history(&app, &ann).await;
        let first_unread = visible[5];
        let anchors: Vec<(String, i64)> = vec![
            ("oldest".into(), 0),
            ("newest".into(), NEWEST),
            ("first_unread".into(), first_unread),
            ("0".into(), 0),
            ("-5".into(), 0),
            (visible[0].to_string(), visible[0]),
            (visible[3].to_string(), visible[3]),
            (gap.to_string(), gap),
            (visible[11].to_string(), visible[11]),
            ((visible[11] + 1000).to_string(), visible[11] + 1000),
            ("99999999999999999999".into(), NEWEST),
        ];
        let mut checked = 0;
        for (raw, resolved) in &anchors {
            for num_before in [0usize, 1, 3, 20] {
                for num_after in [0usize, 1, 3, 20] {
                    for include in [true, false] {
                        for first_unread_flag in [false, true] {
                            let mut request = app.get("/messages").as_user(&ann).param("anchor", raw)
                                .param("num_before", num_before).param("num_after", num_after)
                                .param("include_anchor", include)
                                .json_param("narrow", &json!([["channel", "log"]]));
                            if first_unread_flag {
                                request = request.param("use_first_unread_anchor", "true");
                            }
                            let response = request.send().await;
                            let case = format!("anchor={raw} before={num_before} after={num_after} include={include} use_first_unread={first_unread_flag}");
                            if num_before > 0 && num_after > 0 && !include {
                                response.error(400, "BAD_REQUEST");
                                continue;
                            }
                            // The flag wins over any anchor, as zulip-term relies on.
                            let anchor = if first_unread_flag { first_unread } else { *resolved };
                            let expected = model(&visible, anchor, num_before, num_after, include);
                            assert_eq!(answer(&response.success()), expected, "{case}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 300, "{checked}");
    }
}

backend_test! {
    async fn first_unread_without_unread_messages_is_the_newest(app) {
        let ann = app.create_user("ann@parley.test", "Ann", Role::Member).await;
        let (visible, _) = history(&app, &ann).await;
        app.post("/messages/flags").as_user(&ann).json_param("messages", &json!(visible))
            .param("op", "add").param("flag", "read").send().await.success();
        // zulip-term opens with exactly these parameters.
        let page = app.get("/messages").as_user(&ann).param("anchor", 0).param("use_first_unread_anchor", "true")
            .param("num_before", 30).param("num_after", 10).param("apply_markdown", "true")
            .json_param("narrow", &json!([["channel", "log"]])).send().await.success();
        assert_eq!(answer(&page), model(&visible, NEWEST, 30, 10, true));
        assert_eq!(page["found_newest"], true);
        assert_eq!(page["anchor"], NEWEST);
        let page = app.get("/messages").as_user(&ann).param("use_first_unread_anchor", "true")
            .param("num_before", 2).param("num_after", 0).json_param("narrow", &json!([["channel", "log"]]))
            .send().await.success();
        assert_eq!(answer(&page).ids, visible[10..].to_vec());
        let body = app.get("/messages").as_user(&ann).param("num_before", 2).param("num_after", 0)
            .send().await.error(400, "REQUEST_VARIABLE_MISSING");
        assert_eq!(body["var_name"], "anchor");
        let body = app.get("/messages").as_user(&ann).param("anchor", "sideways").param("num_before", 2)
            .send().await.error(400, "BAD_REQUEST");
        assert_eq!(body["var_name"], "anchor");
    }
}
