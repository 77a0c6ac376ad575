-- The event log is PostgreSQL's only (see migrations/postgres).
SELECT 1;
