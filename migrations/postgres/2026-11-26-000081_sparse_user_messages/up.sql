-- Issue 15: with subscription spans and read ranges built (000080), `user_messages` keeps, for
-- channel messages a span covers, only the bits they do not carry (starred, collapsed,
-- mentions, alert words): `read` (1) comes from the read ranges and `stream_wildcard_mentioned`
-- (16) from the message. Rows left with nothing are removed, so a channel's messages cost rows
-- only where a user's flags differ. Rows no span covers (direct messages, historical rows, a
-- sender's copy outside the channel) stay whole.
UPDATE user_messages SET flags = flags & (-18)
WHERE (flags & 17) <> 0
  AND EXISTS (SELECT 1 FROM messages m JOIN subscription_spans s
                ON s.user_id = user_messages.user_id AND s.channel_id = m.channel_id
               AND s.first_message_id <= m.id
               AND (s.end_message_id IS NULL OR s.end_message_id > m.id)
              WHERE m.id = user_messages.message_id);

DELETE FROM user_messages
WHERE flags = 0
  AND EXISTS (SELECT 1 FROM messages m JOIN subscription_spans s
                ON s.user_id = user_messages.user_id AND s.channel_id = m.channel_id
               AND s.first_message_id <= m.id
               AND (s.end_message_id IS NULL OR s.end_message_id > m.id)
              WHERE m.id = user_messages.message_id);
