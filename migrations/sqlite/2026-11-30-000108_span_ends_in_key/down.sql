-- See up.sql: nothing changed on SQLite.
SELECT 1;
