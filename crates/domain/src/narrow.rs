//! Narrows: the filters of `GET /messages` and friends, parsed from either the legacy pair form
//! `["operator", "operand"]` or the object form `{"operator", "operand", "negated"}`.

use crate::error::{ErrorCode, RequestError};
use serde_json::Value;

/// A user named by ID or email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserOperand {
    /// By ID.
    Id(i64),
    /// By email.
    Email(String),
}

/// A channel named by ID or name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelOperand {
    /// By ID.
    Id(i64),
    /// By name.
    Name(String),
}

/// The `is:` operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsOperand {
    /// Direct messages.
    Dm,
    /// Starred by the user.
    Starred,
    /// Unread by the user.
    Unread,
    /// Mentioning the user (by name, wildcard or group).
    Mentioned,
    /// Containing one of the user's alert words.
    Alerted,
    /// In topics the user follows.
    Followed,
    /// In muted channels or topics.
    Muted,
    /// In resolved topics.
    Resolved,
}

/// The `has:` operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasOperand {
    /// A link.
    Link,
    /// An uploaded file.
    Attachment,
    /// An image.
    Image,
    /// A reaction.
    Reaction,
}

/// One narrow operator with its operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    /// `channel` / `stream`.
    Channel(ChannelOperand),
    /// `channels:public` (true) / `channels:web-public` (false).
    Channels {
        /// Public rather than web-public.
        public: bool,
    },
    /// `topic` (case-insensitive).
    Topic(String),
    /// `sender`.
    Sender(UserOperand),
    /// `dm` / `pm-with`: exactly this conversation.
    Dm(Vec<UserOperand>),
    /// `dm-including`.
    DmIncluding(UserOperand),
    /// `is:...`.
    Is(IsOperand),
    /// `in:home` (true) / `in:all` (false).
    In {
        /// Home view: muted channels and topics left out.
        home: bool,
    },
    /// `has:...`.
    Has(HasOperand),
    /// `id`.
    Id(i64),
    /// `near`: a client hint, no filtering.
    Near(i64),
    /// `with`: the conversation of a message.
    With(i64),
    /// `search`: full text.
    Search(String),
}

/// A narrow term: an operator, possibly negated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NarrowTerm {
    /// The condition.
    pub operator: Operator,
    /// Whether the condition is inverted.
    pub negated: bool,
}

/// `BAD_NARROW` with the reference server's message and `desc`.
pub fn bad_narrow(desc: impl Into<String>) -> RequestError {
    let desc = desc.into();
    RequestError::new(
        ErrorCode::BadNarrow,
        format!("Invalid narrow operator: {desc}"),
    )
    .with("desc", desc)
}

