DROP TABLE user_topics;
