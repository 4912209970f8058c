import Foundation
import ZlibCodec

/// What every reader of a log asks of it, whichever store holds it: events by query with
/// their chain checked, a recording's first event, the catalog, forks and snapshots.
///
/// Two stores answer it: ``EventStore`` (a SQLite file) and the shared store's native
/// reader (`SharedStore.reader()`, PostgreSQL read through its indexes, nothing copied).
/// The rules a read follows (the hash chain, what counts as damage, how payloads
/// decompress) are the same code for both (``ChainCheck``, ``PayloadDecoder``), so a game
/// replayed from either is the same game and a changed row is named the same way.
///
/// Like ``EventStore``, a reader is used from one thread at a time.
public protocol EventLogReader: AnyObject {
    /// Where the log is, as a person is shown it: a file's path, a URL without its password.
    var location: String { get }

    /// Calls `body` with each event matching `query`, in position order, by the rules of
    /// ``scan(_:verify:skippingDamaged:_:)`` (``ChainCheck``), which every store follows.
    func forEachEvent(matching query: EventQuery, verify: Bool, skippingDamaged damaged: ((EventStoreError) -> Void)?,
                      _ body: (StoredEvent) throws -> Void) throws
    /// A recording's first event (its `recording.started`), or nil; its hash is not checked here.
    func firstEvent(ofStream stream: UUID) throws -> StoredEvent?
    /// The position of the last event (0 for an empty log).
    func lastPosition() throws -> Int64
    /// How many events the log holds, and its last position.
    func count() throws -> (events: Int64, lastPosition: Int64)
    /// The hash of the last event (the chain's genesis for an empty log).
    func headHash() throws -> [UInt8]
    /// A stream's chain hash after `version` of its stored events; genesis for 0, nil if
    /// the stream holds fewer. (The protocol's extension recomputes it from the events.)
    func streamHash(_ stream: UUID, at version: Int64) throws -> [UInt8]?
    /// The event type names the log holds, sorted.
    func eventTypes() throws -> [String]

    /// Whether the catalog covers every event, so that its answers are the log's.
    func catalogIsComplete() throws -> Bool
    /// The catalog entries that name `id` as `kind`.
    func catalogEntries(_ kind: EventTag.Kind, id: UUID) throws -> [CatalogEntry]
    /// The catalog entries of `kind` whose id starts with the hexadecimal `prefix`, at most `limit`.
    func catalogEntries(_ kind: EventTag.Kind, idPrefix prefix: String, limit: Int) throws -> [CatalogEntry]
    /// The catalog entries of one recording.
    func catalogEntries(ofStream stream: UUID) throws -> [CatalogEntry]
    /// Every catalog entry of `kind`, in order of first position.
    func catalogEntries(_ kind: EventTag.Kind) throws -> [CatalogEntry]
    /// The first entry of each id of `kind`, in order of first position, a page of them.
    func firstCatalogEntries(_ kind: EventTag.Kind, offset: Int, limit: Int) throws -> [CatalogEntry]
    /// How many distinct ids of `kind` the catalog holds.
    func catalogCount(_ kind: EventTag.Kind) throws -> Int

    /// The catalog entries of any of `streams` (what ``catalogEntries(ofStream:)`` gives
    /// each), in one read where the store can (a page of games asks about dozens).
    func catalogEntries(ofStreams streams: Set<UUID>) throws -> [CatalogEntry]
    /// The catalog entries that name any of `ids` as `kind`.
    func catalogEntries(_ kind: EventTag.Kind, ids: Set<UUID>) throws -> [CatalogEntry]
    /// The events at `positions` (those the log holds), their hashes not checked.
    func events(atPositions positions: Set<Int64>) throws -> [Int64: StoredEvent]

    /// Every fork recorded in the log, by conversation.
    func forkOrigins() throws -> [UUID: ForkOrigin]
    /// A conversation's stored snapshots for `projectionVersion` (a cache: a store may keep none).
    func snapshots(conversation: UUID, projectionVersion: Int) throws -> [StoredSnapshot]
    /// The stored summaries in `format` of those of `conversations` that have some (a
    /// cache: a store may keep none). Rows are returned as stored: whether one is current
    /// is the caller's to check (``StoredSummaries/isCurrent(_:)``).
    func storedSummaries(conversations: Set<UUID>, format: String) throws -> [UUID: StoredSummaries]
}

extension EventLogReader {
    /// A store that keeps no summaries (a SQLite file) has none.
    public func storedSummaries(conversations: Set<UUID>, format: String) throws -> [UUID: StoredSummaries] { [:] }

