//! Reporting a message (`POST /messages/{message_id}/report`): the Notification Bot posts a
//! moderation request in the organization's moderation request channel
//! (`moderation_request_channel_id`), in the reference's words and layout.

use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::notices;
use crate::policy;
use parley_domain::channel::TopicsPolicy;
use parley_domain::message::dm_participants;
use parley_domain::user::User;
use parley_domain::{ChannelId, MessageId, RequestError, UserId};
use parley_storage::{channels, users};

/// The realm setting naming the moderation request channel (`-1`: reporting is off).
pub const MODERATION_REQUEST_CHANNEL: &str = "moderation_request_channel_id";

/// The longest `description` a report may carry (the reference's
/// `MAX_REPORT_MESSAGE_EXPLANATION_LENGTH`).
pub const MAX_DESCRIPTION_LENGTH: usize = 1000;

/// The longest part of the reported message quoted in the report; longer ones are cut, leaving
/// room for the description and the template (the reference's `MAX_MESSAGE_LENGTH - 1000 -
/// 500`).
pub const MAX_SNIPPET_LENGTH: usize = 10_000 - MAX_DESCRIPTION_LENGTH - 500;

/// Whether `channel` is the organization's moderation request channel (which must stay private).
pub(crate) fn is_moderation_request_channel(
    conn: &mut parley_storage::DbConn,
    channel: ChannelId,
) -> ActionResult<bool> {
    Ok(parley_storage::realms::permissions(conn)?
        .get(MODERATION_REQUEST_CHANNEL)
        .and_then(|v| v.parse::<i64>().ok())
        == Some(channel.0))
}

/// Why a message is reported, as `report_type` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportType {
    /// `spam`.
    Spam,
    /// `harassment`.
    Harassment,
    /// `inappropriate`.
    Inappropriate,
    /// `norms`.
    Norms,
    /// `other` (needs a description).
    Other,
}

impl ReportType {
    /// Parses `report_type`; anything else is `BAD_REQUEST` naming it.
    pub fn parse(raw: &str) -> Result<ReportType, RequestError> {
        Ok(match raw {
            "spam" => ReportType::Spam,
            "harassment" => ReportType::Harassment,
            "inappropriate" => ReportType::Inappropriate,
            "norms" => ReportType::Norms,
            "other" => ReportType::Other,
            _ => {
                return Err(RequestError::invalid_param(
                    "report_type",
                    "Invalid report_type",
                ))
            }
        })
    }

    /// The reason as the report states it.
    pub fn label(self) -> &'static str {
        match self {
            ReportType::Spam => "Spam",
            ReportType::Harassment => "Harassment",
            ReportType::Inappropriate => "Inappropriate content",
            ReportType::Norms => "Violates community norms",
            ReportType::Other => "Other reason",
        }
    }
}

