//! Editing messages: new content, moves to another topic or channel (one message, it and the
//! later ones, or the whole topic), and resolving topics.

use crate::access::access_channel_by_id;
use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::messages_delete::TIME_LIMIT_GRACE_SECONDS;
use crate::messages_send::check_topic_policy;
use crate::notify::messages::{message_updated, message_viewers, messages_deleted, DeletedFrom};
use crate::policy::{self, Policy};
use crate::publish::Events;
use crate::time::now;
use crate::{notices, rendering};
use parley_domain::access::{can_access_channel_content, can_administer_channel};
use parley_domain::channel::Channel;
use parley_domain::message::{
    is_resolved, normalize_content, normalize_topic, truncate_topic, unresolved_name,
    RESOLVED_TOPIC_PREFIX,
};
use parley_domain::user::User;
use parley_domain::{ChannelId, ErrorCode, MessageId, RequestError, UserId};
use parley_storage::messages::{self, Audience, Condition, ContentChange, Direction};
use parley_storage::{channels, subscriptions, DbConn};
use parley_wire::event::UpdateMessage;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// Which messages a move takes along.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagateMode {
    /// Only the target message.
    ChangeOne,
    /// The target and every later message of its topic.
    ChangeLater,
    /// The whole topic.
    ChangeAll,
}

impl PropagateMode {
    /// The API name.
    pub fn name(self) -> &'static str {
        match self {
            PropagateMode::ChangeOne => "change_one",
            PropagateMode::ChangeLater => "change_later",
            PropagateMode::ChangeAll => "change_all",
        }
    }

    /// Parses `propagate_mode`.
    pub fn parse(raw: &str) -> Result<PropagateMode, RequestError> {
        match raw {
            "change_one" => Ok(PropagateMode::ChangeOne),
            "change_later" => Ok(PropagateMode::ChangeLater),
            "change_all" => Ok(PropagateMode::ChangeAll),
            _ => Err(RequestError::invalid_param(
                "propagate_mode",
                "Invalid propagate_mode",
            )),
        }
    }
}

/// `PATCH /messages/{message_id}`.
#[derive(Debug, Clone)]
pub struct MessageEdit {
    /// New topic.
    pub topic: Option<String>,
    /// New channel.
    pub channel_id: Option<ChannelId>,
    /// New content.
    pub content: Option<String>,
    /// How far a move reaches.
    pub propagate_mode: PropagateMode,
    /// Post a notice in the old topic.
    pub send_notification_to_old_thread: bool,
    /// Post a notice in the new topic.
    pub send_notification_to_new_thread: bool,
    /// The client's hash of the content it edited.
    pub prev_content_sha256: Option<String>,
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn exempt_from_move_limits(user: &User) -> bool {
    user.role.is_moderator_or_above()
}

fn history_with(existing: Option<&str>, entry: Value) -> String {
    let mut list: Vec<Value> = existing
        .and_then(|h| serde_json::from_str(h).ok())
        .unwrap_or_default();
    list.insert(0, entry);
    Value::Array(list).to_string()
}

/// What kind of topic change an edit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopicChange {
    Resolve,
    Unresolve,
    Rename,
}

fn classify(old: &str, new: &str) -> TopicChange {
    if !is_resolved(old)
        && is_resolved(new)
        && truncate_topic(&format!("{RESOLVED_TOPIC_PREFIX}{old}")) == new
    {
        TopicChange::Resolve
    } else if is_resolved(old) && !is_resolved(new) && unresolved_name(old) == new {
        TopicChange::Unresolve
    } else {
        TopicChange::Rename
    }
}

