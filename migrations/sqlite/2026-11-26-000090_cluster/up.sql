-- The cluster tables (event log, nodes, shared rate limits) are PostgreSQL's only: a SQLite
-- database is served by one process (see migrations/postgres and docs/scaling.md).
SELECT 1;