/// `POST /messages/{message_id}/report`: checks the report, then posts it in the moderation
/// request channel as the Notification Bot, in the topic "<sender's name> moderation" (the empty
/// topic when the channel allows only that). Answers the report's message ID.
pub async fn report_message(
    ctx: &Context,
    reporter: User,
    message_id: MessageId,
    report_type: ReportType,
    description: String,
) -> ActionResult<MessageId> {
    if description.chars().count() > MAX_DESCRIPTION_LENGTH {
        return Err(RequestError::invalid_param(
            "description",
            format!("description is too long (limit: {MAX_DESCRIPTION_LENGTH} characters)"),
        )
        .into());
    }
    if report_type == ReportType::Other && description.is_empty() {
        return Err(RequestError::bad_request("An explanation is required.").into());
    }
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let not_enabled =
            || RequestError::bad_request("Message reporting is not enabled in this organization.");
        let channel_id = parley_storage::realms::permissions(conn)?
            .get(MODERATION_REQUEST_CHANNEL)
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|id| *id >= 0)
            .ok_or_else(not_enabled)?;
        let channel = channels::by_id(conn, ChannelId(channel_id))?
            .filter(|c| !c.is_archived)
            .ok_or_else(not_enabled)?;
        let policy = policy::load(conn)?;
        let reported = accessible_message(conn, &policy, &reporter, message_id)?
            .ok_or_else(invalid_message)?
            .row;
        let sender = users::by_id(conn, UserId(reported.sender_id))?.ok_or_else(invalid_message)?;
        let when = global_time(reported.date_sent);
        let header_to = |to: String| {
            format!(
                "{} reported a message sent by {} to {to} at {when}.",
                notices::silent_mention(&reporter),
                notices::silent_mention(&sender),
            )
        };
        let plain_header = format!(
            "{} reported a message sent by {} at {when}.",
            notices::silent_mention(&reporter),
            notices::silent_mention(&sender),
        );
        let (header, original) = match (reported.channel_id, reported.dm_key.as_deref()) {
            (Some(id), _) => {
                let name = channels::by_id(conn, ChannelId(id))?
                    .map(|c| c.name)
                    .unwrap_or_default();
                let link = message_link_syntax(id, &name, &reported.topic, reported.id);
                (plain_header, format!("Original message at {link}"))
            }
            (None, key) => {
                let participants = dm_participants(key.unwrap_or(""));
                let link = format!(
                    "[Original message]({})",
                    dm_message_url(&ctx2.realm.url, &participants, reported.id)
                );
                let others: Vec<UserId> = participants
                    .iter()
                    .copied()
                    .filter(|id| *id != sender.id)
                    .collect();
                let header = if participants.len() <= 2 {
                    if sender.id != reporter.id {
                        plain_header
                    } else {
                        // Reporting one's own one-on-one message names the other person (or
                        // oneself, for a message to oneself).
                        let to = match others.first() {
                            Some(id) => users::by_id(conn, *id)?
                                .map(|u| notices::silent_mention(&u))
                                .unwrap_or_default(),
                            None => notices::silent_mention(&reporter),
                        };
                        header_to(to)
                    }
                } else {
                    let mut people = users::by_ids(conn, &others)?;
                    people.sort_by_key(|u| others.iter().position(|id| *id == u.id));
                    header_to(mentions_for_display(&people))
                };
                (header, link)
            }
        };
        let snippet = truncate(&reported.content, MAX_SNIPPET_LENGTH, "\n[message truncated]");
        let fence = unused_fence(&snippet);
        let content = format!(
            "{header}\n```quote\n**{}**. {description}\n```\n\n{fence} spoiler {original}\n{snippet}\n{fence}",
            report_type.label(),
        );
        let topic = if channel.topics_policy == TopicsPolicy::EmptyTopicOnly {
            String::new()
        } else {
            format!("{} moderation", sender.full_name)
        };
        notices::post(&ctx2, conn, events, &channel, &topic, &content, reporter.id)
    })
    .await
}

/// A global time mention, `<time:2024-05-01T12:00:00+00:00>`, which every reader sees in their
/// own time zone.
fn global_time(unix: i64) -> String {
    let format =
        ::time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]+00:00");
    let text = ::time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default();
    format!("<time:{text}>")
}

