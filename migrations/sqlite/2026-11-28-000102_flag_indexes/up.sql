-- Pages of `is:mentioned` and `is:alerted` read the reader's rows with those bits first
-- (`storage::flag_pages`), as `is:starred` reads `user_messages_starred`. The predicates are
-- the ones that module writes: `(flags & 120) <> 0` is the narrow's bits (mentioned 8, @all 16,
-- topic wildcard 32, group 64), `(flags & 512) <> 0` has_alert_word. Since 000080-000081 a
-- channel send writes rows only for the flags that differ, so these indexes hold only the
-- mentions and alerts, and a send touches them only for those.
CREATE INDEX user_messages_mentioned ON user_messages (user_id, message_id) WHERE (flags & 120) <> 0;
CREATE INDEX user_messages_alerted ON user_messages (user_id, message_id) WHERE (flags & 512) <> 0;
-- `@all` messages, whose mention of each recipient comes from the message: `is:mentioned`
-- reads those inside the reader's spans, one range per span.
CREATE INDEX messages_stream_wildcard ON messages (channel_id, id) WHERE stream_wildcard_mentioned;
