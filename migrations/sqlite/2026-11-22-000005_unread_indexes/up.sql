-- Register snapshots read a user's unread and starred messages; these partial indexes keep that
-- proportional to what is unread or starred rather than to the user's whole history.
CREATE INDEX user_messages_unread ON user_messages (user_id, message_id) WHERE (flags & 1) = 0;
CREATE INDEX user_messages_starred ON user_messages (user_id, message_id) WHERE (flags & 2) <> 0;
-- Direct messages (flag bit 2048), newest first, for recent_private_conversations.
CREATE INDEX user_messages_private ON user_messages (user_id, message_id) WHERE (flags & 2048) <> 0;
