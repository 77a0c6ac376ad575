-- Nothing on PostgreSQL: it has had this index (`user_messages_unread`) since 000005. The SQLite
-- migration of this number adds it there.
SELECT 1;
