//! Reading messages: `GET /messages` with anchors and narrows, single messages, and the message
//! records clients receive. A reader sees the messages they received, and the history of the
//! channels whose history they may read, and nothing else.

use crate::access::{accessible_message, history_readable, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::policy::{self, Policy};
use parley_domain::message::{flags, EMPTY_TOPIC_DISPLAY_NAME};
use parley_domain::narrow::{
    bad_narrow, ChannelOperand, HasOperand, IsOperand, NarrowTerm, Operator, UserOperand,
};
use parley_domain::user::User;
use parley_domain::user_topic::VisibilityPolicy;
use parley_domain::{ChannelId, MessageId, RequestError, UserId};
use parley_markdown::highlight::SearchTerms;
use parley_storage::messages::{self, Audience, Condition, Direction, ReadMessage};
use parley_storage::{channels, user_topics, users, DbConn};
use parley_wire::{FoundMessage, Message, MessagesPage};
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// The anchor's sentinel for "newest", as the reference uses it.
pub const NEWEST_ANCHOR: i64 = 10_000_000_000_000_000;

/// Most messages one request may ask for.
pub const MAX_MESSAGES_PER_FETCH: i64 = 5000;

/// Where a page of messages is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// The newest message.
    Newest,
    /// The oldest message.
    Oldest,
    /// The oldest unread message (else the newest).
    FirstUnread,
    /// A message ID.
    Id(i64),
}

impl Anchor {
    /// Parses the `anchor` parameter.
    pub fn parse(raw: &str) -> Result<Anchor, RequestError> {
        match raw.trim().trim_matches('"') {
            "newest" => Ok(Anchor::Newest),
            "oldest" => Ok(Anchor::Oldest),
            "first_unread" => Ok(Anchor::FirstUnread),
            other => integer_anchor(other)
                .map(Anchor::Id)
                .ok_or_else(|| RequestError::invalid_param("anchor", "Invalid anchor")),
        }
    }
}

/// An integer anchor clamped to `0..=NEWEST_ANCHOR`, however many digits it has (the reference
/// parses arbitrarily large integers and clamps them).
fn integer_anchor(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if negative {
        return Some(0);
    }
    Some(
        digits
            .parse::<i64>()
            .map_or(NEWEST_ANCHOR, |n| n.min(NEWEST_ANCHOR)),
    )
}

pub use crate::present::messages::Presentation;

/// A `GET /messages` request.
#[derive(Debug, Clone)]
pub struct MessageQuery {
    /// Anchor.
    pub anchor: Anchor,
    /// Messages before the anchor.
    pub num_before: i64,
    /// Messages after the anchor.
    pub num_after: i64,
    /// Whether the anchor itself is included.
    pub include_anchor: bool,
    /// Narrow.
    pub narrow: Vec<NarrowTerm>,
    /// Output options.
    pub presentation: Presentation,
}

/// A resolved narrow: who may see what, and the filters.
struct Resolved {
    audience: Audience,
    conditions: Vec<Condition>,
}

fn find_user(
    ctx: &Context,
    conn: &mut DbConn,
    operand: &UserOperand,
) -> ActionResult<Option<User>> {
    Ok(match operand {
        UserOperand::Id(id) => users::by_id(conn, UserId(*id))?,
        UserOperand::Email(email) => {
            crate::auth::user_by_any_email(conn, email, &ctx.realm.host)?.map(|(u, _)| u)
        }
    })
}

fn operand_text(operand: &UserOperand) -> String {
    match operand {
        UserOperand::Id(id) => id.to_string(),
        UserOperand::Email(email) => email.clone(),
    }
}

