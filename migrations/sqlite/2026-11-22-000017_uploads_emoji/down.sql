DROP TABLE realm_emoji;
DROP TABLE attachment_messages;
DROP TABLE attachments;
