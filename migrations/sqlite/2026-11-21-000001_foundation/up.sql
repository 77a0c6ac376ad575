-- The organization, its users and their custom profile fields.
CREATE TABLE realms (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    deactivated BOOLEAN NOT NULL DEFAULT FALSE,
    enable_spectator_access BOOLEAN NOT NULL DEFAULT FALSE,
    date_created BIGINT NOT NULL
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    delivery_email TEXT NOT NULL UNIQUE,
    full_name TEXT NOT NULL,
    password_hash TEXT,
    api_key TEXT NOT NULL,
    role BIGINT NOT NULL,
    is_active BOOLEAN NOT NULL DEFAULT TRUE,
    bot_type BIGINT,
    bot_owner_id BIGINT REFERENCES users (id),
    timezone TEXT NOT NULL DEFAULT '',
    avatar_source TEXT NOT NULL DEFAULT 'G',
    avatar_version BIGINT NOT NULL DEFAULT 1,
    date_joined BIGINT NOT NULL,
    email_address_visibility BIGINT NOT NULL DEFAULT 1,
    can_create_users BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE custom_profile_fields (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL UNIQUE,
    hint TEXT NOT NULL DEFAULT '',
    field_type BIGINT NOT NULL,
    field_data TEXT NOT NULL DEFAULT '',
    display_in_profile_summary BOOLEAN NOT NULL DEFAULT FALSE,
    required BOOLEAN NOT NULL DEFAULT FALSE,
    sort_order BIGINT NOT NULL
);

CREATE TABLE custom_profile_field_values (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    field_id BIGINT NOT NULL REFERENCES custom_profile_fields (id) ON DELETE CASCADE,
    value TEXT NOT NULL,
    rendered_value TEXT,
    UNIQUE (user_id, field_id)
);
