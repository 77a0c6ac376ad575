//! Every event Parley sends, as one enum: `type` (and `op`) select the variant, and each variant
//! carries the same typed objects that the snapshot and the read endpoints use. The engine adds
//! `id`; message events (`type: message`) are built per client by the engine and are not here.

use crate::channel::{Channel, RemovedSubscription, Subscription};
use crate::group::UserGroup;
use crate::personal::{Draft, NavigationView, SavedSnippet, UserTopic};
use crate::realm::{
    Attachment, AttachmentId, CustomProfileField, Linkifier, Playground, RealmEmojiMap,
};
use crate::user::{Bot, MutedUser, PersonRef, User};
use crate::Object;
use parley_domain::groups::GroupId;
use parley_domain::{ChannelId, MessageId, ProfileFieldId, UserId};
use serde::Serialize;
use serde_json::Value;

/// An event body, before the engine gives it an ID.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The person's alert words changed.
    AlertWords {
        /// The whole list.
        alert_words: Vec<String>,
    },
    /// A person was added or changed.
    RealmUser(RealmUserEvent),
    /// A bot changed, for those who administer it.
    RealmBot(RealmBotEvent),
    /// The custom profile field definitions changed.
    CustomProfileFields {
        /// Every definition, in order.
        fields: Vec<CustomProfileField>,
    },
    /// A user group changed.
    UserGroup(UserGroupEvent),
    /// A channel was created, deleted or changed.
    Stream(StreamEvent),
    /// The receiver's subscriptions, or others' subscriptions they can see, changed.
    Subscription(SubscriptionEvent),
    /// The default channels changed.
    DefaultStreams {
        /// Their IDs.
        default_streams: Vec<ChannelId>,
    },
    /// Messages were deleted.
    DeleteMessage(DeleteMessage),
    /// A reaction was added or removed.
    Reaction(ReactionEvent),
    /// The receiver's flags on some messages changed.
    UpdateMessageFlags(FlagsEvent),
    /// Someone's status changed.
    UserStatus(UserStatusEvent),
    /// The person's muted users changed.
    MutedUsers {
        /// The whole list.
        muted_users: Vec<MutedUser>,
    },
    /// The person's muted topics changed (legacy form of `user_topic`).
    MutedTopics {
        /// `[channel name, topic, when]` triples.
        muted_topics: Vec<crate::personal::MutedTopic>,
    },
    /// The person's policy for one topic changed.
    UserTopic(UserTopic),
    /// An organization setting changed.
    Realm(RealmEvent),
    /// The linkifiers changed.
    RealmLinkifiers {
        /// The whole list, in processing order.
        realm_linkifiers: Vec<Linkifier>,
    },
    /// The code playgrounds changed.
    RealmPlaygrounds {
        /// The whole list.
        realm_playgrounds: Vec<Playground>,
    },
    /// The custom emoji changed.
    RealmEmoji(RealmEmojiEvent),
    /// One of the person's uploads changed.
    Attachment(AttachmentEvent),
    /// The person's drafts changed.
    Drafts(DraftsEvent),
    /// The person's saved snippets changed.
    SavedSnippets(SavedSnippetsEvent),
    /// The organization's channel folders changed.
    ChannelFolder(ChannelFolderEvent),
    /// The person's scheduled messages changed.
    ScheduledMessages(ScheduledMessagesEvent),
    /// The person's reminders changed.
    Reminders(RemindersEvent),
    /// The person's navigation views changed.
    NavigationView(NavigationViewEvent),
    /// One of the person's settings changed.
    UserSettings(SettingEvent),
    /// The legacy form of a display setting's change.
    UpdateDisplaySettings {
        /// The person's API address.
        user: String,
        /// The setting.
        setting_name: String,
        /// Its new value.
        setting: Value,
        /// The language's name, when the setting is `default_language`.
        #[serde(skip_serializing_if = "Option::is_none")]
        language_name: Option<String>,
    },
    /// The legacy form of a notification setting's change.
    UpdateGlobalNotifications {
        /// The person's API address.
        user: String,
        /// The setting.
        notification_name: String,
        /// Its new value.
        setting: Value,
    },
    /// One of the organization's defaults for new users changed.
    RealmUserSettingsDefaults(SettingEvent),
    /// Someone started or stopped typing.
    Typing(TypingEvent),
    /// Someone started or stopped editing a message.
    TypingEditMessage(TypingEditEvent),
    /// Someone's presence changed.
    Presence(PresenceEvent),
    /// The invitations changed (for those who may see them).
    InvitesChanged {},
    /// A message was edited or moved.
    UpdateMessage(Box<UpdateMessage>),
}

/// `realm_user` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RealmUserEvent {
    /// A new account.
    Add {
        /// The person as the receivers see them.
        person: User,
    },
    /// One property of a person changed.
    Update {
        /// Which, and the new value.
        person: PersonUpdate,
    },
}