/// Whether `user` may change the content of a message now: editing is on, they sent it, and the
/// organization's time limit (with the reference's grace) has not passed. Typing notifications
/// for editing follow the same rule.
pub(crate) fn check_can_edit_content(
    policy: &Policy,
    user: &User,
    row: &messages::MessageRow,
    now: i64,
) -> Result<(), RequestError> {
    if !policy.realm.allow_message_editing {
        return Err(RequestError::bad_request(
            "Your organization has turned off message editing",
        ));
    }
    if row.sender_id != user.id.0 {
        return Err(RequestError::bad_request(
            "You don't have permission to edit this message",
        ));
    }
    if let Some(limit) = policy.realm.message_content_edit_limit_seconds {
        if now - row.date_sent > limit + TIME_LIMIT_GRACE_SECONDS {
            return Err(RequestError::bad_request(
                "The time limit for editing this message has passed",
            ));
        }
    }
    Ok(())
}

/// `PATCH /messages/{message_id}`: checks every rule of the spec in the reference's order, then
/// applies the edit and posts the notices, in one transaction.
pub async fn update_message(
    ctx: &Context,
    user: User,
    id: MessageId,
    edit: MessageEdit,
) -> ActionResult<Map<String, Value>> {
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let message = accessible_message(conn, &policy, &user, id)?.ok_or_else(invalid_message)?;
        let row = message.row.clone();
        let channel = match row.channel_id {
            Some(c) => Some(channels::by_id(conn, ChannelId(c))?.ok_or_else(invalid_message)?),
            None => None,
        };
        if channel.as_ref().is_some_and(|c| c.is_archived) {
            return Err(invalid_message());
        }
        let now = now();
        if edit.content.is_some() {
            check_can_edit_content(&policy, &user, &row, now)?;
        }
        let new_topic = requested_topic(&edit, &row)?;
        let new_channel = edit.channel_id.filter(|c| Some(c.0) != row.channel_id);
        if edit.content.is_none()
            && new_topic.is_none()
            && new_channel.is_none()
            && edit.topic.is_none()
            && edit.channel_id.is_none()
        {
            return Err(RequestError::bad_request("Nothing to change").into());
        }
        let Some(channel) = channel else {
            check_direct_message_edit(&edit)?;
            let audience = message_viewers(conn, &row)?;
            return edit_in_place(
                &ctx2, conn, events, &user, &row, &edit, now, None, &audience,
            );
        };
        check_channel_message_edit(&edit, &row)?;
        let target = move_target(conn, &policy, &user, new_channel)?;
        let plan = ChannelEdit {
            policy: &policy,
            user: &user,
            row: &row,
            channel: &channel,
            target: target.as_ref(),
            final_topic: new_topic.clone().unwrap_or_else(|| row.topic.clone()),
            change: new_topic.as_deref().map(|t| classify(&row.topic, t)),
            edit: &edit,
            now,
        };
        plan.check_move()?;
        let viewers = message_viewers(conn, &row)?;
        if new_topic.is_none() && target.is_none() {
            let located = Some(&channel);
            return edit_in_place(
                &ctx2, conn, events, &user, &row, &edit, now, located, &viewers,
            );
        }
        plan.commit_move(&ctx2, conn, events, viewers)
    })
    .await
}

/// The topic an edit asks for, normalized; None when it asks for none or for the same one.
fn requested_topic(
    edit: &MessageEdit,
    row: &messages::MessageRow,
) -> Result<Option<String>, RequestError> {
    let Some(raw) = &edit.topic else {
        return Ok(None);
    };
    let trimmed = raw.trim();
    if trimmed == "✔" || trimmed == "✔ general chat" {
        return Err(RequestError::bad_request(
            "General chat cannot be marked as resolved",
        ));
    }
    Ok(Some(normalize_topic(raw, "topic")?).filter(|t| *t != row.topic))
}

/// A direct message's content is all an edit may change.
fn check_direct_message_edit(edit: &MessageEdit) -> Result<(), RequestError> {
    if edit.channel_id.is_some() {
        return Err(RequestError::bad_request(
            "Direct messages cannot be moved to channels.",
        ));
    }
    if edit.topic.is_some() {
        return Err(RequestError::bad_request(
            "Direct messages cannot have topics.",
        ));
    }
    if edit.propagate_mode != PropagateMode::ChangeOne {
        return Err(RequestError::bad_request(
            "Invalid propagate_mode without topic edit",
        ));
    }
    Ok(())
}

