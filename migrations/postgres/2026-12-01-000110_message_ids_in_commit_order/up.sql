-- Message IDs in commit order (docs/architecture.md, "Message IDs in commit order"). Clients
-- take a message event with a lower ID than one they already have as out of order (zulip-flutter
-- appends it to the end of its list and binary-searches the list by ID), and events follow the
-- event log, which is in commit order. So a message's ID is taken under one transaction-scoped
-- advisory lock, held to the commit: a transaction that takes an ID waits until the one that
-- took the last ID has committed or rolled back, and IDs rise in commit order. The lock is the
-- ID's own default, so every insert takes it, whatever code path it comes from; it is taken
-- after the send's other locks (its channel's, the spans'), each transaction's last but the
-- event log's head, so that the wait is the commit of the transaction before.
--
-- The key is 0x6d73_6769_6473 ("msgids").
CREATE FUNCTION parley_next_message_id() RETURNS BIGINT LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(120342423626867);
    RETURN nextval('messages_id_seq');
END
$$;

-- The identity column becomes a plain one with a sequence of its own, going on from where the
-- identity's left off (an identity column takes no other default).
DO $$
DECLARE
    next_id BIGINT;
BEGIN
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
        INTO next_id FROM messages_id_seq;
    ALTER TABLE messages ALTER COLUMN id DROP IDENTITY;
    CREATE SEQUENCE messages_id_seq OWNED BY messages.id;
    PERFORM setval('messages_id_seq',
        GREATEST(next_id, (SELECT COALESCE(MAX(id), 0) + 1 FROM messages)), false);
END
$$;
ALTER TABLE messages ALTER COLUMN id SET DEFAULT parley_next_message_id();
