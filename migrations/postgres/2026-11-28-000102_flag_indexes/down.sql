DROP INDEX messages_stream_wildcard;
DROP INDEX user_messages_alerted;
DROP INDEX user_messages_mentioned;
