import Foundation
import GRDB

/// Something a log's signatures do not vouch for.
public struct ProofProblem: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A signed head or checkpoint whose signature does not verify under its key (or
        /// whose key is one under which forgeries verify).
        case badSignature
        /// Signed with a key the auditor does not trust for that device.
        case untrustedKey
        /// One device name signs with two keys.
        case twoKeysForDevice
        /// Signed with a key anyone can compute (made for tests).
        case testKey
        /// A device's checkpoints (the older kind) skip a sequence number or do not chain.
        case brokenCheckpointChain
        /// An event differs from what its device signed.
        case changedEvent
        /// A signed tree's leaf is missing: an event, a recording or a game was removed.
        case missingEvent
        /// Leaves below a head the log holds only as subtree hashes, or not at all: part of
        /// the device's signed history is not here (an error unless the audit accepts a partial log).
        case absentLeaves
        /// Two events claim one leaf of a device's tree.
        case duplicateLeaf
        /// An event of a recording in a device's tree is not one of its leaves.
        case outsideTree
        /// A stream holds fewer events than its device signed (the older kind).
        case cutBelowCheckpoint
        /// A stream's stored head, or a tree's stored size or frontier, is not the one its events give.
        case wrongStreamHead
        /// Events after their device's last signed head: recorded, but not signed.
        case unsignedTail
        /// A recording no device signed.
        case unsignedStream
        /// The log holds less of a device's tree than a head known from elsewhere: it was rolled back.
        case rolledBack
        /// The log's tree disagrees with a head known from elsewhere: the device's history forked.
        case forkedHistory
        /// Streams signed only by the older kind of checkpoint.
        case olderSignatures
        /// A head known from elsewhere that one game's check did not need (another device's).
        case unusedHead
    }

    public var kind: Kind
    public var device: String?
    public var stream: UUID?
    /// The global position of the event at fault, where there is one.
    public var position: Int64?
    public var detail: String
    /// Whether the log fails verification for it. Missing or weaker signatures are
    /// errors when the auditor named the keys to trust, warnings otherwise.
    public var isError: Bool

    public init(kind: Kind, device: String? = nil, stream: UUID? = nil, position: Int64? = nil, detail: String, isError: Bool = true) {
        self.kind = kind
        self.device = device
        self.stream = stream
        self.position = position
        self.detail = detail
        self.isError = isError
    }

    public var description: String { detail }
}

/// A key that signed something in the log.
public struct Signer: Hashable, Sendable {
    public var device: String
    public var publicKey: [UInt8]
    /// Checkpoints of the older kind it signed.
    public var checkpoints: Int
    /// Tree heads it signed, and the largest tree size among them.
    public var heads: Int
    public var treeSize: Int64
    public var isTestKey: Bool
}

extension Signer {
    /// A device tree's key, with the heads it signed (no checkpoints of the older kind).
    init(_ tree: DeviceTree) {
        self.init(device: tree.owner.device, publicKey: tree.owner.publicKey, checkpoints: 0, heads: tree.heads.count,
                  treeSize: tree.heads.map(\.size).max() ?? 0, isTestKey: tree.heads.contains(where: \.isTestKey))
    }
}

/// What checking a log's signatures found.
public struct ProofReport: Sendable {
    /// Checkpoints of the older kind read.
    public var checkpoints = 0
    /// Signed tree heads read.
    public var heads = 0
    /// Each signing key found, with the device name it signs as.
    public var keys: [Signer] = []
    /// True when the keys were given by the auditor, false when they came from the log.
    public var trusted = false
    public var problems: [ProofProblem] = []
    /// The device whose tree holds each recording: what the audit checks against the
    /// device each recording says it was made on.
    public var deviceOfStream: [UUID: String] = [:]
}

extension EventStore {
    /// Every checkpoint (the older kind), by key, then sequence.
    public func checkpoints() throws -> [Checkpoint] {
        try read { db in
            try Row.fetchAll(db, sql: """
                SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints
                ORDER BY public_key, sequence
                """).compactMap(Self.checkpoint)
        }
    }

