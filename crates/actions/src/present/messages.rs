//! Messages as a reader receives them (`GET /messages`, `GET /messages/{id}` and the `message`
//! event), built a page at a time.

use crate::context::Context;
use crate::error::ActionResult;
use crate::realm_cache;
use parley_domain::message::{dm_participants, flags, EMPTY_TOPIC_DISPLAY_NAME};
use parley_domain::user::{can_access_delivery_email, User};
use parley_domain::{ChannelId, MessageId, UserId};
use parley_storage::messages::ReadMessage;
use parley_storage::{reactions, DbConn};
use parley_wire::message::{DirectRecipient, DisplayRecipient, Message, Reaction};
use parley_wire::user::avatar_url;
use std::collections::{HashMap, HashSet};

/// Options for how message records are written.
#[derive(Debug, Clone, Copy)]
pub struct Presentation {
    /// HTML (true) or Markdown content.
    pub apply_markdown: bool,
    /// Leave Gravatar URLs to the client.
    pub client_gravatar: bool,
    /// Show the empty topic as "" rather than its display name.
    pub allow_empty_topic_name: bool,
}

/// Offsets that keep the three kinds of recipient IDs apart (the reference numbers all its
/// recipients in one table; clients use the value only as a conversation key).
const PERSONAL_RECIPIENT_BASE: i64 = 1 << 40;
const GROUP_RECIPIENT_BASE: i64 = 2 << 40;

/// What a page of messages refers to, loaded once per page.
struct PageContext {
    people: HashMap<UserId, User>,
    channel_names: HashMap<ChannelId, String>,
    reactions: HashMap<MessageId, Vec<Reaction>>,
    linkifiers: Vec<parley_markdown::Linkifier>,
}

fn load_page(conn: &mut DbConn, list: &[ReadMessage]) -> ActionResult<PageContext> {
    let mut user_ids: HashSet<UserId> = HashSet::new();
    let mut channel_ids: HashSet<ChannelId> = HashSet::new();
    for message in list {
        user_ids.insert(UserId(message.row.sender_id));
        if let Some(c) = message.row.channel_id {
            channel_ids.insert(ChannelId(c));
        }
        if let Some(key) = &message.row.dm_key {
            user_ids.extend(dm_participants(key));
        }
    }
    let people = realm_cache::people(conn, &user_ids.into_iter().collect::<Vec<_>>())?;
    let channel_names =
        realm_cache::channel_names(conn, &channel_ids.into_iter().collect::<Vec<_>>())?;
    let ids: Vec<MessageId> = list.iter().map(|m| MessageId(m.row.id)).collect();
    let mut by_message: HashMap<MessageId, Vec<Reaction>> = HashMap::new();
    for r in reactions::of_messages(conn, &ids)? {
        by_message.entry(r.message_id).or_default().push(Reaction {
            emoji_name: r.emoji_name,
            emoji_code: r.emoji_code,
            reaction_type: r.reaction_type,
            user_id: r.user_id,
        });
    }
    Ok(PageContext {
        people,
        channel_names,
        reactions: by_message,
        linkifiers: crate::rendering::linkifiers_for_rendering(conn)?,
    })
}

/// The record of a message just sent, as `reader` receives it, from what the send holds: the
/// sender, the channel's name, and for a direct message the conversation's members (those not
/// given are read); a new message has no reactions.
pub fn new_message(
    ctx: &Context,
    conn: &mut DbConn,
    reader: &User,
    message: ReadMessage,
    participants: &[User],
    channel_name: Option<&str>,
    options: Presentation,
) -> ActionResult<Message> {
    let mut people: HashMap<UserId, User> =
        participants.iter().map(|u| (u.id, u.clone())).collect();
    people.insert(reader.id, reader.clone());
    let mut wanted: Vec<UserId> = vec![UserId(message.row.sender_id)];
    if let Some(key) = &message.row.dm_key {
        wanted.extend(dm_participants(key));
    }
    wanted.retain(|id| !people.contains_key(id));
    if !wanted.is_empty() {
        people.extend(realm_cache::people(conn, &wanted)?);
    }
    let channel_names = match (message.row.channel_id, channel_name) {
        (Some(id), Some(name)) => HashMap::from([(ChannelId(id), name.to_owned())]),
        (Some(id), None) => realm_cache::channel_names(conn, &[ChannelId(id)])?,
        (None, _) => HashMap::new(),
    };
    let mut page = PageContext {
        people,
        channel_names,
        reactions: HashMap::new(),
        linkifiers: crate::rendering::linkifiers_for_rendering(conn)?,
    };
    Ok(message_record(ctx, reader, &message, options, &mut page))
}

