-- The event log's append pattern: one shared head row updated, then a row inserted, per
-- transaction (pgbench -n -f head_row.sql); setup as in insert.sql.
BEGIN;
UPDATE h SET seq = seq + 1 WHERE id = 1;
INSERT INTO t(v) VALUES ('x');
COMMIT;
