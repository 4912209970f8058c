#!/usr/bin/env python3
"""Would a binary payload form beat the compact JSON one? Issue 14 asked to measure
both before choosing. This encodes every stored payload of a log in a CBOR-like binary
form (tagged values, varint lengths, UUID strings as their 16 bytes, keys as text) and
compares sizes, raw and deflated, with the compact JSON as stored.

Usage: tools/compare_binary_payload.py DATABASE     (a log written by gamelog)
Prints one line per form: bytes per event, raw and raw-deflated (level 6, no
dictionary; and for JSON also with the shipped dictionary, as gamelog stores it).
"""
import re
import sqlite3
import struct
import sys
import json
import zlib

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decode_log import stored_events  # noqa: E402

UUID = re.compile(r"^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$")


def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def encode(value):
    """A CBOR-like encoding: one tag byte, then the value."""
    if value is None:
        return b"\x00"
    if value is True:
        return b"\x01"
    if value is False:
        return b"\x02"
    if isinstance(value, int):
        return b"\x03" + varint(value << 1 if value >= 0 else (-value << 1) - 1)
    if isinstance(value, float):
        return b"\x04" + struct.pack(">d", value)
    if isinstance(value, str):
        if UUID.match(value):
            return b"\x05" + bytes.fromhex(value.replace("-", ""))
        data = value.encode()
        return b"\x06" + varint(len(data)) + data
    if isinstance(value, list):
        return b"\x07" + varint(len(value)) + b"".join(encode(item) for item in value)
    if isinstance(value, dict):
        parts = [b"\x08", varint(len(value))]
        for key, item in value.items():
            data = key.encode()
            parts += [varint(len(data)), data, encode(item)]
        return b"".join(parts)
    raise TypeError(type(value))


def deflate(data, dictionary=None):
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zdict=dictionary) if dictionary else \
        zlib.compressobj(6, zlib.DEFLATED, -15, 8)
    return len(compressor.compress(data) + compressor.flush())


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    dictionaries = dict(db.execute("SELECT id, bytes FROM dictionaries"))
    shipped = dictionaries[max(dictionaries)]
    totals = {"json": [0, 0, 0], "binary": [0, 0]}
    count = 0
    # Rows and blocks alike, as tools/decode_log.py reads them.
    for event in stored_events(db, dictionaries):
        payload = event[7]
        if payload is None:
            continue
        binary = encode(json.loads(payload))
        totals["json"][0] += len(payload)
        totals["json"][1] += deflate(payload)
        totals["json"][2] += deflate(payload, shipped)
        totals["binary"][0] += len(binary)
        totals["binary"][1] += deflate(binary)
        count += 1
    j, b = [t / count for t in totals["json"]], [t / count for t in totals["binary"]]
    print(f"{count} events, bytes per event")
    print(f"compact JSON (as stored)   raw {j[0]:6.1f}  deflated {j[1]:6.1f}  deflated with the shipped dictionary {j[2]:6.1f}")
    print(f"CBOR-like binary           raw {b[0]:6.1f}  deflated {b[1]:6.1f}  ({b[1] / j[1]:.2f}x the JSON, both without a dictionary)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
