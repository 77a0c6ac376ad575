-- Uploaded images that were thumbnailed: their size as displayed, how many frames they have,
-- and the thumbnails stored for them (a JSON list of formats, each with its pixel size and
-- bytes). The thumbnails live in the file store under `thumbnail/<path_id>/<format>`.
CREATE TABLE image_attachments (
    attachment_id BIGINT PRIMARY KEY NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
    original_width_px INTEGER NOT NULL,
    original_height_px INTEGER NOT NULL,
    frames INTEGER NOT NULL,
    thumbnails TEXT NOT NULL
);

-- Unclaimed uploads are found by age.
CREATE INDEX attachments_by_create_time ON attachments (create_time);