fn resolve_narrow(
    ctx: &Context,
    conn: &mut DbConn,
    policy: &Policy,
    reader: &User,
    narrow: &[NarrowTerm],
) -> ActionResult<Resolved> {
    let mut conditions = Vec::new();
    let mut history = Vec::new();
    let has_flag_term = narrow
        .iter()
        .any(|t| matches!(t.operator, Operator::Is(op) if op != IsOperand::Resolved));
    let mut terms: Vec<NarrowTerm> = narrow.to_vec();
    // `with` replaces the conversation terms by the conversation of its message.
    if let Some(with) = terms.iter().find_map(|t| match t.operator {
        Operator::With(id) => Some(id),
        _ => None,
    }) {
        if let Some(found) = accessible_message(conn, policy, reader, MessageId(with))? {
            terms.retain(|t| {
                !matches!(
                    t.operator,
                    Operator::Channel(_) | Operator::Topic(_) | Operator::Dm(_) | Operator::With(_)
                )
            });
            match found.row.channel_id {
                Some(channel) => {
                    terms.push(NarrowTerm {
                        operator: Operator::Channel(ChannelOperand::Id(channel)),
                        negated: false,
                    });
                    terms.push(NarrowTerm {
                        operator: Operator::Topic(found.row.topic.clone()),
                        negated: false,
                    });
                }
                None => {
                    let ids = parley_domain::message::dm_participants(
                        found.row.dm_key.as_deref().unwrap_or(""),
                    );
                    terms.push(NarrowTerm {
                        operator: Operator::Dm(
                            ids.into_iter().map(|u| UserOperand::Id(u.0)).collect(),
                        ),
                        negated: false,
                    });
                }
            }
        } else {
            terms.retain(|t| !matches!(t.operator, Operator::With(_)));
            let defines = terms.iter().any(|t| matches!(t.operator, Operator::Dm(_)))
                || (terms
                    .iter()
                    .any(|t| matches!(t.operator, Operator::Channel(_)))
                    && terms
                        .iter()
                        .any(|t| matches!(t.operator, Operator::Topic(_))));
            if !defines {
                return Err(bad_narrow("Invalid 'with' operator").into());
            }
        }
    }
    for term in &terms {
        let condition = match &term.operator {
            Operator::Channel(operand) => {
                // The channel and the reader's subscription in one statement.
                let found = match operand {
                    ChannelOperand::Id(id) => {
                        channels::by_id_with_subscription(conn, ChannelId(*id), reader.id)?
                    }
                    ChannelOperand::Name(name) => {
                        channels::by_name_with_subscription(conn, name, reader.id)?
                    }
                };
                let shown = match operand {
                    ChannelOperand::Id(id) => id.to_string(),
                    ChannelOperand::Name(name) => name.clone(),
                };
                let Some((channel, subscription)) = found else {
                    return Err(bad_narrow(format!("unknown channel {shown}")).into());
                };
                let subscribed = subscription.is_some_and(|s| s.active);
                if !parley_domain::access::can_access_channel_metadata(
                    reader,
                    &channel,
                    subscribed,
                    &policy.groups,
                ) {
                    return Err(bad_narrow(format!("unknown channel {shown}")).into());
                }
                if !term.negated
                    && !has_flag_term
                    && history_readable(policy, reader, &channel, subscribed)
                {
                    history.push(channel.id);
                }
                Condition::Channel(channel.id)
            }
            Operator::Channels { public } => {
                let ids: Vec<ChannelId> = channels::all(conn)?
                    .into_iter()
                    .filter(|c| {
                        if *public {
                            c.is_public() && !reader.role.is_guest()
                        } else {
                            c.is_web_public
                        }
                    })
                    .map(|c| c.id)
                    .collect();
                if !term.negated && !has_flag_term {
                    history.extend(ids.iter().copied());
                }
                Condition::ChannelIn(ids)
            }
            Operator::Topic(topic) => {
                let topic = if topic.trim() == EMPTY_TOPIC_DISPLAY_NAME {
                    ""
                } else {
                    topic.trim()
                };
                Condition::Topic(topic.to_owned())
            }
            Operator::Sender(operand) => match find_user(ctx, conn, operand)? {
                Some(user) => Condition::Sender(user.id),
                None => {
                    return Err(
                        bad_narrow(format!("unknown user {}", operand_text(operand))).into(),
                    )
                }
            },
            Operator::Dm(operands) => {
                if operands.is_empty() {
                    Condition::Nothing
                } else {
                    let mut ids = vec![reader.id];
                    for operand in operands {
                        match find_user(ctx, conn, operand)? {
                            Some(user) => ids.push(user.id),
                            None => {
                                let all: Vec<String> = operands.iter().map(operand_text).collect();
                                return Err(bad_narrow(format!(
                                    "unknown user in {}",
                                    all.join(",")
                                ))
                                .into());
                            }
                        }
                    }
                    Condition::DmKey(parley_domain::message::dm_key(&ids))
                }
            }
            Operator::DmIncluding(operand) => match find_user(ctx, conn, operand)? {
                Some(user) if user.id == reader.id => Condition::IsDm,
                Some(user) => Condition::DmIncluding(user.id),
                None => {
                    return Err(
                        bad_narrow(format!("unknown user {}", operand_text(operand))).into(),
                    )
                }
            },
            Operator::Is(op) => match op {
                IsOperand::Dm => Condition::IsDm,
                IsOperand::Starred => Condition::Flag(flags::STARRED),
                IsOperand::Unread => Condition::Not(Box::new(Condition::Flag(flags::READ))),
                IsOperand::Mentioned => Condition::Flag(
                    flags::MENTIONED
                        | flags::STREAM_WILDCARD_MENTIONED
                        | flags::TOPIC_WILDCARD_MENTIONED
                        | flags::GROUP_MENTIONED,
                ),
                IsOperand::Alerted => Condition::Flag(flags::HAS_ALERT_WORD),
                IsOperand::Resolved => Condition::Resolved,
                IsOperand::Followed => {
                    Condition::TopicIn(topics_with(conn, reader, &[VisibilityPolicy::Followed])?)
                }
                IsOperand::Muted => muted(conn, reader)?,
            },
            Operator::In { home } => {
                if *home {
                    match muted(conn, reader)? {
                        // Nothing muted: every message is in the home view.
                        Condition::Nothing => Condition::All(Vec::new()),
                        muted => Condition::Not(Box::new(muted)),
                    }
                } else {
                    continue;
                }
            }
            Operator::Has(op) => match op {
                HasOperand::Link => Condition::HasLink,
                HasOperand::Image => Condition::HasImage,
                HasOperand::Attachment => Condition::HasAttachment,
                HasOperand::Reaction => Condition::HasReaction,
            },
            Operator::Id(id) => Condition::Id(MessageId(*id)),
            Operator::Near(_) | Operator::With(_) => continue,
            Operator::Search(text) => Condition::Search(text.trim().trim_matches('"').to_owned()),
        };
        conditions.push(if term.negated {
            Condition::Not(Box::new(condition))
        } else {
            condition
        });
    }
    Ok(Resolved {
        audience: Audience::new(reader.id, history),
        conditions,
    })
}

