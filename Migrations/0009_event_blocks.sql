-- gamelog schema, step 9: events stored in blocks (docs/FORMAT.md, "Event blocks").
-- A block is a run of consecutive events compressed together, one row for up to 64 of
-- them. It is a storage form only: every event keeps its own position, id, chain hash
-- and leaf, and what is hashed, signed and exported does not change. Events stored as
-- rows of `events` (by builds before this step, and by copies of a shared store) stay
-- as they are; a position is in a row or in a block, never both.
CREATE TABLE event_blocks (
    -- Its events are first_position ..< first_position + count (bounded, so that no
    -- reader's sum of a position and a count can overflow).
    first_position INTEGER PRIMARY KEY CHECK (first_position BETWEEN 1 AND 4611686018427387904),
    count          INTEGER NOT NULL CHECK (count BETWEEN 1 AND 4096),
    codec          INTEGER NOT NULL,                  -- as events.codec, for the whole body
    dictionary_id  INTEGER REFERENCES dictionaries(id),
    raw_size       INTEGER NOT NULL CHECK (raw_size BETWEEN 1 AND 67108864),
    body           BLOB    NOT NULL,
    last_hash      BLOB    NOT NULL CHECK (length(last_hash) = 32)  -- its last event's chain hash
) STRICT;

-- Which blocks hold a recording's events, so one recording is read without the others;
-- and where its events in each end (derived from the bodies; `verify` compares).
CREATE TABLE block_streams (
    stream_id     INTEGER NOT NULL REFERENCES streams(id),
    block         INTEGER NOT NULL,                   -- event_blocks.first_position
    last_version  INTEGER NOT NULL CHECK (last_version >= 1),
    last_position INTEGER NOT NULL CHECK (last_position >= 1),
    PRIMARY KEY (stream_id, block)
) STRICT, WITHOUT ROWID;

-- The ids of events in blocks: a retried append finds what it stored, a proof finds an event.
CREATE TABLE block_ids (
    event_id BLOB    PRIMARY KEY CHECK (length(event_id) = 16),
    position INTEGER NOT NULL CHECK (position >= 1)
) STRICT, WITHOUT ROWID;

-- The range of a device tree's leaves each block holds, so one game's proof reads only
-- the blocks of its leaves' neighbours.
CREATE TABLE block_leaves (
    tree_id    INTEGER NOT NULL REFERENCES trees(id),
    block      INTEGER NOT NULL,
    first_leaf INTEGER NOT NULL CHECK (first_leaf >= 0),
    last_leaf  INTEGER NOT NULL CHECK (last_leaf >= first_leaf),
    PRIMARY KEY (tree_id, block)
) STRICT, WITHOUT ROWID;
CREATE INDEX block_leaves_by_leaf ON block_leaves(tree_id, last_leaf);

-- Readers find one game through the catalog, not by type or time: these only cost
-- bytes and appends (docs/FORMAT.md says what every remaining index serves).
DROP INDEX events_by_type;
DROP INDEX events_by_time;
