-- Issue 15, "The write path at scale" (docs/architecture.md): who received a channel message as
-- subscription spans, per-(user, channel) read ranges, and `@all` as a column of the message.
-- This migration builds the new representation from `user_messages` (gaps and islands) and
-- leaves `user_messages` as it is: until every read and write path uses the spans, the rows stay
-- the source of truth. A channel message's flags for a user are then
--   * covered by one of the user's spans of its channel: the row's bits other than `read` (1)
--     and `stream_wildcard_mentioned` (16), plus `read` when a read range contains it, plus 16
--     when the message's column is set;
--   * otherwise: the row as it is (historical rows, the copy of a sender who is not subscribed,
--     and any other row that differs from the span's rule), or no row: not received.

ALTER TABLE messages ADD COLUMN stream_wildcard_mentioned BOOLEAN NOT NULL DEFAULT FALSE;

-- The user received every message of the channel with first_message_id <= id < end_message_id
-- (end NULL: while subscribed and active).
CREATE TABLE subscription_spans (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    channel_id BIGINT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    first_message_id BIGINT NOT NULL,
    end_message_id BIGINT,
    PRIMARY KEY (user_id, channel_id, first_message_id)
);
CREATE INDEX subscription_spans_by_channel ON subscription_spans (channel_id, first_message_id);

-- Every message of the channel with low <= id <= high is read by the user. Keyed by `high`, so
-- that one probe (the smallest high >= id) answers whether a message is read.
CREATE TABLE read_ranges (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    channel_id BIGINT NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    low BIGINT NOT NULL,
    high BIGINT NOT NULL,
    PRIMARY KEY (user_id, channel_id, high)
);

UPDATE messages SET stream_wildcard_mentioned = TRUE
WHERE channel_id IS NOT NULL
  AND id IN (SELECT message_id FROM user_messages WHERE (flags & 16) <> 0);

-- The rows the spans stand for: not historical, and `@all` as on the message.
CREATE TEMPORARY TABLE spanned AS
SELECT um.user_id, m.channel_id, m.id, um.flags, c.seq
FROM user_messages um
JOIN messages m ON m.id = um.message_id
JOIN (SELECT id, ROW_NUMBER() OVER (PARTITION BY channel_id ORDER BY id) AS seq
      FROM messages WHERE channel_id IS NOT NULL) c ON c.id = m.id
WHERE m.channel_id IS NOT NULL
  AND (um.flags & 1024) = 0
  AND ((um.flags & 16) <> 0) = (m.stream_wildcard_mentioned <> 0);

-- Islands: within a run of consecutive channel messages, the channel's message number minus
-- the user's row number is constant. A span ends just after its last message (no message of
-- the channel lies between), or stays open when it reaches the channel's newest message and the
-- user is an active subscriber and an active user (today's `active_recipients`).
INSERT INTO subscription_spans (user_id, channel_id, first_message_id, end_message_id)
SELECT i.user_id, i.channel_id, i.first_id,
       CASE WHEN i.last_id = (SELECT MAX(id) FROM messages WHERE channel_id = i.channel_id)
             AND EXISTS (SELECT 1 FROM subscriptions s JOIN users u ON u.id = s.user_id
                         WHERE s.user_id = i.user_id AND s.channel_id = i.channel_id
                           AND s.active AND u.is_active)
            THEN NULL ELSE i.last_id + 1 END
FROM (SELECT user_id, channel_id, MIN(id) AS first_id, MAX(id) AS last_id
      FROM (SELECT user_id, channel_id, id,
                   seq - ROW_NUMBER() OVER (PARTITION BY user_id, channel_id ORDER BY id) AS grp
            FROM spanned) g
      GROUP BY user_id, channel_id, grp) i;

-- Active subscribers without an open span: one from the next message ID.
INSERT INTO subscription_spans (user_id, channel_id, first_message_id, end_message_id)
SELECT s.user_id, s.channel_id, (SELECT COALESCE(MAX(id), 0) + 1 FROM messages), NULL
FROM subscriptions s JOIN users u ON u.id = s.user_id
WHERE s.active AND u.is_active
  AND NOT EXISTS (SELECT 1 FROM subscription_spans p
                  WHERE p.user_id = s.user_id AND p.channel_id = s.channel_id
                    AND p.end_message_id IS NULL);

-- Read ranges: the runs of consecutive read messages among the spanned ones.
INSERT INTO read_ranges (user_id, channel_id, low, high)
SELECT user_id, channel_id, MIN(id), MAX(id)
FROM (SELECT user_id, channel_id, id,
             seq - ROW_NUMBER() OVER (PARTITION BY user_id, channel_id ORDER BY id) AS grp
      FROM spanned WHERE (flags & 1) <> 0) g
GROUP BY user_id, channel_id, grp;

DROP TABLE spanned;
