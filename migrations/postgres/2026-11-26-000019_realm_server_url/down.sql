ALTER TABLE realms DROP COLUMN server_url;