    /// A tree's heads checked: signatures, the key's trust, test keys. The check that
    /// comes back holds the roots of the valid heads under trusted keys.
    static func checkHeads(of tree: DeviceTree, trusted: [String: [UInt8]]?) -> (TreeCheck, [ProofProblem], Signer) {
        var check = TreeCheck(tree: tree)
        var problems: [ProofProblem] = []
        let strict = trusted != nil
        let signer = Signer(tree)
        let name = SafeText.line(tree.owner.device)
        var trustedKey = true
        if let trusted, trusted[tree.owner.device] != tree.owner.publicKey {
            trustedKey = false
            problems.append(ProofProblem(kind: .untrustedKey, device: tree.owner.device, detail: trusted[tree.owner.device] == nil
                ? "\(tree.heads.count) heads are signed as device \(name), which the trusted keys do not name"
                : "\(tree.heads.count) heads of device \(name) are signed with key \(Hex.string(tree.owner.publicKey).prefix(16))…, not the trusted one"))
        }
        // The mark is the signer's word: under trust the key itself is checked against the
        // published formula too, and a test key signs nothing.
        let isTestKey = signer.isTestKey || (strict && DeviceKey.isPublishedTestKey(tree.owner.publicKey, device: tree.owner.device))
        if isTestKey {
            problems.append(ProofProblem(kind: .testKey, device: tree.owner.device, detail:
                "device \(name) signs with a test key, which anyone can compute from its name\(signer.isTestKey ? "" : " (its heads do not say so: the mark was removed)"): its signatures prove nothing",
                isError: strict))
            if strict { trustedKey = false }
        }
        var signed: [Int64: [UInt8]] = [:]
        for head in tree.heads {
            guard head.isValid else {
                problems.append(ProofProblem(kind: .badSignature, device: tree.owner.device, detail:
                    head.size > MerkleTree.maximumSize || head.size < 1
                    ? "device \(name)'s head claims \(head.size) events, which no tree holds (1 to 2^62): it is not checked"
                    : PublicKeyCheck.isAcceptable(head.publicKey)
                    ? "device \(name)'s head at \(head.size) events does not verify under its key: it was changed after signing"
                    : "device \(name)'s key is a small-order or malformed Ed25519 point, under which forged signatures verify"))
                continue
            }
            if trustedKey { signed[head.size] = head.root }
        }
        check.signed = signed
        return (check, problems, signer)
    }

    /// One device name that signs with several keys.
    static func keysPerDevice(_ trees: some Sequence<DeviceTree>, strict: Bool) -> [ProofProblem] {
        var keysOfDevice: [String: Set<[UInt8]>] = [:]
        for tree in trees { keysOfDevice[tree.owner.device, default: []].insert(tree.owner.publicKey) }
        return keysOfDevice.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map { device, keys in
            ProofProblem(kind: .twoKeysForDevice, device: device, detail:
                "device \(SafeText.line(device)) signs with \(keys.count) different keys: only one can be the phone's own", isError: strict)
        }
    }

    /// Heads known from elsewhere, handed to the checks of their trees.
    static func attach(_ known: [TreeHead], to checks: inout [Int64: TreeCheck], trees: [Int64: DeviceTree],
                       trusted: [String: [UInt8]]?) -> [ProofProblem] {
        var report = ProofReport()
        // Heads known from elsewhere.
        var knownByKey: [[UInt8]: [TreeHead]] = [:]
        for head in known {
            guard head.isValid else {
                report.problems.append(ProofProblem(kind: .badSignature, device: head.device, detail:
                    "a known head of device \(SafeText.line(head.device)) (\(head.size) events) does not verify: it cannot anchor anything"))
                continue
            }
            if let trusted, trusted[head.device] != head.publicKey {
                report.problems.append(ProofProblem(kind: .untrustedKey, device: head.device, detail:
                    "a known head of device \(SafeText.line(head.device)) is signed with a key the trusted keys do not give it"))
                continue
            }
            knownByKey[head.publicKey, default: []].append(head)
        }
        for (id, tree) in trees {
            for head in knownByKey.removeValue(forKey: tree.owner.publicKey) ?? [] { checks[id]?.known.append(head) }
        }
        for head in knownByKey.values.joined() {
            report.problems.append(ProofProblem(kind: .rolledBack, device: head.device, detail:
                "device \(SafeText.line(head.device)) had signed \(head.size) events, and the log holds none of its tree: it was removed or rolled back"))
        }

        return report.problems
    }

