DROP INDEX messages_resolved;
DROP INDEX messages_with_attachment;
DROP INDEX messages_with_image;
DROP INDEX messages_with_link;