/// The combinations a channel message's edit may not ask for, and the client's view of the
/// content being stale.
fn check_channel_message_edit(
    edit: &MessageEdit,
    row: &messages::MessageRow,
) -> Result<(), RequestError> {
    if edit.propagate_mode != PropagateMode::ChangeOne
        && edit.topic.is_none()
        && edit.channel_id.is_none()
    {
        return Err(RequestError::bad_request(
            "Invalid propagate_mode without topic edit",
        ));
    }
    if edit.channel_id.is_some() && edit.content.is_some() {
        return Err(RequestError::bad_request(
            "Cannot change message content while changing channel",
        ));
    }
    if let Some(expected) = &edit.prev_content_sha256 {
        if *expected != sha256_hex(&row.content) {
            return Err(RequestError::new(
                ErrorCode::ExpectationMismatch,
                "'prev_content_sha256' value does not match the expected value.",
            )
            .with("field_name", "prev_content_sha256"));
        }
    }
    Ok(())
}

/// The channel a move goes to. As the reference: moving into a channel needs its content
/// (seeing its name, as administrators see every private channel's, is not enough), and it
/// must be open (posting is checked with the other permissions).
fn move_target(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    new_channel: Option<ChannelId>,
) -> ActionResult<Option<Channel>> {
    let Some(target) = new_channel else {
        return Ok(None);
    };
    let (found, subscribed) = access_channel_by_id(conn, policy, user, target)?;
    if found.is_archived || !can_access_channel_content(user, &found, subscribed, &policy.groups) {
        return Err(RequestError::bad_request("Invalid channel ID").into());
    }
    Ok(Some(found))
}

/// The uploads an edit leaves unlinked.
type Detached = Vec<parley_wire::realm::Attachment>;

/// Applies the edit's new content, if any, and updates which uploads the message claims;
/// returns the new Markdown and HTML, and the uploads no message links any more.
fn apply_content(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    user: &User,
    row: &messages::MessageRow,
    edit: &MessageEdit,
    now: i64,
) -> ActionResult<(Option<(String, String)>, Detached)> {
    let (realm_url, camo) = (ctx.realm.url.as_str(), ctx.camo.as_ref());
    let edited = edit_content(conn, realm_url, camo, user, row, edit, now)?;
    let uploads = crate::uploads::update_claims_after_edit(
        conn,
        events,
        user,
        realm_url,
        MessageId(row.id),
        edited.as_ref().map(|e| e.0.as_str()),
    )?;
    Ok((edited, uploads))
}

/// Changes a message's content where it is (no move); `channel` is where it is, for the event,
/// None for a direct message.
#[allow(clippy::too_many_arguments)]
fn edit_in_place(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    user: &User,
    row: &messages::MessageRow,
    edit: &MessageEdit,
    now: i64,
    channel: Option<&Channel>,
    audience: &[UserId],
) -> ActionResult<Map<String, Value>> {
    let (edited, uploads) = apply_content(ctx, conn, events, user, row, edit, now)?;
    let mut body = update_body(user, row, now, edited.as_ref(), None);
    if let Some(channel) = channel {
        body.stream_id = Some(channel.id);
        body.stream_name = Some(channel.name.clone());
    }
    for event in message_updated(conn, body, MessageId(row.id), audience)? {
        events.push(event);
    }
    Ok(detached(uploads))
}

/// A checked edit of a channel message that renames its topic or moves it to another channel
/// (perhaps with the topic's other messages).
struct ChannelEdit<'a> {
    policy: &'a Policy,
    user: &'a User,
    row: &'a messages::MessageRow,
    /// Where the message is.
    channel: &'a Channel,
    /// Where it goes, when it changes channel.
    target: Option<&'a Channel>,
    /// The topic it ends in.
    final_topic: String,
    /// What kind of topic change, when the topic changes.
    change: Option<TopicChange>,
    edit: &'a MessageEdit,
    now: i64,
}

