DROP INDEX subscription_spans_open;
