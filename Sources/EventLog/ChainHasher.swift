import Foundation

/// The two chains an append extends, event by event in position order: the log's chain
/// (``ChainHash/hash(previous:envelope:)``) and each recording's
/// (``ChainHash/streamHash(previous:envelope:)``).
///
/// ``AppendPlanner`` runs one as it plans (``AppendPlanner/Hashing/inPlanner``), or hands
/// the work to its store (``AppendPlanner/Hashing/byStore``), which runs one on a thread
/// of its own while the planner goes on: either way the same rules give the same hashes.
package struct ChainHasher {
    /// The chain hash of the last event hashed (the log's last before the batch, at first).
    package private(set) var lastHash: Hash32
    /// Each recording's hash after the last of its events hashed by
    /// ``advance(_:position:streamVersion:headAtStart:)``.
    package private(set) var heads: [UUIDKey: Hash32] = [:]
    private var envelope = SplitEnvelope()

    /// - Parameter lastHash: the chain hash of the log's last event (genesis for an empty log).
    package init(lastHash: Hash32) {
        self.lastHash = lastHash
    }

    /// Extends the log's chain by `event` at `position`, and its recording's chain from
    /// `streamHead` (the recording's hash before it): returns both new hashes.
    ///
    /// A recording hash the event carries (``KnownHashes``) is taken where it was
    /// computed from the same version and predecessor; anywhere else it is computed.
    package mutating func hash(_ event: NewEvent, position: Int64, streamVersion: Int64,
                               after streamHead: Hash32) -> (hash: Hash32, streamHash: Hash32) {
        envelope.set(position: position, id: event.id, stream: event.stream, streamVersion: streamVersion,
                     type: event.type, typeVersion: event.typeVersion, recordedAt: event.recordedAt, payload: event.payload)
        let hash = envelope.chainHash(previous: lastHash)
        lastHash = hash
        if let known = event.known.recording, known.streamVersion == streamVersion, known.previous == streamHead {
            return (hash, known.streamHash)
        }
        return (hash, envelope.streamHash(previous: streamHead))
    }

    /// ``hash(_:position:streamVersion:after:)`` for a store that follows the recordings
    /// itself: `headAtStart` is the recording's stored hash before the batch, used for
    /// its first event here; ``heads`` keeps the rest.
    package mutating func advance(_ event: NewEvent, position: Int64, streamVersion: Int64, headAtStart: Hash32) -> Hash32 {
        let stream = UUIDKey(event.stream)
        let (hash, streamHash) = self.hash(event, position: position, streamVersion: streamVersion,
                                           after: heads[stream] ?? headAtStart)
        heads[stream] = streamHash
        return hash
    }
}
