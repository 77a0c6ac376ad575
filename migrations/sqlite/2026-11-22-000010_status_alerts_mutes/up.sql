-- A person's status (text and emoji; no row = none set), their alert words (kept as typed, keyed
-- case-insensitively, in the order added) and the people they muted.
CREATE TABLE user_status (
    user_id BIGINT PRIMARY KEY NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    status_text TEXT NOT NULL DEFAULT '',
    emoji_name TEXT NOT NULL DEFAULT '',
    emoji_code TEXT NOT NULL DEFAULT '',
    reaction_type TEXT NOT NULL DEFAULT 'unicode_emoji',
    last_updated BIGINT NOT NULL
);

CREATE TABLE alert_words (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    word TEXT NOT NULL,
    word_key TEXT NOT NULL,
    UNIQUE (user_id, word_key)
);

CREATE TABLE muted_users (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    muted_user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    date_muted BIGINT NOT NULL,
    PRIMARY KEY (user_id, muted_user_id)
);
CREATE INDEX muted_users_by_muted ON muted_users (muted_user_id);
