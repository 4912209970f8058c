-- The shared store: a gamelog log in PostgreSQL, for collectors and for every command given a
-- postgres:// URL. The log's tables hold the same rows, column for column, as a SQLite log's
-- (Migrations/NNNN_*.sql, docs/FORMAT.md), so every hash, head and signature is the same bytes and
-- a proof checked in one store checks in the other. Each of them adds `rev`: the store revision
-- (store_state.revision) of the write that last wrote the row, which readers use to fetch only
-- what changed since they last read.

CREATE TABLE store_state (
    "only"     integer PRIMARY KEY CHECK ("only" = 1),
    store_id   uuid    NOT NULL DEFAULT gen_random_uuid(),   -- names this store in caches
    revision   bigint  NOT NULL DEFAULT 0 CHECK (revision >= 0)
);
INSERT INTO store_state ("only") VALUES (1);

CREATE TABLE dictionaries (
    id         bigint PRIMARY KEY,
    name       text   NOT NULL UNIQUE,
    bytes      bytea  NOT NULL CHECK (length(bytes) BETWEEN 1 AND 32768),
    sha256     bytea  NOT NULL CHECK (length(sha256) = 32),
    created_at bigint NOT NULL,
    rev        bigint NOT NULL
);
CREATE TABLE event_types (
    id   bigint PRIMARY KEY,
    name text   NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 200),
    rev  bigint NOT NULL
);
CREATE TABLE trees (
    id         bigint PRIMARY KEY,
    public_key bytea  NOT NULL UNIQUE CHECK (length(public_key) = 32),
    device     text   NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    size       bigint NOT NULL CHECK (size >= 0),
    frontier   bytea  CHECK (frontier IS NULL OR length(frontier) % 32 = 0),
    rev        bigint NOT NULL
);
CREATE TABLE streams (
    id      bigint PRIMARY KEY,
    uuid    bytea  NOT NULL UNIQUE CHECK (length(uuid) = 16),
    version bigint NOT NULL CHECK (version >= 0),
    head    bytea  CHECK (head IS NULL OR length(head) = 32),
    tree_id bigint REFERENCES trees(id),
    rev     bigint NOT NULL
);
CREATE TABLE events (
    position       bigint  PRIMARY KEY,
    event_id       bytea   NOT NULL UNIQUE CHECK (length(event_id) = 16),
    stream_id      bigint  NOT NULL REFERENCES streams(id),
    stream_version bigint  NOT NULL CHECK (stream_version >= 1),
    type_id        bigint  NOT NULL REFERENCES event_types(id),
    type_version   bigint  NOT NULL CHECK (type_version >= 1),
    recorded_at    bigint  NOT NULL,
    codec          bigint  NOT NULL,
    dictionary_id  bigint  REFERENCES dictionaries(id),
    raw_size       bigint  NOT NULL CHECK (raw_size >= 0),
    payload        bytea   NOT NULL,
    hash           bytea   NOT NULL CHECK (length(hash) = 32),
    leaf           bigint  CHECK (leaf IS NULL OR leaf >= 0),
    rev            bigint  NOT NULL,
    UNIQUE (stream_id, stream_version)
);
CREATE TABLE catalog (
    kind      bigint NOT NULL CHECK (kind >= 1),
    key       bytea  NOT NULL CHECK (length(key) = 16),
    stream_id bigint NOT NULL REFERENCES streams(id),
    position  bigint NOT NULL CHECK (position >= 1),
    rev       bigint NOT NULL,
    PRIMARY KEY (kind, key, stream_id)
);
CREATE TABLE catalog_coverage (
    "only"  bigint PRIMARY KEY CHECK ("only" = 1),
    through bigint NOT NULL CHECK (through >= 0),
    rev     bigint NOT NULL
);
CREATE TABLE tree_heads (
    tree_id   bigint NOT NULL REFERENCES trees(id),
    size      bigint NOT NULL CHECK (size >= 1),
    root      bytea  NOT NULL CHECK (length(root) = 32),
    signed_at bigint NOT NULL,
    flags     bigint NOT NULL CHECK (flags IN (0, 1)),
    signature bytea  NOT NULL CHECK (length(signature) = 64),
    rev       bigint NOT NULL,
    PRIMARY KEY (tree_id, size)
);
CREATE TABLE tree_nodes (
    tree_id bigint NOT NULL REFERENCES trees(id),
    lo      bigint NOT NULL CHECK (lo >= 0),
    hi      bigint NOT NULL CHECK (hi > lo),
    hash    bytea  NOT NULL CHECK (length(hash) = 32),
    rev     bigint NOT NULL,
    PRIMARY KEY (tree_id, lo, hi)
);
CREATE TABLE checkpoints (
    public_key bytea  NOT NULL CHECK (length(public_key) = 32),
    sequence   bigint NOT NULL CHECK (sequence >= 1),
    device     text   NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    previous   bytea  NOT NULL CHECK (length(previous) = 32),
    signed_at  bigint NOT NULL,
    heads      bytea  NOT NULL CHECK (length(heads) > 0 AND length(heads) % 56 = 0),
    signature  bytea  NOT NULL CHECK (length(signature) = 64),
    rev        bigint NOT NULL,
    PRIMARY KEY (public_key, sequence)
);
CREATE TABLE forks (
    conversation        bytea  PRIMARY KEY CHECK (length(conversation) = 16),
    source_game         text   NOT NULL CHECK (length(source_game) BETWEEN 1 AND 64),
    source_conversation bytea  NOT NULL CHECK (length(source_conversation) = 16),
    source_step         bigint NOT NULL CHECK (source_step >= 0),
    source_head         bytea  NOT NULL CHECK (length(source_head) = 32),
    branch_step         bigint NOT NULL CHECK (branch_step >= 0),
    created_at          bigint NOT NULL,
    rev                 bigint NOT NULL
);
CREATE TABLE cosignatures (
    tree_id     bigint NOT NULL REFERENCES trees(id),
    size        bigint NOT NULL CHECK (size >= 1),
    witness     text   NOT NULL CHECK (length(witness) BETWEEN 1 AND 200),
    witness_key bytea  NOT NULL CHECK (length(witness_key) = 32),
    cosigned_at bigint NOT NULL CHECK (cosigned_at >= 0),
    signature   bytea  NOT NULL CHECK (length(signature) = 64),
    rev         bigint NOT NULL,
    PRIMARY KEY (tree_id, size, witness_key)
);

