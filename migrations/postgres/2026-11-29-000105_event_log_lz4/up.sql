-- A send's entry in the event log names each recipient (about 8 KB for 266), which PostgreSQL
-- compresses on insert; with its default `pglz` that was the largest single cost of the
-- PostgreSQL backend during sends (5 % of its CPU). `lz4` compresses several times faster.
-- A server built without lz4 (`--with-lz4`) keeps `pglz`: the setting is only a speed-up.
DO $$
BEGIN
    ALTER TABLE event_log ALTER COLUMN events SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available; the event log keeps its compression';
END
$$;
