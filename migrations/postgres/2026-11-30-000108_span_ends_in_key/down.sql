ALTER TABLE subscription_spans
    DROP CONSTRAINT subscription_spans_pkey,
    ADD CONSTRAINT subscription_spans_pkey PRIMARY KEY (user_id, channel_id, first_message_id);
