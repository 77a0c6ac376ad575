-- What a bot has beyond its user row: its default channels and, for outgoing webhook and
-- embedded bots, the one service it runs (base URL, token and interface, or a service name
-- with its configuration as JSON text).
CREATE TABLE bot_settings (
    user_id BIGINT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    default_sending_stream_id BIGINT REFERENCES channels (id) ON DELETE SET NULL,
    default_events_register_stream_id BIGINT REFERENCES channels (id) ON DELETE SET NULL,
    default_all_public_streams BOOLEAN NOT NULL DEFAULT FALSE,
    service_name TEXT,
    service_base_url TEXT,
    service_token TEXT,
    service_interface BIGINT,
    service_config TEXT
);
