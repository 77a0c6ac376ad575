-- Reusable invitation links (`POST /invites/multiuse`): anyone with the link may create an account
-- until it expires or is revoked. `stream_ids` and `group_ids` are comma-separated IDs; `expiry_date`
-- is NULL for a link that never expires.
CREATE TABLE multiuse_invites (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    confirmation_key TEXT NOT NULL UNIQUE,
    referred_by BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    invited_as BIGINT NOT NULL,
    stream_ids TEXT NOT NULL DEFAULT '',
    group_ids TEXT NOT NULL DEFAULT '',
    include_realm_default_subscriptions BOOLEAN NOT NULL DEFAULT FALSE,
    welcome_message_custom_text TEXT,
    date_created BIGINT NOT NULL,
    expiry_date BIGINT,
    revoked BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX multiuse_invites_by_referrer ON multiuse_invites (referred_by);
