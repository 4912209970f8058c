import Foundation

/// A recording's row as the log stores it: what its events must add up to.
public struct RecordingRow: Sendable, Equatable {
    /// How many events the log says the recording holds.
    public var version: Int64
    /// The stored hash of the recording's chain after its last event (nil in logs that keep none).
    public var head: [UInt8]?
    /// The row id of the device tree the recording is in, nil for one in none.
    public var tree: Int64?

    public init(version: Int64, head: [UInt8]?, tree: Int64?) {
        self.version = version
        self.head = head
        self.tree = tree
    }
}

/// One stored cosignature row, as read: the head it names (by its tree's key and size) and
/// the witness's signature. Fields that do not read as their type are nil: such a row is
/// reported as one that does not verify.
public struct CosignatureRow: Sendable {
    public var publicKey: [UInt8]
    public var size: Int64
    public var witness: String?
    public var witnessKey: [UInt8]?
    public var cosignedAt: Int64?
    public var signature: [UInt8]?

    public init(publicKey: [UInt8], size: Int64, witness: String?, witnessKey: [UInt8]?, cosignedAt: Int64?, signature: [UInt8]?) {
        (self.publicKey, self.size, self.witness, self.witnessKey, self.cosignedAt, self.signature)
            = (publicKey, size, witness, witnessKey, cosignedAt, signature)
    }

    /// The cosignature the row holds, if its fields read as their types.
    var cosignature: Cosignature? {
        guard let witness, let witnessKey, let cosignedAt, cosignedAt >= 0, let signature else { return nil }
        return Cosignature(witness: witness, witnessKey: witnessKey, cosignedAt: UInt64(cosignedAt), signature: signature)
    }
}

/// A reader of a log that also reads what its signatures are checked against: the
/// recordings' rows, the devices' trees and heads, stored proof nodes and the witnesses'
/// cosignatures. One game's audit (`verify GAME`) asks only this, so it runs the same
/// checks, in the same code, on a SQLite file and on a shared store read as it is in
/// PostgreSQL: the store reads, the checks below (``verifyIntegrity(ofStreams:)``,
/// ``verifyProofs(ofStreams:trusting:known:partial:)``, ``invalidCosignatures()``,
/// ``cosignedHeads()``) judge.
public protocol SignedLogReader: EventLogReader {
    /// Another reader of the same log, for work on another thread.
    func anotherReader() throws -> any SignedLogReader
    /// The rows of those of `streams` the log holds.
    func recordingRows(_ streams: Set<UUID>) throws -> [UUID: RecordingRow]
    /// Every recording in tree `id`.
    func streams(inTree id: Int64) throws -> Set<UUID>
    /// Every device tree by row id; with `heads`, each with all of its heads, oldest first.
    /// Rows whose values have the wrong type are left out (the checks report them).
    func treeRows(heads: Bool) throws -> [Int64: DeviceTree]
    /// Tree `id`'s heads from the newest down to the first that verifies under its key
    /// (all of them if none does), oldest first.
    func latestValidHeads(tree id: Int64, owner: TreeOwner) throws -> [TreeHead]
    /// The leaf hashes of tree `id`'s leaves in `range` that the log holds, by leaf index.
    func leafHashes(tree id: Int64, range: Range<Int64>) throws -> [Int64: [UInt8]]
    /// The stored proof node of tree `id` over the leaves `range`, or nil.
    func storedNode(tree id: Int64, range: Range<Int64>) throws -> [UInt8]?
    /// The stored proof nodes by tree id, `[lo, hi) -> hash` (of `trees` only, unless nil).
    func storedNodes(trees: Set<Int64>?) throws -> [Int64: [Range<Int64>: [UInt8]]]
    /// Every cosignature row, by tree, size and witness.
    func cosignatureRows() throws -> [CosignatureRow]
    /// Reads every event from `position` to the end of the log by position (never through
    /// the per-recording index), handing each to `body`; the events that could not be read,
    /// and any index rows the store keeps that disagree with what it read, come back.
    /// One game's audit uses it to know that the index its reads go through hid none of
    /// the game's events.
    func verifyIndexes(from position: Int64, _ body: (StoredEvent) throws -> Void) throws -> [EventStoreError]
}

extension SignedLogReader {
    /// Every device tree in the log with its signed heads, ordered by device name then key.
    /// Rows whose values have the wrong type are left out here; `verify` reports them.
    public func deviceTrees() throws -> [DeviceTree] {
        // Keys compare as bytes: the order of their hex spellings.
        try treeRows(heads: true).values.sorted {
            $0.owner.device != $1.owner.device ? $0.owner.device < $1.owner.device
                : $0.owner.publicKey.lexicographicallyPrecedes($1.owner.publicKey)
        }
    }

