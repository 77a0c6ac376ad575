DROP TABLE multiuse_invites;
