-- Every read of a user's state (register's unread counts, `is:unread` pages, the first unread
-- message) begins with all of the user's subscription spans, and every message query probes
-- one span per message for its end. Spans are written once per subscription, so their rows
-- lie scattered (the scale benchmark's heaviest user: 101 spans on 76 pages, a bitmap heap
-- scan of 0.9 ms). With the end in the key's index, both read the index alone (the spans
-- change rarely, so their pages stay all-visible): 0.86 → 0.56–0.69 ms for the statement that
-- reads the spans with the read ranges, in `pgbench` at 300,000 messages.
ALTER TABLE subscription_spans
    DROP CONSTRAINT subscription_spans_pkey,
    ADD CONSTRAINT subscription_spans_pkey
        PRIMARY KEY (user_id, channel_id, first_message_id) INCLUDE (end_message_id);
