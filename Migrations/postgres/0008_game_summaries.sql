-- Shared store, step 8: each conversation's games as a fold of its events lists them.
-- A cold page of games folded every event of its conversations (about 11,000 for 50
-- games: 280-310 ms at 1M events); with these rows it reads 50 of them. A cache, like a
-- SQLite log's snapshots: `gamelog index` and the collectors write them; a reader uses a
-- row only if `format` is its own and `recordings` (each recording's id, version and head,
-- 56 bytes each) is what the store holds now, else it folds the events; `verify` folds
-- again and names a current row that differs. `events` (the recordings' versions added
-- up) only grows, so a fold that finishes late never replaces a newer one.
CREATE TABLE game_summaries (
    conversation bytea  PRIMARY KEY CHECK (length(conversation) = 16),
    format       text   NOT NULL CHECK (length(format) BETWEEN 1 AND 1000),
    recordings   bytea  NOT NULL CHECK (length(recordings) > 0 AND length(recordings) % 56 = 0),
    events       bigint NOT NULL CHECK (events >= 1),
    body         bytea  NOT NULL,
    folded_at    bigint NOT NULL
);
