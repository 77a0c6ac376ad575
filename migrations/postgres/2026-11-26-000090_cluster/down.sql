DROP TABLE queue_adoptions;
DROP TABLE queue_handoffs;
DROP TABLE rate_limit_buckets;
DROP TABLE cluster_nodes;
DROP TABLE event_log;
DROP TABLE event_log_head;
