//! Emoji reactions.

use crate::access::{accessible_message, invalid_message};
use crate::context::Context;
use crate::error::ActionResult;
use crate::notify::messages::{message_viewers, reaction_changed};
use crate::policy;
use parley_domain::message::flags;
use parley_domain::user::User;
use parley_domain::{ErrorCode, MessageId, RequestError};
use parley_storage::messages;
use parley_storage::reactions::{self, Reaction};
use parley_storage::StorageError;

pub use parley_domain::reaction::EmojiRef;

/// Checks an emoji and fills in what was left out; unknown emoji fail with the reference's
/// messages.
fn resolve_emoji(emoji: &EmojiRef) -> Result<(String, String, String), RequestError> {
    let name = emoji
        .emoji_name
        .clone()
        .ok_or_else(|| RequestError::missing_param("emoji_name"))?;
    let kind = emoji
        .reaction_type
        .clone()
        .unwrap_or_else(|| "unicode_emoji".to_owned());
    match kind.as_str() {
        "unicode_emoji" => {
            let known = parley_markdown::emoji_code_for_name(&name);
            let code = match (&emoji.emoji_code, known) {
                (Some(code), Some(known)) if *code == known => code.clone(),
                (Some(code), _) if !parley_markdown::is_emoji_code(code) => {
                    return Err(RequestError::bad_request("Invalid emoji code."));
                }
                (Some(_), _) => return Err(RequestError::bad_request("Invalid emoji name.")),
                (None, Some(known)) => known,
                (None, None) => {
                    return Err(RequestError::bad_request(format!(
                        "Emoji '{name}' does not exist"
                    )))
                }
            };
            Ok((name, code, kind))
        }
        "zulip_extra_emoji" => {
            let code = emoji
                .emoji_code
                .clone()
                .unwrap_or_else(|| "zulip".to_owned());
            if code != "zulip" {
                return Err(RequestError::bad_request("Invalid emoji code."));
            }
            if name != "zulip" {
                return Err(RequestError::bad_request("Invalid emoji name."));
            }
            Ok((name, code, kind))
        }
        // Custom emoji arrive with the organization features; none exists yet.
        "realm_emoji" => Err(RequestError::bad_request("Invalid custom emoji.")),
        _ => Err(RequestError::invalid_param(
            "reaction_type",
            "Invalid emoji type.",
        )),
    }
}

/// `POST /messages/{message_id}/reactions`.
pub async fn add_reaction(
    ctx: &Context,
    user: User,
    id: MessageId,
    emoji: EmojiRef,
) -> ActionResult<()> {
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let found = accessible_message(conn, &policy, &user, id)?.ok_or_else(invalid_message)?;
        let existing = reactions::of_messages(conn, &[id])?;
        // Someone already used this emoji: reuse their name, skip validation.
        let (name, code, kind) = match existing.iter().find(|r| {
            Some(&r.emoji_code) == emoji.emoji_code.as_ref()
                && r.reaction_type
                    == emoji
                        .reaction_type
                        .clone()
                        .unwrap_or_else(|| "unicode_emoji".into())
        }) {
            Some(r) => (
                r.emoji_name.clone(),
                r.emoji_code.clone(),
                r.reaction_type.clone(),
            ),
            None => match crate::realm_emoji::custom_reaction(conn, &emoji)? {
                Some(custom) => custom,
                None => resolve_emoji(&emoji)?,
            },
        };
        if found.flags.is_none() {
            messages::add_historical_row(conn, user.id, id, flags::READ | flags::HISTORICAL)?;
        }
        let reaction = Reaction {
            message_id: id,
            user_id: user.id,
            emoji_name: name,
            emoji_code: code,
            reaction_type: kind,
        };
        match reactions::add(conn, &reaction) {
            Err(StorageError::UniqueViolation(_)) => {
                return Err(RequestError::new(
                    ErrorCode::ReactionAlreadyExists,
                    "Reaction already exists.",
                )
                .into())
            }
            other => other?,
        }
        let audience = message_viewers(conn, &found.row)?;
        events.push(reaction_changed(&ctx2, true, &user, &reaction, audience));
        Ok(())
    })
    .await
}

/// `DELETE /messages/{message_id}/reactions`.
pub async fn remove_reaction(
    ctx: &Context,
    user: User,
    id: MessageId,
    emoji: EmojiRef,
) -> ActionResult<()> {
    if emoji.emoji_name.is_none() && emoji.emoji_code.is_none() {
        return Err(RequestError::bad_request(
            "At least one of the following arguments must be present: emoji_name, emoji_code",
        )
        .into());
    }
    let ctx2 = ctx.clone();
    ctx.write(move |conn, events| {
        let policy = policy::load(conn)?;
        let found = accessible_message(conn, &policy, &user, id)?.ok_or_else(invalid_message)?;
        let kind = match emoji.reaction_type.clone() {
            Some(kind) => kind,
            None => crate::realm_emoji::default_reaction_type(conn, &emoji)?,
        };
        let code = match (&emoji.emoji_code, &emoji.emoji_name) {
            (Some(code), _) => code.clone(),
            (None, Some(name)) => reactions::of_messages(conn, &[id])?
                .into_iter()
                .find(|r| r.user_id == user.id && &r.emoji_name == name && r.reaction_type == kind)
                .map(|r| r.emoji_code)
                .or_else(|| parley_markdown::emoji_code_for_name(name))
                .unwrap_or_default(),
            (None, None) => String::new(),
        };
        let existing = reactions::of_messages(conn, &[id])?
            .into_iter()
            .find(|r| r.user_id == user.id && r.emoji_code == code && r.reaction_type == kind);
        if !reactions::remove(conn, id, user.id, &code, &kind)? {
            return Err(RequestError::new(
                ErrorCode::ReactionDoesNotExist,
                "Reaction doesn't exist.",
            )
            .into());
        }
        if let Some(reaction) = existing {
            let audience = message_viewers(conn, &found.row)?;
            events.push(reaction_changed(&ctx2, false, &user, &reaction, audience));
        }
        Ok(())
    })
    .await
}
