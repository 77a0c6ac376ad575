-- The URL the server was last started at, so that commands run beside it (parley create-user)
-- print credentials that point at the running server rather than at their own defaults.
ALTER TABLE realms ADD COLUMN server_url TEXT;
