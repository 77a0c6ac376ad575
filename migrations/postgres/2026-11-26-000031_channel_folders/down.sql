DROP TABLE channel_folders;
