-- Message IDs in commit order: on PostgreSQL each ID is taken under a lock held to the commit
-- (see the migration of the same name there). SQLite's writes take turns, one transaction
-- after another, so its IDs are already taken in commit order; nothing changes here.
SELECT 1;
