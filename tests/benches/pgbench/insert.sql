-- One-row insert per transaction (pgbench -n -f insert.sql): PostgreSQL's own rate.
-- Setup: CREATE TABLE t(id bigserial primary key, v text); CREATE TABLE h(id int primary key, seq bigint); INSERT INTO h VALUES (1, 0);
INSERT INTO t(v) VALUES ('x');
