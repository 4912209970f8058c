import Foundation

/// A point in time with microsecond precision, in UTC.
public struct Timestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Microseconds since 1970-01-01T00:00:00Z.
    public var microsecondsSince1970: Int64

    public init(microsecondsSince1970: Int64) {
        self.microsecondsSince1970 = microsecondsSince1970
    }

    public init(_ date: Date) {
        microsecondsSince1970 = Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    public var date: Date { Date(timeIntervalSince1970: Double(microsecondsSince1970) / 1_000_000) }

    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        a.microsecondsSince1970 < b.microsecondsSince1970
    }

    /// ISO 8601 with microseconds, e.g. `2026-11-22T10:04:05.123456Z`.
    public var description: String {
        let seconds = microsecondsSince1970 >= 0 ? microsecondsSince1970 / 1_000_000
            : (microsecondsSince1970 - 999_999) / 1_000_000
        let micros = microsecondsSince1970 - seconds * 1_000_000
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let year = Int(parts.tm_year) + 1900
        guard (0...9999).contains(year) else {
            return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", year, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
                          Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(micros))
        }
        // Written digit by digit: pages and listings print a time per row, and
        // `String(format:)` went through vfprintf for each (1% of the viewer's CPU).
        var text: [UInt8] = Array("0000-00-00T00:00:00.000000Z".utf8)
        func put(_ value: Int, at offset: Int, width: Int) {
            var rest = value
            for index in stride(from: offset + width - 1, through: offset, by: -1) {
                text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        put(year, at: 0, width: 4)
        put(Int(parts.tm_mon) + 1, at: 5, width: 2)
        put(Int(parts.tm_mday), at: 8, width: 2)
        put(Int(parts.tm_hour), at: 11, width: 2)
        put(Int(parts.tm_min), at: 14, width: 2)
        put(Int(parts.tm_sec), at: 17, width: 2)
        put(Int(micros), at: 20, width: 6)
        return String(decoding: text, as: UTF8.self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(microsecondsSince1970)
    }

    public init(from decoder: Decoder) throws {
        microsecondsSince1970 = try decoder.singleValueContainer().decode(Int64.self)
    }
}

/// An event to append. The store assigns its position, stream version and hash.
public struct NewEvent: Hashable, Sendable {
    /// Unique id. Appending an id that is already stored is a no-op.
    public var id: UUID
    /// The recording this event belongs to.
    public var stream: UUID
    /// What happened, e.g. `callback.didReceive`.
    public var type: String
    /// The version of `type`'s payload layout, starting at 1.
    public var typeVersion: Int
    public var recordedAt: Timestamp
    /// Canonical payload bytes. These, not the compressed form, are hashed.
    public var payload: [UInt8]
    /// The ids this event names for the catalog. `nil` means the appender keeps no
    /// catalog: the catalog then stops covering the log, and readers scan instead.
    public var tags: [EventTag]?
    /// The event's index among its device's tree's leaves, for an import that carries it;
    /// nil for a new event, which takes the next leaf of its device's tree.
    public var leaf: Int64?
    /// Hashes of this event a check already computed (an upload's recording chain and
    /// leaves), so the append need not compute them again.
    package var known = KnownHashes()

    public init(id: UUID, stream: UUID, type: String, typeVersion: Int = 1, recordedAt: Timestamp, payload: [UInt8],
                tags: [EventTag]? = nil, leaf: Int64? = nil) {
        self.leaf = leaf
        self.id = id
        self.stream = stream
        self.type = type
        self.typeVersion = typeVersion
        self.recordedAt = recordedAt
        self.payload = payload
        self.tags = tags
    }
}

/// A new event's recording hash and leaf hash as a check of its file computed them, for
/// ``AppendPlanner`` to use instead of hashing the event twice more.
///
/// The recording hash is a function of the event, its version and its recording's hash
/// before it, so the planner takes it only where that predecessor is the one it was
/// computed from (the recording's stored head at the version below `streamVersion`); the
/// leaf hash, of the event and its version alone, wherever the version is the same.
/// Anywhere else the planner computes its own. Not part of what an event is: any two are equal.
package struct KnownHashes: Hashable, Sendable {
    package struct Recording: Sendable {
        /// The event's version in its recording.
        package var streamVersion: Int64
        /// The recording's hash before the event.
        package var previous: Hash32
        /// The recording's hash with the event.
        package var streamHash: Hash32
        /// ``MerkleTree/leafHash(_:)`` of the event (nil: its recording is in no tree).
        package var leafHash: Hash32?

        package init(streamVersion: Int64, previous: Hash32, streamHash: Hash32, leafHash: Hash32?) {
            self.streamVersion = streamVersion
            self.previous = previous
            self.streamHash = streamHash
            self.leafHash = leafHash
        }
    }

    package var recording: Recording?

    package init(recording: Recording? = nil) { self.recording = recording }

    package static func == (lhs: KnownHashes, rhs: KnownHashes) -> Bool { true }
    package func hash(into hasher: inout Hasher) {}
}

/// What the caller believes a stream's version is before an append.
public enum ExpectedVersion: Hashable, Sendable, CustomStringConvertible {
    /// No check.
    case any
    /// The stream must have no event yet.
    case noStream
    /// The stream's last event must have exactly this version.
    case exactly(Int64)

    func matches(_ actual: Int64) -> Bool {
        switch self {
        case .any: return true
        case .noStream: return actual == 0
        case .exactly(let version): return actual == version
        }
    }

    public var description: String {
        switch self {
        case .any: return "any"
        case .noStream: return "no stream"
        case .exactly(let version): return "version \(version)"
        }
    }
}

/// An event as stored, decompressed.
public struct StoredEvent: Hashable, Sendable {
    /// Global position, 1-based, gapless.
    public var position: Int64
    public var id: UUID
    public var stream: UUID
    /// Version within `stream`, 1-based, gapless.
    public var streamVersion: Int64
    public var type: String
    public var typeVersion: Int
    public var recordedAt: Timestamp
    /// Canonical (decompressed) payload bytes.
    public var payload: [UInt8]
    /// SHA-256 chain hash (see docs/FORMAT.md).
    public var hash: [UInt8]
    /// The event's index among the leaves of its device's tree; nil for an event of a
    /// recording no device signs (or of a log older than device trees).
    public var leaf: Int64?

    /// For a store's reader: an event as read, before any check.
    package init(position: Int64, id: UUID, stream: UUID, streamVersion: Int64, type: String, typeVersion: Int,
                 recordedAt: Timestamp, payload: [UInt8], hash: [UInt8], leaf: Int64?) {
        self.position = position
        self.id = id
        self.stream = stream
        self.streamVersion = streamVersion
        self.type = type
        self.typeVersion = typeVersion
        self.recordedAt = recordedAt
        self.payload = payload
        self.hash = hash
        self.leaf = leaf
    }
}

/// How payload bytes are stored.
public enum PayloadCodec: Int64, Sendable, CaseIterable {
    /// Stored as they are: compression would not make them smaller.
    case raw = 0
    /// Raw deflate (RFC 1951) primed with the dictionary named by `dictionary_id`.
    case deflateWithDictionary = 1
    /// Raw deflate with no dictionary.
    case deflate = 2
}

/// Which events to read. All filters combine; results are in position order.
public struct EventQuery: Hashable, Sendable {
    public var positions: ClosedRange<Int64>?
    public var stream: UUID?
    /// Any of these streams.
    public var streams: Set<UUID>?
    /// With `stream`: the first stream version to read.
    public var fromStreamVersion: Int64?
    public var types: Set<String>?
    public var since: Timestamp?
    public var until: Timestamp?
    public var limit: Int?
    /// With a handler of damage: an event that reads but does not match its hash is still
    /// handed over after its damage is named. What an integrity check needs, whose count
    /// of its recording's versions would otherwise show a gap the forgery did not make.
    package var handsOverMismatched = false

    public init(positions: ClosedRange<Int64>? = nil, stream: UUID? = nil, streams: Set<UUID>? = nil,
                fromStreamVersion: Int64? = nil, types: Set<String>? = nil, since: Timestamp? = nil,
                until: Timestamp? = nil, limit: Int? = nil) {
        self.positions = positions
        self.stream = stream
        self.streams = streams
        self.fromStreamVersion = fromStreamVersion
        self.types = types
        self.since = since
        self.until = until
        self.limit = limit
    }

    /// Every event.
    public static let all = EventQuery()
}

/// The result of appending one event.
public struct AppendedEvent: Hashable, Sendable {
    public var position: Int64
    public var streamVersion: Int64
    /// False when the id was already stored and nothing was written.
    public var isNew: Bool
}

/// A stream's first event and where its last event is: see ``EventStore/scanStreamHeads(_:)``.
public struct StreamHead: Sendable {
    public var first: StoredEvent
    public var lastPosition: Int64

    public init(first: StoredEvent, lastPosition: Int64) {
        self.first = first
        self.lastPosition = lastPosition
    }
}

extension UUID {
    /// A time-ordered event id: UUID version 7 (RFC 9562), the Unix time in
    /// milliseconds in the first 48 bits, then random bits.
    ///
    /// Give events ids like these. The log keeps a unique index on event ids (so a
    /// retried append is a no-op); with time-ordered ids new entries land at the end
    /// of that index, while random ids land all over it, and once it outgrows the
    /// page cache every append reads and rewrites pages across the file. On a log of
    /// 1,000,000 events that makes inserting the same rows about 4x slower
    /// (tools/bench.sh).
    public static func timeOrdered(at time: Timestamp, using generator: inout some RandomNumberGenerator) -> UUID {
        let milliseconds = UInt64(max(0, time.microsecondsSince1970 / 1_000)) & 0xFFFF_FFFF_FFFF
        let a = generator.next(), b = generator.next()
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { bytes in
            for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64(5 - i))) }
            bytes[6] = 0x70 | UInt8(truncatingIfNeeded: a & 0x0F)         // version 7
            bytes[7] = UInt8(truncatingIfNeeded: a >> 8)
            bytes[8] = 0x80 | UInt8(truncatingIfNeeded: (a >> 16) & 0x3F) // RFC 9562 variant
            for i in 9..<16 { bytes[i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i - 9))) }
        }
        return UUID(uuid: value)
    }
}
