DROP TABLE realm_user_defaults;
DROP TABLE user_settings;