    /// Calls `body` with each event matching `query`, in position order, holding one
    /// event in memory at a time however long the log is.
    ///
    /// With `verify` (the default) every event's chain hash is recomputed from its
    /// predecessor's, and a gap in positions is reported, so a changed or deleted row
    /// throws an ``EventStoreError`` naming its position.
    ///
    /// With `skippingDamaged`, an event that does not decode or does not match its
    /// hash (and a gap where one was deleted) is handed to it instead of stopping the
    /// scan, and the scan goes on with the next event, chained to the damaged one's
    /// stored hash.
    public func scan(_ query: EventQuery = .all, verify: Bool = true,
                     skippingDamaged damaged: ((EventStoreError) -> Void)? = nil,
                     _ body: (StoredEvent) throws -> Void) throws {
        try forEachEvent(matching: query, verify: verify, skippingDamaged: damaged, body)
    }

    /// The events matching `query`, in position order. Prefer ``scan(_:verify:skippingDamaged:_:)`` for long logs.
    public func events(_ query: EventQuery = .all, verify: Bool = true) throws -> [StoredEvent] {
        var out: [StoredEvent] = []
        try scan(query, verify: verify) { out.append($0) }
        return out
    }

    /// The event at `position`, or nil.
    public func event(at position: Int64, verify: Bool = true) throws -> StoredEvent? {
        try events(EventQuery(positions: position...position), verify: verify).first
    }

    // One read a stream, an id, a position: what a store that reads nearby answers with.

    public func catalogEntries(ofStreams streams: Set<UUID>) throws -> [CatalogEntry] {
        try streams.flatMap { try catalogEntries(ofStream: $0) }
    }

    public func catalogEntries(_ kind: EventTag.Kind, ids: Set<UUID>) throws -> [CatalogEntry] {
        try ids.flatMap { try catalogEntries(kind, id: $0) }
    }

    public func events(atPositions positions: Set<Int64>) throws -> [Int64: StoredEvent] {
        var out: [Int64: StoredEvent] = [:]
        for position in positions { out[position] = try event(at: position, verify: false) }
        return out
    }
}

