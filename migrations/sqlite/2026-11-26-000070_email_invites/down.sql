DROP TABLE email_invites;
