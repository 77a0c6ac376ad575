//! Channels as the API shows them: the channel object (`GET /streams`, the snapshot's `streams`,
//! `never_subscribed`, the `stream` events) and the subscription object (a channel plus the
//! subscriber's own settings).

use parley_domain::channel::{Channel as Stored, ChannelPermissions, SubscriptionSettings};
use parley_domain::groups::GroupSetting;
use parley_domain::{ChannelId, UserId};
use serde::Serialize;

/// The fields every channel object carries.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Channel {
    /// ID.
    pub stream_id: ChannelId,
    /// Name.
    pub name: String,
    /// Markdown description.
    pub description: String,
    /// HTML description.
    pub rendered_description: String,
    /// Creation time, Unix seconds.
    pub date_created: i64,
    /// Creator, null when unknown.
    pub creator_id: Option<UserId>,
    /// Private channel.
    pub invite_only: bool,
    /// Readable by spectators.
    pub is_web_public: bool,
    /// Deprecated; always false (posting is a group setting).
    pub is_announcement_only: bool,
    /// Deprecated; always 1 (posting is a group setting).
    pub stream_post_policy: i64,
    /// New subscribers see earlier messages.
    pub history_public_to_subscribers: bool,
    /// Days to keep messages; null for the organization's policy, -1 for forever.
    pub message_retention_days: Option<i64>,
    /// The first message's ID, null before there is one.
    pub first_message_id: Option<i64>,
    /// The channel folder, if any.
    pub folder_id: Option<i64>,
    /// Empty-topic policy.
    pub topics_policy: &'static str,
    /// Archived channels take no new messages.
    pub is_archived: bool,
    /// Without activity tracking every channel counts as recently active.
    pub is_recently_active: bool,
    /// Not tracked: null, as for new channels in the reference.
    pub stream_weekly_traffic: Option<i64>,
    /// Number of subscribers.
    pub subscriber_count: i64,
    /// Who may add subscribers.
    pub can_add_subscribers_group: GroupSetting,
    /// Who may administer the channel.
    pub can_administer_channel_group: GroupSetting,
    /// Who may delete any message.
    pub can_delete_any_message_group: GroupSetting,
    /// Who may delete their own messages.
    pub can_delete_own_message_group: GroupSetting,
    /// Who may move messages out of the channel.
    pub can_move_messages_out_of_channel_group: GroupSetting,
    /// Who may move messages between its topics.
    pub can_move_messages_within_channel_group: GroupSetting,
    /// Who may remove subscribers.
    pub can_remove_subscribers_group: GroupSetting,
    /// Who may post.
    pub can_send_message_group: GroupSetting,
    /// Who may subscribe themselves.
    pub can_subscribe_group: GroupSetting,
    /// Who may resolve topics.
    pub can_resolve_topics_group: GroupSetting,
}

impl Channel {
    /// A stored channel with this many subscribers.
    pub fn new(channel: &Stored, subscriber_count: i64) -> Channel {
        let ChannelPermissions {
            can_add_subscribers_group,
            can_administer_channel_group,
            can_delete_any_message_group,
            can_delete_own_message_group,
            can_move_messages_out_of_channel_group,
            can_move_messages_within_channel_group,
            can_remove_subscribers_group,
            can_send_message_group,
            can_subscribe_group,
            can_resolve_topics_group,
        } = channel.permissions.clone();
        Channel {
            stream_id: channel.id,
            name: channel.name.clone(),
            description: channel.description.clone(),
            rendered_description: channel.rendered_description.clone(),
            date_created: channel.date_created,
            creator_id: channel.creator_id,
            invite_only: channel.invite_only,
            is_web_public: channel.is_web_public,
            is_announcement_only: false,
            stream_post_policy: 1,
            history_public_to_subscribers: channel.history_public_to_subscribers,
            message_retention_days: channel.retention.api_value(),
            first_message_id: channel.first_message_id,
            folder_id: channel.folder_id,
            topics_policy: channel.topics_policy.name(),
            is_archived: channel.is_archived,
            is_recently_active: true,
            stream_weekly_traffic: None,
            subscriber_count,
            can_add_subscribers_group,
            can_administer_channel_group,
            can_delete_any_message_group,
            can_delete_own_message_group,
            can_move_messages_out_of_channel_group,
            can_move_messages_within_channel_group,
            can_remove_subscribers_group,
            can_send_message_group,
            can_subscribe_group,
            can_resolve_topics_group,
        }
    }
}

/// Who is subscribed, where a request asked for it (`include_subscribers`): full lists, or for
/// large channels under `partial`, the recently active subscribers and bots.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Subscribers {
    /// Every subscriber.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribers: Option<Vec<UserId>>,
    /// Some subscribers (`include_subscribers=partial` on large channels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_subscribers: Option<Vec<UserId>>,
}