/// The chain rule of a read, the same for every store: a contiguous range is checked as
/// a chain (each hash from the one before, a missing position named); scattered events
/// each against the stored hash of their predecessor. A store reads ``FoundEvent``s in
/// position order inside ``read(skippingDamaged:_:found:)``.
///
/// Each event's digest is of its predecessor's *stored* hash, so none waits for another:
/// a read without a limit checks its events ``batchSize`` at a time (``DigestBatch``),
/// and hands them over, with any damage, in position order as one at a time would.
package struct ChainCheck {
    private let query: EventQuery
    private let verify: Bool
    private var previousHash: [UInt8]?
    private var expectedPosition: Int64?
    private var envelope = SplitEnvelope()
    private var emitted = 0
    /// Whether events are checked in batches: a read with a limit stops at it, and one
    /// event at a time reads no further than it must.
    private let batching: Bool
    private var pending: [FoundEvent] = []
    private var digests = DigestBatch()
    /// For each pending event, its message in `digests`, or nil where it has none.
    private var messages: [Int?] = []
    /// What `previousHash` will be once the pending events are checked.
    private var batchPrevious: [UInt8]?

    /// Events checked together in a read without a limit.
    package static let batchSize = 32

    /// - Parameters:
    ///   - hashAt: the hash stored at a position, nil when nothing is stored there.
    ///   - lastPosition: the log's last position.
    /// - Throws: ``EventStoreError/missingEvent(position:)`` when a contiguous read starts
    ///   after a position the log lacks.
    package init(query: EventQuery, verify: Bool, hashAt: (Int64) throws -> [UInt8]?, lastPosition: () throws -> Int64) throws {
        self.query = query
        self.verify = verify
        batching = verify && query.limit == nil
        guard verify && query.isContiguous else { return }
        let first = query.positions?.lowerBound ?? 1
        expectedPosition = max(first, 1)
        if first > 1 {
            previousHash = try hashAt(first - 1)
            if previousHash == nil, try lastPosition() >= first {
                throw EventStoreError.missingEvent(position: first - 1)
            }
        } else {
            previousHash = ChainHash.genesis
        }
        batchPrevious = previousHash
    }

    /// Whether predecessors' hashes must come with scattered events.
    package var needsPredecessors: Bool { verify && !query.isContiguous }

    /// Runs a store's read: `found` reads events in position order and hands each to the
    /// function it is given, stopping when that answers false. Each event that holds goes
    /// to `body`; damage goes to `damaged`, or is thrown without it.
    package mutating func read(skippingDamaged damaged: ((EventStoreError) -> Void)?, _ body: (StoredEvent) throws -> Void,
                               found: ((consuming FoundEvent) throws -> Bool) throws -> Void) throws {
        do {
            // `found` does not keep its function; Swift cannot tell that `body` inside it stays put.
            try withoutActuallyEscaping(body) { body in
                try found { try take($0, skippingDamaged: damaged, body) }
            }
        } catch {
            // A store that fails mid-read (a damaged file) still hands over the events it
            // read before, as one at a time would have, unless one of them fails first.
            try flush(skippingDamaged: damaged, body)
            throw error
        }
        try flush(skippingDamaged: damaged, body)
    }

    /// Checks one thing a read found, or keeps it for its batch; whether to read on.
    private mutating func take(_ found: consuming FoundEvent, skippingDamaged damaged: ((EventStoreError) -> Void)?,
                               _ body: (StoredEvent) throws -> Void) throws -> Bool {
        guard batching else { return try check(found, matching: nil, skippingDamaged: damaged, body) }
        // The predecessor `check` will take, found the way it finds it. Taken apart and put
        // back together, not copied: a copy retained each reference the event holds, and
        // the batch's clearing released them again, for every event a check reads.
        switch consume found {
        case .damaged(let error, let position, let storedHash):
            if query.isContiguous, let storedHash { batchPrevious = storedHash }
            messages.append(nil)
            pending.append(.damaged(error, position: position, storedHash: storedHash))
        case .event(let event, let storedPredecessor, let block):
            if let predecessor = Self.predecessor(of: event, previous: batchPrevious, stored: storedPredecessor) {
                messages.append(digests.addChainEnvelope(of: event, after: predecessor, expecting: event.hash))
            } else {
                messages.append(nil)
            }
            if query.isContiguous { batchPrevious = event.hash }
            pending.append(.event(event, predecessorHash: storedPredecessor, block: block))
        }
        if pending.count >= Self.batchSize { try flush(skippingDamaged: damaged, body) }
        return true
    }

    /// Checks the pending events: their digests together, then each in order as ``check``
    /// would alone.
    private mutating func flush(skippingDamaged damaged: ((EventStoreError) -> Void)?, _ body: (StoredEvent) throws -> Void) throws {
        guard !pending.isEmpty else { return }
        digests.compute()
        // Out of `self` while `check` changes it, and back after, to keep its storage.
        var batch: [FoundEvent] = []
        swap(&batch, &pending)
        defer {
            batch.removeAll(keepingCapacity: true)
            swap(&batch, &pending)
        }
        // Each moved out of the batch (from its end, so the batch is turned round first).
        let count = batch.count
        batch.reverse()
        for index in 0..<count {
            guard let found = batch.popLast() else { break }
            _ = try check(found, matching: messages[index].map(digests.matchesExpected), skippingDamaged: damaged, body)
        }
        messages.removeAll(keepingCapacity: true)
        digests.removeAll()
    }

    /// The hash an event is checked against: the one before it in a contiguous read, else
    /// genesis for the first position, else its predecessor's stored hash; nil if none.
    private static func predecessor(of event: StoredEvent, previous: [UInt8]?, stored: [UInt8]?) -> [UInt8]? {
        if let previous { return previous }
        if event.position == 1 { return ChainHash.genesis }
        return stored
    }

    /// Checks one thing a read found and hands `body` the event if it holds; whether to
    /// read on. `matching` is whether its digest matched, where already computed.
    private mutating func check(_ found: consuming FoundEvent, matching computed: Bool?, skippingDamaged damaged: ((EventStoreError) -> Void)?,
                                _ body: (StoredEvent) throws -> Void) throws -> Bool {
        let event: StoredEvent, storedPredecessor: [UInt8]?
        switch consume found {
        case .damaged(let error, let position, let storedHash):
            guard let damaged else { throw error }
            damaged(error)
            if verify && query.isContiguous, let storedHash { previousHash = storedHash }
            if expectedPosition != nil, position >= 1, position < LogLimits.maximumCount { expectedPosition = position + 1 }
            return true
        case .event(let found, let predecessor, _):
            (event, storedPredecessor) = (found, predecessor)
        }
        if verify {
            if let expected = expectedPosition {
                if event.position != expected {
                    guard let damaged else { throw EventStoreError.missingEvent(position: expected) }
                    // At most ten a gap: the next position is the row's word, and a forged one
                    // (2^62) must not make the read count to it.
                    for missing in expected..<min(event.position, expected + 10) { damaged(.missingEvent(position: missing)) }
                }
                expectedPosition = event.position + 1
            }
            guard let predecessor = Self.predecessor(of: event, previous: previousHash, stored: storedPredecessor) else {
                throw EventStoreError.missingEvent(position: event.position - 1)
            }
            let matches = computed ?? ChainHash.matches(previous: predecessor, event: event, scratch: &envelope)
            // A salvage chains the next event to the stored hash, matching or not.
            if query.isContiguous { previousHash = event.hash }
            if !matches {
                guard let damaged else { throw EventStoreError.hashMismatch(position: event.position) }
                damaged(.hashMismatch(position: event.position))
                guard query.handsOverMismatched else { return true }
            }
        }
        try body(event)
        emitted += 1
        return query.limit.map { emitted < $0 } ?? true
    }
}