    /// The trees that hold `streams` (with every tree's row, for checks across a device's
    /// keys) and which of `streams` is in which, without heads or proof nodes: what one
    /// game's proofs start from, read through indexes whatever the log's size.
    public func treeLayout(ofStreams streams: Set<UUID>) throws -> TreeLayout {
        let trees = try treeRows(heads: false)
        var treeOfStream: [UUID: Int64] = [:]
        for (stream, row) in try recordingRows(streams) {
            if let tree = row.tree, trees[tree] != nil { treeOfStream[stream] = tree }
        }
        // Proof nodes are looked up one by one as a game's roots need them (`gameVerdicts`).
        return TreeLayout(trees: trees, treeOfStream: treeOfStream, nodes: [:])
    }

    /// Each stored event of `streams` (all if nil) that is a leaf of its device's tree:
    /// its position, leaf index and leaf hash, in position order. One read of the
    /// recordings, for callers that need both the indexes and the hashes.
    public func leaves(streams: Set<UUID>? = nil) throws -> [(position: Int64, leaf: Int64, hash: [UInt8])] {
        if let streams, streams.isEmpty { return [] }
        var out: [(position: Int64, leaf: Int64, hash: [UInt8])] = []
        var scratch = SplitEnvelope()
        try scan(EventQuery(streams: streams), verify: false) { event in
            guard let leaf = event.leaf else { return }
            scratch.set(event)
            out.append((event.position, leaf, scratch.leafHash()))
        }
        return out
    }

    /// The leaf index of each event of `streams` (all if nil) that has one, in position order.
    public func leafIndexes(streams: Set<UUID>? = nil) throws -> (positions: [Int64], leaves: [Int64]) {
        let found = try leaves(streams: streams)
        return (found.map(\.position), found.map(\.leaf))
    }

    /// The leaf hash of every stored event of the recordings `streams` (one tree's), by leaf index.
    public func leafHashes(streams: Set<UUID>) throws -> [Int64: [UInt8]] {
        Dictionary(try leaves(streams: streams).map { ($0.leaf, $0.hash) }, uniquingKeysWith: { _, later in later })
    }

    /// Checks some recordings only, at a cost that depends on them and not on the log:
    /// each event's hash against its predecessor's, gapless versions up to the stream's
    /// recorded version, and the stream's chain against its stored head. What it cannot
    /// see: events of other recordings, and rows that no stream names.
    public func verifyIntegrity(ofStreams streams: Set<UUID>) throws -> IntegrityReport {
        var report = IntegrityReport()
        let rows = try recordingRows(streams)
        for stream in streams.sorted(by: { $0.uuidString < $1.uuidString }) {
            var version: Int64 = 0, lastPosition: Int64 = 0
            var head = ChainHash.genesis, scratch = SplitEnvelope()
            try scan(EventQuery(stream: stream), skippingDamaged: { report.problems.append($0) }) { event in
                report.eventCount += 1
                if event.streamVersion != version + 1 {
                    report.problems.append(.streamVersionGap(position: event.position, stream: stream,
                                                             expected: version + 1, found: event.streamVersion))
                }
                version = event.streamVersion
                lastPosition = event.position
                head = ChainHash.streamHash(previous: head, event: event, scratch: &scratch)
            }
            let expected = rows[stream]?.version ?? 0
            if expected > version {
                report.problems.append(.streamVersionGap(position: lastPosition + 1, stream: stream, expected: expected, found: version))
            } else if let stored = rows[stream]?.head, stored != head {
                report.problems.append(.hashMismatch(position: lastPosition))
            }
        }
        report.problems.sort { ($0.position ?? 0) < ($1.position ?? 0) }
        return report
    }

    /// The cosignature rows that do not verify against a head the log holds, described
    /// (witness, device, size): an edited row, or one of a head that is not in the log.
    public func invalidCosignatures() throws -> [String] {
        var heads: [[UInt8]: [Int64: TreeHead]] = [:]
        var devices: [[UInt8]: String] = [:]
        for tree in try deviceTrees() {
            devices[tree.owner.publicKey] = tree.owner.device
            for head in tree.heads { heads[tree.owner.publicKey, default: [:]][head.size] = head }
        }
        var problems: [String] = []
        for row in try cosignatureRows() {
            let witness = SafeText.line(row.witness ?? "?")
            let device = SafeText.line(devices[row.publicKey] ?? String(Hex.string(row.publicKey).prefix(16)))
            guard let head = heads[row.publicKey]?[row.size] else {
                problems.append("witness \(witness)'s cosignature of device \(device)'s head of \(row.size) events names a head the log does not hold")
                continue
            }
            if row.cosignature?.isValid(for: head) != true {
                problems.append("witness \(witness)'s cosignature of device \(device)'s head of \(row.size) events does not verify")
            }
        }
        return problems
    }