/// The reader's topics with one of these policies, as `(channel, topic key)` pairs.
fn topics_with(
    conn: &mut DbConn,
    reader: &User,
    policies: &[VisibilityPolicy],
) -> ActionResult<Vec<(ChannelId, String)>> {
    Ok(topics_among(
        &user_topics::muting_of(conn, reader.id)?.topics,
        policies,
    ))
}

/// Those of `topics` (one reader's) with one of these policies, as `(channel, topic key)` pairs.
fn topics_among(
    topics: &[(ChannelId, String, i64)],
    policies: &[VisibilityPolicy],
) -> Vec<(ChannelId, String)> {
    topics
        .iter()
        .filter(|(_, _, policy)| policies.iter().any(|p| *p as i64 == *policy))
        .map(|(channel, key, _)| (*channel, key.clone()))
        .collect()
}

/// What the reader has muted, as the reference reads it: the topics of muted channels that
/// they did not unmute or follow, and muted topics anywhere (one statement reads both).
/// [`Condition::Nothing`] when nothing is: the condition then costs the page nothing (it was
/// a term per followed topic under a false one, which PostgreSQL still planned).
fn muted(conn: &mut DbConn, reader: &User) -> ActionResult<Condition> {
    let muting = user_topics::muting_of(conn, reader.id)?;
    let mut parts = Vec::new();
    if !muting.muted_channels.is_empty() {
        let unmuted = topics_among(
            &muting.topics,
            &[VisibilityPolicy::Unmuted, VisibilityPolicy::Followed],
        );
        parts.push(Condition::All(vec![
            Condition::ChannelIn(muting.muted_channels),
            Condition::Not(Box::new(Condition::TopicIn(unmuted))),
        ]));
    }
    let muted_topics = topics_among(&muting.topics, &[VisibilityPolicy::Muted]);
    if !muted_topics.is_empty() {
        parts.push(Condition::TopicIn(muted_topics));
    }
    Ok(match parts.len() {
        0 => Condition::Nothing,
        1 => parts.remove(0),
        _ => Condition::Any(parts),
    })
}

