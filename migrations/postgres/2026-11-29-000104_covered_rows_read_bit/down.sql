-- Covered rows store `read` clear again, as 000081's down.sql expects.
UPDATE user_messages SET flags = flags & (-2)
WHERE (flags & 1) <> 0
  AND EXISTS (SELECT 1 FROM messages m JOIN subscription_spans s
                ON s.user_id = user_messages.user_id AND s.channel_id = m.channel_id
               AND s.first_message_id <= m.id
               AND (s.end_message_id IS NULL OR s.end_message_id > m.id)
              WHERE m.id = user_messages.message_id);