    /// Tree `id`'s heads from the newest down to the first that verifies under its key
    /// (all of them if none does), oldest first.
    public func latestValidHeads(tree id: Int64, owner: TreeOwner) throws -> [TreeHead] {
        var out: [TreeHead] = []
        try read { db in
            let cursor = try Row.fetchCursor(db, sql: "SELECT size, root, signed_at, flags, signature FROM tree_heads WHERE tree_id = ? ORDER BY size DESC",
                                             arguments: [id])
            while let row = try cursor.next() {
                guard let size = Int64.fromDatabaseValue(row[0]), let root = Data.fromDatabaseValue(row[1]),
                      let signedAt = Int64.fromDatabaseValue(row[2]), let flags = Int64.fromDatabaseValue(row[3]),
                      let signature = Data.fromDatabaseValue(row[4]) else { continue }
                let head = TreeHead(device: owner.device, publicKey: owner.publicKey, size: size, root: Array(root),
                                    signedAt: Timestamp(microsecondsSince1970: signedAt), isTestKey: flags != 0, signature: Array(signature))
                out.append(head)
                if head.isValid { break }
            }
        }
        return out.reversed()
    }

    /// The leaf hashes of tree `id`'s leaves in `range`, read through the leaf index (the
    /// CROSS JOIN keeps SQLite from walking every recording of the tree instead).
    public func leafHashes(tree id: Int64, range: Range<Int64>) throws -> [Int64: [UInt8]] {
        var runs: [ClosedRange<Int64>] = []
        try read { db in
            var positions: [Int64] = []
            if hasLeafColumn {
                positions = try Int64.fetchAll(db, sql: """
                    SELECT e.position FROM events e CROSS JOIN streams s ON s.id = e.stream_id
                    WHERE e.leaf >= ? AND e.leaf < ? AND s.tree_id = ?
                    """, arguments: [range.lowerBound, range.upperBound, id])
            }
            // A tile's events mostly lie close together, so a few range reads fetch them
            // without reading far past them.
            for position in positions.sorted() {
                if let last = runs.last, position - last.upperBound <= 64 {
                    runs[runs.count - 1] = last.lowerBound...position
                } else {
                    runs.append(position...position)
                }
            }
            if hasBlocks {
                // A block holds at most `maximumCount` events, so its leaves of one tree,
                // given one after another as appends give them, end at most that far past
                // `range`: a bounded range of the index, not the rest of the tree. Leaves
                // spread wider (a file changed by hand) are missed, and the proof then
                // lacks a neighbour: the caller checks the whole tree instead.
                for row in try Row.fetchAll(db, sql: """
                    SELECT l.block, b.count FROM block_leaves l JOIN event_blocks b ON b.first_position = l.block
                    WHERE l.tree_id = ? AND l.last_leaf BETWEEN ? AND ? AND l.first_leaf < ?
                    """, arguments: [id, range.lowerBound, min(range.upperBound, MerkleTree.maximumSize) + Int64(EventBlock.maximumCount), range.upperBound]) {
                    let first: Int64 = row[0], count: Int64 = row[1]
                    runs.append(first...(first + max(count, 1) - 1))
                }
            }
        }
        // The runs hold other devices' events too, whose leaves number from 0 as well: only
        // the recordings of this tree count. Just the runs' recordings are looked up (the
        // tree's whole list, thousands of ids, was read for every tile: a tenth of a
        // viewer's work while it audited in the background).
        var found: [StoredEvent] = []
        for run in runs {
            try scan(EventQuery(positions: run), verify: false) { event in
                if let leaf = event.leaf, range.contains(leaf) { found.append(event) }
            }
        }
        let inTree = try streams(Set(found.map(\.stream)), inTree: id)
        var out: [Int64: [UInt8]] = [:], scratch = SplitEnvelope()
        for event in found where inTree.contains(event.stream) {
            scratch.set(event)
            out[event.leaf!] = scratch.leafHash()
        }
        return out
    }

