-- Messages to be sent later: scheduled messages (kind 'stream' or 'private') and reminders
-- (a direct message from the notification bot to their owner about another message). The
-- scheduler sends each one through the ordinary send path, in the transaction that sets
-- delivered, so a message is never sent twice; a failed send is kept with its error.
CREATE TABLE scheduled_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    sender_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    channel_id BIGINT REFERENCES channels (id),
    -- The direct message's recipients, a JSON list of user IDs ('[]' for channel messages).
    recipient_ids TEXT NOT NULL,
    topic TEXT NOT NULL,
    content TEXT NOT NULL,
    rendered_content TEXT NOT NULL,
    scheduled_at BIGINT NOT NULL,
    read_by_sender BOOLEAN,
    delivered BOOLEAN NOT NULL DEFAULT FALSE,
    delivered_message_id BIGINT,
    failed BOOLEAN NOT NULL DEFAULT FALSE,
    failure_message TEXT,
    reminder_target_message_id BIGINT,
    date_created BIGINT NOT NULL
);
CREATE INDEX scheduled_messages_due ON scheduled_messages (delivered, failed, scheduled_at);
CREATE INDEX scheduled_messages_by_sender ON scheduled_messages (sender_id, delivered);
