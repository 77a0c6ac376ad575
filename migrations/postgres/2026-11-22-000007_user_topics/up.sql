-- A person's visibility policy for a topic (muted, unmuted, followed). No row = inherit from the
-- channel. Topics are keyed case-insensitively, like messages.
CREATE TABLE user_topics (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    channel_id BIGINT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    topic_key TEXT NOT NULL,
    topic TEXT NOT NULL,
    visibility_policy BIGINT NOT NULL,
    last_updated BIGINT NOT NULL,
    PRIMARY KEY (user_id, channel_id, topic_key)
);
CREATE INDEX user_topics_by_topic ON user_topics (channel_id, topic_key);