impl ChannelEdit<'_> {
    fn destination(&self) -> &Channel {
        self.target.unwrap_or(self.channel)
    }

    /// The permission and time-limit checks of a topic change and of a channel change.
    fn check_move(&self) -> ActionResult<()> {
        if self.change.is_some() || self.target.is_some() {
            check_topic_policy(self.policy, self.destination(), &self.final_topic)?;
        }
        match self.change {
            Some(TopicChange::Resolve | TopicChange::Unresolve) => self.check_resolve()?,
            Some(TopicChange::Rename) => self.check_rename()?,
            None => {}
        }
        if let Some(target) = self.target {
            self.check_channel_change(target)?;
        }
        Ok(())
    }

    fn check_resolve(&self) -> Result<(), RequestError> {
        let (groups, user) = (&self.policy.groups, self.user);
        let allowed = groups.setting_contains(&self.policy.realm.can_resolve_topics_group, user)
            || groups.setting_contains(&self.channel.permissions.can_resolve_topics_group, user)
            || self.target.is_some_and(|t| {
                groups.setting_contains(&t.permissions.can_resolve_topics_group, user)
            });
        if !allowed {
            return Err(RequestError::bad_request(
                "You don't have permission to resolve topics in this channel.",
            ));
        }
        Ok(())
    }

    fn check_rename(&self) -> Result<(), RequestError> {
        let (groups, user, realm) = (&self.policy.groups, self.user, &self.policy.realm);
        let allowed = user.role.is_admin()
            || groups.setting_contains(&realm.can_move_messages_between_topics_group, user)
            || groups.setting_contains(
                &self
                    .channel
                    .permissions
                    .can_move_messages_within_channel_group,
                user,
            )
            || can_administer_channel(user, self.channel, groups);
        if !allowed {
            return Err(RequestError::bad_request(
                "You don't have permission to edit this message",
            ));
        }
        if let Some(limit) = realm.move_messages_within_stream_limit_seconds {
            if !exempt_from_move_limits(user)
                && self.now - self.row.date_sent > limit + TIME_LIMIT_GRACE_SECONDS
            {
                return Err(RequestError::bad_request(
                    "The time limit for editing this message's topic has passed.",
                ));
            }
        }
        Ok(())
    }

    fn check_channel_change(&self, target: &Channel) -> Result<(), RequestError> {
        let (groups, user, realm) = (&self.policy.groups, self.user, &self.policy.realm);
        let allowed = user.role.is_admin()
            || groups.setting_contains(&realm.can_move_messages_between_channels_group, user)
            || can_administer_channel(user, self.channel, groups)
            || groups.setting_contains(
                &self
                    .channel
                    .permissions
                    .can_move_messages_out_of_channel_group,
                user,
            );
        if !allowed {
            return Err(RequestError::bad_request(
                "You don't have permission to move this message",
            ));
        }
        if !groups.setting_contains(&target.permissions.can_send_message_group, user) {
            return Err(RequestError::bad_request(
                "You do not have permission to post in this channel.",
            ));
        }
        if let Some(limit) = realm.move_messages_between_streams_limit_seconds {
            if !exempt_from_move_limits(user)
                && self.now - self.row.date_sent > limit + TIME_LIMIT_GRACE_SECONDS
            {
                return Err(RequestError::bad_request(
                    "The time limit for editing this message's channel has passed",
                ));
            }
        }
        Ok(())
    }

    /// Moves the messages (with a content edit, if any), adjusts who receives them, and emits
    /// the update (and deletes for those who lose access) and the notices.
    fn commit_move(
        &self,
        ctx: &Context,
        conn: &mut DbConn,
        events: &mut Events,
        viewers: Vec<UserId>,
    ) -> ActionResult<Map<String, Value>> {
        let (user, row, channel, edit, now) =
            (self.user, self.row, self.channel, self.edit, self.now);
        let (edited, uploads) = apply_content(ctx, conn, events, user, row, edit, now)?;
        let moved = self.messages_to_move(conn)?;
        self.relocate(conn, &moved)?;
        let (audience, lost) = self.reassign(conn, &moved, viewers)?;
        let mut moved_sorted = moved.clone();
        moved_sorted.sort();
        let movement = Movement {
            channel,
            target: self.target,
            orig_topic: &row.topic,
            topic: &self.final_topic,
            propagate_mode: edit.propagate_mode,
            ids: &moved_sorted,
            topic_links: crate::rendering::topic_links(
                &self.final_topic,
                &crate::rendering::linkifiers_for_rendering(conn)?,
            ),
        };
        let body = update_body(user, row, now, edited.as_ref(), Some(&movement));
        for event in message_updated(conn, body, MessageId(row.id), &audience)? {
            events.push(event);
        }
        if !lost.is_empty() {
            let from = DeletedFrom {
                channel: Some(channel.id),
                topic: row.topic.clone(),
            };
            events.push(messages_deleted(&moved_sorted, &from, lost));
        }
        let topics = (row.topic.as_str(), self.final_topic.as_str());
        let channels = (channel, self.destination());
        post_move_notices(
            ctx,
            conn,
            events,
            user,
            channels,
            topics,
            self.change,
            &moved,
            edit,
        )?;
        Ok(detached(uploads))
    }

    /// After a move into another channel, who receives the moved messages changes: returns
    /// who is told of the move (who saw the message, who receives or may read it now) and who
    /// lost them (told they are deleted).
    fn reassign(
        &self,
        conn: &mut DbConn,
        moved: &[MessageId],
        viewers: Vec<UserId>,
    ) -> ActionResult<(Vec<UserId>, Vec<UserId>)> {
        let before = messages::recipients_of_any(conn, moved)?;
        if let Some(target) = self.target {
            adjust_recipients(conn, target, moved)?;
        }
        let after = messages::recipients_of_any(conn, moved)?;
        let lost: Vec<UserId> = before
            .iter()
            .filter(|u| !after.contains(u))
            .copied()
            .collect();
        let mut audience: Vec<UserId> = viewers
            .into_iter()
            .chain(after)
            .filter(|u| !lost.contains(u))
            .collect();
        if let Some(target) = self.target {
            if target.is_public() || target.history_public_to_subscribers {
                audience.extend(subscriptions::active_recipients(conn, target.id)?);
            }
        }
        audience.sort_unstable();
        audience.dedup();
        Ok((audience, lost))
    }

    fn is_resolve_toggle(&self) -> bool {
        matches!(
            self.change,
            Some(TopicChange::Resolve | TopicChange::Unresolve)
        ) && self.target.is_none()
    }

    /// The messages the move takes along, within the time limit of a whole-topic move.
    fn messages_to_move(&self, conn: &mut DbConn) -> ActionResult<Vec<MessageId>> {
        let mode = self.edit.propagate_mode;
        let (policy, user, row) = (self.policy, self.user, self.row);
        let moved = topic_messages(conn, policy, user, self.channel, &row.topic, row, mode)?;
        let between_channels = self.target.is_some();
        let resolve = self.is_resolve_toggle();
        limit_by_time(
            policy,
            user,
            &moved,
            between_channels,
            resolve,
            mode,
            self.now,
        )
    }

    /// Writes each moved message's new place and its edit-history entry.
    fn relocate(&self, conn: &mut DbConn, moved: &[MessageId]) -> ActionResult<()> {
        if let Some(target) = self.target {
            // Before anything is written (`spans::hold_channels_for_move`); the notices posted
            // after it in either channel then find their send locks held, taken in ID order.
            parley_storage::spans::hold_channels_for_move(conn, &[self.channel.id, target.id])?;
        }
        let moved_time = (!self.is_resolve_toggle()).then_some(self.now);
        for message_id in moved {
            let current = messages::by_id(conn, *message_id)?.ok_or_else(invalid_message)?;
            let mut entry = json!({"user_id": self.user.id, "timestamp": self.now});
            if self.change.is_some() {
                entry["prev_topic"] = json!(current.topic);
                entry["topic"] = json!(self.final_topic);
            }
            if let Some(t) = self.target {
                entry["prev_stream"] = json!(self.channel.id);
                entry["stream"] = json!(t.id);
            }
            let history = history_with(current.edit_history.as_deref(), entry);
            messages::set_location(
                conn,
                *message_id,
                self.destination().id,
                &self.final_topic,
                self.now,
                moved_time,
                &history,
            )?;
        }
        Ok(())
    }
}

