-- Messages, who received them (with per-user flags), reactions, and group direct-message
-- conversations. A direct message carries `dm_key`: its participants' sorted IDs, so a
-- conversation is found by one indexed equality.
CREATE TABLE dm_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    dm_key TEXT NOT NULL UNIQUE
);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    sender_id BIGINT NOT NULL REFERENCES users (id),
    channel_id BIGINT REFERENCES channels (id),
    topic TEXT NOT NULL DEFAULT '',
    topic_key TEXT NOT NULL DEFAULT '',
    dm_key TEXT,
    dm_group_id BIGINT REFERENCES dm_groups (id),
    recipient_user_id BIGINT REFERENCES users (id),
    content TEXT NOT NULL,
    rendered_content TEXT NOT NULL,
    date_sent BIGINT NOT NULL,
    last_edit_time BIGINT,
    last_moved_time BIGINT,
    edit_history TEXT,
    has_link BOOLEAN NOT NULL DEFAULT FALSE,
    has_image BOOLEAN NOT NULL DEFAULT FALSE,
    has_attachment BOOLEAN NOT NULL DEFAULT FALSE,
    client TEXT NOT NULL DEFAULT ''
);
CREATE INDEX messages_by_channel ON messages (channel_id, id);
CREATE INDEX messages_by_topic ON messages (channel_id, topic_key, id);
CREATE INDEX messages_by_dm ON messages (dm_key, id);
CREATE INDEX messages_by_sender ON messages (sender_id, id);

CREATE TABLE user_messages (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    message_id BIGINT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    flags BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, message_id)
);
CREATE INDEX user_messages_by_message ON user_messages (message_id);

CREATE TABLE reactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    message_id BIGINT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    emoji_name TEXT NOT NULL,
    emoji_code TEXT NOT NULL,
    reaction_type TEXT NOT NULL,
    UNIQUE (message_id, user_id, emoji_code, reaction_type)
);
CREATE INDEX reactions_by_message ON reactions (message_id);

-- System bots (the notification bot) live in the users table but are not the organization's.
ALTER TABLE users ADD COLUMN is_system_bot BOOLEAN NOT NULL DEFAULT FALSE;
