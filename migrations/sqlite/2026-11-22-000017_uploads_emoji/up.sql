-- Uploaded files (attachments), the messages that link them, and the organization's custom emoji.
-- The bytes live in the file store under `path_id` (emoji: `<realm>/emoji/images/<file_name>`).

CREATE TABLE attachments (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    path_id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    size BIGINT NOT NULL,
    content_type TEXT NOT NULL,
    owner_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    -- Unix seconds.
    create_time BIGINT NOT NULL
);
CREATE INDEX attachments_by_owner ON attachments (owner_id, id);

-- Which messages link which attachment: whoever may read one of them may read the file.
CREATE TABLE attachment_messages (
    attachment_id BIGINT NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    message_id BIGINT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    PRIMARY KEY (attachment_id, message_id)
);
CREATE INDEX attachment_messages_by_message ON attachment_messages (message_id);

-- Deactivated emoji keep their row (old messages and reactions still show them); at most one
-- active emoji has a given name.
CREATE TABLE realm_emoji (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL,
    file_name TEXT NOT NULL,
    is_animated BOOLEAN NOT NULL DEFAULT FALSE,
    deactivated BOOLEAN NOT NULL DEFAULT FALSE,
    author_id BIGINT REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX realm_emoji_by_name ON realm_emoji (name);
