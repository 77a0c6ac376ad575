DROP TABLE presence_sequence;
DROP INDEX user_presence_by_connection;
DROP INDEX user_presence_by_update;
DROP TABLE user_presence;