fn detached(uploads: Detached) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert(
        "detached_uploads".into(),
        serde_json::to_value(uploads).unwrap_or_default(),
    );
    out
}

/// A move, as the `update_message` event describes it.
struct Movement<'a> {
    channel: &'a Channel,
    target: Option<&'a Channel>,
    orig_topic: &'a str,
    topic: &'a str,
    propagate_mode: PropagateMode,
    ids: &'a [MessageId],
    /// The new topic's linkifier matches, as `topic_links` lists them.
    topic_links: Vec<parley_wire::message::TopicLink>,
}

/// The body of an `update_message` event (flags are added per user).
fn update_body(
    user: &User,
    row: &messages::MessageRow,
    now: i64,
    edited: Option<&(String, String)>,
    movement: Option<&Movement<'_>>,
) -> UpdateMessage {
    let mut body = UpdateMessage::new(user.id, now, MessageId(row.id));
    if let Some((content, rendered)) = edited {
        body.orig_content = Some(row.content.clone());
        body.orig_rendered_content = Some(row.rendered_content.clone());
        body.content = Some(content.clone());
        body.rendered_content = Some(rendered.clone());
        body.is_me_message = Some(content.starts_with("/me "));
    }
    if let Some(m) = movement {
        body.stream_id = Some(m.channel.id);
        body.stream_name = Some(m.channel.name.clone());
        body.message_ids = m.ids.to_vec();
        body.propagate_mode = Some(m.propagate_mode.name());
        body.orig_subject = Some(m.orig_topic.to_owned());
        if m.orig_topic != m.topic {
            body.subject = Some(m.topic.to_owned());
            body.topic_links = Some(m.topic_links.clone());
        }
        body.new_stream_id = m.target.map(|t| t.id);
    }
    body
}

