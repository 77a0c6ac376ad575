DROP TABLE read_ranges;
DROP TABLE subscription_spans;
ALTER TABLE messages DROP COLUMN stream_wildcard_mentioned;
