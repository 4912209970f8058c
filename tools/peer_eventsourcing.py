#!/usr/bin/env python3
"""The peer in tools/bench.sh: the Python `eventsourcing` library (9.5.6) storing
the benchmark's workload in its SQLite application recorder, with its JSON
transcoder and ZlibCompressor, in batches of 1,000 events per transaction.

Usage: peer_eventsourcing.py WORKLOAD.jsonl DATABASE [LIMIT]
WORKLOAD.jsonl is `gamelog export` output; its checkpoint lines are left out, and
compact (type version 2) payloads are stored expanded, whole, as an application
would hold its events. Prints one JSON line:
{"events": N, "seconds": S, "rate": N/S, "file_bytes": B, "state_bytes": B}.
Only the peer's own work is timed (mapping, compressing, inserting), not reading
the workload file.
"""
import json
import os
import sqlite3
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from decode_log import expand  # noqa: E402  (the format's upcaster, by docs/FORMAT.md)
from eventsourcing.compressor import ZlibCompressor
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, Mapper, UUIDAsHex
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore


@dataclass(frozen=True)
class GameEvent:
    """One recorded event as an eventsourcing domain event: the recording (stream)
    is the aggregate, the stream version its version."""

    originator_id: uuid.UUID
    originator_version: int
    timestamp: datetime
    type: str
    type_version: int
    payload: dict


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    workload, database = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    events = []
    starts = {}
    with open(workload, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            # Only event lines: signed logs also export checkpoint, tree and head lines.
            if "payload" not in row:
                continue
            payload = json.loads(row["payload"])
            if row["type"] == "recording.started":
                starts[row["stream"]] = payload
            elif row["typeVersion"] == 2:
                payload = expand(payload, starts[row["stream"]])
            events.append(GameEvent(
                originator_id=uuid.UUID(row["stream"]),
                originator_version=row["streamVersion"],
                timestamp=datetime.fromtimestamp(row["recordedAt"] / 1e6, tz=timezone.utc),
                type=row["type"],
                type_version=1,
                payload=payload,
            ))
            if limit is not None and len(events) >= limit:
                break

    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(database + suffix):
            os.remove(database + suffix)
    datastore = SQLiteDatastore(db_name=database)
    recorder = SQLiteApplicationRecorder(datastore)
    recorder.create_table()
    transcoder = JSONTranscoder()
    transcoder.register(UUIDAsHex())
    transcoder.register(DatetimeAsISO())
    mapper = Mapper(transcoder=transcoder, compressor=ZlibCompressor())

    start = time.perf_counter()
    for first in range(0, len(events), 1000):
        batch = [mapper.to_stored_event(e) for e in events[first:first + 1000]]
        recorder.insert_events(batch)
    seconds = time.perf_counter() - start
    datastore.close()

    db = sqlite3.connect(database)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    state_bytes = db.execute("SELECT sum(length(state)) FROM stored_events").fetchone()[0] or 0
    stored = db.execute("SELECT count(*) FROM stored_events").fetchone()[0]
    db.close()
    if stored != len(events):
        print(f"the peer stored {stored} of {len(events)} events", file=sys.stderr)
        return 1
    print(json.dumps({
        "events": len(events), "seconds": seconds, "rate": len(events) / seconds,
        "file_bytes": os.path.getsize(database), "state_bytes": state_bytes,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
