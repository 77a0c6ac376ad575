-- A row of a span-covered message stores `read` set (storage/src/reader_flags.rs, `covered_row`):
-- its `read` is the read ranges' to say, and set it keeps the row out of `user_messages_unread`,
-- which is then the rows whose `read` means something (direct messages, historical rows).
UPDATE user_messages SET flags = flags | 1
WHERE (flags & 1) = 0
  AND EXISTS (SELECT 1 FROM messages m JOIN subscription_spans s
                ON s.user_id = user_messages.user_id AND s.channel_id = m.channel_id
               AND s.first_message_id <= m.id
               AND (s.end_message_id IS NULL OR s.end_message_id > m.id)
              WHERE m.id = user_messages.message_id);
