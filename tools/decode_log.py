#!/usr/bin/env python3
"""Decode every event of a gamelog database and recompute its hash chain, using only
the standard library, following docs/FORMAT.md. Prints one JSON line per event with
--events, and always a final summary line; exits 1 if the chain is broken.

Usage: tools/decode_log.py DATABASE [--events]
"""
import hashlib
import json
import sqlite3
import struct
import sys
import uuid
import zlib


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, show = sys.argv[1], "--events" in sys.argv
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if db.execute("PRAGMA application_id").fetchone()[0] != 0x474C4F47:
        print(f"{path} is not a gamelog database", file=sys.stderr)
        return 2
    dictionaries = dict(db.execute("SELECT id, bytes FROM dictionaries"))
    rows = db.execute(
        """SELECT e.position, e.event_id, s.uuid, e.stream_version, t.name, e.type_version,
                  e.recorded_at, e.codec, e.dictionary_id, e.raw_size, e.payload, e.hash
           FROM events e JOIN streams s ON s.id = e.stream_id JOIN event_types t ON t.id = e.type_id
           ORDER BY e.position""")
    previous, expected, count, problems = bytes(32), 1, 0, []
    for (position, event_id, stream, version, type_name, type_version,
         recorded_at, codec, dictionary_id, raw_size, stored, stored_hash) in rows:
        count += 1
        if position != expected:
            problems.append(f"missing event at position {expected}")
        expected = position + 1
        if codec == 0:
            payload = stored
        elif codec == 1:
            payload = zlib.decompressobj(wbits=-15, zdict=dictionaries[dictionary_id]).decompress(stored)
        elif codec == 2:
            payload = zlib.decompressobj(wbits=-15).decompress(stored)
        else:
            problems.append(f"unknown codec {codec} at position {position}")
            previous = stored_hash
            continue
        if len(payload) != raw_size:
            problems.append(f"payload size mismatch at position {position}")
        name = type_name.encode()
        envelope = (struct.pack(">Q", position) + event_id + stream + struct.pack(">Q", version)
                    + struct.pack(">H", len(name)) + name + struct.pack(">I", type_version)
                    + struct.pack(">q", recorded_at) + struct.pack(">I", len(payload)) + payload)
        computed = hashlib.sha256(previous + envelope).digest()
        if computed != stored_hash:
            problems.append(f"hash mismatch at position {position}")
        previous = stored_hash
        if show:
            print(json.dumps({"position": position, "id": str(uuid.UUID(bytes=event_id)),
                              "stream": str(uuid.UUID(bytes=stream)), "version": version,
                              "type": type_name, "recordedAt": recorded_at,
                              "payload": json.loads(payload)}, sort_keys=True))
    print(json.dumps({"events": count, "head": previous.hex(), "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
