//! Drafts: the shape a client must give a draft and how it is normalized before it is stored.
//! Checks that need the database (the channel is accessible, the users exist) are the actions'.

use crate::error::RequestError;
use crate::ids::UserId;
use crate::message::{normalize_content, truncate_topic};
use serde_json::{Map, Value};

/// The latest timestamp a draft may carry: the end of year 9999, in Unix seconds.
pub const MAX_TIMESTAMP: i64 = 253_402_300_799;

/// Whom a draft is addressed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DraftType {
    /// Nobody yet (`""`).
    Unaddressed,
    /// A channel and topic (`"stream"`).
    Channel,
    /// One or more users (`"private"`).
    Direct,
}

impl DraftType {
    /// Parses the `type` of a draft.
    pub fn parse(raw: &str) -> Option<DraftType> {
        match raw {
            "" => Some(DraftType::Unaddressed),
            "stream" => Some(DraftType::Channel),
            "private" => Some(DraftType::Direct),
            _ => None,
        }
    }

    /// The `type` as the API spells it.
    pub fn api_name(self) -> &'static str {
        match self {
            DraftType::Unaddressed => "",
            DraftType::Channel => "stream",
            DraftType::Direct => "private",
        }
    }
}

/// A draft as sent, checked and normalized: an unaddressed draft has no recipients and no
/// topic, a direct draft its other participants sorted (or is unaddressed when it has none),
/// a channel draft exactly one channel and a topic within the length limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DraftInput {
    /// Whom it is addressed to.
    pub draft_type: DraftType,
    /// The channel's ID, or the users' IDs.
    pub to: Vec<i64>,
    /// The tentative topic ("" unless a channel draft).
    pub topic: String,
    /// The text, normalized like message content.
    pub content: String,
    /// When last edited, Unix seconds; None = now.
    pub timestamp: Option<i64>,
}

const FIELDS: [&str; 5] = ["type", "to", "topic", "content", "timestamp"];

/// Checks one draft object as a client sent it. `var_name` is the request parameter (`drafts`
/// or `draft`), which errors carry; `label` names the object in messages (`drafts[0]`); `me`
/// is its author, left out of a direct draft's recipients unless alone.
pub fn parse_draft(
    value: &Value,
    var_name: &str,
    label: &str,
    me: UserId,
) -> Result<DraftInput, RequestError> {
    let bad = |msg: String| RequestError::invalid_param(var_name, msg);
    let object: &Map<String, Value> = value
        .as_object()
        .ok_or_else(|| bad(format!("{label} is not an object")))?;
    if object.contains_key("id") {
        return Err(bad(format!(
            "{label}.id must not be sent: the server assigns draft IDs"
        )));
    }
    if let Some(key) = object.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(bad(format!("{label} has an unknown field '{key}'")));
    }
    let field = |name: &str| {
        object
            .get(name)
            .ok_or_else(|| bad(format!("{label}.{name} is missing")))
    };
    let string = |name: &str| {
        field(name)?
            .as_str()
            .ok_or_else(|| bad(format!("{label}.{name} is not a string")))
    };
    let draft_type = DraftType::parse(string("type")?).ok_or_else(|| {
        bad(format!(
            "Invalid {label}.type: must be \"\", \"stream\" or \"private\""
        ))
    })?;
    let to: Vec<i64> = field("to")?
        .as_array()
        .and_then(|items| items.iter().map(Value::as_i64).collect())
        .ok_or_else(|| bad(format!("{label}.to is not a list of integers")))?;
    let topic = string("topic")?;
    let content = normalize_content(string("content")?)
        .map_err(|_| bad(format!("{label}.content must not be empty")))?;
    let timestamp = match object.get("timestamp") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => {
            let seconds = n
                .as_f64()
                .ok_or_else(|| bad(format!("Invalid {label}.timestamp")))?;
            if seconds < 0.0 {
                return Err(bad("Timestamp must not be negative.".to_owned()));
            }
            if seconds > MAX_TIMESTAMP as f64 {
                return Err(bad(format!(
                    "Invalid {label}.timestamp: too far in the future"
                )));
            }
            Some(n.as_i64().unwrap_or(seconds.floor() as i64))
        }
        Some(_) => return Err(bad(format!("{label}.timestamp is not a number"))),
    };
    let (draft_type, to, topic) = match draft_type {
        DraftType::Unaddressed => (DraftType::Unaddressed, Vec::new(), String::new()),
        DraftType::Channel => {
            if to.len() != 1 {
                return Err(bad(
                    "Must specify exactly 1 channel ID for channel messages".to_owned(),
                ));
            }
            (DraftType::Channel, to, truncate_topic(topic))
        }
        DraftType::Direct => {
            let to = direct_recipients(&to, me);
            if to.is_empty() {
                (DraftType::Unaddressed, to, String::new())
            } else {
                (DraftType::Direct, to, String::new())
            }
        }
    };
    Ok(DraftInput {
        draft_type,
        to,
        topic,
        content,
        timestamp,
    })
}

