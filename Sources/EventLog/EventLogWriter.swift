import Foundation

/// A log that imports signed history: what `import` and a collector ask of a store,
/// whichever holds the log.
///
/// Two stores answer it: ``EventStore`` (a SQLite file) and the shared store written as
/// itself (`SharedStore.write(native:)`, PostgreSQL, nothing copied). Both append through
/// ``AppendPlanner`` and grow device trees through the same rules, so an import stored in
/// either gets the same positions, hashes, leaves and heads.
public protocol EventLogWriter: EventLogReader {
    /// How many events the recording holds (0 for an unknown one).
    func streamVersion(_ stream: UUID) throws -> Int64
    /// How many events each recording holds (0 for an unknown one): one lookup for many
    /// where the store can (an import asks about every recording it carries).
    func streamVersions(_ streams: Set<UUID>) throws -> [UUID: Int64]
    /// The stored event with `id`, or nil.
    func event(id: UUID) throws -> StoredEvent?
    /// The stored events among `ids`, by id: one lookup for many where the store can
    /// (an import asks about every line it carries).
    func storedEvents(ids: [UUID]) throws -> [UUID: StoredEvent]
    /// Runs `body` in one transaction: everything it stores is kept, or (if it throws) nothing.
    func importTransaction(_ body: (any EventLogImport) throws -> Void) throws
}

/// One import's transaction (``EventLogWriter/importTransaction(_:)``).
public protocol EventLogImport: AnyObject {
    /// Appends a batch (skipping ids already stored); `owners` names the device tree of
    /// each recording that has one. Each event keeps the leaf index it was exported with.
    @discardableResult
    func append(_ events: [NewEvent], owners: [UUID: TreeOwner]) throws -> [AppendedEvent]
    /// Stores checkpoints of the older kind (those already stored must be equal).
    func store(_ checkpoints: [Checkpoint]) throws
    /// Stores signed heads (those already stored must be equal) and proof nodes.
    func store(heads: [TreeHead], nodes: [(owner: TreeOwner, lo: Int64, hi: Int64, hash: [UInt8])]) throws
}

extension EventLogWriter {
    public func streamVersions(_ streams: Set<UUID>) throws -> [UUID: Int64] {
        var out: [UUID: Int64] = [:]
        for stream in streams { out[stream] = try streamVersion(stream) }
        return out
    }

    public func storedEvents(ids: [UUID]) throws -> [UUID: StoredEvent] {
        var out: [UUID: StoredEvent] = [:]
        for id in ids where out[id] == nil {
            if let event = try event(id: id) { out[id] = event }
        }
        return out
    }
}

extension EventLogReader {
    /// A stream's chain hash after `version` of its stored events; genesis for 0, nil if
    /// the stream holds fewer.
    public func streamHash(_ stream: UUID, at version: Int64) throws -> [UInt8]? {
        try recomputedStreamHash(stream, at: version)
    }

    /// ``streamHash(_:at:)`` recomputed from the stream's events: what a store that keeps
    /// no head for that version answers.
    public func recomputedStreamHash(_ stream: UUID, at version: Int64) throws -> [UInt8]? {
        guard version > 0 else { return ChainHash.genesis }
        var hash = ChainHash.genesis, reached: Int64 = 0, scratch = SplitEnvelope()
        try scan(EventQuery(stream: stream), verify: false) { event in
            guard event.streamVersion <= version else { return }
            hash = ChainHash.streamHash(previous: hash, event: event, scratch: &scratch)
            reached = event.streamVersion
        }
        return reached == version ? hash : nil
    }
}
