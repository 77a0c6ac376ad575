-- Nothing on SQLite: its search index (`messages_fts`, an FTS5 table kept by triggers) already
-- stores what it matches. The PostgreSQL migration of this number stores the search vector.
SELECT 1;
