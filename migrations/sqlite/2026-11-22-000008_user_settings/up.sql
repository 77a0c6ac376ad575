-- Personal settings that differ from the registry's defaults (crates/domain/src/settings.rs),
-- as JSON values by name; and the organization's defaults for new users, likewise.
CREATE TABLE user_settings (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
);
CREATE TABLE realm_user_defaults (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
