-- User groups (system groups have no stored members: their membership follows roles),
-- channels, default channels and subscriptions. Group-setting values are stored as the JSON the
-- API uses: a group ID, or {"direct_members": [...], "direct_subgroups": [...]}.
CREATE TABLE user_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    is_system_group BOOLEAN NOT NULL DEFAULT FALSE,
    deactivated BOOLEAN NOT NULL DEFAULT FALSE,
    date_created BIGINT NOT NULL,
    creator_id BIGINT REFERENCES users (id)
);

CREATE TABLE user_group_members (
    group_id BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, user_id)
);

CREATE TABLE user_group_subgroups (
    group_id BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    subgroup_id BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (group_id, subgroup_id)
);

-- Organization-wide permissions and limits that messages and channels obey.
CREATE TABLE realm_permissions (
    name TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);

CREATE TABLE channels (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    rendered_description TEXT NOT NULL DEFAULT '',
    invite_only BOOLEAN NOT NULL DEFAULT FALSE,
    is_web_public BOOLEAN NOT NULL DEFAULT FALSE,
    history_public_to_subscribers BOOLEAN NOT NULL DEFAULT TRUE,
    message_retention_days BIGINT,
    topics_policy TEXT NOT NULL DEFAULT 'inherit',
    is_archived BOOLEAN NOT NULL DEFAULT FALSE,
    date_created BIGINT NOT NULL,
    creator_id BIGINT REFERENCES users (id),
    first_message_id BIGINT,
    folder_id BIGINT,
    is_default BOOLEAN NOT NULL DEFAULT FALSE,
    can_add_subscribers_group TEXT NOT NULL,
    can_administer_channel_group TEXT NOT NULL,
    can_delete_any_message_group TEXT NOT NULL,
    can_delete_own_message_group TEXT NOT NULL,
    can_move_messages_out_of_channel_group TEXT NOT NULL,
    can_move_messages_within_channel_group TEXT NOT NULL,
    can_remove_subscribers_group TEXT NOT NULL,
    can_send_message_group TEXT NOT NULL,
    can_subscribe_group TEXT NOT NULL,
    can_resolve_topics_group TEXT NOT NULL
);

CREATE TABLE subscriptions (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    channel_id BIGINT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    color TEXT NOT NULL,
    pin_to_top BOOLEAN NOT NULL DEFAULT FALSE,
    is_muted BOOLEAN NOT NULL DEFAULT FALSE,
    desktop_notifications BOOLEAN,
    audible_notifications BOOLEAN,
    push_notifications BOOLEAN,
    email_notifications BOOLEAN,
    wildcard_mentions_notify BOOLEAN,
    UNIQUE (user_id, channel_id)
);
CREATE INDEX subscriptions_by_channel ON subscriptions (channel_id, active);
