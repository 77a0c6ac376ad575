-- The search expression of a message (content and topic, English configuration) stored beside
-- it, so that reading a page of a `search:` narrow tests the stored vector instead of computing
-- `to_tsvector` again for every row it passes. A generated column: every insert, edit and move
-- (which change `content` or `topic`) recomputes it in the same statement.
ALTER TABLE messages ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (to_tsvector('english', content || ' ' || topic)) STORED;
DROP INDEX messages_search;
CREATE INDEX messages_search_vector ON messages USING GIN (search_vector);
