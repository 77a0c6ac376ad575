DROP INDEX user_messages_private;
DROP INDEX user_messages_starred;