/// The forms of a `realm_user` `update`: `user_id` plus the changed property.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum PersonUpdate {
    /// The display name.
    FullName {
        /// Who.
        user_id: UserId,
        /// The new name.
        full_name: String,
    },
    /// The avatar.
    Avatar {
        /// Who.
        user_id: UserId,
        /// `G` or `U`.
        avatar_source: &'static str,
        /// The new URL.
        avatar_url: String,
        /// A larger version.
        avatar_url_medium: String,
        /// Cache-busting version.
        avatar_version: i64,
    },
    /// The time zone.
    Timezone {
        /// Who.
        user_id: UserId,
        /// Deprecated: their API address.
        email: String,
        /// IANA name.
        timezone: String,
    },
    /// A bot's owner.
    BotOwner {
        /// Which bot.
        user_id: UserId,
        /// The new owner.
        bot_owner_id: UserId,
    },
    /// The role.
    Role {
        /// Who.
        user_id: UserId,
        /// The new role's code.
        role: i64,
    },
    /// The API address.
    Email {
        /// Who.
        user_id: UserId,
        /// The new address.
        new_email: String,
    },
    /// Deactivation or reactivation.
    Activation {
        /// Who.
        user_id: UserId,
        /// Whether active now.
        is_active: bool,
    },
    /// The real address, for those who gained (address) or lost (null) the right to see it.
    DeliveryEmail {
        /// Who.
        user_id: UserId,
        /// The address, or null.
        delivery_email: Option<String>,
    },
    /// A custom profile field value.
    ProfileField {
        /// Who.
        user_id: UserId,
        /// The field and its value.
        custom_profile_field: ProfileFieldUpdate,
    },
}

/// A changed custom profile field value (`value` null when cleared).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProfileFieldUpdate {
    /// The field.
    pub id: ProfileFieldId,
    /// The new value, null when cleared.
    pub value: Option<String>,
    /// The rendered value, for Markdown-capable types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered_value: Option<String>,
}

/// `realm_bot` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RealmBotEvent {
    /// A new bot.
    Add {
        /// The bot.
        bot: Bot,
    },
    /// Some of a bot's properties changed: `user_id` and those.
    Update {
        /// The changes.
        bot: Object,
    },
    /// A bot was deactivated.
    Delete {
        /// Which.
        bot: BotId,
    },
}

/// A bot named by its ID.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BotId {
    /// The bot.
    pub user_id: UserId,
}

/// `user_group` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum UserGroupEvent {
    /// A new (or, for clients that forgot it, reactivated) group.
    Add {
        /// The group.
        group: UserGroup,
    },
    /// Some of a group's properties changed.
    Update {
        /// Which group.
        group_id: GroupId,
        /// The changed properties.
        data: Object,
    },
    /// A deactivated group, for clients that forget deactivated groups.
    Remove {
        /// Which group.
        group_id: GroupId,
    },
    /// Members joined.
    AddMembers {
        /// Which group.
        group_id: GroupId,
        /// The new members.
        user_ids: Vec<UserId>,
    },
    /// Members left.
    RemoveMembers {
        /// Which group.
        group_id: GroupId,
        /// The former members.
        user_ids: Vec<UserId>,
    },
    /// Subgroups were added.
    AddSubgroups {
        /// Which group.
        group_id: GroupId,
        /// The new subgroups.
        direct_subgroup_ids: Vec<GroupId>,
    },
    /// Subgroups were removed.
    RemoveSubgroups {
        /// Which group.
        group_id: GroupId,
        /// The former subgroups.
        direct_subgroup_ids: Vec<GroupId>,
    },
}

/// `stream` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum StreamEvent {
    /// Channels the receivers may now see.
    Create {
        /// The channels.
        streams: Vec<Channel>,
    },
    /// Channels the receivers may no longer see.
    Delete {
        /// The channels, by ID only (as the reference sends them since feature level 343).
        streams: Vec<StreamId>,
        /// Their IDs.
        stream_ids: Vec<ChannelId>,
    },
    /// One property of a channel changed.
    Update(StreamUpdate),
}

/// A `stream` `update`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StreamUpdate {
    /// The channel.
    pub stream_id: ChannelId,
    /// Its name (the old one, for a rename).
    pub name: String,
    /// The property.
    pub property: String,
    /// The new value.
    pub value: Value,
    /// With a description: the rendered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered_description: Option<String>,
    /// With a privacy change: the history setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history_public_to_subscribers: Option<bool>,
    /// With a privacy change: whether web-public.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_web_public: Option<bool>,
}

/// A channel named by its ID.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StreamId {
    /// The channel.
    pub stream_id: ChannelId,
}

