-- Organization-wide message aids that administrators configure: linkifiers (a regular
-- expression whose matches in messages and topics become links built from an RFC 6570 URL
-- template, applied in `sort_order`, then ID) and code playgrounds (where a code block of a
-- language can be opened, through a URL template with the variable `code`).

CREATE TABLE linkifiers (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    pattern TEXT NOT NULL UNIQUE,
    url_template TEXT NOT NULL,
    sort_order BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX linkifiers_by_order ON linkifiers (sort_order, id);

CREATE TABLE realm_playgrounds (
    id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
    name TEXT NOT NULL,
    pygments_language TEXT NOT NULL,
    url_template TEXT NOT NULL,
    UNIQUE (pygments_language, name)
);
