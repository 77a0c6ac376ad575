DROP INDEX messages_direct;
