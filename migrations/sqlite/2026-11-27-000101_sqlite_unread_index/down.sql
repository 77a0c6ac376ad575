DROP INDEX user_messages_unread;
