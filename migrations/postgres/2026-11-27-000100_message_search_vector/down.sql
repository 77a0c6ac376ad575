DROP INDEX messages_search_vector;
ALTER TABLE messages DROP COLUMN search_vector;
CREATE INDEX messages_search ON messages USING GIN (to_tsvector('english', content || ' ' || topic));
