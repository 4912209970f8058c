-- A reader of the store as it is (`games`, `state`, `log`, the viewer) reads one game as its
-- recordings' events in position order, a page at a time (`stream_id IN (...) AND position >
-- last ORDER BY position`). Without this index PostgreSQL combined the recordings' rows with
-- a scan of every position after `last` (19 ms a page at 386k events, most of a game's
-- read); with it, each recording's rows are read in order where they lie (0.2 ms).
CREATE INDEX events_by_stream_position ON events (stream_id, position);
