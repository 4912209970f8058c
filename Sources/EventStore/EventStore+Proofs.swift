import Foundation
import GRDB

/// Something a log's signatures do not vouch for.
public struct ProofProblem: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A checkpoint's signature does not verify under its key.
        case badSignature
        /// Signed with a key the auditor does not trust for that device.
        case untrustedKey
        /// A device's checkpoints skip a sequence number or do not chain.
        case brokenCheckpointChain
        /// An event differs from what its device signed.
        case changedEvent
        /// A stream holds fewer events than its device signed.
        case cutBelowCheckpoint
        /// A stream's stored head is not its chain's.
        case wrongStreamHead
        /// Events after a stream's last checkpoint: recorded, but not (yet) signed.
        case unsignedTail
        /// A stream no checkpoint covers.
        case unsignedStream
    }

    public var kind: Kind
    public var device: String?
    public var stream: UUID?
    /// The global position of the event at fault, where there is one.
    public var position: Int64?
    public var detail: String

    /// Tails and streams without a signature are warnings: a log exported before its
    /// device signed, or written by an older gamelog. Everything else is an error.
    public var isError: Bool { kind != .unsignedTail && kind != .unsignedStream }

    public var description: String { detail }
}

/// What checking a log's signatures found.
public struct ProofReport: Sendable {
    /// Checkpoints read.
    public var checkpoints = 0
    /// Each signing key found, with the device name it signs as.
    public var keys: [(device: String, publicKey: [UInt8], checkpoints: Int)] = []
    /// True when the keys were given by the auditor, false when they came from the log.
    public var trusted = false
    public var problems: [ProofProblem] = []
}

