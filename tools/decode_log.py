#!/usr/bin/env python3
"""Decode every event of a gamelog database, recompute its hash chain and every
stream's chain, rebuild every device's Merkle tree and check its signed heads (and
the older checkpoints), following docs/FORMAT.md with the standard library and
`cryptography` (for Ed25519) only. Prints one JSON
line per event with --events, and always a final summary line; exits 1 if anything
does not verify. Every leaf below a device's newest valid head must be held: leaves a
log holds only as subtree hashes (tree_nodes) are absent, listed under "absent" in the
summary, and a problem unless --partial says the log is meant to hold part of the history.

Usage: tools/decode_log.py DATABASE [--events] [--trust KEYS.json] [--partial]
"""
import base64
import hashlib
import heapq
import json
import sqlite3
import struct
import sys
import uuid
import zlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


def checkpoint_message(device, sequence, previous, signed_at, heads):
    """The bytes a device signs: see "Checkpoints" in docs/FORMAT.md."""
    name = device.encode()
    return (b"gamelog checkpoint v1\n" + struct.pack(">H", len(name)) + name + struct.pack(">Q", sequence)
            + previous + struct.pack(">q", signed_at) + struct.pack(">I", len(heads) // 56) + heads)


def leaf_hash(data):
    """RFC 9162: SHA-256(0x00 || leaf data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left, right):
    """RFC 9162: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def tree_root(size, leaves, nodes):
    """The root of the first `size` leaves (RFC 9162 section 2.1.1): a leaf's hash from
    `leaves` (index -> hash) where held, else a stored proof node (lo, hi) -> hash that
    covers no held leaf. None if something is missing."""
    if size == 0:
        return hashlib.sha256(b"").digest()
    held = sorted(leaves)

    def holds(lo, hi):
        import bisect
        i = bisect.bisect_left(held, lo)
        return i < len(held) and held[i] < hi

    def node_inside(lo, hi):
        # Walking a range that holds no leaf and no stored node is bounded: it is missing.
        return any(lo <= a and b <= hi for (a, b) in nodes)

    def walk(lo, hi):
        if not holds(lo, hi):
            if (lo, hi) in nodes:
                return nodes[(lo, hi)]
            if hi - lo == 1 or not node_inside(lo, hi):
                return None
        elif hi - lo == 1:
            return leaves.get(lo)
        k = 1
        while k * 2 < hi - lo:
            k *= 2
        left, right = walk(lo, lo + k), walk(lo + k, hi)
        return None if left is None or right is None else node_hash(left, right)
    return walk(0, size)


def absent_ranges(size, leaves):
    """The leaf indexes below `size` not in `leaves`, as "lo-hi" (or "lo") text, in order."""
    out, following = [], 0
    for leaf in sorted(leaves):
        if following >= size:
            break
        if leaf > following:
            out.append((following, min(leaf, size) - 1))
        following = max(following, leaf + 1)
    if following < size:
        out.append((following, size - 1))
    return out


def encode_device(name):
    """Percent-encoding of every byte outside A-Z a-z 0-9 - . _ ~ (docs/FORMAT.md)."""
    safe = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    return "".join(chr(b) if b in safe else f"%{b:02X}" for b in name.encode())


def head_body(device, key, size, root, signed_at, test_key):
    """The signed note body of a tree head (C2SP tlog-checkpoint), docs/FORMAT.md."""
    origin = f"gamelog/{encode_device(device)}/{hashlib.sha256(key).hexdigest()[:16]}"
    body = f"{origin}\n{size}\n{base64.b64encode(root).decode()}\ntime {signed_at}\n"
    return body + ("insecure-test-key\n" if test_key else "")


# Ed25519 points of small order (libsodium's list), compared without the sign bit.
BLOCKED_KEYS = {bytes(32), b"\x01" + bytes(31),
                bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"),
                bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"),
                b"\xec" + b"\xff" * 30 + b"\x7f", b"\xed" + b"\xff" * 30 + b"\x7f", b"\xee" + b"\xff" * 30 + b"\x7f"}


def weak_key(key):
    return key[:31] + bytes([key[31] & 0x7F]) in BLOCKED_KEYS


def expand(document, start):
    """A type version 2 (compact) payload as version 1, by docs/FORMAT.md: references
    to the recording's ids replaced, escaped dollars unescaped, and the context's
    conversation and device put back. A reference to nothing raises KeyError."""
    references = {"$c": start["conversation"], "$l": start["localParticipant"]}
    references.update({f"$r{i}": remote for i, remote in enumerate(start["remoteParticipants"])})

    def walk(value):
        if isinstance(value, str) and value.startswith("$"):
            return value[1:] if value.startswith("$$") else references[value]
        if isinstance(value, list):
            return [walk(item) for item in value]
        if isinstance(value, dict):
            return {key: walk(item) for key, item in value.items()}
        return value

    expanded = walk(document)
    expanded["context"] = {"conversation": start["conversation"], "device": start["device"], **expanded["context"]}
    return expanded


def inflate(codec, dictionary_id, stored, dictionaries):
    """A payload or a block body as stored, decompressed (docs/FORMAT.md, "Payloads")."""
    if codec == 0:
        return stored
    if codec == 1:
        return zlib.decompressobj(wbits=-15, zdict=dictionaries[dictionary_id]).decompress(stored)
    if codec == 2:
        return zlib.decompressobj(wbits=-15).decompress(stored)
    raise ValueError(f"unknown codec {codec}")


def read_block(body):
    """A block's events (docs/FORMAT.md, "Event blocks"): its columns read back into
    one tuple per event (id, hash, stream row, version, type row, type version, time,
    leaf, payload)."""
    at = 0

    def byte():
        nonlocal at
        at += 1
        return body[at - 1]

    def varint():
        value, shift = 0, 0
        while True:
            b = byte()
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    def take(n):
        nonlocal at
        if at + n > len(body):
            raise ValueError("the body ends early")
        at += n
        return body[at - n:at]

    if byte() != 1:
        raise ValueError("an unknown block format")
    n = varint()
    ids = [take(16) for _ in range(n)]
    hashes = [take(32) for _ in range(n)]
    streams, versions, types, type_versions = ([varint() for _ in range(n)] for _ in range(4))
    times, time = [], 0
    for _ in range(n):
        z = varint()
        time += (z >> 1) ^ -(z & 1)
        times.append(time)
    leaves = [(lambda v: None if v == 0 else v - 1)(varint()) for _ in range(n)]
    lengths = [varint() for _ in range(n)]
    payloads = [take(length) for length in lengths]
    if at != len(body):
        raise ValueError("bytes after the last payload")
    return list(zip(ids, hashes, streams, versions, types, type_versions, times, leaves, payloads))


def stored_events(db, dictionaries):
    """Every stored event, rows of `events` and events of `event_blocks` merged in
    position order, as (position, id, stream, version, type, type version, time,
    payload, problem, stored hash, leaf, tree): payload None where problem says why."""
    has_trees = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'trees'").fetchone()[0] == 1
    has_blocks = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'event_blocks'").fetchone()[0] == 1
    streams = {row[0]: (row[1], row[2] if has_trees else None)
               for row in db.execute(f"SELECT id, uuid, {'tree_id' if has_trees else 'NULL'} FROM streams")}
    types = dict(db.execute("SELECT id, name FROM event_types"))
    tree_columns = "e.leaf" if has_trees else "NULL"
    rows = db.execute(
        f"""SELECT e.position, e.event_id, e.stream_id, e.stream_version, e.type_id, e.type_version,
                  e.recorded_at, e.codec, e.dictionary_id, e.raw_size, e.payload, e.hash, {tree_columns}
           FROM events e ORDER BY e.position""").fetchall()

    def from_rows():
        for (position, event_id, stream, version, type_id, type_version,
             recorded_at, codec, dictionary_id, raw_size, stored, stored_hash, leaf) in rows:
            payload, problem = None, None
            try:
                payload = inflate(codec, dictionary_id, stored, dictionaries)
                if len(payload) != raw_size:
                    payload, problem = None, "payload size mismatch"
            except (ValueError, KeyError, zlib.error) as error:
                problem = str(error)
            uuid_bytes, tree = streams[stream]
            yield (position, event_id, uuid_bytes, version, types[type_id], type_version, recorded_at,
                   payload, problem, stored_hash, leaf, tree)

    def from_blocks():
        if not has_blocks:
            return
        for first, count, codec, dictionary_id, raw_size, body, last_hash in db.execute(
                "SELECT first_position, count, codec, dictionary_id, raw_size, body, last_hash FROM event_blocks "
                "ORDER BY first_position"):
            try:
                events = read_block(inflate(codec, dictionary_id, body, dictionaries))
                if len(events) != count or events[-1][1] != last_hash:
                    raise ValueError("the block does not match its row")
            except (ValueError, KeyError, IndexError, zlib.error) as error:
                for position in range(first, first + count):
                    yield (position, None, None, None, None, None, None, None, f"an unreadable block ({error})",
                           last_hash if position == first + count - 1 else None, None, None)
                continue
            for offset, (event_id, stored_hash, stream, version, type_id, type_version, time, leaf, payload) in enumerate(events):
                uuid_bytes, tree = streams[stream]
                yield (first + offset, event_id, uuid_bytes, version, types[type_id], type_version, time,
                       payload, None, stored_hash, leaf, tree)

    return heapq.merge(from_rows(), from_blocks(), key=lambda event: event[0])


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path, show, partial = sys.argv[1], "--events" in sys.argv, "--partial" in sys.argv
    trusted = None
    if "--trust" in sys.argv:
        with open(sys.argv[sys.argv.index("--trust") + 1]) as f:
            keys = json.load(f)
        trusted = ({k["device"]: bytes.fromhex(k["publicKey"]) for k in keys} if isinstance(keys, list)
                   else {d: bytes.fromhex(k) for d, k in keys.items()})
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if db.execute("PRAGMA application_id").fetchone()[0] != 0x474C4F47:
        print(f"{path} is not a gamelog database", file=sys.stderr)
        return 2
    dictionaries = dict(db.execute("SELECT id, bytes FROM dictionaries"))
    tree_leaves = {}    # tree id -> {leaf index: leaf hash}
    stream_tree = {}    # stream -> the tree its events are leaves of
    previous, expected, count, problems = bytes(32), 1, 0, []
    stream_heads = {}   # stream -> {version: stream hash}
    running = {}
    starts = {}         # stream -> its recording.started payload: what compact payloads leave out
    for (position, event_id, stream, version, type_name, type_version,
         recorded_at, payload, problem, stored_hash, leaf, tree) in stored_events(db, dictionaries):
        count += 1
        if position != expected:
            problems.append(f"missing event at position {expected}")
        expected = position + 1
        if problem is not None:
            problems.append(f"{problem} at position {position}")
            previous = stored_hash if stored_hash is not None else previous
            continue
        name = type_name.encode()
        envelope = (struct.pack(">Q", position) + event_id + stream + struct.pack(">Q", version)
                    + struct.pack(">H", len(name)) + name + struct.pack(">I", type_version)
                    + struct.pack(">q", recorded_at) + struct.pack(">I", len(payload)) + payload)
        computed = hashlib.sha256(previous + envelope).digest()
        # The stream chain: the same envelope without its position.
        running[stream] = hashlib.sha256(running.get(stream, bytes(32)) + envelope[8:]).digest()
        # A device tree's leaf: the same bytes again.
        if tree is not None:
            stream_tree[stream] = tree
            if leaf is None:
                problems.append(f"event at position {position} is in no leaf of its device's tree")
            elif leaf in tree_leaves.setdefault(tree, {}):
                problems.append(f"event at position {position} claims leaf {leaf}, which another event holds")
            else:
                tree_leaves[tree][leaf] = leaf_hash(envelope[8:])
        stream_heads.setdefault(stream, {})[version] = running[stream]
        if computed != stored_hash:
            problems.append(f"hash mismatch at position {position}")
        previous = stored_hash
        try:
            document = json.loads(payload)
            if type_name == "recording.started":
                starts[stream] = document
            elif type_version == 2:
                document = expand(document, starts[stream])
        except (ValueError, KeyError) as error:
            problems.append(f"payload at position {position} does not read: {error!r}")
            continue
        if show:
            print(json.dumps({"position": position, "id": str(uuid.UUID(bytes=event_id)),
                              "stream": str(uuid.UUID(bytes=stream)), "version": version,
                              "type": type_name, "typeVersion": type_version, "recordedAt": recorded_at,
                              "payload": document}, sort_keys=True))
    checkpoints = db.execute(
        "SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints "
        "ORDER BY public_key, sequence").fetchall()
    last_key, digest, next_sequence = None, bytes(32), 1
    for key, sequence, device, before, signed_at, heads, signature in checkpoints:
        if key != last_key:
            last_key, digest, next_sequence = key, bytes(32), 1
        if sequence != next_sequence or before != digest:
            problems.append(f"device {device}: checkpoint {sequence} does not follow the one before")
        message = checkpoint_message(device, sequence, before, signed_at, heads)
        digest, next_sequence = hashlib.sha256(message + signature).digest(), sequence + 1
        if trusted is not None and trusted.get(device) != key:
            problems.append(f"device {device}: checkpoint {sequence} is signed with an untrusted key")
            continue
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(signature, message)
        except InvalidSignature:
            problems.append(f"device {device}: checkpoint {sequence} has a bad signature")
            continue
        for offset in range(0, len(heads), 56):
            stream, version = heads[offset:offset + 16], struct.unpack(">Q", heads[offset + 16:offset + 24])[0]
            if stream_heads.get(stream, {}).get(version) != heads[offset + 24:offset + 56]:
                problems.append(f"device {device}: stream {uuid.UUID(bytes=stream)} version {version} "
                                f"is not what checkpoint {sequence} signed")
    heads_checked, absent = 0, {}
    if db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'trees'").fetchone()[0] == 1:
        nodes = {}
        for tree, lo, hi, node in db.execute("SELECT tree_id, lo, hi, hash FROM tree_nodes"):
            nodes.setdefault(tree, {})[(lo, hi)] = node
        tree_device = dict(db.execute("SELECT id, device FROM trees"))
        for stream, tree in stream_tree.items():
            made_by = starts.get(stream, {}).get("device")
            if made_by is not None and made_by != tree_device.get(tree):
                problems.append(f"recording {uuid.UUID(bytes=stream)} of device {made_by} is signed by device {tree_device.get(tree)}")
        for tree, key, device in db.execute("SELECT id, public_key, device FROM trees"):
            heads = db.execute("SELECT size, root, signed_at, flags, signature FROM tree_heads WHERE tree_id = ? ORDER BY size",
                               (tree,)).fetchall()
            leaves = tree_leaves.get(tree, {})
            latest = 0
            if trusted is not None and trusted.get(device) != key:
                problems.append(f"device {device}: its heads are signed with an untrusted key")
                heads = []
            for size, root, signed_at, flags, signature in heads:
                body = head_body(device, key, size, root, signed_at, flags == 1)
                if weak_key(key):
                    problems.append(f"device {device}: its key is a small-order point")
                    break
                try:
                    Ed25519PublicKey.from_public_bytes(key).verify(signature, body.encode())
                except InvalidSignature:
                    problems.append(f"device {device}: its head at {size} events has a bad signature")
                    continue
                heads_checked += 1
                latest = max(latest, size)
                computed = tree_root(size, leaves, nodes.get(tree, {}))
                if computed is None:
                    problems.append(f"device {device}: it signed {size} events and the log lacks some of them")
                elif computed != root:
                    problems.append(f"device {device}: its events do not give the root it signed at {size} events")
            gaps = absent_ranges(latest, leaves)
            if gaps:
                listed = ", ".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in gaps[:8])
                absent[device] = listed
                if not partial:
                    count = sum(hi - lo + 1 for lo, hi in gaps)
                    problems.append(f"device {device}: {count} of the {latest} leaves it signed are not in this log (leaves {listed})")
            unsigned = len([leaf for leaf in leaves if leaf >= latest])
            if unsigned and trusted is not None:
                problems.append(f"device {device}: {unsigned} events after its last signed head")
    print(json.dumps({"events": count, "head": previous.hex(), "checkpoints": len(checkpoints), "heads": heads_checked,
                      "absent": absent, "problems": problems}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
