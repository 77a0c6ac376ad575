-- Pending changes of a user's address: the change happens when the link mailed to the new
-- address is followed.
CREATE TABLE email_changes (
    token TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    new_email TEXT NOT NULL,
    created BIGINT NOT NULL
);
