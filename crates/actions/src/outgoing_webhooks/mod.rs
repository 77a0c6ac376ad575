//! Outgoing webhook bots: a channel message that mentions one, or a direct message with one
//! among its recipients, is POSTed to the bot's URL, and what the bot's server answers is
//! posted back in the same conversation, as the reference's outgoing webhooks do
//! (`/zulip-outgoing-webhook` in its API description).
//!
//! **When.** After the transaction that sent the message commits, on the process that
//! committed it (so several processes never call twice). The triggers are read from the
//! `message` events the transaction recorded, which every way of sending produces (the API,
//! scheduled messages, reminders, notices): a bot is triggered when the message mentions it by
//! name (directly or through a group; silent mentions do not count) in a channel, or when it is
//! a participant of a direct message. Messages sent by bots trigger nothing, so two bots cannot
//! answer each other forever.
//!
//! **Cost.** Nothing on the send path: the check of the recorded events is in memory (the
//! active outgoing webhook bots are kept in the organization cache), and the call runs on its
//! own task. A process that stops while a call is in flight loses that call (the reference
//! keeps them in a queue); its message is not lost.

mod call;
mod reply;

use crate::context::Context;
use parley_domain::UserId;
use parley_events::{Audience, Body, Event, MessagePayload};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What triggered a bot (the payload's `trigger`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// Mentioned in a channel message.
    Mention,
    /// A participant of a direct message.
    DirectMessage,
}

impl Trigger {
    /// As the payload spells it (feature level 201 renamed `private_message`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Trigger::Mention => "mention",
            Trigger::DirectMessage => "direct_message",
        }
    }
}

/// A message that may trigger some of `candidates`: the users it mentions (channel messages)
/// or its participants (direct messages), the sender excluded.
struct Candidate {
    message: Arc<MessagePayload>,
    trigger: Trigger,
    sender: UserId,
    users: BTreeSet<UserId>,
}

/// Called with the events of every committed transaction: starts the webhook calls their
/// messages trigger. Returns at once.
pub(crate) fn after_commit(ctx: &Context, events: &[Event]) {
    let candidates: Vec<Candidate> = events.iter().filter_map(candidate).collect();
    if candidates.is_empty() {
        return;
    }
    let cached = ctx.events.realm_cache().cached_outgoing_bots();
    if let Some(bots) = &cached {
        if !candidates
            .iter()
            .any(|c| c.users.iter().any(|u| bots.contains(u)))
        {
            return;
        }
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let ctx = ctx.clone();
    runtime.spawn(async move {
        let bots = match cached {
            Some(bots) => bots,
            None => match ctx.run(crate::realm_cache::outgoing_bots).await {
                Ok(bots) => bots,
                Err(e) => {
                    tracing::warn!("outgoing webhooks: cannot read the bots: {e}");
                    return;
                }
            },
        };
        for candidate in candidates {
            for bot in candidate.users.iter().filter(|u| bots.contains(u)) {
                let ctx = ctx.clone();
                let (message, trigger, sender, bot) = (
                    Arc::clone(&candidate.message),
                    candidate.trigger,
                    candidate.sender,
                    *bot,
                );
                tokio::spawn(async move {
                    call::deliver(&ctx, message, trigger, sender, bot).await;
                });
            }
        }
    });
}

/// The message of a `message` event and who it could trigger.
fn candidate(event: &Event) -> Option<Candidate> {
    let (Body::Message(message), Audience::Message(recipients)) = (&event.body, &event.audience)
    else {
        return None;
    };
    let sender = UserId(message.message.get("sender_id")?.as_i64()?);
    let is_channel = message.message.get("type")?.as_str()? == "stream";
    let mut users: BTreeSet<UserId> = if is_channel {
        let mut mentioned = mentioned_by_name(&message.content_html);
        mentioned.extend(
            recipients
                .iter()
                .filter(|r| r.flags.iter().any(|f| f == "mentioned"))
                .map(|r| r.user_id),
        );
        mentioned
    } else {
        recipients.iter().map(|r| r.user_id).collect()
    };
    users.remove(&sender);
    (!users.is_empty()).then(|| Candidate {
        message: Arc::clone(message),
        trigger: if is_channel {
            Trigger::Mention
        } else {
            Trigger::DirectMessage
        },
        sender,
        users,
    })
}

/// The users a rendered message mentions by name (not silently): a bot mentioned in a channel
/// it is not subscribed to has no recipient row, yet it is triggered, as in the reference.
fn mentioned_by_name(html: &str) -> BTreeSet<UserId> {
    const MARK: &str = "<span class=\"user-mention\" data-user-id=\"";
    let mut found = BTreeSet::new();
    let mut rest = html;
    while let Some(at) = rest.find(MARK) {
        rest = &rest[at + MARK.len()..];
        let digits: &str = &rest[..rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(0)];
        if let Ok(id) = digits.parse::<i64>() {
            found.insert(UserId(id));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loud_mentions_by_name_count() {
        let html = "<p><span class=\"user-mention\" data-user-id=\"12\">@Bot</span> and \
                    <span class=\"user-mention silent\" data-user-id=\"13\">Other</span> and \
                    <span class=\"user-mention\" data-user-id=\"*\">@all</span> \
                    <span class=\"user-mention\" data-user-id=\"14\">@Third</span></p>";
        let found: Vec<i64> = mentioned_by_name(html).into_iter().map(|u| u.0).collect();
        assert_eq!(found, vec![12, 14]);
    }
}
