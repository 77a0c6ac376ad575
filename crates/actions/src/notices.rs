//! Automated notices: messages the Notification Bot posts about what people did (moves,
//! resolving topics).

use crate::context::Context;
use crate::error::{ActionError, ActionResult};
use crate::notify::messages::{message_sent, MessageAudience};
use crate::publish::Events;
use crate::rendering;
use crate::secrets;
use crate::time::now;
use parley_domain::channel::Channel;
use parley_domain::message::flags;
use parley_domain::user::User;
use parley_domain::{MessageId, UserId};
use parley_storage::messages::{self, NewMessage};
use parley_storage::{channels, users, DbConn};

/// The Notification Bot's address, as the reference names it.
pub const NOTIFICATION_BOT_EMAIL: &str = "notification-bot@zulip.com";

/// The Notification Bot, created on first use.
pub(crate) fn notification_bot(conn: &mut DbConn) -> ActionResult<User> {
    system_bot(conn, NOTIFICATION_BOT_EMAIL, "Notification Bot")
}

/// The system bot with this address (the Notification Bot, the Welcome Bot), created on first
/// use.
pub(crate) fn system_bot(conn: &mut DbConn, email: &str, name: &str) -> ActionResult<User> {
    let id = users::system_bot(conn, email, name, &secrets::generate_api_key(), now())?;
    users::by_id(conn, id)?.ok_or_else(|| ActionError::Internal(format!("{name} vanished")))
}

/// A silent mention of a user, as notices name people.
pub(crate) fn silent_mention(user: &User) -> String {
    format!("@_**{}|{}**", user.full_name, user.id)
}

/// A link to a channel topic in message syntax.
pub(crate) fn topic_link(channel: &str, topic: &str) -> String {
    format!("#**{channel}>{topic}**")
}

/// Posts a notice in a channel topic, read for `read_for` (whoever caused it).
pub(crate) fn post(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    channel: &Channel,
    topic: &str,
    content: &str,
    read_for: UserId,
) -> ActionResult<MessageId> {
    let bot = notification_bot(conn)?;
    let rendered = rendering::render_message(conn, &ctx.realm.url, ctx.camo.as_ref(), content);
    let rows: Vec<(UserId, i64)> = parley_storage::spans::recipients_for_send(conn, channel.id)?
        .into_iter()
        .map(|user| {
            let mut bits = if user == read_for { flags::READ } else { 0 };
            if rendered.mentioned_user_ids.contains(&user.0) {
                bits |= flags::MENTIONED;
            }
            (user, bits)
        })
        .collect();
    let new = NewMessage {
        sender_id: bot.id,
        channel_id: Some(channel.id),
        topic: topic.to_owned(),
        dm_key: None,
        dm_group_id: None,
        recipient_user_id: None,
        content: content.to_owned(),
        rendered_content: rendered.html,
        date_sent: now(),
        has_link: rendered.has_link,
        has_image: rendered.has_image,
        has_attachment: rendered.has_attachment,
        client: "Internal".to_owned(),
    };
    let id = messages::insert(conn, &new, &rows)?;
    channels::set_first_message(conn, channel.id, id.0)?;
    events.push(message_sent(
        ctx,
        conn,
        &bot,
        id,
        MessageAudience {
            rows: &rows,
            channel_name: Some(channel.name.clone()),
            public_channel: channel.is_public(),
            local_echo: None,
        },
    )?);
    Ok(id)
}

/// The organization setting naming the channel where new channels are announced.
pub const ANNOUNCEMENTS_CHANNEL: &str = "new_stream_announcements_stream_id";

/// Announces a new public channel in the announcements channel, topic `new channels`. Private
/// channels are not announced: that would reveal them.
pub(crate) fn announce_channel(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    creator: &User,
    name: &str,
    private: bool,
) -> ActionResult<()> {
    if private {
        return Ok(());
    }
    let stored = parley_storage::realms::permissions(conn)?;
    let Some(id) = stored
        .get(ANNOUNCEMENTS_CHANNEL)
        .and_then(|v| v.parse::<i64>().ok())
    else {
        return Ok(());
    };
    let Some(channel) =
        channels::by_id(conn, parley_domain::ChannelId(id))?.filter(|c| !c.is_archived)
    else {
        return Ok(());
    };
    let text = format!(
        "{} created a new channel #**{name}**.",
        silent_mention(creator)
    );
    post(
        ctx,
        conn,
        events,
        &channel,
        "new channels",
        &text,
        creator.id,
    )?;
    Ok(())
}
