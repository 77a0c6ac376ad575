DROP TABLE muted_users;
DROP TABLE alert_words;
DROP TABLE user_status;