/// Applies a content edit; returns the new Markdown and HTML.
fn edit_content(
    conn: &mut DbConn,
    realm_url: &str,
    camo: Option<&parley_markdown::Camo>,
    user: &User,
    row: &messages::MessageRow,
    edit: &MessageEdit,
    now: i64,
) -> ActionResult<Option<(String, String)>> {
    let Some(raw) = &edit.content else {
        return Ok(None);
    };
    let content = if raw.trim_end().is_empty() {
        "(deleted)".to_owned()
    } else {
        normalize_content(raw)?
    };
    let rendered = rendering::render_message(conn, realm_url, camo, &content);
    let entry = json!({
        "user_id": user.id, "timestamp": now,
        "prev_content": row.content, "prev_rendered_content": row.rendered_content,
    });
    let policy = crate::policy::load(conn)?;
    let mentioned: Vec<UserId> =
        crate::messages_send::mentioned_users(conn, &policy, user, &rendered)?
            .into_iter()
            .collect();
    let history = history_with(row.edit_history.as_deref(), entry);
    let edited = (content.clone(), rendered.html.clone());
    let change = ContentChange {
        content,
        rendered_content: rendered.html,
        has_link: rendered.has_link,
        has_image: rendered.has_image,
        has_attachment: rendered.has_attachment,
    };
    messages::set_content(conn, MessageId(row.id), &change, now, &history)?;
    messages::set_mentions(conn, MessageId(row.id), &mentioned)?;
    crate::alert_words::reflag_after_edit(
        conn,
        MessageId(row.id),
        UserId(row.sender_id),
        &edited.0,
    )?;
    Ok(Some(edited))
}

