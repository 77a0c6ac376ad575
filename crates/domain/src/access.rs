//! Who may see what of a channel: its existence and settings (metadata) and its messages
//! (content). Private channels a user may not see must look exactly like channels that do not
//! exist, so callers answer both cases with the same error.

use crate::channel::Channel;
use crate::groups::GroupGraph;
use crate::user::User;

/// Whether `user` may know the channel exists and read its settings.
pub fn can_access_channel_metadata(
    user: &User,
    channel: &Channel,
    subscribed: bool,
    groups: &GroupGraph,
) -> bool {
    if subscribed {
        return true;
    }
    if user.role.is_guest() {
        return channel.is_web_public;
    }
    if channel.is_public() || user.role.is_admin() {
        return true;
    }
    can_subscribe_self(user, channel, groups)
        || groups.setting_contains(&channel.permissions.can_administer_channel_group, user)
}

/// Whether `user` may read the channel's messages: subscribers, and for public channels every
/// non-guest (guests only web-public ones).
pub fn can_access_channel_content(
    user: &User,
    channel: &Channel,
    subscribed: bool,
    groups: &GroupGraph,
) -> bool {
    if subscribed {
        return true;
    }
    if user.role.is_guest() {
        return channel.is_web_public;
    }
    channel.is_public() || can_subscribe_self(user, channel, groups)
}

/// Whether `user` may subscribe themselves: anyone but guests to public channels; private ones
/// need `can_subscribe_group` (or administering the channel).
pub fn can_subscribe_self(user: &User, channel: &Channel, groups: &GroupGraph) -> bool {
    if channel.is_archived {
        return false;
    }
    if user.role.is_guest() {
        return false;
    }
    channel.is_public()
        || groups.setting_contains(&channel.permissions.can_subscribe_group, user)
        || groups.setting_contains(&channel.permissions.can_administer_channel_group, user)
}

/// Whether `user` administers the channel (rename, permissions, archive): organization
/// administrators and members of `can_administer_channel_group`.
pub fn can_administer_channel(user: &User, channel: &Channel, groups: &GroupGraph) -> bool {
    user.is_active
        && (user.role.is_admin()
            || (!user.role.is_guest()
                && groups
                    .setting_contains(&channel.permissions.can_administer_channel_group, user)))
}