/// What the first unread message skips, as the reference's `exclude_muting_conditions`:
/// everything muted, or within a channel narrow only its muted topics.
fn first_unread_muting(
    conn: &mut DbConn,
    reader: &User,
    narrow: &[NarrowTerm],
) -> ActionResult<Condition> {
    let in_channel = narrow
        .iter()
        .any(|t| !t.negated && matches!(t.operator, Operator::Channel(_)));
    match in_channel {
        true => {
            let topics = topics_with(conn, reader, &[VisibilityPolicy::Muted])?;
            Ok(match topics.is_empty() {
                true => Condition::Nothing,
                false => Condition::TopicIn(topics),
            })
        }
        false => muted(conn, reader),
    }
}

/// A page of messages around an anchor.
pub struct Page {
    /// The resolved anchor.
    pub anchor: i64,
    /// The messages, oldest first.
    pub messages: Vec<ReadMessage>,
    /// Whether the anchor itself matched.
    pub found_anchor: bool,
    /// Whether the page reaches the oldest matching message.
    pub found_oldest: bool,
    /// Whether the page reaches the newest matching message.
    pub found_newest: bool,
}

/// The IDs a query selects, for bulk operations on a narrow.
pub struct SelectedIds {
    /// The IDs, ascending.
    pub ids: Vec<MessageId>,
    /// Whether they reach the oldest matching message.
    pub found_oldest: bool,
    /// Whether they reach the newest matching message.
    pub found_newest: bool,
}

fn check_query(query: &MessageQuery) -> Result<(), RequestError> {
    if query.num_before < 0 || query.num_after < 0 {
        let name = if query.num_before < 0 {
            "num_before"
        } else {
            "num_after"
        };
        return Err(RequestError::invalid_param(
            name,
            format!("{name} is not a non-negative integer"),
        ));
    }
    if query.num_before.saturating_add(query.num_after) > MAX_MESSAGES_PER_FETCH {
        return Err(RequestError::bad_request(
            "Too many messages requested (maximum 5000).",
        ));
    }
    if !query.include_anchor && query.num_before > 0 && query.num_after > 0 {
        return Err(RequestError::bad_request(
            "The anchor can only be excluded at an end of the range",
        ));
    }
    Ok(())
}

/// Which sides of the anchor a page reads, as the reference decides it (`limit_query_to_range`):
/// an anchor at 0 has nothing before it, one at "newest" nothing after it, and a query for
/// neither side still answers the anchor message itself.
struct Window {
    anchored_to_left: bool,
    anchored_to_right: bool,
    /// `num_after`, or 0 when anchored to the newest message.
    num_after: i64,
    need_before: bool,
    need_after: bool,
    /// Whether the anchor message belongs in the page.
    want_anchor: bool,
}

impl Window {
    fn new(anchor: i64, query: &MessageQuery) -> Window {
        let anchored_to_left = anchor == 0;
        let anchored_to_right = anchor >= NEWEST_ANCHOR;
        let num_after = if anchored_to_right {
            0
        } else {
            query.num_after
        };
        let need_before = !anchored_to_left && query.num_before > 0;
        let need_after = num_after > 0;
        let want_anchor =
            !anchored_to_right && (query.include_anchor || (!need_before && !need_after));
        Window {
            anchored_to_left,
            anchored_to_right,
            num_after,
            need_before,
            need_after,
            want_anchor,
        }
    }

