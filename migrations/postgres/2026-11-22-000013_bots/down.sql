DROP TABLE bot_settings;
