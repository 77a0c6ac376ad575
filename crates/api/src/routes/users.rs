//! Users: listing, looking up, creating, changing, deactivating and reactivating.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, Params};
use actix_web::web;
use parley_actions::user_activation;
use parley_actions::users::{self, CreateUser, UpdateUser, UserRef};
use parley_actions::Context;
use parley_domain::{ProfileFieldId, Role, UserId};
use parley_wire::user::UserOptions;
use serde_json::Value;

params! {
    /// `GET /users`.
    pub struct GetUsers {
        client_gravatar: bool = true,
        include_custom_profile_fields: bool = false,
        user_ids: Option<Json<Vec<UserId>>>,
    }
}

/// GET /users — every user the caller may see, or those of `user_ids`.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<GetUsers>,
) -> ApiResult<Success> {
    let options = UserOptions {
        client_gravatar: p.client_gravatar,
        include_custom_profile_fields: p.include_custom_profile_fields,
    };
    let members = users::get_users(&ctx, me, p.user_ids.map(|ids| ids.0), options).await?;
    Ok(Success::empty().with("members", members))
}

params! {
    /// `GET /users/{user_id}` and `GET /users/{email}`.
    pub struct GetUser {
        client_gravatar: bool = true,
        include_custom_profile_fields: bool = false,
    }
}

/// The user a path segment names: a numeric ID or an email address.
fn user_ref(segment: &str) -> ApiResult<UserRef> {
    Ok(if segment.bytes().all(|b| b.is_ascii_digit()) {
        UserRef::Id(path_param::<UserId>("user_id", segment)?)
    } else {
        UserRef::Email(path_param::<String>("email", segment)?)
    })
}

/// GET /users/{user_id} and GET /users/{email} — one user, by ID or address.
pub async fn get_one(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<GetUser>,
) -> ApiResult<Success> {
    let target = user_ref(&path.into_inner())?;
    let options = UserOptions {
        client_gravatar: p.client_gravatar,
        include_custom_profile_fields: p.include_custom_profile_fields,
    };
    let user = users::access_user(&ctx, me, target, options).await?;
    Ok(Success::empty().with("user", user))
}

params! {
    /// `GET /users/me`.
    pub struct GetMe {}
}

/// GET /users/me — the caller's own record.
pub async fn me(ctx: web::Data<Context>, Auth(me): Auth, _: Params<GetMe>) -> ApiResult<Success> {
    let fields = users::get_own_user(&ctx, me).await?;
    Ok(Success::from_fields(fields))
}

params! {
    /// `POST /users`.
    pub struct CreateUserParams {
        email: String,
        password: String,
        full_name: String,
    }
}

/// POST /users — an administrator creates a member account.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateUserParams>,
) -> ApiResult<Success> {
    let request = CreateUser {
        email: p.email,
        full_name: p.full_name,
        password: Some(p.password),
        role: Role::Member,
    };
    let created = users::create_user_as(&ctx, &me, request).await?;
    Ok(Success::empty().with("user_id", created.user.id))
}

/// One entry of `PATCH /users/{user_id}`'s `profile_data`.
#[derive(Debug, serde::Deserialize)]
pub struct ProfileDataValue {
    /// Field ID.
    pub id: ProfileFieldId,
    /// New value (text or a list of user IDs); null or empty clears it.
    #[serde(default)]
    pub value: Option<Value>,
}

params! {
    /// `PATCH /users/{user_id}`.
    pub struct UpdateUserParams {
        full_name: Option<String>,
        role: Option<Json<i64>>,
        profile_data: Option<Json<Vec<ProfileDataValue>>>,
    }
}

/// PATCH /users/{user_id} and PATCH /users/{email} — an administrator changes a user's name,
/// role or profile data.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateUserParams>,
) -> ApiResult<Success> {
    let target = user_ref(&path.into_inner())?;
    let change = UpdateUser {
        full_name: p.full_name,
        role: p.role.map(|r| r.0),
        profile_data: p
            .profile_data
            .map(|d| d.0.into_iter().map(|e| (e.id, e.value)).collect()),
    };
    users::update_user_as(&ctx, &me, target, change).await?;
    Ok(Success::empty())
}

params! {
    /// `DELETE /users/{user_id}`.
    pub struct DeactivateParams {
        deactivation_notification_comment: Option<String>,
    }
}

/// DELETE /users/{user_id} — an administrator deactivates a user.
pub async fn deactivate(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(_p): Params<DeactivateParams>,
) -> ApiResult<Success> {
    let target = path_param::<UserId>("user_id", &path.into_inner())?;
    user_activation::deactivate_user_as(&ctx, &me, target).await?;
    Ok(Success::empty())
}

params! {
    /// `DELETE /users/me`.
    pub struct DeactivateOwn {}
}

/// DELETE /users/me — deactivate the caller's own account.
pub async fn deactivate_me(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    _: Params<DeactivateOwn>,
) -> ApiResult<Success> {
    user_activation::deactivate_own_account(&ctx, &me).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /users/{user_id}/reactivate`.
    pub struct Reactivate {}
}

/// POST /users/{user_id}/reactivate — an administrator reactivates a user.
pub async fn reactivate(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<Reactivate>,
) -> ApiResult<Success> {
    let target = path_param::<UserId>("user_id", &path.into_inner())?;
    user_activation::reactivate_user_as(&ctx, &me, target).await?;
    Ok(Success::empty())
}
