-- How many tokens the last take from a bucket granted: a process takes several at once and
-- spends them itself (a lease, actions/src/rate_limit.rs), so the upsert must say how many.
ALTER TABLE rate_limit_buckets ADD COLUMN granted DOUBLE PRECISION NOT NULL DEFAULT 0;