extension EventStore {
    /// Every checkpoint, by key, then sequence.
    public func checkpoints() throws -> [Checkpoint] {
        try Self.translating(path) {
            try queue.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints
                    ORDER BY public_key, sequence
                    """).map(Self.checkpoint)
            }
        }
    }

    /// Checks the devices' signatures: each key's checkpoints chain and verify; every
    /// signed head matches its stream's chain recomputed from the events; no stream
    /// holds fewer events than signed. Events after a stream's last checkpoint are
    /// reported as unsigned (a warning).
    /// - Parameter trusted: device name → public key the auditor trusts; nil takes
    ///   the keys the log itself holds (which a forger could replace).
    public func verifyProofs(trusting trusted: [String: [UInt8]]? = nil,
                             progress: ((Int64) -> Void)? = nil) throws -> ProofReport {
        var report = ProofReport()
        report.trusted = trusted != nil
        let all = try checkpoints()
        report.checkpoints = all.count
        // The heads each stream must reach: version -> (hash, device).
        var required: [UUID: [Int64: (hash: [UInt8], device: String)]] = [:]
        var lastSigned: [UUID: Int64] = [:]
        var deviceOfStream: [UUID: String] = [:]
        for (key, chain) in Dictionary(grouping: all, by: \.publicKey).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let device = chain[0].device
            report.keys.append((device, key, chain.count))
            if let trusted {
                if trusted[device] != key {
                    report.problems.append(ProofProblem(kind: .untrustedKey, device: device, detail: trusted[device] == nil
                        ? "\(chain.count) checkpoints are signed as device \(device), which the trusted keys do not name"
                        : "\(chain.count) checkpoints of device \(device) are signed with key \(hex(key).prefix(16))…, not the trusted one"))
                    continue
                }
            }
            var previous = ChainHash.genesis
            for (index, checkpoint) in chain.enumerated() {
                let expectedSequence = Int64(index + 1)
                if checkpoint.sequence != expectedSequence || checkpoint.previous != previous || checkpoint.device != device {
                    report.problems.append(ProofProblem(kind: .brokenCheckpointChain, device: device, detail:
                        "device \(device)'s checkpoint \(checkpoint.sequence) does not follow checkpoint \(expectedSequence - 1): one was removed or replaced"))
                }
                previous = checkpoint.digest
                guard checkpoint.isSigned(by: key) else {
                    report.problems.append(ProofProblem(kind: .badSignature, device: device, detail:
                        "device \(device)'s checkpoint \(checkpoint.sequence) does not verify under its key: it was changed after signing"))
                    continue
                }
                for head in checkpoint.heads {
                    required[head.stream, default: [:]][head.version] = (head.hash, device)
                    lastSigned[head.stream] = max(lastSigned[head.stream] ?? 0, head.version)
                    deviceOfStream[head.stream] = device
                }
            }
        }

        // Recompute every stream's chain from its events.
        var chains = StreamChains()
        var running: [UUID: (version: Int64, hash: [UInt8], firstUnsigned: Int64?)] = [:]
        var read: Int64 = 0
        try scan(verify: false) { event in
            var state = running[event.stream] ?? (0, ChainHash.genesis, nil)
            state.version = event.streamVersion
            state.hash = chains.advance(event)
            if let signed = required[event.stream]?[event.streamVersion], signed.hash != state.hash {
                report.problems.append(ProofProblem(kind: .changedEvent, device: signed.device, stream: event.stream,
                    position: event.position, detail:
                    "event at position \(event.position) (stream \(short(event.stream)) version \(event.streamVersion), or one before it in its stream) differs from what device \(signed.device) signed"))
            }
            if event.streamVersion > (lastSigned[event.stream] ?? 0), state.firstUnsigned == nil { state.firstUnsigned = event.position }
            running[event.stream] = state
            read += 1
            if read % 16_384 == 0 { progress?(read) }
        }
        let storedHeads = try Self.translating(path) {
            try queue.read { db in
                try Row.fetchAll(db, sql: "SELECT uuid, version, head FROM streams").map {
                    (UUID(bytes: Array($0[0] as Data))!, $0[1] as Int64, ($0[2] as Data?).map(Array.init))
                }
            }
        }
        for (stream, _, head) in storedHeads {
            let state = running[stream]
            if let signed = required[stream], let highest = signed.keys.max(), highest > (state?.version ?? 0) {
                report.problems.append(ProofProblem(kind: .cutBelowCheckpoint, device: signed[highest]?.device, stream: stream, detail:
                    "stream \(short(stream)) holds \(state?.version ?? 0) events, but device \(signed[highest]!.device) signed \(highest): its tail was cut"))
            }
            if let head, let state, head != state.hash {
                report.problems.append(ProofProblem(kind: .wrongStreamHead, device: deviceOfStream[stream], stream: stream, detail:
                    "stream \(short(stream))'s stored head is not the hash of its events"))
            }
            guard let state, let first = state.firstUnsigned else { continue }
            if let device = deviceOfStream[stream] {
                report.problems.append(ProofProblem(kind: .unsignedTail, device: device, stream: stream, position: first, detail:
                    "\(state.version - (lastSigned[stream] ?? 0)) events of stream \(short(stream)) from position \(first) come after device \(device)'s last checkpoint: unsigned"))
            } else {
                report.problems.append(ProofProblem(kind: .unsignedStream, stream: stream, position: first, detail:
                    "stream \(short(stream)) (\(state.version) events from position \(first)) is signed by no device"))
            }
        }
        report.problems.sort { ($0.position ?? .max, $0.kind.rawValue, $0.detail) < ($1.position ?? .max, $1.kind.rawValue, $1.detail) }
        return report
    }

    /// SQLite's own check of the file: pages, indexes, constraints. Empty when sound.
    public func structuralProblems() throws -> [String] {
        try Self.translating(path) {
            try queue.read { db in
                try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            }
        }
    }
}

private func short(_ id: UUID) -> String { String(id.uuidString.prefix(8)).lowercased() }
private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

extension EventStore {
    /// The stored event with this id, if any.
    public func event(id: UUID) throws -> StoredEvent? {
        try read { db in
            guard let position = try Int64.fetchOne(db, sql: "SELECT position FROM events WHERE event_id = ?",
                                                    arguments: [Data(id.bytes)]) else { return nil }
            let (sql, arguments) = Self.selectSQL(for: EventQuery(positions: position...position), withPredecessorHash: false)
            return try Row.fetchOne(db, sql: sql, arguments: arguments).map { try decodeRow(db, $0, RowNames()) }
        }
    }

    /// A stream's chain hash after `version` of its stored events; genesis for 0,
    /// nil if the stream holds fewer.
    public func streamHash(_ stream: UUID, at version: Int64) throws -> [UInt8]? {
        guard version > 0 else { return ChainHash.genesis }
        var hash = ChainHash.genesis, reached: Int64 = 0, scratch: [UInt8] = []
        try scan(EventQuery(stream: stream), verify: false) { event in
            guard event.streamVersion <= version else { return }
            hash = ChainHash.streamHash(previous: hash, event: event, scratch: &scratch)
            reached = event.streamVersion
        }
        return reached == version ? hash : nil
    }

    /// Stores checkpoints from another log (an import), keeping those already here.
    /// - Throws: ``EventStoreError/checkpointConflict(device:sequence:)`` if one
    ///   stored here under the same key and sequence differs; nothing is stored then.
    /// - Returns: how many were new.
    @discardableResult
    public func store(_ checkpoints: [Checkpoint]) throws -> Int {
        guard access == .readWrite else { throw EventStoreError.readOnly(path: path, detail: "opened read-only") }
        var added = 0
        try Self.translating(path) {
            try queue.inTransaction(.immediate) { db in
                for checkpoint in checkpoints {
                    if let stored = try Row.fetchOne(db, sql: """
                        SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints
                        WHERE public_key = ? AND sequence = ?
                        """, arguments: [Data(checkpoint.publicKey), checkpoint.sequence]).map(Self.checkpoint) {
                        guard stored == checkpoint else {
                            throw EventStoreError.checkpointConflict(device: checkpoint.device, sequence: checkpoint.sequence)
                        }
                        continue
                    }
                    try insert(checkpoint, db)
                    added += 1
                }
                return .commit
            }
        }
        return added
    }
}
