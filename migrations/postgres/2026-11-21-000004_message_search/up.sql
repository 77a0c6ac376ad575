-- Full-text search over message content and topics with the English configuration.
CREATE INDEX messages_search ON messages USING GIN (to_tsvector('english', content || ' ' || topic));
