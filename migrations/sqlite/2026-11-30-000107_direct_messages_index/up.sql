-- Register's recent direct-message conversations read the conversation of each of the user's
-- 1,000 newest direct messages. Through the table that was one probe of a whole message row
-- each; this index holds the conversation beside the ID, so the probe reads the index alone
-- (SQLite has no INCLUDE: the conversation is the index's second column). A send writes to it
-- only for a direct message.
CREATE INDEX messages_direct ON messages (id, dm_key) WHERE dm_key IS NOT NULL;
