-- Email invitations (`POST /invites`): one row per invited address, usable once through the
-- mailed link until it expires, is revoked or is used. `stream_ids` and `group_ids` are
-- comma-separated IDs; `expiry_date` is NULL for an invitation that never expires. `status` is
-- 0 pending, 1 used, 2 revoked.
CREATE TABLE email_invites (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    confirmation_key TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL,
    referred_by BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    invited_as BIGINT NOT NULL,
    stream_ids TEXT NOT NULL DEFAULT '',
    group_ids TEXT NOT NULL DEFAULT '',
    include_realm_default_subscriptions BOOLEAN NOT NULL DEFAULT FALSE,
    welcome_message_custom_text TEXT,
    notify_referrer_on_join BOOLEAN NOT NULL DEFAULT TRUE,
    date_created BIGINT NOT NULL,
    expiry_date BIGINT,
    status BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX email_invites_by_referrer ON email_invites (referred_by);
CREATE INDEX email_invites_by_email ON email_invites (email);
