-- gamelog schema, step 4: each stream's own hash chain, and devices' signed checkpoints.
-- See docs/FORMAT.md ("Stream chains and checkpoints") for the bytes signed.

-- The stream chain's head: the stream hash at `version` (NULL for a stream written
-- before this step; the next append to it computes it from its events).
ALTER TABLE streams ADD COLUMN head BLOB CHECK (head IS NULL OR length(head) = 32);

-- A device's signature over the heads of the streams it appended to in one batch.
-- Each device's checkpoints form a chain: `previous` is the digest of its checkpoint
-- `sequence - 1` (32 zero bytes for the first), so none can be dropped from the middle.
CREATE TABLE checkpoints (
    public_key BLOB    NOT NULL CHECK (length(public_key) = 32),   -- Ed25519
    sequence   INTEGER NOT NULL CHECK (sequence >= 1),
    device     TEXT    NOT NULL CHECK (length(device) BETWEEN 1 AND 200),
    previous   BLOB    NOT NULL CHECK (length(previous) = 32),
    signed_at  INTEGER NOT NULL,                                   -- microseconds since 1970-01-01 UTC
    heads      BLOB    NOT NULL CHECK (length(heads) > 0 AND length(heads) % 56 = 0),
    signature  BLOB    NOT NULL CHECK (length(signature) = 64),
    PRIMARY KEY (public_key, sequence)
) STRICT, WITHOUT ROWID;
