-- Push tokens registered through the legacy endpoints (POST /users/me/apns_device_token and
-- /users/me/android_gcm_reg_id): one row per (user, kind, token).
CREATE TABLE push_device_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    token TEXT NOT NULL,
    ios_app_id TEXT,
    last_updated BIGINT NOT NULL,
    UNIQUE (user_id, kind, token)
);
