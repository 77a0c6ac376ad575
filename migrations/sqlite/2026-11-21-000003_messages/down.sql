ALTER TABLE users DROP COLUMN is_system_bot;
DROP TABLE reactions;
DROP TABLE user_messages;
DROP TABLE messages;
DROP TABLE dm_groups;
