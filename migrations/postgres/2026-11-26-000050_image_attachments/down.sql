DROP INDEX attachments_by_create_time;
DROP TABLE image_attachments;