/// The messages of the topic that a move takes along, oldest first, among those the user may
/// see.
fn topic_messages(
    conn: &mut DbConn,
    policy: &Policy,
    user: &User,
    channel: &Channel,
    topic: &str,
    target: &messages::MessageRow,
    mode: PropagateMode,
) -> ActionResult<Vec<(MessageId, i64)>> {
    if mode == PropagateMode::ChangeOne {
        return Ok(vec![(MessageId(target.id), target.date_sent)]);
    }
    let subscribed = subscriptions::is_subscribed(conn, user.id, channel.id)?;
    let history = if channel.is_public()
        || (channel.history_public_to_subscribers
            && can_access_channel_content(user, channel, subscribed, &policy.groups))
    {
        vec![channel.id]
    } else {
        Vec::new()
    };
    let audience = Audience::new(user.id, history);
    let conditions = [
        Condition::Channel(channel.id),
        Condition::Topic(topic.to_owned()),
    ];
    let anchor = if mode == PropagateMode::ChangeLater {
        target.id
    } else {
        0
    };
    let found = messages::page(
        conn,
        &audience,
        &conditions,
        anchor,
        Direction::After,
        true,
        i64::MAX / 2,
    )?;
    Ok(found
        .into_iter()
        .map(|m| (MessageId(m.row.id), m.row.date_sent))
        .collect())
}

/// Applies the move time limit to a whole-topic move: when some messages are too old to move,
/// the move fails with the counts the client needs to retry with `change_later`.
fn limit_by_time(
    policy: &Policy,
    user: &User,
    moved: &[(MessageId, i64)],
    between_channels: bool,
    resolve: bool,
    mode: PropagateMode,
    now: i64,
) -> ActionResult<Vec<MessageId>> {
    let all: Vec<MessageId> = moved.iter().map(|(id, _)| *id).collect();
    if mode != PropagateMode::ChangeAll || resolve || exempt_from_move_limits(user) {
        return Ok(all);
    }
    let limit = if between_channels {
        policy.realm.move_messages_between_streams_limit_seconds
    } else {
        policy.realm.move_messages_within_stream_limit_seconds
    };
    let Some(limit) = limit else {
        return Ok(all);
    };
    let allowed: Vec<MessageId> = moved
        .iter()
        .filter(|(_, sent)| now - sent <= limit + TIME_LIMIT_GRACE_SECONDS)
        .map(|(id, _)| *id)
        .collect();
    if allowed.len() < all.len() {
        return Err(RequestError::new(
            ErrorCode::MoveMessagesTimeLimitExceeded,
            format!(
                "You only have permission to move the {}/{} most recent messages in this topic.",
                allowed.len(),
                all.len()
            ),
        )
        .with(
            "first_message_id_allowed_to_move",
            allowed.first().map(|id| id.0),
        )
        .with("total_messages_in_topic", all.len())
        .with("total_messages_allowed_to_move", allowed.len())
        .into());
    }
    Ok(all)
}

/// After a move into another channel: users who may not see the new channel lose their rows;
/// in a private channel with protected history, its subscribers get rows (read).
fn adjust_recipients(conn: &mut DbConn, target: &Channel, moved: &[MessageId]) -> ActionResult<()> {
    if target.invite_only {
        let subscribers = subscriptions::active_recipients(conn, target.id)?;
        messages::remove_rows_except(conn, moved, &subscribers)?;
        if !target.history_public_to_subscribers {
            messages::ensure_rows(
                conn,
                moved,
                &subscribers,
                parley_domain::message::flags::READ,
            )?;
        }
    }
    Ok(())
}

