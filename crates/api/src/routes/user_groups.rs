//! User groups: creating, listing, updating, deactivating, and their members and subgroups.

use crate::auth::Auth;
use crate::envelope::Success;
use crate::error::ApiResult;
use crate::params;
use crate::params::{path_param, Json, ParamMap, Params};
use crate::routes::channels::update_setting;
use actix_web::web;
use parley_actions::user_groups::{
    self, MembershipChange, NewUserGroup, SettingChange, UserGroupUpdate,
};
use parley_actions::Context;
use parley_domain::groups::{GroupId, GroupSetting};
use parley_domain::{RequestError, UserId};
use serde_json::Value;

fn group_id(raw: &str) -> Result<GroupId, crate::error::ApiError> {
    Ok(GroupId(path_param::<i64>("user_group_id", raw)?))
}

/// `POST /user_groups/create`.
#[derive(Debug)]
pub struct CreateParams {
    new: NewUserGroup,
}

impl params::FromParams for CreateParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let name = p
            .take::<Option<String>>("name")?
            .ok_or_else(|| RequestError::missing_param("name"))?;
        let description = p
            .take::<Option<String>>("description")?
            .ok_or_else(|| RequestError::missing_param("description"))?;
        let Json(members) = p
            .take::<Option<Json<Vec<i64>>>>("members")?
            .ok_or_else(|| RequestError::missing_param("members"))?;
        let subgroups = p
            .take::<Option<Json<Vec<i64>>>>("subgroups")?
            .map(|Json(v)| v)
            .unwrap_or_default();
        let mut settings = Vec::new();
        for name in user_groups::setting_names() {
            if let Some(Json(value)) = p.take::<Option<Json<GroupSetting>>>(name)? {
                settings.push((name.to_owned(), value));
            }
        }
        Ok(CreateParams {
            new: NewUserGroup {
                name,
                description,
                members,
                subgroups,
                settings,
            },
        })
    }
}

/// POST /user_groups/create — create a user group; answers its ID as `group_id`.
pub async fn create(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<CreateParams>,
) -> ApiResult<Success> {
    let id = user_groups::do_create_user_group(&ctx, me, p.new).await?;
    Ok(Success::empty().with("group_id", id.0))
}

params! {
    /// `GET /user_groups`.
    pub struct ListParams {
        include_deactivated_groups: bool = false,
    }
}

/// GET /user_groups — every user group of the organization.
pub async fn list(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    Params(p): Params<ListParams>,
) -> ApiResult<Success> {
    let groups = user_groups::get_user_groups(&ctx, me, p.include_deactivated_groups).await?;
    Ok(Success::empty().with("user_groups", groups))
}

/// `PATCH /user_groups/{user_group_id}`.
#[derive(Debug)]
pub struct UpdateParams {
    update: UserGroupUpdate,
}

impl params::FromParams for UpdateParams {
    fn from_params(p: &mut ParamMap) -> Result<Self, RequestError> {
        let mut update = UserGroupUpdate {
            name: p.take("name")?,
            description: p.take("description")?,
            deactivated: p.take("deactivated")?,
            settings: Vec::new(),
        };
        for name in user_groups::setting_names() {
            if let Some(Json(value)) = p.take::<Option<Json<Value>>>(name)? {
                let (new, old) = update_setting(name, value)?;
                update.settings.push(SettingChange {
                    name: name.to_owned(),
                    new,
                    old,
                });
            }
        }
        Ok(UpdateParams { update })
    }
}

/// PATCH /user_groups/{user_group_id} — rename, describe, reactivate or change settings.
pub async fn update(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<UpdateParams>,
) -> ApiResult<Success> {
    user_groups::do_update_user_group(&ctx, me, group_id(&path)?, p.update).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /user_groups/{user_group_id}/deactivate`.
    pub struct NoParams {}
}

/// POST /user_groups/{user_group_id}/deactivate — deactivate a group nothing uses.
pub async fn deactivate(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    _: Params<NoParams>,
) -> ApiResult<Success> {
    user_groups::do_deactivate_user_group(&ctx, me, group_id(&path)?).await?;
    Ok(Success::empty())
}

params! {
    /// `POST /user_groups/{user_group_id}/members`.
    pub struct MembersParams {
        add: Option<Json<Vec<i64>>>,
        delete: Option<Json<Vec<i64>>>,
        add_subgroups: Option<Json<Vec<i64>>>,
        delete_subgroups: Option<Json<Vec<i64>>>,
    }
}

/// POST /user_groups/{user_group_id}/members — add and remove members and subgroups.
pub async fn update_members(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<MembersParams>,
) -> ApiResult<Success> {
    let list = |v: Option<Json<Vec<i64>>>| v.map(|Json(v)| v).unwrap_or_default();
    let change = MembershipChange {
        add: list(p.add),
        delete: list(p.delete),
        add_subgroups: list(p.add_subgroups),
        delete_subgroups: list(p.delete_subgroups),
    };
    user_groups::do_update_user_group_members(&ctx, me, group_id(&path)?, change).await?;
    Ok(Success::empty())
}

params! {
    /// `GET /user_groups/{user_group_id}/members` and `.../members/{user_id}`.
    pub struct GetMembersParams {
        direct_member_only: bool = false,
    }
}

/// GET /user_groups/{user_group_id}/members — the group's member IDs.
pub async fn members(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<GetMembersParams>,
) -> ApiResult<Success> {
    let ids = user_groups::get_user_group_members(&ctx, me, group_id(&path)?, p.direct_member_only)
        .await?;
    Ok(Success::empty().with("members", ids))
}

/// GET /user_groups/{user_group_id}/members/{user_id} — whether a user is a member.
pub async fn is_member(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<(String, String)>,
    Params(p): Params<GetMembersParams>,
) -> ApiResult<Success> {
    let (group, user) = path.into_inner();
    let user = UserId(path_param::<i64>("user_id", &user)?);
    let is_member =
        user_groups::is_user_group_member(&ctx, me, group_id(&group)?, user, p.direct_member_only)
            .await?;
    Ok(Success::empty().with("is_user_group_member", is_member))
}

params! {
    /// `POST /user_groups/{user_group_id}/subgroups`.
    pub struct SubgroupsParams {
        add: Option<Json<Vec<i64>>>,
        delete: Option<Json<Vec<i64>>>,
    }
}

/// POST /user_groups/{user_group_id}/subgroups — add and remove subgroups.
pub async fn update_subgroups(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<SubgroupsParams>,
) -> ApiResult<Success> {
    let list = |v: Option<Json<Vec<i64>>>| v.map(|Json(v)| v).unwrap_or_default();
    user_groups::do_update_user_group_subgroups(
        &ctx,
        me,
        group_id(&path)?,
        list(p.add),
        list(p.delete),
    )
    .await?;
    Ok(Success::empty())
}

params! {
    /// `GET /user_groups/{user_group_id}/subgroups`.
    pub struct GetSubgroupsParams {
        direct_subgroup_only: bool = false,
    }
}

/// GET /user_groups/{user_group_id}/subgroups — the group's subgroup IDs.
pub async fn subgroups(
    ctx: web::Data<Context>,
    Auth(me): Auth,
    path: web::Path<String>,
    Params(p): Params<GetSubgroupsParams>,
) -> ApiResult<Success> {
    let ids =
        user_groups::get_user_group_subgroups(&ctx, me, group_id(&path)?, p.direct_subgroup_only)
            .await?;
    Ok(Success::empty().with("subgroups", ids))
}