/// `subscription` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SubscriptionEvent {
    /// The receiver joined channels.
    Add {
        /// The new subscriptions.
        subscriptions: Vec<Subscription>,
    },
    /// The receiver left channels.
    Remove {
        /// The channels left.
        subscriptions: Vec<RemovedSubscription>,
    },
    /// Others joined channels the receiver can see.
    PeerAdd {
        /// The channels.
        stream_ids: Vec<ChannelId>,
        /// Who joined.
        user_ids: Vec<UserId>,
    },
    /// Others left channels the receiver can see.
    PeerRemove {
        /// The channels.
        stream_ids: Vec<ChannelId>,
        /// Who left.
        user_ids: Vec<UserId>,
    },
    /// One of the receiver's own settings of a channel changed.
    Update {
        /// The channel.
        stream_id: ChannelId,
        /// The setting.
        property: String,
        /// Its new value.
        value: Value,
    },
}

/// `delete_message`: the bulk form (`message_ids`) or one message (`message_id`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeleteMessage {
    /// `stream` or `private`.
    pub message_type: &'static str,
    /// The messages (bulk form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_ids: Option<Vec<MessageId>>,
    /// The message (one-per-event form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<MessageId>,
    /// The channel, for channel messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<ChannelId>,
    /// The topic, for channel messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
}

/// `reaction` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ReactionEvent {
    /// `add` or `remove`.
    pub op: &'static str,
    /// Who reacted.
    pub user_id: UserId,
    /// The same, deprecated.
    pub user: PersonRef,
    /// The message.
    pub message_id: MessageId,
    /// Emoji name.
    pub emoji_name: String,
    /// Emoji code.
    pub emoji_code: String,
    /// Emoji kind.
    pub reaction_type: String,
}

/// `update_message_flags`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlagsEvent {
    /// `add` or `remove`.
    pub op: &'static str,
    /// The same, deprecated.
    pub operation: &'static str,
    /// The flag.
    pub flag: String,
    /// The messages.
    pub messages: Vec<MessageId>,
    /// Always false.
    pub all: bool,
    /// For messages that became unread: where each is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_details: Option<Object>,
}

/// `user_status`: only the parts that changed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UserStatusEvent {
    /// Whose.
    pub user_id: UserId,
    /// The new text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_text: Option<String>,
    /// The new emoji's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji_name: Option<String>,
    /// The new emoji's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji_code: Option<String>,
    /// The new emoji's kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reaction_type: Option<String>,
}

/// `realm` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RealmEvent {
    /// One plain setting.
    Update {
        /// The setting.
        property: String,
        /// Its new value.
        value: Value,
    },
    /// Several settings at once.
    UpdateDict {
        /// Always `default`.
        property: &'static str,
        /// The settings and their new values.
        data: Object,
    },
}

/// `realm_emoji` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RealmEmojiEvent {
    /// The whole set changed.
    Update {
        /// Every custom emoji, by ID.
        realm_emoji: RealmEmojiMap,
    },
}

/// `attachment` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum AttachmentEvent {
    /// A new upload.
    Add {
        /// It.
        attachment: Attachment,
        /// The organization's used space, bytes.
        upload_space_used: i64,
    },
    /// The messages linking an upload changed.
    Update {
        /// It.
        attachment: Attachment,
        /// The organization's used space, bytes.
        upload_space_used: i64,
    },
    /// An upload was deleted.
    Remove {
        /// Which.
        attachment: AttachmentId,
        /// The organization's used space, bytes.
        upload_space_used: i64,
    },
}

/// `drafts` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum DraftsEvent {
    /// New drafts.
    Add {
        /// They.
        drafts: Vec<Draft>,
    },
    /// An edited draft.
    Update {
        /// It.
        draft: Draft,
    },
    /// A deleted draft.
    Remove {
        /// Which.
        draft_id: i64,
    },
}

/// `channel_folder` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ChannelFolderEvent {
    /// A new folder.
    Add {
        /// It.
        channel_folder: crate::channel::ChannelFolder,
    },
    /// A folder's name, description or archived state changed.
    Update {
        /// Which.
        channel_folder_id: i64,
        /// The changed properties (`name`; `description` with `rendered_description`;
        /// `is_archived`).
        data: crate::Object,
    },
    /// The folders were put in a new order.
    Reorder {
        /// Every folder's ID, in the new order.
        order: Vec<i64>,
    },
}

/// `scheduled_messages` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ScheduledMessagesEvent {
    /// New scheduled messages.
    Add {
        /// They.
        scheduled_messages: Vec<crate::scheduled::ScheduledMessage>,
    },
    /// An edited (or failed) scheduled message.
    Update {
        /// It.
        scheduled_message: crate::scheduled::ScheduledMessage,
    },
    /// A deleted or sent scheduled message.
    Remove {
        /// Which.
        scheduled_message_id: i64,
    },
}

