DROP TABLE push_devices;
