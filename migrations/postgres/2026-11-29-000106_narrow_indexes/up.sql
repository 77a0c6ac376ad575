-- Narrows that match few messages, or none, read their pages from an index of those messages
-- in ID order, walked from the anchor, instead of every message the reader may see (a narrow
-- matching none read the reader's whole history: 38-100 ms at 300,000 messages on
-- PostgreSQL). The predicates are the ones `storage::messages` writes for those conditions,
-- word for word, so that SQLite, which matches a partial index's predicate by its terms, uses
-- them too. A send writes to one only when its message has a link, an image or an attachment,
-- or its topic is resolved.
CREATE INDEX messages_with_link ON messages (id) WHERE has_link;
CREATE INDEX messages_with_image ON messages (id) WHERE has_image;
CREATE INDEX messages_with_attachment ON messages (id) WHERE has_attachment;
CREATE INDEX messages_resolved ON messages (id) WHERE topic LIKE '✔ %';
