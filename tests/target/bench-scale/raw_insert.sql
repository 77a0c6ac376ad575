INSERT INTO raw_insert (a, b) VALUES (1, 'a row of text');