/// A channel of the snapshot's `never_subscribed`: the channel and, when asked, its subscribers.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ChannelWithSubscribers {
    /// The channel.
    #[serde(flatten)]
    pub channel: Channel,
    /// Its subscribers, when asked.
    #[serde(flatten)]
    pub subscribers: Subscribers,
}

/// A subscription: the channel and the subscriber's own settings of it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Subscription {
    /// The channel.
    #[serde(flatten)]
    pub channel: Channel,
    /// Color in the UI, `#rrggbb`.
    pub color: String,
    /// Pinned to the top of the channel list.
    pub pin_to_top: bool,
    /// Muted.
    pub is_muted: bool,
    /// Deprecated inverse of `is_muted`.
    pub in_home_view: bool,
    /// Null inherits the user's setting (for clients with `notification_settings_null`).
    pub desktop_notifications: Option<bool>,
    /// Null inherits the user's setting.
    pub audible_notifications: Option<bool>,
    /// Null inherits the user's setting.
    pub push_notifications: Option<bool>,
    /// Null inherits the user's setting.
    pub email_notifications: Option<bool>,
    /// Null inherits the user's setting.
    pub wildcard_mentions_notify: Option<bool>,
    /// Its subscribers, when asked.
    #[serde(flatten)]
    pub subscribers: Subscribers,
}

/// The personal settings that null per-channel notification settings inherit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InheritedNotifications {
    /// `enable_stream_desktop_notifications`.
    pub desktop: bool,
    /// `enable_stream_audible_notifications`.
    pub audible: bool,
    /// `enable_stream_push_notifications`.
    pub push: bool,
    /// `enable_stream_email_notifications`.
    pub email: bool,
    /// `wildcard_mentions_notify`.
    pub wildcard_mentions: bool,
}

impl InheritedNotifications {
    /// The personal setting that the per-channel notification setting `property` inherits.
    pub fn for_property(&self, property: &str) -> Option<bool> {
        Some(match property {
            "desktop_notifications" => self.desktop,
            "audible_notifications" => self.audible,
            "push_notifications" => self.push,
            "email_notifications" => self.email,
            "wildcard_mentions_notify" => self.wildcard_mentions,
            _ => return None,
        })
    }
}

impl Subscription {
    /// A subscription to `channel` with these settings, of a channel with `subscriber_count`
    /// subscribers.
    pub fn new(channel: &Stored, settings: &SubscriptionSettings, subscriber_count: i64) -> Self {
        Subscription {
            channel: Channel::new(channel, subscriber_count),
            color: settings.color.clone(),
            pin_to_top: settings.pin_to_top,
            is_muted: settings.is_muted,
            in_home_view: !settings.is_muted,
            desktop_notifications: settings.desktop_notifications,
            audible_notifications: settings.audible_notifications,
            push_notifications: settings.push_notifications,
            email_notifications: settings.email_notifications,
            wildcard_mentions_notify: settings.wildcard_mentions_notify,
            subscribers: Subscribers::default(),
        }
    }

    /// The same subscription with every null notification setting replaced by the personal
    /// setting it inherits, for clients without `notification_settings_null`.
    pub fn with_inherited(mut self, personal: InheritedNotifications) -> Self {
        let fill = |value: &mut Option<bool>, inherited: bool| {
            value.get_or_insert(inherited);
        };
        fill(&mut self.desktop_notifications, personal.desktop);
        fill(&mut self.audible_notifications, personal.audible);
        fill(&mut self.push_notifications, personal.push);
        fill(&mut self.email_notifications, personal.email);
        fill(
            &mut self.wildcard_mentions_notify,
            personal.wildcard_mentions,
        );
        self
    }
}

/// One channel of the `subscription` `remove` event.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct RemovedSubscription {
    /// Its name.
    pub name: String,
    /// Its ID.
    pub stream_id: ChannelId,
}

/// A channel of `GET /streams`: with `is_default` when the request asked for default channels.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ListedChannel {
    /// The channel.
    #[serde(flatten)]
    pub channel: Channel,
    /// Whether new users are subscribed to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_default: Option<bool>,
}

/// A channel folder.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ChannelFolder {
    /// ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Markdown description.
    pub description: String,
    /// Its HTML.
    pub rendered_description: String,
    /// Who created it.
    pub creator_id: Option<i64>,
    /// When, Unix seconds.
    pub date_created: Option<i64>,
    /// Whether it is archived.
    pub is_archived: bool,
    /// Position in the sidebar, from 0.
    pub order: i64,
}
