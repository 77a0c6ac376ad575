DROP TABLE push_device_tokens;
