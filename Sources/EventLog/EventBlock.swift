import Foundation

/// A run of consecutive events stored as one row of `event_blocks`, compressed together
/// (docs/FORMAT.md, "Event blocks").
///
/// A block is a storage form only, like a payload's codec: every event in it keeps its
/// own position, id, chain hash and leaf, and what is hashed, signed and exported is the
/// same as for an event stored as a row. Storing events together is what saves: one row,
/// one B-tree entry and one deflate stream for up to ``EventBlock/defaultCapacity``
/// events instead of one each, and deflate sees neighbouring events, which repeat each
/// other far more than the dictionary does.
///
/// The body (before compression) holds the events column by column, so that like fields
/// sit together: a format byte (1), the event count as a varint, then for every event in
/// order its 16-byte id; its 32-byte chain hash; then varints: its stream's row id, its
/// stream version, its type's row id, its type version, its time (microseconds, zigzag,
/// each a delta from the one before, the first from 0), its leaf plus one (0: none), its
/// payload's length; then the payloads, one after another.
public struct EventBlock: Hashable, Sendable {
    /// One event of a block, with the row ids a block stores in place of names.
    public struct Event: Hashable, Sendable {
        public var id: UUID
        public var hash: [UInt8]
        public var streamRowID: Int64
        public var streamVersion: Int64
        public var typeRowID: Int64
        public var typeVersion: Int64
        public var recordedAt: Int64
        public var leaf: Int64?
        public var payload: [UInt8]

        /// An event as a block stores it: `streamRowID` and `typeRowID` are row ids in
        /// `streams` and `event_types`, `recordedAt` microseconds since 1970 (UTC).
        public init(id: UUID, hash: [UInt8], streamRowID: Int64, streamVersion: Int64, typeRowID: Int64, typeVersion: Int64,
                    recordedAt: Int64, leaf: Int64?, payload: [UInt8]) {
            self.id = id
            self.hash = hash
            self.streamRowID = streamRowID
            self.streamVersion = streamVersion
            self.typeRowID = typeRowID
            self.typeVersion = typeVersion
            self.recordedAt = recordedAt
            self.leaf = leaf
            self.payload = payload
        }
    }

    /// The events, in position order: the first is at the block's first position.
    public var events: [Event]

    /// A block of `events`, the first at the block's first position (at most
    /// ``maximumCount``: readers refuse more).
    public init(events: [Event]) {
        self.events = events
    }

    /// Events per block an append aims for: measured in docs/BENCHMARKS.md ("Block size").
    public static let defaultCapacity = 64
    /// The most events a block may hold (a cap on what a reader allocates).
    public static let maximumCount = 4096
    /// The largest body a reader inflates: a block of the most events at the largest
    /// payload would be larger, so appends close a block at ``closingSize``.
    public static let maximumBodySize = 64 << 20
    /// An append closes a block once its body reaches this size, whatever its count.
    public static let closingSize = 1 << 20
    /// zlib's level for block bodies, with ``compressionMemoryLevel``: measured on a
    /// 388,223-event log, level 3 appended about as fast as level 1 and 10% faster than
    /// level 6, for 4% more bytes than level 6 (115 against 110 an event, a quarter of
    /// the peer's): docs/BENCHMARKS.md, "Block size and level".
    package static let compressionLevel: Int32 = 3
    /// zlib's memLevel for block bodies. It also sizes deflate's symbol buffer: at 4 (the
    /// payload deflaters', sized for one small event) a 20 KB body was cut into many
    /// small deflate blocks, each with its own Huffman trees; 8 appended 22% faster.
    package static let compressionMemoryLevel: Int32 = 8

    static let formatVersion: UInt8 = 1

