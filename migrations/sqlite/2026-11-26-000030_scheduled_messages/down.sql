DROP INDEX scheduled_messages_by_sender;
DROP INDEX scheduled_messages_due;
DROP TABLE scheduled_messages;