    /// Every head that carries a cosignature, with them, by device; rows that do not
    /// verify are left out here (`verify` reports them: ``invalidCosignatures()``).
    public func cosignedHeads() throws -> [CosignedHead] {
        let trees = try deviceTrees()
        var byHead: [[UInt8]: [Int64: [Cosignature]]] = [:]
        for row in try cosignatureRows() {
            guard let cosignature = row.cosignature else { continue }
            byHead[row.publicKey, default: [:]][row.size, default: []].append(cosignature)
        }
        var out: [CosignedHead] = []
        for tree in trees {
            for head in tree.heads {
                let valid = (byHead[tree.owner.publicKey]?[head.size] ?? []).filter { $0.isValid(for: head) }
                if !valid.isEmpty { out.append(CosignedHead(head: head, cosignatures: valid)) }
            }
        }
        return out
    }
}

extension SignedLogReader {
    /// The signatures of one game's recordings: each device tree they are in is checked
    /// whole (every head against every leaf, as ``verifyProofs(trusting:known:progress:)``
    /// does), so the game's events are proven to be in what their devices signed; the
    /// rest of the log is not read. Recordings in no tree are unsigned.
    public func verifyProofs(ofStreams streams: Set<UUID>, trusting trusted: [String: [UInt8]]? = nil,
                             known: [TreeHead] = [], partial: Bool = false) throws -> ProofReport {
        var report = ProofReport()
        report.trusted = trusted != nil
        let strict = trusted != nil
        var layout = try treeLayout(ofStreams: streams)
        let ids = Set(streams.compactMap { layout.treeOfStream[$0] })
        var checks: [Int64: TreeCheck] = [:]
        for id in ids.sorted() {
            // The device's last head binds its whole history: the newest heads are read
            // until one verifies (the whole-log `verify` checks every one).
            layout.trees[id]!.heads = try latestValidHeads(tree: id, owner: layout.trees[id]!.owner)
            let tree = layout.trees[id]!
            let (check, problems, signer) = EventStore.checkHeads(of: tree, trusted: trusted)
            checks[id] = check
            report.problems += problems
            report.keys.append(signer)
            report.heads += tree.heads.count
        }
        // Two keys for one of these devices: its other trees count too.
        let names = Set(ids.compactMap { layout.trees[$0]?.owner.device })
        report.problems += EventStore.keysPerDevice(layout.trees.values.filter { names.contains($0.owner.device) }, strict: strict)
        // Every known head is used or named: a head of one of the game's devices under
        // another key than the tree the game is in says the log was re-signed; a head of a
        // device the game does not involve is listed as not used.
        let gameKeys = Set(ids.compactMap { layout.trees[$0]?.owner.publicKey })
        for head in known where !gameKeys.contains(head.publicKey) {
            let device = SafeText.line(head.device)
            if names.contains(head.device) {
                report.problems.append(ProofProblem(kind: .forkedHistory, device: head.device, detail:
                    "a known head of device \(device) (\(head.size) events) is signed with key \(Hex.string(head.publicKey).prefix(16))…, and this game's recordings of \(device) are in a tree of another key: the log was re-signed, or the head is another device's"))
            } else {
                report.problems.append(ProofProblem(kind: .unusedHead, device: head.device, detail:
                    "a known head of device \(device) (\(head.size) events) was not used: no recording of this game is in its tree (`gamelog verify` of the whole log uses it)",
                    isError: false))
            }
        }
        report.problems += EventStore.attach(known.filter { gameKeys.contains($0.publicKey) },
                                       to: &checks, trees: layout.trees.filter { ids.contains($0.key) }, trusted: trusted)
        for id in ids.sorted() {
            let mine = streams.filter { layout.treeOfStream[$0] == id }
            // The game's own leaves, their neighbours in their tiles and the stored tiles
            // give the roots at the heads that matter; the whole tree only if they cannot.
            if let problems = try gameVerdicts(check: checks[id]!, tree: id, streams: mine, strict: strict) {
                report.problems += problems
                continue
            }
            for (leaf, hash) in try leafHashes(streams: try self.streams(inTree: id)).sorted(by: { $0.key < $1.key }) {
                checks[id]!.add(leaf: leaf, hash: hash, position: 0)
            }
            let nodes = try storedNodes(trees: [id])[id] ?? [:]
            report.problems += try checks[id]!.verdicts(nodes: nodes, strict: strict, partial: partial,
                                                        readLeaves: { try self.leafHashes(tree: id, range: $0) })
        }
        for stream in streams.sorted(by: { $0.uuidString < $1.uuidString }) {
            if let id = layout.treeOfStream[stream] { report.deviceOfStream[stream] = layout.trees[id]?.owner.device; continue }
            report.problems.append(ProofProblem(kind: .unsignedStream, stream: stream, detail:
                "recording \(short(stream)) is in no device's tree: no device signed it (a log of the older kind, or its signature was removed)",
                isError: strict))
        }
        return report
    }

