-- The key that signs temporary upload URLs, kept with the data so that URLs handed out before a
-- restart keep working after it (and a restored backup signs as the original did).
ALTER TABLE realms ADD COLUMN url_signing_key TEXT;
