-- PostgreSQL's spans keep their end in the primary key's index (see migrations/postgres), so
-- that reading a user's spans reads the index alone. SQLite is left as it is: its register and
-- pages are within issue 15's targets (docs/benchmarks.md), and this was measured on
-- PostgreSQL only.
SELECT 1;
