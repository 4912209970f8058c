-- Audits shared among processes (`verify --workers`, `rerun --workers`, `--join RUN`).
-- A run is one audit of the store as it stood at store_rev; each of its games is a
-- task. A worker claims a task with SELECT ... FOR UPDATE SKIP LOCKED and marks it done
-- in the transaction that stores its result, so a worker that dies mid-task leaves it,
-- unlocked and not done, to another.
CREATE TABLE audit_runs (
    id          uuid   PRIMARY KEY,
    kind        text   NOT NULL CHECK (kind IN ('verify', 'rerun')),
    store_rev   bigint NOT NULL,
    -- Whether the run re-runs recordings against the extensions' code (verify --no-rerun: false).
    reruns      boolean NOT NULL,
    started_at  bigint NOT NULL
);
CREATE TABLE audit_tasks (
    run         uuid   NOT NULL REFERENCES audit_runs (id) ON DELETE CASCADE,
    game        bytea  NOT NULL CHECK (length(game) = 16),
    done        boolean NOT NULL DEFAULT false,
    -- Who checked it (host and process), at which revision of the store, and what it found (JSON).
    worker      text,
    store_rev   bigint,
    result      text,
    PRIMARY KEY (run, game)
);
CREATE INDEX audit_tasks_open ON audit_tasks (run, game) WHERE NOT done;