/// The message records a reader receives, loading senders, channels, conversation members and
/// reactions once per page.
pub fn messages(
    ctx: &Context,
    conn: &mut DbConn,
    reader: &User,
    list: &[ReadMessage],
    options: Presentation,
) -> ActionResult<Vec<Message>> {
    let mut page = load_page(conn, list)?;
    Ok(list
        .iter()
        .map(|message| message_record(ctx, reader, message, options, &mut page))
        .collect())
}

fn message_record(
    ctx: &Context,
    reader: &User,
    message: &ReadMessage,
    options: Presentation,
    page: &mut PageContext,
) -> Message {
    let host = &ctx.realm.host;
    let row = &message.row;
    let sender = page.people.get(&UserId(row.sender_id));
    let (content, content_type) = if options.apply_markdown {
        (row.rendered_content.clone(), "text/html")
    } else {
        (row.content.clone(), "text/x-markdown")
    };
    let (message_type, stream_id, display_recipient, recipient_id, subject) =
        match (row.channel_id, &row.dm_key) {
            (Some(channel), _) => {
                let topic = if row.topic.is_empty() && !options.allow_empty_topic_name {
                    EMPTY_TOPIC_DISPLAY_NAME.to_owned()
                } else {
                    row.topic.clone()
                };
                let name = page
                    .channel_names
                    .get(&ChannelId(channel))
                    .cloned()
                    .unwrap_or_default();
                (
                    "stream",
                    Some(ChannelId(channel)),
                    DisplayRecipient::Channel(name),
                    channel,
                    topic,
                )
            }
            (None, key) => (
                "private",
                None,
                DisplayRecipient::Direct(direct_recipients(key.as_deref(), page, host)),
                direct_recipient_id(row, reader),
                String::new(),
            ),
        };
    Message {
        id: MessageId(row.id),
        sender_id: UserId(row.sender_id),
        sender_full_name: sender.map_or("Unknown user".to_owned(), |s| s.full_name.clone()),
        sender_email: sender.map_or_else(
            || format!("user{}@{host}", row.sender_id),
            |s| s.api_email(host),
        ),
        sender_realm_str: String::new(),
        avatar_url: sender.and_then(|s| {
            let leave = options.client_gravatar && can_access_delivery_email(Some(reader), s);
            avatar_url(s, &ctx.realm.url, leave)
        }),
        client: row.client.clone(),
        content,
        content_type,
        timestamp: row.date_sent,
        message_type,
        stream_id,
        display_recipient,
        recipient_id,
        subject,
        topic_links: crate::rendering::topic_links(&row.topic, &page.linkifiers),
        is_me_message: row.content.starts_with("/me "),
        reactions: page
            .reactions
            .remove(&MessageId(row.id))
            .unwrap_or_default(),
        submessages: Vec::new(),
        flags: flags::names(message.effective_flags()),
        last_edit_timestamp: row.last_edit_time,
        last_moved_timestamp: row.last_moved_time,
        edit_history: row
            .edit_history
            .as_deref()
            .and_then(|h| serde_json::from_str(h).ok()),
    }
}

/// Every member of a direct conversation, by address.
fn direct_recipients(key: Option<&str>, page: &PageContext, host: &str) -> Vec<DirectRecipient> {
    let mut recipients: Vec<DirectRecipient> = dm_participants(key.unwrap_or(""))
        .iter()
        .filter_map(|id| page.people.get(id))
        .map(|u| DirectRecipient {
            id: u.id,
            email: u.api_email(host),
            full_name: u.full_name.clone(),
            is_mirror_dummy: false,
        })
        .collect();
    recipients.sort_by(|a, b| a.email.cmp(&b.email));
    recipients
}

/// The conversation key of a direct message: both sides of a one-on-one conversation see the
/// other party's ID.
fn direct_recipient_id(row: &parley_storage::messages::MessageRow, reader: &User) -> i64 {
    match (row.dm_group_id, row.recipient_user_id) {
        (Some(group), _) => GROUP_RECIPIENT_BASE + group,
        (None, Some(other)) => {
            let shown = if other == reader.id.0 {
                row.sender_id
            } else {
                other
            };
            PERSONAL_RECIPIENT_BASE + shown
        }
        (None, None) => PERSONAL_RECIPIENT_BASE + row.sender_id,
    }
}
