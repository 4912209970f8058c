-- gamelog schema, step 5: where a forked game came from.
-- `gamelog fork` re-enacts a recorded game up to a step in a fresh simulated world,
-- then plays on with new inputs; the branch's recordings are new streams in this
-- file, and this row names their origin.
CREATE TABLE forks (
    conversation        BLOB    PRIMARY KEY CHECK (length(conversation) = 16),        -- the fork's conversation here
    source_game         TEXT    NOT NULL CHECK (length(source_game) BETWEEN 1 AND 64), -- the game (or conversation) id forked
    source_conversation BLOB    NOT NULL CHECK (length(source_conversation) = 16),
    source_step         INTEGER NOT NULL CHECK (source_step >= 0),                   -- steps of the source re-enacted
    source_head         BLOB    NOT NULL CHECK (length(source_head) = 32),           -- the source log's head hash then
    branch_step         INTEGER NOT NULL CHECK (branch_step >= 0),                   -- the fork's steps that re-enact them
    created_at          INTEGER NOT NULL                                             -- microseconds since 1970-01-01 UTC
) STRICT, WITHOUT ROWID;
