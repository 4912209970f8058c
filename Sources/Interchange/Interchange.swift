import EventStore
import Foundation
import MessagesModel
import RecordedEvents
import StoredEvents

/// One exported event: a JSON object on its own line (JSON Lines).
public struct ExportedEvent: Codable, Hashable, Sendable {
    public var id: UUID
    public var stream: UUID
    public var streamVersion: Int64
    public var type: String
    public var typeVersion: Int
    /// Microseconds since 1970, UTC.
    public var recordedAt: Int64
    /// The canonical payload, as text (exactly the bytes that were hashed).
    public var payload: String
    /// Where the event stood in the exporting database, for reference.
    public var position: Int64
    /// The stream's chain hash after this event, hex (absent in exports made before
    /// stream chains).
    public var streamHash: String?
    /// The event's index among the leaves of its device's tree (absent for an unsigned
    /// recording, and in exports made before device trees).
    public var leaf: Int64?
}

/// A checkpoint line: `{"checkpoint":{...}}`, byte fields in hex.
public struct ExportedCheckpoint: Codable, Hashable, Sendable {
    public struct Head: Codable, Hashable, Sendable {
        public var stream: UUID
        public var version: Int64
        public var hash: String
    }

    public var device: String
    public var publicKey: String
    public var sequence: Int64
    public var previous: String
    public var signedAt: Int64
    public var heads: [Head]
    public var signature: String

    public init(_ c: Checkpoint) {
        device = c.device
        publicKey = Hex.string(c.publicKey)
        sequence = c.sequence
        previous = Hex.string(c.previous)
        signedAt = c.signedAt.microsecondsSince1970
        heads = c.heads.map { Head(stream: $0.stream, version: $0.version, hash: Hex.string($0.hash)) }
        signature = Hex.string(c.signature)
    }

    /// The checkpoint, if every byte field is hex of the right length.
    public var checkpoint: Checkpoint? {
        guard let key = Hex.bytes(publicKey, count: 32), let previous = Hex.bytes(previous, count: 32),
              let signature = Hex.bytes(signature, count: 64) else { return nil }
        var out: [SignedHead] = []
        for head in heads {
            guard let hash = Hex.bytes(head.hash, count: 32) else { return nil }
            out.append(SignedHead(stream: head.stream, version: head.version, hash: hash))
        }
        return Checkpoint(device: device, publicKey: key, sequence: sequence, previous: previous,
                          signedAt: Timestamp(microsecondsSince1970: signedAt), heads: out, signature: signature)
    }

    struct Line: Codable { var checkpoint: ExportedCheckpoint }
}

/// A device tree line: `{"tree":{...}}`. Which recordings are leaves of the tree of
/// `publicKey`, and, for an export of some recordings only, the hashes of the subtrees
/// of that tree that hold none of the exported events (`nodes`, a Merkle multiproof
/// against the tree's last head), so that the head can still be checked.
public struct ExportedTree: Codable, Hashable, Sendable {
    public struct Node: Codable, Hashable, Sendable {
        public var lo: Int64
        public var hi: Int64
        public var hash: String
    }

    public var device: String
    public var publicKey: String
    public var streams: [UUID]
    public var nodes: [Node]

    struct Line: Codable { var tree: ExportedTree }
}

/// A signed head line: `{"head":{"note":...,"publicKey":...}}`, the device's signed note
/// as `gamelog heads` prints it.
public struct ExportedHead: Codable, Hashable, Sendable {
    public var note: String
    public var publicKey: String

    public init(_ head: TreeHead) {
        note = head.note
        publicKey = Hex.string(head.publicKey)
    }

    /// The head, read (its signature is checked by `TreeHead.isValid`).
    public func head() throws -> TreeHead {
        guard let key = Hex.bytes(publicKey, count: 32) else { throw HeadError.malformed("publicKey is not 64 hex digits") }
        return try TreeHead(note: note, publicKey: key)
    }

    struct Line: Codable { var head: ExportedHead }
}

/// Why an import was refused. Nothing of the failing batch is stored.
public enum InterchangeError: Error, Hashable, Sendable, CustomStringConvertible {
    case malformedLine(file: String, line: Int, detail: String)
    case invalidPayload(file: String, line: Int, detail: String)
    case missingEvents(stream: UUID, expectedVersion: Int64, found: Int64)
    case unreadableFile(file: String, detail: String)
    /// A line's event is not the one its stream's chain (or its device's signature) vouches for.
    case editedLine(file: String, line: Int, detail: String)
    /// A checkpoint line that does not verify.
    case badCheckpoint(file: String, line: Int, detail: String)
    /// A signed head or tree line that does not verify, or events that do not give the root a device signed.
    case badHead(file: String, line: Int, detail: String)
    /// An event id already stored with other content.
    case conflict(file: String, line: Int, id: UUID, detail: String)

