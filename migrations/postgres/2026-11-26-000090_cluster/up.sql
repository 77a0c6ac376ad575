-- Several Parley processes on one PostgreSQL database (docs/scaling.md).

-- The event log of record: every action appends the events it caused in its own transaction.
-- `seq` is taken from `event_log_head` under that row's lock, held until the commit, so
-- sequence order is commit order and a reader of `seq > n` never skips an entry.
CREATE TABLE event_log_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL
);
INSERT INTO event_log_head (id, seq) VALUES (1, 0);

CREATE TABLE event_log (
    seq BIGINT PRIMARY KEY,
    events TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- The server processes sharing the database: where each one is reached, how far it has
-- delivered the log, and when it last said it was alive.
CREATE TABLE cluster_nodes (
    node_id TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    position BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    -- Set when it begins a graceful stop: its queues are about to be handed over.
    stopping BOOLEAN NOT NULL DEFAULT FALSE
);

-- Token buckets of the rate limits, shared by every node.
CREATE TABLE rate_limit_buckets (
    key TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    updated_ms BIGINT NOT NULL,
    allowed BOOLEAN NOT NULL
);

-- Queues a stopping node handed over: each with the log position its events reach, adopted
-- (deleted from here) by the first node a request for it reaches.
CREATE TABLE queue_handoffs (
    queue_id TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    position BIGINT NOT NULL,
    data TEXT NOT NULL,
    handed_at BIGINT NOT NULL
);

-- Which node adopted a handed-over queue (its ID still names the node that created it).
CREATE TABLE queue_adoptions (
    queue_id TEXT PRIMARY KEY,
    node_id TEXT NOT NULL,
    adopted_at BIGINT NOT NULL
);