/// `reminders` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum RemindersEvent {
    /// New reminders.
    Add {
        /// They.
        reminders: Vec<crate::scheduled::Reminder>,
    },
    /// A deleted or sent reminder.
    Remove {
        /// Which.
        reminder_id: i64,
    },
}

/// `saved_snippets` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum SavedSnippetsEvent {
    /// A new snippet.
    Add {
        /// It.
        saved_snippet: SavedSnippet,
    },
    /// An edited snippet.
    Update {
        /// It.
        saved_snippet: SavedSnippet,
    },
    /// A deleted snippet.
    Remove {
        /// Which.
        saved_snippet_id: i64,
    },
}

/// `navigation_view` events.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum NavigationViewEvent {
    /// A new view.
    Add {
        /// It.
        navigation_view: NavigationView,
    },
    /// Some properties of a view changed.
    Update {
        /// Which view.
        fragment: String,
        /// The changed properties.
        data: Object,
    },
    /// A removed view.
    Remove {
        /// Which view.
        fragment: String,
    },
}

/// `user_settings` and `realm_user_settings_defaults`: `op: update` of one setting.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SettingEvent {
    /// Always `update`.
    pub op: &'static str,
    /// The setting, by its registry name.
    pub property: String,
    /// Its new value.
    pub value: Value,
    /// The language's name, when the setting is `default_language`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language_name: Option<String>,
}

/// `typing` `start` / `stop`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TypingEvent {
    /// `start` or `stop`.
    pub op: &'static str,
    /// `stream` or `direct` (`private` for clients of old).
    pub message_type: &'static str,
    /// Who types.
    pub sender: PersonRef,
    /// For direct messages: every member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recipients: Option<Vec<PersonRef>>,
    /// For channel messages: the channel.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<ChannelId>,
    /// For channel messages: the topic.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
}

/// `typing_edit_message` `start` / `stop`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TypingEditEvent {
    /// `start` or `stop`.
    pub op: &'static str,
    /// Who edits.
    pub sender_id: UserId,
    /// The message.
    pub message_id: MessageId,
    /// Where the message is.
    pub recipient: EditRecipient,
}

/// Where an edited message is.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EditRecipient {
    /// A channel topic.
    Channel {
        /// The channel.
        channel_id: ChannelId,
        /// The topic.
        topic: String,
    },
    /// A direct conversation.
    Direct {
        /// Its members.
        user_ids: Vec<UserId>,
    },
}

/// `presence`: the modern form (`presences`) or the legacy one (`user_id`, `email`,
/// `server_timestamp`, `presence`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PresenceEvent {
    /// Modern: the user's presence keyed by user ID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presences: Option<Object>,
    /// Legacy: whose presence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<UserId>,
    /// Legacy: their API address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Legacy: the server's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_timestamp: Option<f64>,
    /// Legacy: by client.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub presence: Option<Object>,
}

/// `update_message`: what changed in an edit or move; `flags` are the receiver's own.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct UpdateMessage {
    /// Who edited.
    pub user_id: Option<UserId>,
    /// When.
    pub edit_timestamp: i64,
    /// The message edited (the first, for a move).
    pub message_id: MessageId,
    /// Only the rendering changed.
    pub rendering_only: bool,
    /// Every message changed.
    pub message_ids: Vec<MessageId>,
    /// The receiver's flags on `message_id`.
    pub flags: Vec<&'static str>,
    /// The channel, for channel messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<ChannelId>,
    /// Its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_name: Option<String>,
    /// For a move: where the messages went.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_stream_id: Option<ChannelId>,
    /// For a move: which messages of the topic moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub propagate_mode: Option<&'static str>,
    /// For a move: the topic before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_subject: Option<String>,
    /// For a rename: the topic after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// For a rename: the new topic's links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic_links: Option<Vec<crate::message::TopicLink>>,
    /// For a content edit: the Markdown before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_content: Option<String>,
    /// For a content edit: the HTML before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub orig_rendered_content: Option<String>,
    /// For a content edit: the Markdown after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// For a content edit: the HTML after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rendered_content: Option<String>,
    /// For a content edit: whether it is a `/me` message now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_me_message: Option<bool>,
}

impl UpdateMessage {
    /// An edit of `message_id` by `user_id` at `edit_timestamp`, before saying what changed.
    pub fn new(user_id: UserId, edit_timestamp: i64, message_id: MessageId) -> Self {
        UpdateMessage {
            user_id: Some(user_id),
            edit_timestamp,
            message_id,
            rendering_only: false,
            message_ids: vec![message_id],
            flags: Vec::new(),
            stream_id: None,
            stream_name: None,
            new_stream_id: None,
            propagate_mode: None,
            orig_subject: None,
            subject: None,
            topic_links: None,
            orig_content: None,
            orig_rendered_content: None,
            content: None,
            rendered_content: None,
            is_me_message: None,
        }
    }
}