/// Turns a payload (or a block's body) as stored back into its bytes, for any store: the
/// codecs of docs/FORMAT.md, with each dictionary's inflater made once.
package final class PayloadDecoder {
    private var inflaters: [Int64: RawInflater] = [:]
    private var plainInflater: RawInflater?

    package init() {}

    /// - Parameter dictionary: a dictionary's bytes by id, nil when the log has none of that id.
    package func decode(position: Int64, codec: Int64, dictionaryID: Int64?, rawSize: Int, stored: [UInt8],
                        limit: Int = LogLimits.maximumPayloadSize, dictionary: (Int64) throws -> [UInt8]?) throws -> [UInt8] {
        do {
            guard let inflater = try inflater(codec: codec, dictionaryID: dictionaryID, position: position, dictionary) else {
                try Self.checkRaw(stored, rawSize: rawSize, position: position)
                return stored
            }
            return try inflater.decompress(stored, expectedSize: rawSize, limit: limit)
        } catch let error as ZlibError {
            throw EventStoreError.corruptPayload(position: position, detail: error.description)
        }
    }

    /// Decodes only as much of a stored body as `read` needs (``RawInflater/decompressPrefix(_:size:first:_:)``):
    /// `read` gets the bytes out so far and answers how many it needs in all, or nil.
    package func decodePrefix(position: Int64, codec: Int64, dictionaryID: Int64?, rawSize: Int, stored: [UInt8],
                              first: Int, dictionary: (Int64) throws -> [UInt8]?,
                              read: (UnsafeBufferPointer<UInt8>) throws -> Int?) throws {
        do {
            guard let inflater = try inflater(codec: codec, dictionaryID: dictionaryID, position: position, dictionary) else {
                try Self.checkRaw(stored, rawSize: rawSize, position: position)
                guard try stored.withUnsafeBufferPointer(read) == nil else {
                    throw EventStoreError.corruptPayload(position: position, detail: "its body ends early")
                }
                return
            }
            try inflater.decompressPrefix(stored, size: rawSize, first: first, read)
        } catch let error as ZlibError {
            throw EventStoreError.corruptPayload(position: position, detail: error.description)
        }
    }

    private static func checkRaw(_ stored: [UInt8], rawSize: Int, position: Int64) throws {
        guard stored.count == rawSize else {
            throw EventStoreError.corruptPayload(position: position, detail: "stored \(stored.count) bytes, expected \(rawSize)")
        }
    }

    /// The inflater `codec` needs, nil for bytes stored as they are.
    private func inflater(codec: Int64, dictionaryID: Int64?, position: Int64,
                          _ dictionary: (Int64) throws -> [UInt8]?) throws -> RawInflater? {
        switch PayloadCodec(rawValue: codec) {
        case .raw?:
            return nil
        case .deflate?:
            if let plainInflater { return plainInflater }
            let made = try RawInflater()
            plainInflater = made
            return made
        case .deflateWithDictionary?:
            guard let dictionaryID else {
                throw EventStoreError.corruptPayload(position: position, detail: "codec 1 without a dictionary id")
            }
            if let cached = inflaters[dictionaryID] { return cached }
            guard let bytes = try dictionary(dictionaryID) else {
                throw EventStoreError.unknownDictionary(position: position, dictionaryID: dictionaryID)
            }
            let made = try RawInflater(dictionary: bytes)
            inflaters[dictionaryID] = made
            return made
        case nil:
            throw EventStoreError.unknownCodec(position: position, codec: codec)
        }
    }
}


extension EventQuery {
    /// True when the query selects a gapless run of positions, which can be checked
    /// as a chain without fetching each predecessor.
    package var isContiguous: Bool {
        stream == nil && streams == nil && types == nil && since == nil && until == nil
    }
}

/// What a read found at a position: an event, or the damage in its place. Each store
/// reads these; ``ChainCheck`` decides what they mean.
package enum FoundEvent {
    /// `predecessorHash`: the stored hash of the event before it, when the read was
    /// asked for it (a read of scattered events checks each against it).
    /// `block`: the first position of the block that holds it (nil for a row).
    case event(StoredEvent, predecessorHash: [UInt8]?, block: Int64?)
    /// `storedHash`: the hash stored for the damaged position, when it can be read, so
    /// a scan that goes on chains the next event to it.
    case damaged(EventStoreError, position: Int64, storedHash: [UInt8]?)

    package var position: Int64 {
        switch self {
        case .event(let event, _, _): return event.position
        case .damaged(_, let position, _): return position
        }
    }
}
