-- End-to-end encrypted push device registrations: one per (user, push_account_id).
CREATE TABLE push_devices (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    push_account_id BIGINT NOT NULL,
    token_kind TEXT NOT NULL,
    push_public_key TEXT NOT NULL,
    bouncer_public_key TEXT NOT NULL,
    encrypted_push_registration TEXT NOT NULL,
    created BIGINT NOT NULL,
    UNIQUE (user_id, push_account_id)
);
