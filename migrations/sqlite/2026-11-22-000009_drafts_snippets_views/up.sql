-- Personal composing aids, each visible only to its owner: message drafts synchronized between
-- a person's clients, saved snippets (reusable message text) and navigation views (the
-- left-sidebar views a person pinned, hid or defined).

-- A draft's recipients are `to_ids`, comma-separated: the channel of a channel draft, the other
-- participants of a direct-message draft, nothing for an unaddressed draft (`draft_type` '').
CREATE TABLE drafts (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    draft_type TEXT NOT NULL,
    to_ids TEXT NOT NULL DEFAULT '',
    topic TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL,
    last_edit_time BIGINT NOT NULL
);
CREATE INDEX drafts_by_user ON drafts (user_id, last_edit_time);

CREATE TABLE saved_snippets (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    date_created BIGINT NOT NULL
);
CREATE INDEX saved_snippets_by_user ON saved_snippets (user_id, id);

-- A view is identified by its URL fragment; custom views also have a name, unique per person
-- (NULL names, those of built-in views, never clash).
CREATE TABLE navigation_views (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    fragment TEXT NOT NULL,
    is_pinned BOOLEAN NOT NULL,
    name TEXT,
    UNIQUE (user_id, fragment),
    UNIQUE (user_id, name)
);