    /// Those of `candidates` that are recordings of tree `id`.
    func streams(_ candidates: Set<UUID>, inTree id: Int64) throws -> Set<UUID> {
        guard !candidates.isEmpty else { return [] }
        let ids = candidates.sorted { $0.precedes($1) }
        var out = Set<UUID>()
        try read { db in
            // A few hundred at a time, well under SQLite's limit of bound values.
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(start + 500, ids.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let values: [(any DatabaseValueConvertible)?] = [id] + chunk.map { Data($0.bytes) }
                let arguments = StatementArguments(values)
                for bytes in try Data.fetchAll(db, sql: "SELECT uuid FROM streams WHERE tree_id = ? AND uuid IN (\(marks))", arguments: arguments) {
                    if let uuid = UUID(bytes: bytes) { out.insert(uuid) }
                }
            }
        }
        return out
    }

    /// Every tree with its heads, by row id; rows of the wrong types are left out.
    public func treeRows(heads withHeads: Bool = true) throws -> [Int64: DeviceTree] {
        try read { db in
            guard try db.tableExists("trees") else { return [:] }
            var out: [Int64: DeviceTree] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, public_key, device, size, frontier IS NOT NULL FROM trees") {
                guard let id = Int64.fromDatabaseValue(row[0]), let key = Data.fromDatabaseValue(row[1]),
                      let device = String.fromDatabaseValue(row[2]), let size = Int64.fromDatabaseValue(row[3]) else { continue }
                out[id] = DeviceTree(owner: TreeOwner(device: device, publicKey: Array(key)), size: size, heads: [],
                                     holdsEveryLeaf: Bool.fromDatabaseValue(row[4]) ?? false)
            }
            guard withHeads else { return out }
            for row in try Row.fetchAll(db, sql: "SELECT tree_id, size, root, signed_at, flags, signature FROM tree_heads ORDER BY tree_id, size") {
                guard let id = Int64.fromDatabaseValue(row[0]), let tree = out[id], let size = Int64.fromDatabaseValue(row[1]),
                      let root = Data.fromDatabaseValue(row[2]), let signedAt = Int64.fromDatabaseValue(row[3]),
                      let flags = Int64.fromDatabaseValue(row[4]), let signature = Data.fromDatabaseValue(row[5]) else { continue }
                out[id]!.heads.append(TreeHead(device: tree.owner.device, publicKey: tree.owner.publicKey, size: size, root: Array(root),
                                               signedAt: Timestamp(microsecondsSince1970: signedAt), isTestKey: flags != 0,
                                               signature: Array(signature)))
            }
            return out
        }
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


extension EventStore {
    /// The stored event with this id, if any.
    public func event(id: UUID) throws -> StoredEvent? {
        try read { db in
            guard let position = try Int64.fetchOne(db, sql: "SELECT position FROM events WHERE event_id = ?", arguments: [Data(id.bytes)])
                    ?? (hasBlocks ? try Int64.fetchOne(db, sql: "SELECT position FROM block_ids WHERE event_id = ?", arguments: [Data(id.bytes)]) : nil)
            else { return nil }
            var reader = BlockReader(store: self, db: db)
            guard let event = try reader.event(at: position, RowNames()), event.id == id else { return nil }
            return event
        }
    }

    /// Stores checkpoints from another log (an import), keeping those already here.
    /// - Throws: ``EventStoreError/checkpointConflict(device:sequence:)`` if one
    ///   stored here under the same key and sequence differs.
    /// - Returns: how many were new.
    static func store(_ checkpoints: [Checkpoint], _ db: Database) throws -> Int {
        var added = 0
        for checkpoint in checkpoints {
            if let stored = try Row.fetchOne(db, sql: """
                SELECT public_key, sequence, device, previous, signed_at, heads, signature FROM checkpoints
                WHERE public_key = ? AND sequence = ?
                """, arguments: [Data(checkpoint.publicKey), checkpoint.sequence]).flatMap(Self.checkpoint) {
                guard stored == checkpoint else {
                    throw EventStoreError.checkpointConflict(device: checkpoint.device, sequence: checkpoint.sequence)
                }
                continue
            }
            try insert(checkpoint, db)
            added += 1
        }
        return added
    }
}
