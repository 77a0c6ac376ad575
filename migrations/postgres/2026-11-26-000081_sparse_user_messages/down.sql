-- Every covered (user, message) gets its whole row back: read from the ranges, @all from the
-- message.
INSERT INTO user_messages (user_id, message_id, flags)
SELECT s.user_id, m.id, 0
FROM subscription_spans s
JOIN messages m ON m.channel_id = s.channel_id AND m.id >= s.first_message_id
               AND (s.end_message_id IS NULL OR m.id < s.end_message_id)
WHERE NOT EXISTS (SELECT 1 FROM user_messages um
                  WHERE um.user_id = s.user_id AND um.message_id = m.id);

UPDATE user_messages SET flags = flags
    | (CASE WHEN EXISTS (SELECT 1 FROM messages m JOIN read_ranges r
                           ON r.user_id = user_messages.user_id AND r.channel_id = m.channel_id
                          AND r.low <= m.id AND r.high >= m.id
                         WHERE m.id = user_messages.message_id) THEN 1 ELSE 0 END)
    | (CASE WHEN EXISTS (SELECT 1 FROM messages m WHERE m.id = user_messages.message_id
                           AND m.stream_wildcard_mentioned) THEN 16 ELSE 0 END)
WHERE EXISTS (SELECT 1 FROM messages m JOIN subscription_spans s
                ON s.user_id = user_messages.user_id AND s.channel_id = m.channel_id
               AND s.first_message_id <= m.id
               AND (s.end_message_id IS NULL OR s.end_message_id > m.id)
              WHERE m.id = user_messages.message_id);
