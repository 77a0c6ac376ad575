//! The caller's alert words.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{Json, Params};
use actix_web::web;
use parley_actions::alert_words;
use parley_actions::Context;

params! {
    /// `GET /users/me/alert_words`.
    pub struct ListParams {}
}

params! {
    /// `POST` and `DELETE /users/me/alert_words`.
    pub struct WordsParams {
        alert_words: Json<Vec<String>>,
    }
}

/// GET /users/me/alert_words — the caller's alert words.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<ListParams>,
) -> ApiResult<Success> {
    let words = alert_words::list_alert_words(&ctx, me).await?;
    Ok(Success::empty().with("alert_words", words))
}

/// POST /users/me/alert_words — add alert words; returns the whole list.
pub async fn add(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<WordsParams>,
) -> ApiResult<Success> {
    let words = alert_words::do_add_alert_words(&ctx, me, p.alert_words.0).await?;
    Ok(Success::empty().with("alert_words", words))
}

/// DELETE /users/me/alert_words — remove alert words; returns the whole list.
pub async fn remove(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<WordsParams>,
) -> ApiResult<Success> {
    let words = alert_words::do_remove_alert_words(&ctx, me, p.alert_words.0).await?;
    Ok(Success::empty().with("alert_words", words))
}