fn text(operand: &Value) -> Option<String> {
    match operand {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn user(operand: &Value) -> Option<UserOperand> {
    match operand {
        Value::Number(n) => n.as_i64().map(UserOperand::Id),
        Value::String(s) => Some(match s.trim().parse::<i64>() {
            Ok(id) => UserOperand::Id(id),
            Err(_) => UserOperand::Email(s.trim().to_owned()),
        }),
        _ => None,
    }
}

fn users(operand: &Value) -> Option<Vec<UserOperand>> {
    match operand {
        Value::Array(items) => items.iter().map(user).collect(),
        Value::Number(_) => user(operand).map(|u| vec![u]),
        Value::String(s) => Some(
            s.split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| match p.parse::<i64>() {
                    Ok(id) => UserOperand::Id(id),
                    Err(_) => UserOperand::Email(p.to_owned()),
                })
                .collect(),
        ),
        _ => None,
    }
}

fn message_id(operand: &Value) -> Option<i64> {
    match operand {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|id| (0..=2_147_483_647).contains(id))
}

fn parse_term(operator: &str, operand: &Value, negated: bool) -> Result<NarrowTerm, RequestError> {
    let invalid = || RequestError::invalid_param("narrow", "Invalid narrow");
    let op = match operator {
        "channel" | "stream" => Operator::Channel(match operand {
            Value::Number(n) => ChannelOperand::Id(n.as_i64().ok_or_else(invalid)?),
            Value::String(s) => ChannelOperand::Name(s.clone()),
            _ => return Err(invalid()),
        }),
        "channels" | "streams" => match text(operand).as_deref() {
            Some("public") => Operator::Channels { public: true },
            Some("web-public") => Operator::Channels { public: false },
            other => {
                return Err(bad_narrow(format!(
                    "unknown channels operand {}",
                    other.unwrap_or("")
                )))
            }
        },
        "topic" | "subject" => Operator::Topic(text(operand).ok_or_else(invalid)?),
        "sender" => Operator::Sender(user(operand).ok_or_else(invalid)?),
        "dm" | "pm-with" | "pm_with" => Operator::Dm(users(operand).ok_or_else(invalid)?),
        "dm-including" | "group-pm-with" | "group_pm_with" => {
            Operator::DmIncluding(user(operand).ok_or_else(invalid)?)
        }
        "is" => Operator::Is(match text(operand).as_deref() {
            Some("dm") | Some("private") => IsOperand::Dm,
            Some("starred") => IsOperand::Starred,
            Some("unread") => IsOperand::Unread,
            Some("mentioned") => IsOperand::Mentioned,
            Some("alerted") => IsOperand::Alerted,
            Some("followed") => IsOperand::Followed,
            Some("muted") => IsOperand::Muted,
            Some("resolved") => IsOperand::Resolved,
            other => {
                return Err(bad_narrow(format!(
                    "unknown 'is' operand {}",
                    other.unwrap_or("")
                )))
            }
        }),
        "in" => match text(operand).as_deref() {
            Some("home") => Operator::In { home: true },
            Some("all") => Operator::In { home: false },
            other => {
                return Err(bad_narrow(format!(
                    "unknown 'in' operand {}",
                    other.unwrap_or("")
                )))
            }
        },
        "has" => Operator::Has(match text(operand).as_deref() {
            Some("link") => HasOperand::Link,
            Some("attachment") => HasOperand::Attachment,
            Some("image") => HasOperand::Image,
            Some("reaction") => HasOperand::Reaction,
            other => {
                return Err(bad_narrow(format!(
                    "unknown 'has' operand {}",
                    other.unwrap_or("")
                )))
            }
        }),
        "id" => Operator::Id(message_id(operand).ok_or_else(|| bad_narrow("Invalid message ID"))?),
        "near" => {
            Operator::Near(message_id(operand).ok_or_else(|| bad_narrow("Invalid message ID"))?)
        }
        "with" => Operator::With(
            message_id(operand).ok_or_else(|| bad_narrow("Invalid 'with' operator"))?,
        ),
        "search" => {
            let query = text(operand).ok_or_else(invalid)?;
            if query.trim().is_empty() {
                return Err(invalid());
            }
            Operator::Search(query)
        }
        other => return Err(bad_narrow(format!("unknown operator {other}"))),
    };
    Ok(NarrowTerm {
        operator: op,
        negated,
    })
}

/// Parses a narrow; `var_name` is the parameter it came from.
pub fn parse_narrow(value: &Value, var_name: &str) -> Result<Vec<NarrowTerm>, RequestError> {
    let invalid = || RequestError::invalid_param(var_name, format!("Invalid {var_name}"));
    let Value::Array(items) = value else {
        return Err(invalid());
    };
    // Each term is a condition of one query: bounded, so no narrow builds a query deeper or
    // with more values than the database accepts.
    crate::limits::check_list(var_name, items.len())?;
    let mut terms = Vec::with_capacity(items.len());
    for item in items {
        let term = match item {
            Value::Array(pair) if pair.len() == 2 => {
                let operator = pair[0].as_str().ok_or_else(invalid)?;
                parse_term(operator, &pair[1], false)?
            }
            Value::Object(map) => {
                let operator = map
                    .get("operator")
                    .and_then(Value::as_str)
                    .ok_or_else(invalid)?;
                let operand = map
                    .get("operand")
                    .filter(|v| !v.is_null())
                    .ok_or_else(invalid)?;
                let negated = map.get("negated").and_then(Value::as_bool).unwrap_or(false);
                parse_term(operator, operand, negated)?
            }
            _ => return Err(invalid()),
        };
        terms.push(term);
    }
    let users: usize = terms
        .iter()
        .map(|t| match &t.operator {
            Operator::Dm(list) => list.len(),
            _ => 0,
        })
        .sum();
    if users > crate::limits::MAX_LIST_ITEMS {
        return Err(crate::limits::too_many(
            var_name,
            crate::limits::MAX_LIST_ITEMS,
        ));
    }
    check_combination(&terms)?;
    Ok(terms)
}

fn check_combination(terms: &[NarrowTerm]) -> Result<(), RequestError> {
    let channel_like = terms.iter().any(|t| {
        !t.negated
            && matches!(
                t.operator,
                Operator::Channel(_) | Operator::Channels { .. } | Operator::Topic(_)
            )
    });
    let dm_like = terms.iter().any(|t| {
        !t.negated
            && matches!(
                t.operator,
                Operator::Dm(_) | Operator::DmIncluding(_) | Operator::Is(IsOperand::Dm)
            )
    });
    if channel_like && dm_like {
        return Err(bad_narrow(
            "No message can be both a channel message and direct message",
        ));
    }
    if terms
        .iter()
        .filter(|t| matches!(t.operator, Operator::With(_)))
        .count()
        > 1
    {
        return Err(RequestError::new(
            ErrorCode::BadNarrow,
            "Invalid narrow operator combination: Duplicate 'with' operators.",
        )
        .with("desc", "Duplicate 'with' operators."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_both_forms() {
        let terms = parse_narrow(
            &json!([["stream", "Verona"], {"operator": "topic", "operand": "lunch", "negated": true},
                    ["is", "starred"], {"operator": "sender", "operand": 5}]),
            "narrow",
        )
        .unwrap();
        assert_eq!(
            terms[0].operator,
            Operator::Channel(ChannelOperand::Name("Verona".into()))
        );
        assert!(terms[1].negated);
        assert_eq!(terms[2].operator, Operator::Is(IsOperand::Starred));
        assert_eq!(terms[3].operator, Operator::Sender(UserOperand::Id(5)));
        let dm = parse_narrow(&json!([["dm", "a@x.y, b@x.y"]]), "narrow").unwrap();
        assert_eq!(
            dm[0].operator,
            Operator::Dm(vec![
                UserOperand::Email("a@x.y".into()),
                UserOperand::Email("b@x.y".into())
            ])
        );
        let dm = parse_narrow(&json!([{"operator": "dm", "operand": [3, 4]}]), "narrow").unwrap();
        assert_eq!(
            dm[0].operator,
            Operator::Dm(vec![UserOperand::Id(3), UserOperand::Id(4)])
        );
    }

    #[test]
    fn bad_narrows_say_why() {
        let err = parse_narrow(&json!([["bogus", "x"]]), "narrow").unwrap_err();
        assert_eq!(err.code, ErrorCode::BadNarrow);
        assert_eq!(err.msg, "Invalid narrow operator: unknown operator bogus");
        assert_eq!(err.data["desc"], "unknown operator bogus");
        let err = parse_narrow(&json!([["is", "sleepy"]]), "narrow").unwrap_err();
        assert_eq!(err.data["desc"], "unknown 'is' operand sleepy");
        let err = parse_narrow(&json!([["stream", "x"], ["is", "dm"]]), "narrow").unwrap_err();
        assert_eq!(err.code, ErrorCode::BadNarrow);
        assert!(parse_narrow(&json!({"a": 1}), "narrow").is_err());
        assert!(parse_narrow(&json!([["search", "  "]]), "narrow").is_err());
        assert!(parse_narrow(&json!([{"operator": "topic"}]), "narrow").is_err());
    }
}
