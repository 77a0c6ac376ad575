-- `has:link`, `has:image` and `has:attachment` narrows: the messages with each, in ID order, so
-- that a page walks them from its anchor instead of every message the reader may see (a narrow
-- that matches few or none read the reader's whole history: 38 ms at 300,000 messages on
-- PostgreSQL for `has:link` with no link). The predicates are the ones `storage::messages`
-- writes for those conditions. A send writes to one only when its message has a link, an image
-- or an attachment.
CREATE INDEX messages_with_link ON messages (id) WHERE has_link;
CREATE INDEX messages_with_image ON messages (id) WHERE has_image;
CREATE INDEX messages_with_attachment ON messages (id) WHERE has_attachment;
