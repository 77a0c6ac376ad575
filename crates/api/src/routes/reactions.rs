//! Emoji reactions.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::Params;
use crate::routes::messages::message_id;
use actix_web::web;
use parley_actions::reactions::{self, EmojiRef};
use parley_actions::Context;

params! {
    /// `POST` and `DELETE /messages/{message_id}/reactions`.
    pub struct ReactionParams {
        emoji_name: Option<String>,
        emoji_code: Option<String>,
        reaction_type: Option<String>,
    }
}

impl ReactionParams {
    fn emoji(self) -> EmojiRef {
        EmojiRef {
            emoji_name: self.emoji_name,
            emoji_code: self.emoji_code,
            reaction_type: self.reaction_type,
        }
    }
}

/// POST /messages/{message_id}/reactions — react with an emoji.
pub async fn add(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<ReactionParams>,
) -> ApiResult<Success> {
    reactions::add_reaction(&ctx, me, message_id(&path)?, p.emoji()).await?;
    Ok(Success::empty())
}

/// DELETE /messages/{message_id}/reactions — take a reaction back.
pub async fn remove(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<ReactionParams>,
) -> ApiResult<Success> {
    reactions::remove_reaction(&ctx, me, message_id(&path)?, p.emoji()).await?;
    Ok(Success::empty())
}
