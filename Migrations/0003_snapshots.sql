-- gamelog schema, step 3: cached projection snapshots.
-- A cache only: `gamelog index` writes them and may drop them; replay uses a row only
-- if its projection version is the running code's and its event hash still matches
-- the log, so a snapshot is never trusted over the events.
CREATE TABLE snapshots (
    conversation       BLOB    NOT NULL CHECK (length(conversation) = 16),
    projection_version INTEGER NOT NULL,
    step               INTEGER NOT NULL CHECK (step >= 1),   -- events of the conversation applied
    position           INTEGER NOT NULL,                     -- the global position of that step's event
    event_hash         BLOB    NOT NULL CHECK (length(event_hash) = 32),
    state              BLOB    NOT NULL,                     -- raw deflate (no dictionary) of the state as JSON
    PRIMARY KEY (conversation, projection_version, step)
) STRICT, WITHOUT ROWID;
