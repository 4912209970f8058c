import Foundation

/// A store's cache of what a fold of one conversation lists: its games, as the code that
/// wrote it summarised them, and the recordings' rows that fold read through.
///
/// A cache only, like ``StoredSnapshot``: a reader uses one only when its `format` is the
/// reader's own and every recording of the conversation still stands where `recordings`
/// says (the same recordings, the same version, the same head), so a summary of events
/// since appended to, or of a store changed under it, is never shown; `verify` folds the
/// events again and names a current summary that differs from them.
public struct StoredSummaries: Hashable, Sendable {
    /// One recording as the fold read it: its event count and the hash of its chain after them.
    public struct Recording: Hashable, Sendable {
        public var version: Int64
        public var head: [UInt8]
        public init(version: Int64, head: [UInt8]) {
            self.version = version
            self.head = head
        }
    }

    public var conversation: UUID
    /// Names the code that folded (its summary format and the games it had registered).
    public var format: String
    /// Every recording of the conversation, as the fold read it.
    public var recordings: [UUID: Recording]
    /// The summaries, serialised by the caller.
    public var body: [UInt8]

    public init(conversation: UUID, format: String, recordings: [UUID: Recording], body: [UInt8]) {
        self.conversation = conversation
        self.format = format
        self.recordings = recordings
        self.body = body
    }

    /// The most bytes a stored body may take: a conversation's games at a few hundred bytes
    /// each. A row larger than this is never read whole (a reader takes it as absent).
    public static let maximumBodySize = 4 << 20

    /// The recordings as one value a store keeps in a column: for each recording, in the
    /// order of its id's bytes, its id (16 bytes), its version (8, big-endian) and its head (32).
    public var recordingBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(recordings.count * 56)
        for (stream, recording) in recordings.sorted(by: { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }) {
            bytes += stream.bytes
            withUnsafeBytes(of: UInt64(bitPattern: recording.version).bigEndian) { bytes += $0 }
            bytes += recording.head
        }
        return bytes
    }

    /// The recordings a ``recordingBytes`` column holds; nil for bytes that are not such a
    /// column (a damaged or forged row: its summaries are not used).
    public static func recordings(from bytes: [UInt8]) -> [UUID: Recording]? {
        guard !bytes.isEmpty, bytes.count % 56 == 0 else { return nil }
        var recordings: [UUID: Recording] = [:]
        for start in stride(from: 0, to: bytes.count, by: 56) {
            guard let stream = UUID(bytes: Array(bytes[start..<(start + 16)])) else { return nil }
            let version = bytes[(start + 16)..<(start + 24)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard version >= 1, version <= UInt64(Int64.max),
                  recordings.updateValue(Recording(version: Int64(version), head: Array(bytes[(start + 24)..<(start + 56)])), forKey: stream) == nil
            else { return nil }
        }
        return recordings
    }

    /// Whether the fold these summaries came from read exactly `current`: the same
    /// recordings, each at the same version and head.
    public func isCurrent(_ current: [UUID: RecordingRow]) -> Bool {
        guard current.count == recordings.count else { return false }
        return recordings.allSatisfy { stream, recording in
            guard let row = current[stream] else { return false }
            return row.version == recording.version && row.head == recording.head
        }
    }
}