/// Names people as a list: "A", "A and B", "A, B, and C".
fn mentions_for_display(people: &[User]) -> String {
    let names: Vec<String> = people.iter().map(notices::silent_mention).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

/// `content` cut to `max` characters, ending with `marker`, when longer.
fn truncate(content: &str, max: usize, marker: &str) -> String {
    if content.chars().count() <= max {
        return content.to_owned();
    }
    let keep = max.saturating_sub(marker.chars().count());
    let mut out: String = content.chars().take(keep).collect();
    out.push_str(marker);
    out
}

/// A code fence longer than any that starts a line of `content` (at least three backticks), so
/// quoting it cannot end the block early.
fn unused_fence(content: &str) -> String {
    let longest = content
        .lines()
        .filter_map(|line| {
            let indent = line.len() - line.trim_start_matches(' ').len();
            (indent <= 3).then(|| line[indent..].chars().take_while(|c| *c == '`').count())
        })
        .filter(|n| *n >= 3)
        .max()
        .map_or(3, |n| n + 1);
    "`".repeat(longest)
}

/// Whether a name would break the `#**channel>topic@id**` syntax, which then falls back to a
/// plain Markdown link.
fn breaks_link_syntax(name: &str) -> bool {
    ["`", ">", "*", "&", "$$", "\n", "\r"]
        .iter()
        .any(|bad| name.contains(bad))
}

/// The URL-fragment encoding of narrow links (`%` becomes `.`, as the web app reads them).
pub(crate) fn encode_hash_component(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' | b'~' | b'*' => {
                out.push(byte as char)
            }
            b'.' => out.push_str(".2E"),
            _ => out.push_str(&format!(".{byte:02X}")),
        }
    }
    out
}

/// A link to a channel message in message syntax, or a Markdown link when the names would break
/// that syntax.
fn message_link_syntax(channel_id: i64, channel: &str, topic: &str, message_id: i64) -> String {
    if !breaks_link_syntax(channel) && !breaks_link_syntax(topic) {
        return format!("#**{channel}>{topic}@{message_id}**");
    }
    let shown_topic = if topic.is_empty() {
        parley_domain::message::EMPTY_TOPIC_DISPLAY_NAME
    } else {
        topic
    };
    let escape = |s: &str| {
        s.replace('`', "&#96;")
            .replace('>', "&gt;")
            .replace('*', "&#42;")
    };
    format!(
        "[#{} > {} @ 💬](#narrow/channel/{channel_id}-{}/topic/{}/near/{message_id})",
        escape(channel),
        escape(shown_topic),
        encode_hash_component(&channel.replace(' ', "-")),
        encode_hash_component(topic),
    )
}

/// The address of a direct message: `<realm>/#narrow/dm/<ids>-pm/near/<id>`.
pub(crate) fn dm_message_url(realm_url: &str, participants: &[UserId], message_id: i64) -> String {
    let ids: Vec<String> = participants.iter().map(|id| id.0.to_string()).collect();
    format!(
        "{}/#narrow/dm/{}-pm/near/{message_id}",
        realm_url.trim_end_matches('/'),
        ids.join(",")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outgrow_the_content() {
        assert_eq!(unused_fence("plain"), "```");
        assert_eq!(unused_fence("```\ncode\n```"), "````");
        assert_eq!(unused_fence("  `````x"), "``````");
        assert_eq!(unused_fence("    ````indented code"), "```");
    }

    #[test]
    fn truncation_keeps_the_marker_within_the_limit() {
        assert_eq!(truncate("short", 10, "…"), "short");
        let cut = truncate(&"x".repeat(20), 10, "\n[cut]");
        assert_eq!(cut.chars().count(), 10);
        assert!(cut.ends_with("\n[cut]"));
    }

    #[test]
    fn links_fall_back_for_awkward_names() {
        assert_eq!(
            message_link_syntax(3, "design", "ideas", 9),
            "#**design>ideas@9**"
        );
        assert_eq!(
            message_link_syntax(3, "Sw*den", "", 9),
            "[#Sw&#42;den > general chat @ 💬](#narrow/channel/3-Sw*den/topic//near/9)"
        );
        assert_eq!(encode_hash_component("a b.c(d)"), "a.20b.2Ec.28d.29");
    }

    #[test]
    fn report_types_and_times() {
        assert_eq!(
            ReportType::parse("norms").unwrap().label(),
            "Violates community norms"
        );
        assert_eq!(
            ReportType::parse("rude").unwrap_err().data["var_name"],
            "report_type"
        );
        assert_eq!(global_time(0), "<time:1970-01-01T00:00:00+00:00>");
    }
}