/// The notices a move posts: "resolved"/"unresolved" in the topic, or where messages went
/// and came from, as the edit asked. `channels` and `topics` are (old, new).
#[allow(clippy::too_many_arguments)]
fn post_move_notices(
    ctx: &Context,
    conn: &mut DbConn,
    events: &mut Events,
    user: &User,
    (old_channel, new_channel): (&Channel, &Channel),
    (old_topic, new_topic): (&str, &str),
    change: Option<TopicChange>,
    moved: &[MessageId],
    edit: &MessageEdit,
) -> ActionResult<()> {
    let actor = notices::silent_mention(user);
    let channel_changed = old_channel.id != new_channel.id;
    match change {
        Some(TopicChange::Resolve) if !channel_changed && edit.content.is_none() => {
            notices::post(
                ctx,
                conn,
                events,
                new_channel,
                new_topic,
                &format!("{actor} has marked this topic as resolved."),
                user.id,
            )?;
            return Ok(());
        }
        Some(TopicChange::Unresolve) if !channel_changed && edit.content.is_none() => {
            notices::post(
                ctx,
                conn,
                events,
                new_channel,
                new_topic,
                &format!("{actor} has marked this topic as unresolved."),
                user.id,
            )?;
            return Ok(());
        }
        _ => {}
    }
    let count = moved.len();
    let old_location = notices::topic_link(&old_channel.name, old_topic);
    let new_location = notices::topic_link(&new_channel.name, new_topic);
    if edit.send_notification_to_new_thread {
        let text = if edit.propagate_mode == PropagateMode::ChangeAll {
            format!("This topic was moved here from {old_location} by {actor}.")
        } else if count == 1 {
            format!("A message was moved here from {old_location} by {actor}.")
        } else {
            format!("{count} messages were moved here from {old_location} by {actor}.")
        };
        notices::post(ctx, conn, events, new_channel, new_topic, &text, user.id)?;
    }
    if edit.send_notification_to_old_thread {
        let text = if edit.propagate_mode == PropagateMode::ChangeAll {
            format!("This topic was moved to {new_location} by {actor}.")
        } else if count == 1 {
            format!("A message was moved from this topic to {new_location} by {actor}.")
        } else {
            format!("{count} messages were moved from this topic to {new_location} by {actor}.")
        };
        notices::post(ctx, conn, events, old_channel, old_topic, &text, user.id)?;
    }
    Ok(())
}

/// `GET /messages/{message_id}/history`: the message as it was after each edit, oldest first;
/// a content edit's snapshot also has the previous content, its rendering, and
/// `content_html_diff` (the new rendering with the words inserted and deleted marked).
pub async fn message_history(
    ctx: &Context,
    user: User,
    id: MessageId,
    allow_empty_topic_name: bool,
) -> ActionResult<Vec<Value>> {
    ctx.run(move |conn| {
        let policy = policy::load(conn)?;
        let message = accessible_message(conn, &policy, &user, id)?.ok_or_else(invalid_message)?;
        let row = message.row;
        let shown = |topic: &str| {
            if topic.is_empty() && !allow_empty_topic_name {
                parley_domain::message::EMPTY_TOPIC_DISPLAY_NAME.to_owned()
            } else {
                topic.to_owned()
            }
        };
        let entries: Vec<Value> = row
            .edit_history
            .as_deref()
            .and_then(|h| serde_json::from_str(h).ok())
            .unwrap_or_default();
        let mut content = row.content.clone();
        let mut rendered = row.rendered_content.clone();
        let mut topic = row.topic.clone();
        let mut snapshots = Vec::new();
        for entry in &entries {
            let mut snapshot = json!({
                "content": content, "rendered_content": rendered, "topic": shown(&topic),
                "timestamp": entry["timestamp"], "user_id": entry["user_id"],
            });
            if let Some(prev) = entry.get("prev_content").and_then(Value::as_str) {
                let prev_rendered = entry["prev_rendered_content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                snapshot["prev_content"] = json!(prev);
                snapshot["prev_rendered_content"] = json!(prev_rendered);
                snapshot["content_html_diff"] =
                    json!(parley_markdown::html_diff::highlight_html_differences(
                        &prev_rendered,
                        &rendered
                    ));
                content = prev.to_owned();
                rendered = prev_rendered;
            }
            if let Some(prev) = entry.get("prev_topic").and_then(Value::as_str) {
                snapshot["prev_topic"] = json!(shown(prev));
                topic = prev.to_owned();
            }
            if entry.get("prev_stream").is_some() {
                snapshot["prev_stream"] = entry["prev_stream"].clone();
                snapshot["stream"] = entry["stream"].clone();
            }
            snapshots.push(snapshot);
        }
        snapshots.push(json!({
            "content": content, "rendered_content": rendered, "topic": shown(&topic),
            "timestamp": row.date_sent, "user_id": row.sender_id,
        }));
        snapshots.reverse();
        Ok(snapshots)
    })
    .await
}