-- What a reader fetches: the rows written after the revision it holds.
CREATE INDEX dictionaries_by_rev ON dictionaries(rev);
CREATE INDEX event_types_by_rev ON event_types(rev);
CREATE INDEX trees_by_rev ON trees(rev);
CREATE INDEX streams_by_rev ON streams(rev);
CREATE INDEX events_by_rev ON events(rev);
CREATE INDEX catalog_by_rev ON catalog(rev);
CREATE INDEX tree_heads_by_rev ON tree_heads(rev);
CREATE INDEX tree_nodes_by_rev ON tree_nodes(rev);
CREATE INDEX checkpoints_by_rev ON checkpoints(rev);
CREATE INDEX forks_by_rev ON forks(rev);
CREATE INDEX cosignatures_by_rev ON cosignatures(rev);
-- What the one-game reads and the collector's checks look up.
CREATE INDEX catalog_by_stream ON catalog(stream_id);
CREATE INDEX streams_by_tree ON streams(tree_id);
CREATE INDEX events_by_leaf ON events(stream_id, leaf);

-- The collector's own tables (not part of a log; never copied into one).
-- A device may upload once an administrator enrolled its key under its name.
CREATE TABLE enrolled_devices (
    public_key  bytea  PRIMARY KEY CHECK (length(public_key) = 32),
    device      text   NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    enrolled_at bigint NOT NULL
);
-- SHA-256 of each access token: 'admin' enrolls devices, 'reader' reads.
CREATE TABLE access_tokens (
    role       text   NOT NULL CHECK (role IN ('admin', 'reader')),
    sha256     bytea  NOT NULL PRIMARY KEY CHECK (length(sha256) = 32),
    created_at bigint NOT NULL
);
-- Claims of `verify --workers` and their results, one row per game.
CREATE TABLE audit_results (
    game        bytea  PRIMARY KEY CHECK (length(game) = 16),
    store_rev   bigint NOT NULL,
    errors      bigint NOT NULL,
    warnings    bigint NOT NULL,
    report      text   NOT NULL,
    checked_at  bigint NOT NULL
);
