import Foundation

/// What an append needs from the store it writes into: stored ids, recordings, type ids
/// and device trees looked up (or made), and each new event written.
///
/// The rules of appending (positions, both hash chains, stream versions, retries,
/// expected versions, device-tree leaves, the catalog) are ``AppendPlanner``'s alone; a
/// store only answers and writes, so a batch appended to a SQLite file and to the shared
/// store in PostgreSQL gets the same positions, hashes and leaves.
package protocol AppendRowStore: TreeRowStore {
    /// Where the store is, as errors name it.
    var location: String { get }
    /// Where event `id` is stored already (its position and stream version), or nil if it
    /// is new. `nextPosition` is the position it takes if it is new (a store that claims
    /// ids as it goes records it).
    mutating func storedEvent(_ id: UUID, nextPosition: Int64) throws -> (position: Int64, streamVersion: Int64)?
    /// The recording's state as stored, or a new recording's (version 0, genesis head),
    /// made with its row id.
    mutating func stream(_ uuid: UUID) throws -> AppendPlanner.Stream
    /// The id of event type `name`, made if new.
    mutating func typeID(_ name: String) throws -> Int64
    /// Writes one new event; called in position order. `index` is the event's place in the batch.
    mutating func write(_ planned: AppendPlanner.PlannedEvent, of event: NewEvent, index: Int) throws
}

