-- Register snapshots read a user's starred and direct messages; these partial indexes keep that
-- proportional to what is starred or direct rather than to the user's whole history. Neither
-- grows when a channel message is sent.
--
-- Unlike PostgreSQL, there is no partial index of unread messages here: SQLite's write-ahead log
-- stores whole pages, and an index keyed by user touches one page per recipient of every
-- message, which doubled the cost of sending to a large channel (measured: 1,000 subscribers,
-- 8.6 ms -> 24 ms). Unread messages are read from the user's primary-key range instead.
CREATE INDEX user_messages_starred ON user_messages (user_id, message_id) WHERE (flags & 2) <> 0;
-- Direct messages (flag bit 2048), newest first, for recent_private_conversations.
CREATE INDEX user_messages_private ON user_messages (user_id, message_id) WHERE (flags & 2048) <> 0;
