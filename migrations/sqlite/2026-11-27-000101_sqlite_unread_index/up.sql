-- The rows of messages a user has not read, indexed as PostgreSQL has indexed them since
-- 000005. SQLite went without: with one row per recipient, the index doubled a channel send's
-- cost. Since 000080–000081 a channel send writes no row per recipient (only direct messages,
-- mentions, stars and alerts have rows), so the index costs little, and the unread rows that no
-- span covers (`storage::unread::ids`) are read through it instead of scanning every row the
-- user has (half of a long history can be direct messages).
CREATE INDEX user_messages_unread ON user_messages (user_id, message_id) WHERE (flags & 1) = 0;
