DROP INDEX messages_search;
