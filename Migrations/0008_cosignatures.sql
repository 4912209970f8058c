-- Countersignatures of devices' signed heads by witnesses (a gamelog collector, or any witness
-- speaking C2SP tlog-cosignature/v1): each says the witness saw that head and checked that it
-- extends every head of the same device it accepted before, so a device rolled back or forked
-- after an upload is caught. `cosigned_at` is in seconds since 1970, the cosignature's own unit.
CREATE TABLE cosignatures (
    tree_id     INTEGER NOT NULL REFERENCES trees(id),
    size        INTEGER NOT NULL CHECK (size >= 1),
    witness     TEXT    NOT NULL CHECK (length(witness) BETWEEN 1 AND 200),
    witness_key BLOB    NOT NULL CHECK (length(witness_key) = 32),
    cosigned_at INTEGER NOT NULL CHECK (cosigned_at >= 0),
    signature   BLOB    NOT NULL CHECK (length(signature) = 64),
    PRIMARY KEY (tree_id, size, witness_key)
) STRICT, WITHOUT ROWID;