    /// Neither side is read, only the anchor message.
    fn anchor_alone(&self) -> bool {
        self.want_anchor && !self.need_before && !self.need_after
    }
}

/// The anchor of `anchor=first_unread`: the narrow's first unread message not muted (the
/// newest end when there is none), and whether no message of the narrow can be older than it.
/// When the narrow itself asks for unread messages and nothing muted was skipped, the first
/// unread match is the oldest match, so the side before it needs no reading: for `is:unread`
/// on PostgreSQL that side was six statements walking back through the gaps to find nothing.
fn first_unread_anchor(
    conn: &mut DbConn,
    reader: &User,
    resolved: &Resolved,
    query: &MessageQuery,
) -> ActionResult<(i64, bool)> {
    let mut conditions = resolved.conditions.clone();
    let skipped = first_unread_muting(conn, reader, &query.narrow)?;
    let nothing_before =
        matches!(skipped, Condition::Nothing) && messages::asks_unread(&conditions);
    if !matches!(skipped, Condition::Nothing) {
        conditions.push(Condition::Not(Box::new(skipped)));
    }
    let first = messages::first_unread(conn, &resolved.audience, &conditions)?;
    Ok((first.unwrap_or(NEWEST_ANCHOR), nothing_before))
}

/// Reads the page a query selects.
fn select_page(
    ctx: &Context,
    conn: &mut DbConn,
    reader: &User,
    query: &MessageQuery,
) -> ActionResult<Page> {
    let policy = policy::load(conn)?;
    let resolved = resolve_narrow(ctx, conn, &policy, reader, &query.narrow)?;
    let (anchor, nothing_before) = match query.anchor {
        Anchor::Newest => (NEWEST_ANCHOR, false),
        Anchor::Oldest => (0, false),
        Anchor::Id(id) => (id, false),
        Anchor::FirstUnread => first_unread_anchor(conn, reader, &resolved, query)?,
    };
    let window = Window::new(anchor, query);
    let (mut before, mut after) = (Vec::new(), Vec::new());
    if window.need_after || window.anchor_alone() {
        let limit = window.num_after + i64::from(window.want_anchor);
        let direction = Direction::After;
        after = messages::page(
            conn,
            &resolved.audience,
            &resolved.conditions,
            anchor,
            direction,
            window.want_anchor,
            limit,
        )?;
    }
    let with_anchor = window.want_anchor && !window.need_after;
    // With nothing of the narrow before the anchor, that side is read only for the anchor.
    if window.need_before && (with_anchor || !nothing_before) {
        let limit = query.num_before + i64::from(with_anchor);
        let direction = Direction::Before;
        before = messages::page(
            conn,
            &resolved.audience,
            &resolved.conditions,
            anchor,
            direction,
            with_anchor,
            limit,
        )?;
    }
    let anchor_row = before
        .iter()
        .chain(&after)
        .position(|m| m.row.id == anchor)
        .map(|i| {
            if i < before.len() {
                before.remove(i)
            } else {
                after.remove(i - before.len())
            }
        });
    before.retain(|m| m.row.id < anchor);
    before.truncate(query.num_before as usize);
    after.retain(|m| m.row.id > anchor);
    after.truncate(window.num_after as usize);
    let found_anchor = anchor_row.is_some();
    let found_oldest = window.anchored_to_left || (before.len() as i64) < query.num_before;
    let found_newest = window.anchored_to_right || (after.len() as i64) < window.num_after;
    before.reverse();
    before.extend(anchor_row);
    before.extend(after);
    Ok(Page {
        anchor,
        messages: before,
        found_anchor,
        found_oldest,
        found_newest,
    })
}