    /// Why a block's body could not be read.
    public struct Malformed: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The body's bytes before compression.
    public func body() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(events.reduce(64) { $0 + 60 + $1.payload.count })
        out.append(Self.formatVersion)
        Self.putVarint(UInt64(events.count), into: &out)
        for event in events { withUnsafeBytes(of: event.id.uuid) { out.append(contentsOf: $0) } }
        for event in events { out.append(contentsOf: event.hash) }
        for event in events { Self.putVarint(UInt64(bitPattern: event.streamRowID), into: &out) }
        for event in events { Self.putVarint(UInt64(bitPattern: event.streamVersion), into: &out) }
        for event in events { Self.putVarint(UInt64(bitPattern: event.typeRowID), into: &out) }
        for event in events { Self.putVarint(UInt64(bitPattern: event.typeVersion), into: &out) }
        var previous: Int64 = 0
        for event in events {
            let delta = event.recordedAt &- previous
            Self.putVarint(UInt64(bitPattern: (delta << 1) ^ (delta >> 63)), into: &out)
            previous = event.recordedAt
        }
        for event in events { Self.putVarint(event.leaf.map { UInt64(bitPattern: $0) &+ 1 } ?? 0, into: &out) }
        for event in events { Self.putVarint(UInt64(event.payload.count), into: &out) }
        for event in events { out.append(contentsOf: event.payload) }
        return out
    }

    /// Reads a body. Every count and length is checked against what is left, so a
    /// damaged or hostile body throws ``Malformed`` and never reads out of bounds or
    /// allocates more than the body's own size.
    public init(body: [UInt8]) throws(Malformed) {
        // Read through a pointer: a reader holding the array retained and released it at
        // every byte (a third of a block's reading was reference counting).
        events = try body.withUnsafeBufferPointer { (buffer) throws(Malformed) -> [Event] in
            var reader = Reader(bytes: buffer)
            return try Self.events(&reader)
        }
    }

    private static func events(_ reader: inout Reader) throws(Malformed) -> [Event] {
        let size = reader.bytes.count
        let columns = try Columns(&reader, bodySize: size)
        var events: [Event] = []
        events.reserveCapacity(columns.count)
        for index in 0..<columns.count {
            let payload = try reader.bytes(Int(columns.lengths[index]))
            events.append(columns.event(index, in: reader.bytes, payload: payload))
        }
        guard reader.index == size else {
            throw Malformed(description: "\(size - reader.index) bytes after the last payload")
        }
        return events
    }

    /// Every column of a body but its payloads: the ids and hashes by where they lie,
    /// the rest read.
    struct Columns {
        let count: Int
        /// Where the id and hash columns begin in the body.
        let ids: Int, hashes: Int
        let streams: [Int64], versions: [Int64], types: [Int64], typeVersions: [Int64]
        let times: [Int64], leaves: [Int64], lengths: [Int64]
        /// Where the first payload begins.
        let payloads: Int

        /// Reads the columns from the body's start; `reader` is left at the first payload.
        /// - Parameter bodySize: the whole body's size (`reader` may hold only its start).
        init(_ reader: inout Reader, bodySize size: Int) throws(Malformed) {
            guard try reader.byte() == EventBlock.formatVersion else {
                throw Malformed(description: "block format \(reader.bytes.first ?? 0) is not one this build reads (1)")
            }
            let count = try reader.varint()
            guard count >= 1, count <= UInt64(EventBlock.maximumCount) else { throw Malformed(description: "a block of \(count) events") }
            let n = Int(count)
            // Each event takes at least 16 + 32 + 7 bytes: refuse a count the body cannot hold
            // before reserving room for it.
            guard n * 55 <= size else { throw Malformed(description: "\(n) events do not fit in \(size) bytes") }
            self.count = n
            ids = reader.index
            try reader.skip(16 * n)
            hashes = reader.index
            try reader.skip(32 * n)
            streams = try reader.column(n)
            versions = try reader.column(n)
            types = try reader.column(n)
            typeVersions = try reader.column(n)
            var times: [Int64] = []
            times.reserveCapacity(n)
            var previous: Int64 = 0
            for _ in 0..<n {
                let zigzag = try reader.varint()
                let delta = Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1)
                previous = previous &+ delta
                times.append(previous)
            }
            self.times = times
            leaves = try reader.column(n)
            lengths = try reader.column(n)
            if let large = lengths.first(where: { $0 > Int64(LogLimits.maximumPayloadSize) }) {
                throw Malformed(description: "a payload of \(large) bytes")
            }
            payloads = reader.index
        }

        /// Event `index`, its id and hash read from `body` (which holds the columns).
        func event(_ index: Int, in body: UnsafeBufferPointer<UInt8>, payload: [UInt8]) -> Event {
            var reader = Reader(bytes: body, index: ids + 16 * index)
            // Within the columns, which were read whole.
            let id = try! reader.uuid()
            let start = hashes + 32 * index
            return Event(id: id, hash: Array(UnsafeBufferPointer(rebasing: body[start..<(start + 32)])),
                         streamRowID: streams[index], streamVersion: versions[index], typeRowID: types[index],
                         typeVersion: typeVersions[index], recordedAt: times[index],
                         leaf: leaves[index] == 0 ? nil : leaves[index] - 1, payload: payload)
        }
    }

    /// Some events of a block read from the first bytes of its body: what a reader that
    /// wants a few events (a recording's first, say) needs, without inflating the rest.
    ///
    /// The columns are read and checked as ``init(body:)`` reads them; the bytes after the
    /// last wanted payload are not, nor is the body's length.
    /// - Parameters:
    ///   - prefix: the body's first bytes.
    ///   - bodySize: the whole body's size.
    ///   - wanted: whether to return an event, given its stream row id; asked of every
    ///     event in block order (each time the prefix is read again).
    /// - Returns: the wanted events with their indexes, in block order; or the number of
    ///   bytes from the body's start they need, when `prefix` holds fewer.
    public static func events(inPrefix prefix: UnsafeBufferPointer<UInt8>, bodySize: Int,
                              wanted: (_ streamRowID: Int64) -> Bool) throws(Malformed) -> Prefix {
        var reader = Reader(bytes: prefix)
        let columns: Columns
        do {
            columns = try Columns(&reader, bodySize: bodySize)
        } catch {
            // Maybe cut short by the prefix, not by the body: ask for more of it (the whole
            // body, at most, which then decides).
            if prefix.count < bodySize { return .needs(min(bodySize, max(4096, prefix.count * 2))) }
            throw error
        }
        var found: [(index: Int, range: Range<Int>)] = []
        var offset = columns.payloads
        for index in 0..<columns.count {
            let length = Int(columns.lengths[index])
            guard length <= bodySize - offset else { throw Malformed(description: "the body ends early") }
            if wanted(columns.streams[index]) { found.append((index, offset..<(offset + length))) }
            offset += length
        }
        let end = found.last?.range.upperBound ?? columns.payloads
        guard end <= prefix.count else { return .needs(end) }
        let last = columns.hashes + 32 * (columns.count - 1)
        return .events(found.map { ($0.index, columns.event($0.index, in: prefix, payload: Array(UnsafeBufferPointer(rebasing: prefix[$0.range])))) },
                       count: columns.count, lastHash: Array(UnsafeBufferPointer(rebasing: prefix[last..<(last + 32)])))
    }

    /// What ``events(inPrefix:bodySize:wanted:)`` found.
    public enum Prefix {
        /// The wanted events, with their indexes in the block; how many events the block
        /// holds, and the last one's hash (what a block's row repeats).
        case events([(index: Int, event: Event)], count: Int, lastHash: [UInt8])
        /// The body's first this many bytes are needed.
        case needs(Int)
    }

    static func putVarint(_ value: UInt64, into out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func skip(_ count: Int) throws(Malformed) {
            guard count <= bytes.count - index else { throw Malformed(description: "the body ends early") }
            index += count
        }

        mutating func byte() throws(Malformed) -> UInt8 {
            guard index < bytes.count else { throw Malformed(description: "the body ends early") }
            index += 1
            return bytes[index - 1]
        }

        mutating func bytes(_ count: Int) throws(Malformed) -> [UInt8] {
            guard count >= 0, count <= bytes.count - index else { throw Malformed(description: "the body ends early") }
            index += count
            return Array(UnsafeBufferPointer(rebasing: bytes[(index - count)..<index]))
        }

        mutating func uuid() throws(Malformed) -> UUID {
            guard 16 <= bytes.count - index else { throw Malformed(description: "the body ends early") }
            let b = bytes, i = index
            index += 16
            return UUID(uuid: (b[i], b[i + 1], b[i + 2], b[i + 3], b[i + 4], b[i + 5], b[i + 6], b[i + 7],
                               b[i + 8], b[i + 9], b[i + 10], b[i + 11], b[i + 12], b[i + 13], b[i + 14], b[i + 15]))
        }

        /// The next column of `n` unsigned varints, each at most `Int64.max`.
        mutating func column(_ n: Int) throws(Malformed) -> [Int64] {
            var out: [Int64] = []
            out.reserveCapacity(n)
            for _ in 0..<n {
                let value = try varint()
                guard value <= UInt64(Int64.max) else { throw Malformed(description: "a value out of range") }
                out.append(Int64(value))
            }
            return out
        }

        mutating func varint() throws(Malformed) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                guard shift < 64, shift < 63 || next <= 1 else { throw Malformed(description: "a varint longer than 64 bits") }
                value |= UInt64(next & 0x7F) << shift
                if next < 0x80 { return value }
                shift += 7
            }
        }
    }
}