    /// One game's leaves checked against its device's last valid head (and the known
    /// heads) from the game's events, the other leaves of the tiles they are in, the tail
    /// of the tree and the stored tiles: a few hundred events however long the device's
    /// history. A tile never stands in for a range holding one of the game's leaves, so
    /// a changed game event always changes the root. Nil when the stored tiles do not
    /// reach (a tree imported in part), for the caller to check the tree whole.
    /// Stored proof nodes are looked up one by one as the roots need them: a device's
    /// tree stores thousands, a game's roots read a few dozen.
    func gameVerdicts(check: TreeCheck, tree id: Int64, streams: Set<UUID>, strict: Bool) throws -> [ProofProblem]? {
        guard let latest = check.signed.keys.max() else { return nil }
        let device = check.tree.owner.device, name = SafeText.line(device)
        let sizes = Set([latest] + check.known.map(\.size))
        var problems: [ProofProblem] = []
        // The game's leaves.
        var game: [Int64: [UInt8]] = [:], scratch = SplitEnvelope()
        var unleaved = 0, firstPosition: Int64?
        try scan(EventQuery(streams: streams), verify: false) { event in
            // A leaf no tree of this size can have is outside it (and never reaches the tile arithmetic).
            guard let leaf = event.leaf, leaf >= 0, leaf < MerkleTree.maximumSize else { unleaved += 1; return }
            if firstPosition == nil { firstPosition = event.position }
            if game[leaf] != nil {
                problems.append(ProofProblem(kind: .duplicateLeaf, device: device, position: event.position, detail:
                    "the event at position \(event.position) claims leaf \(leaf) of device \(name)'s tree, which another event holds"))
            }
            scratch.set(event)
            game[leaf] = scratch.leafHash()
        }
        if unleaved > 0 {
            problems.append(ProofProblem(kind: .outsideTree, device: device, detail:
                "\(unleaved) events of the game's recordings are in no leaf of device \(name)'s tree: they were added after signing"))
        }
        // Their neighbours: every other leaf of their tiles, and of each size's last, partial tile.
        let tile = MerkleTree.tileSize
        var ranges = Set(game.keys.map { ($0 / tile) * tile })
        for size in sizes { ranges.insert((size / tile) * tile) }
        var neighbours: [Int64: [UInt8]] = [:]
        for lo in ranges { neighbours.merge(try leafHashes(tree: id, range: lo..<(lo + tile))) { a, _ in a } }
        let held = neighbours.merging(game) { _, mine in mine }
        let heldIndexes = held.keys.sorted(), gameIndexes = game.keys.sorted()
        var looked: [Range<Int64>: [UInt8]?] = [:], lookupFailure: Error?
        func stored(_ range: Range<Int64>) -> [UInt8]? {
            if let known = looked[range] { return known }
            do {
                let found = try storedNode(tree: id, range: range)
                looked[range] = found
                return found
            } catch {
                lookupFailure = lookupFailure ?? error
                return nil
            }
        }
        func root(_ size: Int64) -> [UInt8]? {
            var missing: Int64?
            return MerkleTree.root(size: size, known: { lo, hi in MerkleTree.anyLeaf(gameIndexes, in: lo, hi) ? nil : stored(lo..<hi) },
                                   holds: { MerkleTree.anyLeaf(heldIndexes, in: $0, $1) }, leaf: { held[$0] }, proof: { _, _ in nil }, missing: &missing)
        }
        let signedRootOrNil = root(latest)
        if let lookupFailure { throw lookupFailure }
        guard let signedRoot = signedRootOrNil else { return nil }
        if signedRoot != check.signed[latest] {
            problems.append(ProofProblem(kind: .changedEvent, device: device, position: firstPosition, detail:
                "device \(name)'s tree of \(latest) events, recomputed from this game's events and the log's other leaves, is not the one it signed: an event of the game (or the log around it) was changed"))
        }
        for head in check.known {
            if head.size > check.tree.size {
                problems.append(ProofProblem(kind: .rolledBack, device: device, detail:
                    "device \(name) had signed \(head.size) events (a known head), and the log holds \(check.tree.size) of its tree: it is behind, rolled back or cut"))
            } else if let known = root(head.size), known != head.root {
                problems.append(ProofProblem(kind: .forkedHistory, device: device, detail:
                    "the log's first \(head.size) events of device \(name) are not the ones of its known head: its history was rewritten (a fork)"))
            } else if root(head.size) == nil {
                return nil
            }
        }
        let unsigned = game.keys.filter { $0 >= latest }.count
        if unsigned > 0 {
            problems.append(ProofProblem(kind: .unsignedTail, device: device, detail:
                "\(unsigned) events of this game come after device \(name)'s last valid signed head (\(latest) events): unsigned", isError: strict))
        }
        return problems
    }
}