/// `GET /messages`.
pub async fn get_messages(
    ctx: &Context,
    reader: User,
    query: MessageQuery,
) -> ActionResult<MessagesPage> {
    check_query(&query)?;
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let page = select_page(&ctx2, conn, &reader, &query)?;
        let records = crate::present::messages::messages(
            &ctx2,
            conn,
            &reader,
            &page.messages,
            query.presentation,
        )?;
        Ok(MessagesPage {
            anchor: Some(page.anchor),
            found_anchor: page.found_anchor,
            found_oldest: page.found_oldest,
            found_newest: page.found_newest,
            history_limited: false,
            messages: with_matches(records, &page.messages, &query.narrow),
        })
    })
    .await
}

/// The IDs of the messages a query selects.
pub async fn select_ids(
    ctx: &Context,
    reader: User,
    query: MessageQuery,
) -> ActionResult<SelectedIds> {
    check_query(&query)?;
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let page = select_page(&ctx2, conn, &reader, &query)?;
        Ok(SelectedIds {
            ids: page.messages.iter().map(|m| MessageId(m.row.id)).collect(),
            found_oldest: page.found_oldest,
            found_newest: page.found_newest,
        })
    })
    .await
}

/// `GET /users/me/{stream_id}/topics`: the channel's topics the reader may see, newest first,
/// with their latest message ID.
pub async fn channel_topics(
    ctx: &Context,
    reader: User,
    channel: ChannelId,
    allow_empty_topic_name: bool,
) -> ActionResult<Vec<Value>> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let (found, subscribed) =
            crate::access::access_channel_by_id(conn, &policy, &reader, channel)?;
        let history = if history_readable(&policy, &reader, &found, subscribed) {
            vec![channel]
        } else {
            Vec::new()
        };
        let audience = Audience::new(reader.id, history);
        let rows = messages::topics(conn, &audience, channel)?;
        Ok(rows
            .into_iter()
            .map(|(name, max_id)| {
                let name = if name.is_empty() && !allow_empty_topic_name {
                    EMPTY_TOPIC_DISPLAY_NAME.to_owned()
                } else {
                    name
                };
                json!({"name": name, "max_id": max_id})
            })
            .collect())
    })
    .await
}

/// `GET /messages/{message_id}`: one message and its raw content.
pub async fn get_message(
    ctx: &Context,
    reader: User,
    id: MessageId,
    presentation: Presentation,
) -> ActionResult<Map<String, Value>> {
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let message =
            accessible_message(conn, &policy, &reader, id)?.ok_or_else(invalid_message)?;
        let raw = message.row.content.clone();
        let mut records = present(
            &ctx2,
            conn,
            &reader,
            std::slice::from_ref(&message),
            presentation,
        )?;
        let mut out = Map::new();
        out.insert("message".into(), records.pop().unwrap_or(Value::Null));
        out.insert("raw_content".into(), raw.into());
        Ok(out)
    })
    .await
}

/// The message records a reader receives (see [`crate::present::messages::messages`]).
fn present(
    ctx: &Context,
    conn: &mut DbConn,
    reader: &User,
    list: &[ReadMessage],
    options: Presentation,
) -> ActionResult<Vec<Value>> {
    let records = crate::present::messages::messages(ctx, conn, reader, list, options)?;
    Ok(records
        .into_iter()
        .filter_map(|m| serde_json::to_value(m).ok())
        .collect())
}

/// `GET /messages/matches_narrow`: which of these messages (among those the reader received)
/// match a narrow.
pub async fn matches_narrow(
    ctx: &Context,
    reader: User,
    ids: Vec<MessageId>,
    narrow: Vec<NarrowTerm>,
) -> ActionResult<Map<String, Value>> {
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let resolved = resolve_narrow(&ctx2, conn, &policy, &reader, &narrow)?;
        let audience = Audience::new(reader.id, Vec::new());
        let found = messages::by_ids_for(conn, &audience, &ids, &resolved.conditions)?;
        let terms = search_terms(&narrow);
        let mut out = Map::new();
        for message in found {
            let (content, subject) = match_fields(&message, terms.as_ref());
            out.insert(
                message.row.id.to_string(),
                json!({"match_content": content, "match_subject": subject}),
            );
        }
        Ok(out)
    })
    .await
}

