-- gamelog schema, step 6: the catalog, so that finding one game costs the same in any log.
-- Each row says that a recording (stream) names an id: the conversation it records
-- (kind 1) or a game, i.e. a message session, it inserted, sent or received (kind 2).
-- Appends write the rows of their events in the same transaction; they are derived
-- from payloads, so `gamelog verify` re-derives and compares them.
CREATE TABLE catalog (
    kind      INTEGER NOT NULL CHECK (kind >= 1),
    key       BLOB    NOT NULL CHECK (length(key) = 16),
    stream_id INTEGER NOT NULL REFERENCES streams(id),
    position  INTEGER NOT NULL CHECK (position >= 1),  -- the stream's first event that names it
    PRIMARY KEY (kind, key, stream_id)
) STRICT, WITHOUT ROWID;

-- How far the catalog covers the log. Readers trust it only when `through` is the last
-- position; else they scan, as before this step. A log made before this step starts
-- at 0 (`gamelog migrate` or `gamelog index` fill it), as does one that an appender
-- without catalog entries wrote to.
CREATE TABLE catalog_coverage (
    only    INTEGER PRIMARY KEY CHECK (only = 1),
    through INTEGER NOT NULL CHECK (through >= 0)
) STRICT;
INSERT INTO catalog_coverage (only, through) VALUES (1, 0);
CREATE INDEX catalog_by_stream ON catalog(stream_id);
-- Lists in order of first mention (a page of games) without sorting them all.
CREATE INDEX catalog_by_position ON catalog(kind, position);
