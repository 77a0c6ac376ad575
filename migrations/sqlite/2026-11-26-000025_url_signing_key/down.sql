ALTER TABLE realms DROP COLUMN url_signing_key;
