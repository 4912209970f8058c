#!/usr/bin/env python3
"""How big would a recording's events be stored as blocks of N (the segments issue)?

Reads a sample of a gamelog database's recordings, inflates each event's stored payload
(docs/FORMAT.md: raw deflate with the shipped dictionary), and for each block size N
deflates each recording's events N at a time (each payload length-prefixed, one deflate
stream with the same dictionary and level as today), printing for each N: compressed
bytes per event, the time zlib takes to inflate one block (what reading one event of a
block costs), and an estimate of the whole file's bytes per event, with the per-row cost
of today's layout (everything in the file but the payloads, per row) spread over N.

    tools/block_sizes.py DATABASE [--streams 2000]

Standard library only.
"""
import argparse
import sqlite3
import sys
import time
import zlib


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("database")
    parser.add_argument("--streams", type=int, default=2000)
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.database}?mode=ro", uri=True)
    dictionaries = dict(db.execute("SELECT id, bytes FROM dictionaries"))
    events, file_bytes = db.execute("SELECT count(*), (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) FROM events").fetchone()
    if events == 0:
        print("this log keeps its events in blocks (schema 9); the estimate is for a log stored as rows, "
              "one written before blocks", file=sys.stderr)
        return 2
    stored_payloads = db.execute("SELECT sum(length(payload)) FROM events").fetchone()[0]
    per_row = (file_bytes - stored_payloads) / events
    streams = [row[0] for row in db.execute("SELECT id FROM streams ORDER BY id LIMIT ?", (args.streams,))]
    dictionary = next(iter(dictionaries.values()))
    recordings = []
    sample_events = 0
    sample_stored = 0
    for stream in streams:
        payloads = []
        for codec, dictionary_id, stored in db.execute(
                "SELECT codec, dictionary_id, payload FROM events WHERE stream_id = ? ORDER BY stream_version", (stream,)):
            sample_stored += len(stored)
            if codec == 0:
                payloads.append(bytes(stored))
            else:
                zdict = dictionaries[dictionary_id] if dictionary_id is not None else b""
                payloads.append(zlib.decompressobj(wbits=-15, zdict=zdict).decompress(stored) if zdict
                                else zlib.decompressobj(wbits=-15).decompress(stored))
        recordings.append(payloads)
        sample_events += len(payloads)
    print(f"{events:,} events, {file_bytes / events:.1f} bytes each in the file; stored payloads {stored_payloads / events:.1f}, "
          f"everything else {per_row:.1f} per row (ids, hashes, integers, indexes, trees, catalog)")
    print(f"sample: {len(recordings):,} recordings, {sample_events:,} events, stored payloads {sample_stored / sample_events:.1f} bytes each")
    print(f"{'block':>6} {'payload B/event':>16} {'vs today':>9} {'inflate one block':>18} {'file B/event (est.)':>20}")
    for n in [1, 2, 4, 8, 16, 32, 64, 128, 256]:
        compressed = 0
        blocks = 0
        inflate_time = 0.0
        for payloads in recordings:
            for start in range(0, len(payloads), n):
                block = b"".join(varint(len(p)) + p for p in payloads[start:start + n])
                deflater = zlib.compressobj(6, zlib.DEFLATED, -15, 4, zdict=dictionary)
                data = deflater.compress(block) + deflater.flush()
                compressed += len(data)
                blocks += 1
                began = time.perf_counter()
                zlib.decompressobj(wbits=-15, zdict=dictionary).decompress(data)
                inflate_time += time.perf_counter() - began
        per_event = compressed / sample_events
        estimate = per_event + per_row / n
        print(f"{n:>6} {per_event:>16.1f} {per_event / (sample_stored / sample_events):>8.2f}x {inflate_time / blocks * 1e6:>15.1f} us "
              f"{estimate:>20.1f}")
    print("the estimate keeps today's per-row cost per block (one row, one leaf hash, one index entry each);"
          " a block's own offsets and per-event hashes, if kept, add to it")


if __name__ == "__main__":
    main()
