-- gamelog schema, step 7: one append-only Merkle tree per device (RFC 9162 hashing),
-- and the tree heads devices sign as C2SP tlog-checkpoint signed notes.
-- See docs/FORMAT.md ("Device trees and signed heads") for the bytes hashed and signed.
-- Checkpoints (step 4) stay readable: logs signed before this step keep them.

-- A device's tree, one per signing key. `size` is the number of leaves this file
-- knows the tree to have; `frontier` holds the roots of the perfect subtrees of the
-- first `size` leaves (32 bytes each, largest first), derived from the leaves, so the
-- device can append without reading them again. NULL where this file holds only part
-- of the tree (an import of one game): such a tree is checked here, never extended.
CREATE TABLE trees (
    id         INTEGER PRIMARY KEY,
    public_key BLOB    NOT NULL UNIQUE CHECK (length(public_key) = 32),   -- Ed25519
    device     TEXT    NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    size       INTEGER NOT NULL CHECK (size >= 0),
    frontier   BLOB    CHECK (frontier IS NULL OR length(frontier) % 32 = 0)
) STRICT;

-- The tree a recording's events are leaves of, and each event's index among them.
ALTER TABLE streams ADD COLUMN tree_id INTEGER REFERENCES trees(id);
ALTER TABLE events ADD COLUMN leaf INTEGER CHECK (leaf IS NULL OR leaf >= 0);

-- What a device signed: its tree's size and root at a time. The signed note is
-- rebuilt from these columns (docs/FORMAT.md); `signature` is its Ed25519 signature.
CREATE TABLE tree_heads (
    tree_id   INTEGER NOT NULL REFERENCES trees(id),
    size      INTEGER NOT NULL CHECK (size >= 1),
    root      BLOB    NOT NULL CHECK (length(root) = 32),
    signed_at INTEGER NOT NULL,                                   -- microseconds since 1970-01-01 UTC
    flags     INTEGER NOT NULL DEFAULT 0 CHECK (flags IN (0, 1)), -- 1: a key derived for tests
    signature BLOB    NOT NULL CHECK (length(signature) = 64),
    PRIMARY KEY (tree_id, size)
) STRICT, WITHOUT ROWID;

-- Hashes of whole subtrees [lo, hi) of a tree: the tiles a device keeps as it appends
-- (every aligned subtree of 256 leaves or more), so one game's proof reads only its
-- own leaves and their neighbours; and the subtrees of leaves this file does not hold,
-- which an export of some recordings carries (a Merkle multiproof). Derived and
-- checked like every hash: a wrong one gives a root no device signed, and `verify`
-- compares every tile with its leaves.
CREATE TABLE tree_nodes (
    tree_id INTEGER NOT NULL REFERENCES trees(id),
    lo      INTEGER NOT NULL CHECK (lo >= 0),
    hi      INTEGER NOT NULL CHECK (hi > lo),
    hash    BLOB    NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (tree_id, lo, hi)
) STRICT, WITHOUT ROWID;

CREATE INDEX streams_by_tree ON streams(tree_id);
-- A tree's leaves by index: the neighbours of one game's leaves in their tiles.
CREATE INDEX events_by_leaf ON events(leaf) WHERE leaf IS NOT NULL;
