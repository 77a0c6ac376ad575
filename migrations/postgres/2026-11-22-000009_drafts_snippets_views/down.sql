DROP TABLE navigation_views;
DROP TABLE saved_snippets;
DROP TABLE drafts;