/// A direct draft's recipients as stored: sorted, without repeats, and without the author
/// unless the author is the only one (a note to self).
pub fn direct_recipients(to: &[i64], me: UserId) -> Vec<i64> {
    let mut ids = to.to_vec();
    ids.sort_unstable();
    ids.dedup();
    if ids.len() > 1 {
        ids.retain(|id| *id != me.0);
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ME: UserId = UserId(7);

    fn parse(value: Value) -> Result<DraftInput, RequestError> {
        parse_draft(&value, "drafts", "drafts[0]", ME)
    }

    #[test]
    fn channel_drafts_need_exactly_one_channel() {
        let ok = parse(json!({"type": "stream", "to": [3], "topic": "t", "content": "c"})).unwrap();
        assert_eq!(ok.draft_type, DraftType::Channel);
        assert_eq!(ok.to, vec![3]);
        assert_eq!(ok.timestamp, None);
        for to in [json!([]), json!([1, 2])] {
            let err = parse(json!({"type": "stream", "to": to, "topic": "t", "content": "c"}))
                .unwrap_err();
            assert_eq!(
                err.msg,
                "Must specify exactly 1 channel ID for channel messages"
            );
            assert_eq!(err.data["var_name"], "drafts");
        }
    }

    #[test]
    fn direct_and_unaddressed_drafts_are_normalized() {
        let d = parse(json!({"type": "private", "to": [9, 7, 4, 9], "topic": "x", "content": "c"}))
            .unwrap();
        assert_eq!(
            (d.draft_type, d.to, d.topic),
            (DraftType::Direct, vec![4, 9], String::new())
        );
        let d = parse(json!({"type": "private", "to": [7], "topic": "", "content": "c"})).unwrap();
        assert_eq!(d.to, vec![7]);
        let d = parse(json!({"type": "private", "to": [], "topic": "", "content": "c"})).unwrap();
        assert_eq!(d.draft_type, DraftType::Unaddressed);
        let d = parse(json!({"type": "", "to": [1], "topic": "t", "content": "c"})).unwrap();
        assert_eq!((d.to, d.topic), (vec![], String::new()));
    }

    #[test]
    fn shapes_and_values_are_checked() {
        let base = json!({"type": "", "to": [], "topic": "", "content": "c"});
        let with = |key: &str, value: Value| {
            let mut v = base.clone();
            v[key] = value;
            v
        };
        for (value, needle) in [
            (with("id", json!(1)), "id must not be sent"),
            (with("extra", json!(1)), "unknown field"),
            (with("type", json!("channel")), "Invalid drafts[0].type"),
            (with("to", json!(["a"])), "not a list of integers"),
            (with("topic", json!(1)), "topic is not a string"),
            (with("content", json!("  \n ")), "content must not be empty"),
            (with("timestamp", json!(-1)), "must not be negative"),
            (with("timestamp", json!("x")), "not a number"),
            (with("timestamp", json!(1e300)), "too far"),
            (json!([1]), "not an object"),
            (
                json!({"to": [], "topic": "", "content": "c"}),
                "type is missing",
            ),
        ] {
            let err = parse(value.clone()).unwrap_err();
            assert!(err.msg.contains(needle), "{value}: {}", err.msg);
            assert_eq!(err.code.as_str(), "BAD_REQUEST");
        }
        assert_eq!(
            parse(with("timestamp", json!(12.9))).unwrap().timestamp,
            Some(12)
        );
        assert_eq!(
            parse(with("timestamp", Value::Null)).unwrap().timestamp,
            None
        );
    }

    #[test]
    fn long_topics_are_truncated() {
        let topic = "x".repeat(100);
        let d =
            parse(json!({"type": "stream", "to": [1], "topic": topic, "content": "c"})).unwrap();
        assert_eq!(d.topic.chars().count(), 60);
        assert!(d.topic.ends_with("..."));
    }
}
