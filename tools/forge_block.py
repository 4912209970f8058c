#!/usr/bin/env python3
"""Change events of a gamelog database in place, as a forger who knows docs/FORMAT.md
would: a block is inflated, an event's payload changed, and the body written back
uncompressed (codec 0), its row and index rows kept in agreement. For the tests that
show what the viewer and `verify` make of a damaged or tampered log.

Usage: tools/forge_block.py garble DATABASE POSITION      (the payload becomes b"garbage")
       tools/forge_block.py swap DATABASE POSITION POSITION (two events exchange payloads)
       tools/forge_block.py pair DATABASE FIRST LAST        (two positions in FIRST..LAST of one
                                                            recording, same type, different payloads)
       tools/forge_block.py differ DATABASE OTHER           (how many positions' payloads differ)
"""
import sqlite3
import sys
import zlib

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decode_log import inflate, read_block  # noqa: E402


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def write_block(events):
    """The body of `events` (tuples as read_block gives them), uncompressed."""
    out = bytearray([1]) + varint(len(events))
    for e in events:
        out += e[0]
    for e in events:
        out += e[1]
    for column in (2, 3, 4, 5):
        for e in events:
            out += varint(e[column])
    previous = 0
    for e in events:
        delta = e[6] - previous
        out += varint(((delta << 1) ^ (delta >> 63)) & 0xFFFFFFFFFFFFFFFF)
        previous = e[6]
    for e in events:
        out += varint(0 if e[7] is None else e[7] + 1)
    for e in events:
        out += varint(len(e[8]))
    for e in events:
        out += e[8]
    return bytes(out)


def blocks(db):
    dictionaries = dict(db.execute("SELECT id, bytes FROM dictionaries"))
    for first, codec, dictionary_id, body in db.execute(
            "SELECT first_position, codec, dictionary_id, body FROM event_blocks ORDER BY first_position").fetchall():
        yield first, read_block(inflate(codec, dictionary_id, body, dictionaries))


def block_of(db, position):
    for first, events in blocks(db):
        if first <= position < first + len(events):
            return first, events
    raise SystemExit(f"no block holds position {position}")


def store(db, first, events):
    body = write_block(events)
    db.execute("UPDATE event_blocks SET codec = 0, dictionary_id = NULL, raw_size = ?, body = ?, last_hash = ? "
               "WHERE first_position = ?", (len(body), body, events[-1][1], first))


def change(db, position, payload):
    first, events = block_of(db, position)
    event = list(events[position - first])
    event[8] = payload
    events[position - first] = tuple(event)
    store(db, first, events)


def payload_at(db, position):
    first, events = block_of(db, position)
    return events[position - first][8]


def main():
    command, path = sys.argv[1], sys.argv[2]
    db = sqlite3.connect(path)
    if command == "garble":
        change(db, int(sys.argv[3]), b"garbage")
    elif command == "swap":
        one, two = int(sys.argv[3]), int(sys.argv[4])
        a, b = payload_at(db, one), payload_at(db, two)
        change(db, one, b)
        change(db, two, a)
    elif command == "pair":
        low, high = int(sys.argv[3]), int(sys.argv[4])
        seen = []
        for first, events in blocks(db):
            for offset, e in enumerate(events):
                position = first + offset
                if not low <= position <= high:
                    continue
                for other_position, o in seen:
                    if o[2] == e[2] and o[4] == e[4] and o[5] == e[5] and o[8] != e[8]:
                        print(other_position, position)
                        return
                seen.append((position, e))
        raise SystemExit("no pair of events to swap")
    elif command == "differ":
        other = sqlite3.connect(sys.argv[3])
        mine = {first + i: e[8] for first, events in blocks(db) for i, e in enumerate(events)}
        theirs = {first + i: e[8] for first, events in blocks(other) for i, e in enumerate(events)}
        print(sum(1 for p in mine if mine[p] != theirs.get(p)))
    else:
        raise SystemExit(__doc__)
    db.commit()


if __name__ == "__main__":
    main()
