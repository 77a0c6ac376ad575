-- Browser sessions of the web client: the cookie holds a random token, the table only its
-- SHA-256, so a copy of the database signs no one in. A session ends when it expires, at logout,
-- when its user is deactivated and when the user's password changes.
CREATE TABLE sessions (
    token_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token TEXT NOT NULL,
    created BIGINT NOT NULL,
    last_used BIGINT NOT NULL,
    expires BIGINT NOT NULL
);
CREATE INDEX sessions_user_id ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires);
