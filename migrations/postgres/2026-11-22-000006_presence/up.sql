-- Presence: one row per user who ever reported it, with the times of their last activity and
-- last connection (Unix seconds) and the realm-wide `last_update_id` of their last change, so a
-- client can fetch only what changed since its last fetch. `presence_sequence` holds the one
-- counter those IDs come from; bumping it row-locks it until commit, which serialises presence
-- writers so that IDs commit in order.
CREATE TABLE user_presence (
    user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    last_active_time BIGINT,
    last_connected_time BIGINT NOT NULL,
    last_update_id BIGINT NOT NULL
);
CREATE INDEX user_presence_by_update ON user_presence (last_update_id);
CREATE INDEX user_presence_by_connection ON user_presence (last_connected_time);

CREATE TABLE presence_sequence (
    id BIGINT PRIMARY KEY,
    last_update_id BIGINT NOT NULL
);
INSERT INTO presence_sequence (id, last_update_id) VALUES (1, 0);
