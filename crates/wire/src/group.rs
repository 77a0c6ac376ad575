//! User groups as the API shows them (`GET /user_groups`, the snapshot's `realm_user_groups`,
//! the `user_group` `add` event).

use parley_domain::groups::GroupId;
pub use parley_domain::groups::GroupSetting as GroupSettingValue;
use parley_domain::UserId;
use serde::Serialize;
use std::collections::BTreeMap;

/// A user group.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UserGroup {
    /// ID.
    pub id: GroupId,
    /// Name (`role:*` for system groups).
    pub name: String,
    /// Description.
    pub description: String,
    /// Direct members, active users only, ascending.
    pub members: Vec<UserId>,
    /// Direct subgroups, ascending.
    pub direct_subgroup_ids: Vec<GroupId>,
    /// A role's group.
    pub is_system_group: bool,
    /// Deactivated groups keep their settings but grant nothing.
    pub deactivated: bool,
    /// Creation time, Unix seconds; null for groups made before it was recorded.
    pub date_created: Option<i64>,
    /// Creator, null when unknown.
    pub creator_id: Option<i64>,
    /// The group's own permission settings, by the names of `domain::group_permissions`.
    #[serde(flatten)]
    pub settings: BTreeMap<&'static str, GroupSettingValue>,
}
