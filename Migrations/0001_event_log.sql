-- gamelog schema, step 1: the append-only event log.
-- See docs/FORMAT.md for how to decode rows and recompute hashes.

-- 'GLOG': marks the file as a gamelog database, so other SQLite files are refused.
PRAGMA application_id = 1196183367;

-- Preset dictionaries for raw deflate. Never updated or deleted: every event names
-- the dictionary it was compressed with, so old events stay readable forever.
CREATE TABLE dictionaries (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL UNIQUE,
    bytes      BLOB    NOT NULL CHECK (length(bytes) BETWEEN 1 AND 32768),
    sha256     BLOB    NOT NULL CHECK (length(sha256) = 32),
    created_at INTEGER NOT NULL             -- microseconds since 1970-01-01 UTC
) STRICT;

-- A stream is one recording: one extension instance on one device in one
-- conversation. `version` is the stream's last event version (0: no event yet).
CREATE TABLE streams (
    id      INTEGER PRIMARY KEY,
    uuid    BLOB    NOT NULL UNIQUE CHECK (length(uuid) = 16),
    version INTEGER NOT NULL DEFAULT 0 CHECK (version >= 0)
) STRICT;

-- Event type names, stored once; events refer to them by id.
CREATE TABLE event_types (
    id   INTEGER PRIMARY KEY,
    name TEXT    NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200)
) STRICT;

CREATE TABLE events (
    position       INTEGER PRIMARY KEY,      -- 1, 2, 3, ... with no gaps
    event_id       BLOB    NOT NULL UNIQUE CHECK (length(event_id) = 16),
    stream_id      INTEGER NOT NULL REFERENCES streams(id),
    stream_version INTEGER NOT NULL CHECK (stream_version >= 1),
    type_id        INTEGER NOT NULL REFERENCES event_types(id),
    type_version   INTEGER NOT NULL CHECK (type_version >= 1),
    recorded_at    INTEGER NOT NULL,         -- microseconds since 1970-01-01 UTC
    codec          INTEGER NOT NULL,         -- 0 raw, 1 raw deflate + dictionary, 2 raw deflate
    dictionary_id  INTEGER REFERENCES dictionaries(id),
    raw_size       INTEGER NOT NULL CHECK (raw_size >= 0),
    payload        BLOB    NOT NULL,
    hash           BLOB    NOT NULL CHECK (length(hash) = 32),
    UNIQUE (stream_id, stream_version)
) STRICT;

CREATE INDEX events_by_type ON events(type_id, position);
CREATE INDEX events_by_time ON events(recorded_at);