/// The words of a narrow's (not negated) `search` terms, if it has any.
fn search_terms(narrow: &[NarrowTerm]) -> Option<SearchTerms> {
    let texts: Vec<&str> = narrow
        .iter()
        .filter(|term| !term.negated)
        .filter_map(|term| match &term.operator {
            Operator::Search(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| SearchTerms::new(&texts.join(" ")))
}

/// `match_content` (the rendered content) and `match_subject` (the escaped topic), with the
/// search's words highlighted when there is a search.
fn match_fields(message: &ReadMessage, terms: Option<&SearchTerms>) -> (String, String) {
    let subject = escape_html(&message.row.topic);
    match terms {
        Some(terms) => (
            terms.highlight_html(&message.row.rendered_content),
            terms.highlight_html(&subject),
        ),
        None => (message.row.rendered_content.clone(), subject),
    }
}

/// The answer's messages: for a `search` narrow, each with `match_content` and `match_subject`,
/// as the reference adds them.
fn with_matches(
    records: Vec<Message>,
    found: &[ReadMessage],
    narrow: &[NarrowTerm],
) -> Vec<FoundMessage> {
    let terms = search_terms(narrow);
    let by_id: std::collections::HashMap<i64, &ReadMessage> = match terms {
        Some(_) => found.iter().map(|m| (m.row.id, m)).collect(),
        None => Default::default(),
    };
    records
        .into_iter()
        .map(|message| {
            let matched = by_id
                .get(&message.id.0)
                .map(|found| match_fields(found, terms.as_ref()));
            let (match_content, match_subject) = matched.unzip();
            FoundMessage {
                message,
                match_content,
                match_subject,
            }
        })
        .collect()
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#x27;")
}

/// `GET /messages/{message_id}/read_receipts`: who has read a message, the sender excepted.
pub async fn read_receipts(
    ctx: &Context,
    reader: User,
    id: MessageId,
) -> ActionResult<Vec<UserId>> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let message =
            accessible_message(conn, &policy, &reader, id)?.ok_or_else(invalid_message)?;
        let sender = UserId(message.row.sender_id);
        let readers = messages::readers(conn, id)?;
        let active: HashSet<UserId> = users::by_ids(conn, &readers)?
            .into_iter()
            .filter(|u| u.is_active)
            .map(|u| u.id)
            .collect();
        Ok(readers
            .into_iter()
            .filter(|u| *u != sender && active.contains(u))
            .collect())
    })
    .await
}

/// `GET /messages` with `message_ids`: exactly these messages, those the reader may see and the
/// narrow matches, oldest first.
pub async fn get_messages_by_ids(
    ctx: &Context,
    reader: User,
    ids: Vec<MessageId>,
    narrow: Vec<NarrowTerm>,
    presentation: Presentation,
) -> ActionResult<MessagesPage> {
    let ctx2 = ctx.clone();
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let resolved = resolve_narrow(&ctx2, conn, &policy, &reader, &narrow)?;
        let mut history = Vec::new();
        for id in &ids {
            if let Some(found) = accessible_message(conn, &policy, &reader, *id)? {
                if let Some(channel) = found.row.channel_id {
                    history.push(ChannelId(channel));
                }
            }
        }
        history.sort();
        history.dedup();
        // Only channels whose history the reader may read reach this list.
        let audience = Audience::new(reader.id, history);
        let found = messages::by_ids_for(conn, &audience, &ids, &resolved.conditions)?;
        let records =
            crate::present::messages::messages(&ctx2, conn, &reader, &found, presentation)?;
        Ok(MessagesPage {
            anchor: None,
            found_anchor: false,
            found_oldest: false,
            found_newest: false,
            history_limited: false,
            messages: with_matches(records, &found, &narrow),
        })
    })
    .await
}