/// The rules of appending a batch, apart from any store: see ``AppendRowStore``.
package struct AppendPlanner {
    /// A recording as the batch leaves it.
    package struct Stream {
        package var rowID: Int64
        package var version: Int64
        package var startVersion: Int64
        /// The stream hash at `version` (with ``Hashing/byStore``, the stored one: the
        /// store follows the rest).
        package var head: Hash32
        /// The stream hash as stored, before the batch.
        package let startHead: Hash32
        /// The device tree its events are leaves of, if any.
        package var tree: Int64?
        /// Whether its row was made by this batch.
        package var isNew: Bool

        package init(rowID: Int64, version: Int64, head: Hash32, tree: Int64?, isNew: Bool) {
            self.rowID = rowID
            self.version = version
            self.startVersion = version
            self.head = head
            self.startHead = head
            self.tree = tree
            self.isNew = isNew
        }
    }

    /// Who works out a batch's chain hashes.
    package enum Hashing {
        /// The planner, as it plans: ``PlannedEvent/hash`` and ``Stream/head`` are final.
        case inPlanner
        /// The store, from each ``PlannedEvent`` in position order, with a ``ChainHasher``
        /// (on a thread of its own, say): ``PlannedEvent/hash`` is empty, and
        /// ``Stream/head`` stays the stored head.
        case byStore
    }

    /// A new event as it is to be stored.
    package struct PlannedEvent {
        package var position: Int64
        /// Its chain hash; nil with ``Hashing/byStore``. Held inline: one an event.
        package var hash: Hash32?
        /// Its recording's hash before the batch (for a store that hashes).
        package var streamHeadAtStart: Hash32
        package var streamRowID: Int64
        package var streamVersion: Int64
        package var typeID: Int64
        package var leaf: Int64?
        package var tree: Int64?
    }

    /// A catalog row: the tag's first position in the recording is the row's value.
    package struct CatalogRow: Hashable {
        package var tag: EventTag
        package var streamRowID: Int64
    }

    /// The position of the last event planned (the log's last before the batch, at first).
    package private(set) var position: Int64
    /// The log's last position before the batch.
    package let firstPosition: Int64
    private var chain: ChainHasher
    private let hashing: Hashing
    /// Every recording the batch touched.
    package private(set) var streams: [UUIDKey: Stream] = [:]
    private var seenInBatch: [UUIDKey: AppendedEvent] = [:]
    /// The batch's catalog rows, each (tag, recording) once, with its first position.
    package private(set) var catalogRows: [CatalogRow: Int64] = [:]
    /// Whether every new event came with its tags: without them the catalog no longer covers the log.
    package private(set) var everyEventTagged = true
    private var envelope = SplitEnvelope()

    /// - Parameters:
    ///   - lastPosition: the log's last position before the batch.
    ///   - lastHash: the chain hash at `lastPosition` (genesis for an empty log).
    ///   - hashing: who works out the chain hashes.
    package init(lastPosition: Int64, lastHash: Hash32, expectedEvents: Int = 0, hashing: Hashing = .inPlanner) {
        position = lastPosition
        firstPosition = lastPosition
        chain = ChainHasher(lastHash: lastHash)
        self.hashing = hashing
        seenInBatch.reserveCapacity(expectedEvents)
    }

    /// A log's last chain hash as stored, where an append chains on from: refused, with
    /// nothing written, unless it is 32 bytes (damage past the schema's checks).
    package static func chainStart(_ stored: [UInt8], at lastPosition: Int64, in location: String) throws -> Hash32 {
        guard let hash = Hash32(stored) else {
            throw EventStoreError.damagedDatabase(path: location, detail:
                "the chain hash of its last event (position \(lastPosition)) is \(stored.count) bytes, not 32; nothing was written")
        }
        return hash
    }

    /// Plans one event: a repeat of an id stored (or earlier in the batch) is reported
    /// where it is; a new one takes the next position, extends both chains and its
    /// device's tree, and is handed to `store` to write.
    package mutating func add<Store: AppendRowStore>(_ event: NewEvent, index: Int, expecting: [UUID: ExpectedVersion],
                                                    owner: (UUID) -> TreeOwner?, trees: inout TreeStates,
                                                    store: inout Store) throws -> AppendedEvent {
        let id = UUIDKey(event.id), streamKey = UUIDKey(event.stream)
        if let earlier = seenInBatch[id] {
            return AppendedEvent(position: earlier.position, streamVersion: earlier.streamVersion, isNew: false)
        }
        if let stored = try store.storedEvent(event.id, nextPosition: position + 1) {
            return AppendedEvent(position: stored.position, streamVersion: stored.streamVersion, isNew: false)
        }
        var stream: Stream
        if let known = streams[streamKey] {
            stream = known
        } else {
            stream = try store.stream(event.stream)
            // The store's word: appending counts on from it.
            try LogLimits.checkStored(recordingVersion: stream.version, of: event.stream, in: store.location)
            stream.tree = try trees.join(&store, stream: event.stream, rowID: stream.rowID, tree: stream.tree, owner: owner(event.stream))
            if let expected = expecting[event.stream], !expected.matches(stream.version) {
                throw EventStoreError.versionConflict(stream: event.stream, expected: expected, actual: stream.version)
            }
        }
        position += 1
        stream.version += 1
        let typeID = try store.typeID(event.type)
        var hash: Hash32?
        if hashing == .inPlanner {
            let hashes = chain.hash(event, position: position, streamVersion: stream.version, after: stream.head)
            hash = hashes.hash
            stream.head = hashes.streamHash
        }
        streams[streamKey] = stream
        let leaf = try stream.tree.map { tree in
            try trees.take(&store, tree, leaf: event.leaf, hash: leafHash(of: event, streamVersion: stream.version))
        }
        try store.write(PlannedEvent(position: position, hash: hash, streamHeadAtStart: stream.startHead, streamRowID: stream.rowID,
                                     streamVersion: stream.version, typeID: typeID, leaf: leaf, tree: stream.tree),
                        of: event, index: index)
        if let tags = event.tags {
            for tag in tags where catalogRows[CatalogRow(tag: tag, streamRowID: stream.rowID)] == nil {
                catalogRows[CatalogRow(tag: tag, streamRowID: stream.rowID)] = position
            }
        } else {
            everyEventTagged = false
        }
        let appended = AppendedEvent(position: position, streamVersion: stream.version, isNew: true)
        seenInBatch[id] = appended
        return appended
    }

    /// The event's leaf hash: one it carries where it was computed for the same version
    /// (the leaf's data is the envelope without its position, so nothing else changes it),
    /// otherwise its own.
    private mutating func leafHash(of event: NewEvent, streamVersion: Int64) -> Hash32 {
        if let known = event.known.recording, known.streamVersion == streamVersion, let leaf = known.leafHash {
            return leaf
        }
        envelope.set(position: position, id: event.id, stream: event.stream, streamVersion: streamVersion,
                     type: event.type, typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload)
        return envelope.leafHash()
    }

    /// Checks a batch before anything of it is planned.
    package static func validate(_ events: [NewEvent]) throws {
        for event in events {
            if event.type.isEmpty || event.type.utf8.count > 200 {
                throw EventStoreError.invalidEvent(id: event.id, reason: "the type must have 1 to 200 bytes")
            }
            if event.typeVersion < 1 || event.typeVersion > Int(UInt32.max) {
                throw EventStoreError.invalidEvent(id: event.id, reason: "the type version must be at least 1")
            }
            if event.payload.count > LogLimits.maximumPayloadSize {
                throw EventStoreError.invalidEvent(id: event.id, reason: "the payload exceeds \(LogLimits.maximumPayloadSize) bytes")
            }
            if let leaf = event.leaf, leaf < 0 || leaf >= LogLimits.maximumCount {
                throw EventStoreError.invalidEvent(id: event.id, reason: "a leaf index is within 0...2^62-1")
            }
        }
    }
}