    public var description: String {
        switch self {
        case .malformedLine(let file, let line, let detail):
            return "\(file):\(line) is not an exported event (\(detail)); nothing from this file was imported."
        case .invalidPayload(let file, let line, let detail):
            return "\(file):\(line) has a payload gamelog cannot read (\(detail)); nothing from this file was imported."
        case .unreadableFile(let file, let detail):
            return "cannot read \(file) (\(detail)); check the path and its permissions. Nothing was imported."
        case .editedLine(let file, let line, let detail):
            return "\(file):\(line) was changed after it was recorded: \(detail). Nothing was imported."
        case .badCheckpoint(let file, let line, let detail):
            return "\(file):\(line) holds a checkpoint that does not verify: \(detail). Nothing was imported."
        case .badHead(let file, let line, let detail):
            return "\(file):\(line): \(detail). Nothing was imported."
        case .conflict(let file, let line, let id, let detail):
            return "\(file):\(line): event \(id.uuidString.lowercased()) is already stored with different content (\(detail)); one of the two logs was changed. Nothing was imported."
        case .missingEvents(let stream, let expected, let found):
            return "stream \(stream.uuidString.lowercased()) jumps from version \(expected - 1) to \(found): the export is missing events; nothing was imported."
        }
    }
}

/// Export to and import from JSON Lines.
public enum Interchange {
    /// Writes every event of `query` (restricted to `streams` if given) as one line each.
    /// With `redact`, participant identifiers are replaced consistently by new ones and
    /// display names by "Player 1", "Player 2", ...
    /// - Parameter damaged: called with each event that cannot be read, which is left
    ///   out; without it the first such event stops the export.
    /// - Parameter viewing: with `redact`, each event as a player may see it (a device's
    ///   player view): applied before identifiers are replaced.
    public static func export(from store: any SignedLogReader, streams: Set<UUID>? = nil, redact: Bool = false,
                              viewing: ((StoredEvent, RecordedEvent) -> RecordedEvent)? = nil,
                              skippingDamaged damaged: ((EventStoreError) -> Void)? = nil,
                              write: (String) throws -> Void) throws -> Int {
        var redactor = redact ? Redactor() : nil
        if redact {
            // First pass: every participant the log knows, in order of appearance.
            try store.scan(EventQuery(streams: streams, types: [RecordedEvent.TypeName.recordingStarted])) { stored in
                if case .recordingStarted(let info)? = try? RecordedEvent.decode(type: stored.type, typeVersion: stored.typeVersion, payload: stored.payload) {
                    redactor!.learn(info)
                }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var count = 0
        var chains = StreamChains()
        var decoder = StreamDecoder(store: store)
        // A redacted export is a new log, signed by nobody: its events keep no leaves.
        let proofs = redact ? nil : try ExportProofs(store: store, streams: streams)
        try store.scan(EventQuery(streams: streams), skippingDamaged: damaged) { stored in
            var payload = String(decoding: stored.payload, as: UTF8.self)
            var bytes = stored.payload
            var typeVersion = stored.typeVersion
            if let redactor {
                // A redacted log is a new log: every payload in the self-contained version 1 form
                // (compact ones expanded first), redacted, then canonical again (keys sorted).
                let full = try decoder.v1Payload(stream: stored.stream, type: stored.type, typeVersion: stored.typeVersion,
                                                 payload: stored.payload)
                var text = String(decoding: full, as: UTF8.self)
                if let viewing {
                    let event = try RecordedEvent.decode(type: stored.type, typeVersion: 1, payload: full)
                    text = String(decoding: viewing(stored, event).payload(), as: UTF8.self)
                }
                let redacted = Array(redactor.apply(to: text).utf8)
                let event = try RecordedEvent.decode(type: stored.type, typeVersion: 1, payload: redacted)
                bytes = event.payload()
                payload = String(decoding: bytes, as: UTF8.self)
                typeVersion = 1
            }
            // Each line carries its stream's chain hash, so an edited line is found on import.
            let head = chains.advance(id: stored.id, stream: stored.stream, streamVersion: stored.streamVersion, type: stored.type,
                                      typeVersion: typeVersion, recordedAt: stored.recordedAt, payload: bytes)
            let line = ExportedEvent(id: stored.id, stream: stored.stream, streamVersion: stored.streamVersion,
                                     type: stored.type, typeVersion: typeVersion,
                                     recordedAt: stored.recordedAt.microsecondsSince1970, payload: payload,
                                     position: stored.position, streamHash: Hex.string(head),
                                     leaf: proofs == nil ? nil : stored.leaf)
            try write(String(decoding: try encoder.encode(line), as: UTF8.self))
            count += 1
        }
        // The devices' trees and signed heads travel with the events.
        if let proofs {
            for line in try proofs.lines() { try write(String(decoding: try encoder.encode(line), as: UTF8.self)) }
        }
        // Checkpoints of the older kind travel too: every chain that covers an exported
        // stream, whole. A redacted export changed what was signed: none.
        if !redact {
            let all = try store.checkpoints()
            let keys = Set(all.filter { $0.heads.contains { streams?.contains($0.stream) ?? true } }.map(\.publicKey))
            for checkpoint in all where keys.contains(checkpoint.publicKey) {
                let line = ExportedCheckpoint.Line(checkpoint: ExportedCheckpoint(checkpoint))
                try write(String(decoding: try encoder.encode(line), as: UTF8.self))
            }
        }
        return count
    }

    /// Reads exported lines; checks each payload decodes as a gamelog event.
    public static func read(_ text: String, file: String) throws -> [ExportedEvent] {
        let plan = try check(files: [ExportFile(name: file, contents: Data(text.utf8))])
        return try (0..<plan.count).map { index in
            let f = try plan.fields(index)
            return ExportedEvent(id: f.id, stream: f.stream, streamVersion: f.streamVersion, type: f.type,
                                 typeVersion: f.typeVersion, recordedAt: f.recordedAt,
                                 payload: String(decoding: f.payload, as: UTF8.self), position: f.position,
                                 streamHash: f.streamHash.map { Hex.string($0.bytes) }, leaf: f.leaf)
        }
    }

    /// Merges exported events (from one or several devices' logs) into `store`.
    /// Events already stored (by id) are skipped, so importing twice adds nothing.
    /// Events are ordered by recording time, then by their order in the input (or,
    /// with `keepingOrder`, stored in the list's order: a log's own, whose phones'
    /// clocks may disagree), and every stream must arrive gapless. Returns the number
    /// of new events.
    /// For files, prefer ``import(files:into:batchSize:progress:)``, which holds only
    /// a small index in memory.
    @discardableResult
    public static func `import`(_ events: [ExportedEvent], into store: EventStore, keepingOrder: Bool = false, batchSize: Int = 1_000,
                                progress: ((Int) -> Void)? = nil) throws -> Int {
        // Each stream's start, from the list or (for a stream that continues) the store.
        let starts = Dictionary(events.filter { $0.streamVersion == 1 }.map { ($0.stream, $0) }, uniquingKeysWith: { a, _ in a })
        var decoder = StreamDecoder(store: store, startsElsewhere: { stream in
            starts[stream].map { ($0.type, $0.typeVersion, Array($0.payload.utf8)) }
        })
        return try merge(count: events.count,
                  // Unless the list's order is kept, each event is a run of its own: time alone orders them.
                  key: { MergeKey(recordedAt: events[$0].recordedAt, streamVersion: events[$0].streamVersion,
                                  stream: events[$0].stream, run: keepingOrder ? 0 : Int32(clamping: $0)) },
                  event: { index in
                      let e = events[index]
                      let payload = Array(e.payload.utf8)
                      return NewEvent(id: e.id, stream: e.stream, type: e.type, typeVersion: e.typeVersion,
                                      recordedAt: Timestamp(microsecondsSince1970: e.recordedAt), payload: payload,
                                      tags: decoder.catalogTags(stream: e.stream, type: e.type, typeVersion: e.typeVersion, payload: payload))
                  },
                  store: store, append: { try store.append($0) }, batchSize: batchSize, progress: progress)
    }

    /// What orders and checks a merge. Events of one run (one file: a log's export, in
    /// the log's order) keep their order; runs interleave by the time of their next
    /// event, then stream version, then input order. Phones' clocks disagree, so a
    /// log's own order, not its times, is what a re-import must keep.
    struct MergeKey {
        var recordedAt: Int64
        var streamVersion: Int64
        var stream: UUID
        var run: Int32
    }

    /// The order of a merge: a k-way merge of the runs (each in input order) by their
    /// next event's time, stream version and input position.
    static func mergeOrder(_ keys: [MergeKey]) -> [Int] {
        var slot: [Int32: Int] = [:], runs: [[Int]] = []
        for index in keys.indices {
            let run = keys[index].run
            if let at = slot[run] { runs[at].append(index) } else { slot[run] = runs.count; runs.append([index]) }
        }
        // Each run's next event, in a binary min-heap.
        var heap: [(run: Int, next: Int)] = runs.indices.map { ($0, 0) }
        func head(_ entry: (run: Int, next: Int)) -> Int { runs[entry.run][entry.next] }
        func less(_ a: (run: Int, next: Int), _ b: (run: Int, next: Int)) -> Bool {
            let x = head(a), y = head(b)
            return (keys[x].recordedAt, keys[x].streamVersion, x) < (keys[y].recordedAt, keys[y].streamVersion, y)
        }
        func siftDown(_ start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, less(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, less(heap[right], heap[smallest]) { smallest = right }
                if smallest == parent { return }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
        var order: [Int] = []
        order.reserveCapacity(keys.count)
        while !heap.isEmpty {
            order.append(head(heap[0]))
            heap[0].next += 1
            if heap[0].next == runs[heap[0].run].count {
                heap[0] = heap[heap.count - 1]
                heap.removeLast()
            }
            if !heap.isEmpty { siftDown(0) }
        }
        return order
    }

    /// Orders events `0..<count` (``mergeOrder(_:)``), checks that every stream arrives
    /// gapless once merged with what is stored, and appends them in batches. Only the
    /// order and one version per stream are held; `event(i)` makes each event when its
    /// batch is stored.
    static func merge(count: Int, key: (Int) -> MergeKey, event: (Int) throws -> NewEvent,
                      store: any EventLogWriter, append: ([NewEvent]) throws -> [AppendedEvent],
                      batchSize: Int, progress: ((Int) -> Void)?) throws -> Int {
        let keys = (0..<count).map(key)
        let order = mergeOrder(keys)
        // Every stream gapless once merged with what is stored. A version below the
        // expected one is already stored (or repeated in the input): append skips it by id.
        let stored = try store.streamVersions(Set(keys.map(\.stream)))
        // The store's word: a version past any log's would overflow the count below.
        for (stream, version) in stored { try LogLimits.checkStored(recordingVersion: version, of: stream, in: store.location) }
        var next: [UUIDKey: Int64] = [:]
        for index in order {
            let k = keys[index], stream = UUIDKey(k.stream)
            let expected = next[stream] ?? ((stored[k.stream] ?? 0) + 1)
            if k.streamVersion < expected { continue }
            guard k.streamVersion == expected else {
                throw InterchangeError.missingEvents(stream: k.stream, expectedVersion: expected, found: k.streamVersion)
            }
            next[stream] = expected + 1
        }
        var written = 0
        var start = 0
        while start < order.count {
            let batch = try order[start..<min(start + batchSize, order.count)].map(event)
            written += try append(batch).filter(\.isNew).count
            start += batchSize
            progress?(min(start, order.count))
        }
        return written
    }
}

/// Replaces participant identifiers and names consistently across an export.
struct Redactor {
    private var identifiers: [String: String] = [:]
    private var names: [String: String] = [:]

    mutating func learn(_ info: InstanceInfo) {
        for id in [info.localParticipant] + info.remoteParticipants + Array(info.names.keys) {
            let key = id.uuid.uuidString
            if identifiers[key] == nil { identifiers[key] = Self.replacement(for: identifiers.count + 1) }
        }
        for name in info.names.values.sorted() where names[name] == nil {
            names[name] = "Player \(names.count + 1)"
        }
    }

    /// A stable, obviously synthetic UUID for the n-th participant.
    static func replacement(for n: Int) -> String {
        String(format: "00000000-0000-4000-8000-%012X", n)
    }

    /// One pass over the payload: every identifier (a whole string, or a `$<uuid>`
    /// mention inside one) and every name (a whole string) the log knows is replaced.
    /// Replacing each known value in turn cost time in proportion to the log's
    /// participants for every event: the square of the log.
    func apply(to payload: String) -> String {
        let bytes = Array(payload.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        func uuid(at start: Int) -> String? {
            guard start + 36 <= bytes.count else { return nil }
            let text = String(decoding: bytes[start..<(start + 36)], as: UTF8.self)
            return identifiers[text] != nil ? text : nil
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                // A whole string: a name, or an identifier.
                var end = index + 1
                while end < bytes.count && bytes[end] != UInt8(ascii: "\"") { end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1 }
                if end < bytes.count {
                    let content = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                    if let replacement = names[content] ?? identifiers[content] {
                        out += Array("\"\(replacement)\"".utf8)
                        index = end + 1
                        continue
                    }
                }
                out.append(byte)
                index += 1
            } else if index > 0, bytes[index - 1] == UInt8(ascii: "$"), let id = uuid(at: index), let replacement = identifiers[id] {
                // A `$<uuid>` mention inside a caption.
                out += Array(replacement.utf8)
                index += 36
            } else {
                out.append(byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
