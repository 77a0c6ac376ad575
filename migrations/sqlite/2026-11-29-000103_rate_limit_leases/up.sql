-- The shared rate-limit buckets are PostgreSQL's only (see migrations/postgres).
SELECT 1;
