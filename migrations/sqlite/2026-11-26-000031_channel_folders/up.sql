-- Channel folders: named groups of channels in the left sidebar, in an order the
-- administrators choose (channels.folder_id points here).
CREATE TABLE channel_folders (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    rendered_description TEXT NOT NULL,
    creator_id BIGINT REFERENCES users (id) ON DELETE SET NULL,
    date_created BIGINT NOT NULL,
    is_archived BOOLEAN NOT NULL DEFAULT FALSE,
    folder_order BIGINT NOT NULL
);
