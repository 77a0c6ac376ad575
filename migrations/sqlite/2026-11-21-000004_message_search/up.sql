-- Full-text search over message content and topics: an FTS5 index kept in step with the
-- messages table by triggers, with Porter stemming as PostgreSQL's English configuration does.
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, topic, content='messages', content_rowid='id', tokenize='porter unicode61'
);
INSERT INTO messages_fts (rowid, content, topic) SELECT id, content, topic FROM messages;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, content, topic) VALUES (new.id, new.content, new.topic);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, topic) VALUES ('delete', old.id, old.content, old.topic);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, topic ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content, topic) VALUES ('delete', old.id, old.content, old.topic);
    INSERT INTO messages_fts (rowid, content, topic) VALUES (new.id, new.content, new.topic);
END;
