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

/// Where an event is, as a pass through the log by position finds it
/// (``SignedLogReader/passByPosition(from:_:)``).
public struct PassedEvent: Sendable {
    public var position: Int64
    public var stream: UUID
    public var streamVersion: Int64
    /// The event whole, when it is its recording's first (`recording.started` names the conversation).
    public var first: StoredEvent?

    public init(position: Int64, stream: UUID, streamVersion: Int64, first: StoredEvent?) {
        (self.position, self.stream, self.streamVersion, self.first) = (position, stream, streamVersion, first)
    }
}

/// A reader of a log that also reads what its signatures are checked against: the
/// recordings' rows, the devices' trees and heads, stored proof nodes and the witnesses'
/// cosignatures. An audit (`verify`, `verify GAME`, the viewer's) asks only this, so it
/// runs the same checks, in the same code, on a SQLite file and on a shared store read as
/// it is in PostgreSQL: the store reads, the checks in the extensions below
/// (``chainIntegrity(progress:)``, ``verifyIntegrity(ofStreams:)``,
/// ``verifyProofs(trusting:known:partial:progress:)``,
/// ``verifyProofs(ofStreams:trusting:known:partial:)``, ``invalidCosignatures()``,
/// ``cosignedHeads()``) judge. Where a store keeps rows of its own to check (a SQLite
/// file's block index, its pages), its requirements check them too.
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
    /// Reads the log from `position` to its end by position (never through the
    /// per-recording index), handing `body` where each event is, and each recording's
    /// first event whole; the events that could not be read, and any index rows the store
    /// keeps that disagree with what it read, come back. One game's audit uses it to know
    /// that the index its reads go through hid none of the game's events or recordings.
    func passByPosition(from position: Int64, _ body: (PassedEvent) throws -> Void) throws -> [EventStoreError]

    // The whole log's checks read these too.

    /// Every recording's row.
    func allRecordingRows() throws -> [UUID: RecordingRow]
    /// Every signature of the older kind (schemas 4 to 6), by key and sequence.
    func checkpoints() throws -> [Checkpoint]
    /// Every catalog entry, in order of position.
    func allCatalogEntries() throws -> [CatalogEntry]
    /// Each recording's first event, with the position of its last.
    func scanStreamHeads(_ body: (StreamHead) throws -> Void) throws
    /// Checks the whole log: the hash chain, gapless positions, gapless versions in every
    /// stream, that every payload decodes, that no stream's tail was cut off, and any
    /// index rows the store keeps. It does not stop at the first problem.
    /// - Parameter progress: called now and then with (events read, total).
    func verifyIntegrity(progress: ((Int64, Int64) -> Void)?) throws -> IntegrityReport
    /// What the store's own check of its files finds (SQLite's `integrity_check`); empty
    /// when sound, or when the store's files are its server's to check.
    func structuralProblems() throws -> [String]
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

    /// The trees, which recording is in which, and the stored proof nodes.
    /// - Parameter heads: false leaves every tree's `heads` empty (their rows are not read).
    public func treeLayout(heads: Bool = true) throws -> TreeLayout {
        let trees = try treeRows(heads: heads)
        var treeOfStream: [UUID: Int64] = [:]
        for (stream, row) in try allRecordingRows() {
            if let tree = row.tree, trees[tree] != nil { treeOfStream[stream] = tree }
        }
        return TreeLayout(trees: trees, treeOfStream: treeOfStream, nodes: try storedNodes(trees: nil))
    }

    /// Every key that signed this log (device trees, and checkpoints of the older kind),
    /// with what it signed, by device name and then key. The keys prove only that the log
    /// is consistent with itself: trust comes from the device, not from the log.
    public func signers() throws -> [Signer] {
        var signers: [[UInt8]: Signer] = [:]
        for tree in try deviceTrees() {
            signers[tree.owner.publicKey] = Signer(tree)
        }
        for checkpoint in try checkpoints() {
            signers[checkpoint.publicKey, default: Signer(device: checkpoint.device, publicKey: checkpoint.publicKey, checkpoints: 0,
                                                          heads: 0, treeSize: 0, isTestKey: false)].checkpoints += 1
        }
        return signers.values.sorted { ($0.device, Hex.string($0.publicKey)) < ($1.device, Hex.string($1.publicKey)) }
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
            out.append((event.position, leaf, scratch.leafHash().bytes))
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
        for stream in streams.sorted(by: { $0.precedes($1) }) {
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
            let (check, problems, signer) = ProofRules.checkHeads(of: tree, trusted: trusted)
            checks[id] = check
            report.problems += problems
            report.keys.append(signer)
            report.heads += tree.heads.count
        }
        // Two keys for one of these devices: its other trees count too.
        let names = Set(ids.compactMap { layout.trees[$0]?.owner.device })
        report.problems += ProofRules.keysPerDevice(layout.trees.values.filter { names.contains($0.owner.device) }, strict: strict)
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
        report.problems += ProofRules.attach(known.filter { gameKeys.contains($0.publicKey) },
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
        for stream in streams.sorted(by: { $0.precedes($1) }) {
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
            game[leaf] = scratch.leafHash().bytes
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
        // Only a range a log stores is asked for: a perfect subtree of a tile or more (what
        // appends keep). Asked for every range without a game leaf, a tile of neighbours
        // cost a lookup for each of its 511 smaller ranges, which no log holds: most of a
        // conversation's signature check (a statement each in a shared store).
        func storable(_ lo: Int64, _ hi: Int64) -> Bool {
            hi - lo >= MerkleTree.tileSize && TreeRoots.isPerfectSubtree(lo..<hi)
        }
        func root(_ size: Int64) -> [UInt8]? {
            var missing: Int64?
            return MerkleTree.root(size: size, known: { lo, hi in
                                       MerkleTree.anyLeaf(gameIndexes, in: lo, hi) || !storable(lo, hi) ? nil : stored(lo..<hi)
                                   },
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

extension SignedLogReader {
    /// The whole log's integrity by the rules every store shares (``ChainCheck``): the
    /// chain, each position present, each recording's versions gapless and up to its row's.
    /// A store whose rows hold nothing else to compare answers ``verifyIntegrity(progress:)`` with it.
    public func chainIntegrity(progress: ((Int64, Int64) -> Void)? = nil) throws -> IntegrityReport {
        var report = IntegrityReport()
        let total = try lastPosition()
        var lastVersion: [UUID: Int64] = [:]
        var lastPosition: Int64 = 0
        var everything = EventQuery(positions: 1...max(total, 1))
        // A changed event still counts in its recording's versions, as a SQLite file's check counts it.
        everything.handsOverMismatched = true
        try scan(everything, verify: true, skippingDamaged: { report.problems.append($0) }) { event in
            report.eventCount += 1
            if report.eventCount % 10_000 == 0 { progress?(report.eventCount, total) }
            let expected = (lastVersion[event.stream] ?? 0) + 1
            if event.streamVersion != expected {
                report.problems.append(.streamVersionGap(position: event.position, stream: event.stream, expected: expected, found: event.streamVersion))
            }
            lastVersion[event.stream] = event.streamVersion
            lastPosition = event.position
            report.headHash = event.hash
        }
        // A cut-off tail leaves the chain intact, but recordings remember their versions.
        for (stream, row) in try allRecordingRows().sorted(by: { $0.key.precedes($1.key) }) {
            let found = lastVersion[stream] ?? 0
            if row.version > found {
                report.problems.append(.streamVersionGap(position: lastPosition + 1, stream: stream, expected: row.version, found: found))
            }
        }
        report.problems.sort { ($0.position ?? 0) < ($1.position ?? 0) }
        progress?(report.eventCount, total)
        return report
    }
    /// Checks the devices' signatures.
    ///
    /// Every event of a recording in a device's tree must be the leaf it claims, every
    /// signed head must verify and equal the root recomputed from the leaves (and the
    /// proof nodes of a partial import), and every leaf below the device's last head
    /// must be present: a changed, removed or added event, recording or game changes a
    /// root. Events after a device's last head, recordings in no tree, test keys and two
    /// keys for one device are warnings, or errors when `trusted` names the keys.
    /// Checkpoints of the older kind (schema 4 to 6) are checked as before and reported
    /// as weaker.
    /// - Parameters:
    ///   - trusted: device name -> public key the auditor trusts; nil takes the keys the
    ///     log itself holds (which a forger could replace).
    ///   - known: heads known from elsewhere (the other phone, a collector, an earlier
    ///     check): the log must hold at least their trees, with the same roots.
    ///   - partial: the auditor accepts a log holding part of a device's history (an
    ///     import of `export --game`): leaves below a head that the log holds only as
    ///     subtree hashes are listed as warnings instead of errors.
    public func verifyProofs(trusting trusted: [String: [UInt8]]? = nil, known: [TreeHead] = [], partial: Bool = false,
                             progress: ((Int64) -> Void)? = nil) throws -> ProofReport {
        var report = ProofReport()
        report.trusted = trusted != nil
        let strict = trusted != nil
        let trees = try treeRows(heads: true)
        let legacy = try checkpoints()
        report.checkpoints = legacy.count

        // Heads: signatures, keys, trust.
        var checks: [Int64: TreeCheck] = [:]
        for (id, tree) in trees {
            let (check, problems, signer) = ProofRules.checkHeads(of: tree, trusted: trusted)
            checks[id] = check
            report.problems += problems
            report.keys.append(signer)
            report.heads += tree.heads.count
        }
        report.problems += ProofRules.keysPerDevice(trees.values, strict: strict)
        report.problems += ProofRules.attach(known, to: &checks, trees: trees, trusted: trusted)
        // A trusted device the log holds nothing of: a log of the other devices, or one that
        // lost a device whole; only a known head of it (`known`) can tell which.
        if let trusted {
            let present = Set(trees.values.map(\.owner.device))
            for device in trusted.keys.sorted() where !present.contains(device) && !legacy.contains(where: { $0.device == device }) {
                report.problems.append(ProofProblem(kind: .unsignedStream, device: device, detail:
                    "the log holds nothing signed by trusted device \(SafeText.line(device)): a log of the other devices, or one from which all of its history was removed (a head of it known from elsewhere, --heads, tells)",
                    isError: false))
            }
        }

        // Recordings: their trees, and the older checkpoints of those in none.
        // Each recording's stored head, tree and version (what absent leaves held is named by it).
        let streamRows = try allRecordingRows().map { ($0.key, $0.value.head, $0.value.tree, $0.value.version) }
        let nodes = try storedNodes(trees: nil)
        for id in checks.keys { checks[id]!.compareTiles(with: nodes[id] ?? [:]) }
        var treeOfStream: [UUID: Int64] = [:]
        for (stream, _, tree, _) in streamRows {
            if let tree, let owner = trees[tree]?.owner {
                treeOfStream[stream] = tree
                report.deviceOfStream[stream] = owner.device
            }
        }
        var legacyChecker = LegacyCheckpoints(checkpoints: legacy, trusted: trusted, skip: Set(treeOfStream.keys))
        report.problems += legacyChecker.checkSignatures()
        for signer in legacyChecker.signers {
            report.keys.append(Signer(device: signer.device, publicKey: signer.publicKey, checkpoints: signer.count, heads: 0, treeSize: 0,
                                      isTestKey: false))
        }

        var running: [UUID: (version: Int64, hash: [UInt8], firstUnsigned: Int64?)] = [:]
        var outside: [UUID: (count: Int, first: Int64)] = [:]
        var chains = StreamChains()
        var scanned: Int64 = 0
        var scratch = SplitEnvelope()
        try scan(verify: false) { event in
            var state = running[event.stream] ?? (0, ChainHash.genesis, nil)
            state.version = event.streamVersion
            state.hash = chains.advance(event)
            let leaf = event.leaf
            if let tree = treeOfStream[event.stream] {
                if let leaf, leaf >= 0, leaf < MerkleTree.maximumSize {
                    scratch.set(event)
                    checks[tree]!.add(leaf: leaf, hash: scratch.leafHash(), position: event.position)
                } else {
                    outside[event.stream, default: (0, event.position)].count += 1
                }
            } else {
                legacyChecker.check(event, hash: state.hash, into: &report.problems)
                if event.streamVersion > legacyChecker.lastSigned(event.stream), state.firstUnsigned == nil { state.firstUnsigned = event.position }
            }
            running[event.stream] = state
            scanned += 1
            if scanned % 16_384 == 0 { progress?(scanned) }
        }

        for (id, check) in checks.sorted(by: { $0.key < $1.key }) {
            // What the log says absent leaves held: its recordings in the tree that hold fewer
            // events than their stored version, and the games the catalog names for them.
            let short = streamRows.filter { $0.2 == id && $0.3 > (running[$0.0]?.version ?? 0) }.map(\.0)
            report.problems += try check.verdicts(nodes: nodes[id] ?? [:], strict: strict, partial: partial,
                                                  readLeaves: { try self.leafHashes(tree: id, range: $0) },
                                                  holders: { self.describe(recordings: short) })
        }
        for (stream, found) in outside {
            report.problems.append(ProofProblem(kind: .outsideTree, device: report.deviceOfStream[stream], stream: stream, position: found.first,
                detail: "\(found.count) events of recording \(short(stream)) from position \(found.first) are in no leaf of device \(SafeText.line(report.deviceOfStream[stream] ?? "?"))'s tree: they were added after signing"))
        }
        for (stream, head, _, _) in streamRows {
            let state = running[stream]
            if let head, let state, head != state.hash {
                report.problems.append(ProofProblem(kind: .wrongStreamHead, device: report.deviceOfStream[stream], stream: stream, detail:
                    "stream \(short(stream))'s stored head is not the hash of its events"))
            }
            guard treeOfStream[stream] == nil else { continue }
            if let problem = legacyChecker.cut(stream, holding: state?.version ?? 0) { report.problems.append(problem) }
            guard let state, let first = state.firstUnsigned else { continue }
            if let device = legacyChecker.device(of: stream) {
                report.problems.append(ProofProblem(kind: .unsignedTail, device: device, stream: stream, position: first, detail:
                    "\(state.version - legacyChecker.lastSigned(stream)) events of stream \(short(stream)) from position \(first) come after device \(SafeText.line(device))'s last checkpoint: unsigned",
                    isError: strict))
            } else {
                report.problems.append(ProofProblem(kind: .unsignedStream, stream: stream, position: first, detail:
                    "recording \(short(stream)) (\(state.version) events from position \(first)) is signed by no device", isError: strict))
            }
        }
        if !legacyChecker.covered.isEmpty {
            report.problems.append(ProofProblem(kind: .olderSignatures, detail:
                "\(legacyChecker.covered.count) recordings are signed only with checkpoints of the older kind (gamelog before schema 7), which sign each recording on its own: a whole recording or game removed together with its entries in the checkpoints is not detected. What gamelog records now signs each device's whole history (a Merkle tree), which catches that",
                isError: false))
        }
        // A changed tree names the event that completed the head it breaks: its recording's game is the likely one.
        for index in report.problems.indices where report.problems[index].stream == nil {
            if let position = report.problems[index].position, let event = try event(at: position, verify: false) {
                report.problems[index].stream = event.stream
            }
        }
        report.keys.sort { ($0.device, Hex.string($0.publicKey)) < ($1.device, Hex.string($1.publicKey)) }
        report.problems.sort { ($0.position ?? .max, $0.kind.rawValue, $0.detail) < ($1.position ?? .max, $1.kind.rawValue, $1.detail) }
        return report
    }

    /// Recordings named for a finding, with the games the catalog gives them.
    func describe(recordings: [UUID]) -> String {
        guard !recordings.isEmpty else { return "" }
        // The catalog's names of the first recordings (the sentence shows 16 at most).
        var named: Set<String> = []
        for recording in recordings.prefix(64) {
            for entry in (try? catalogEntries(ofStream: recording)) ?? [] { named.insert(short(entry.tag.id)) }
        }
        let games = Array(named)
        let names = recordings.prefix(8).map(short).sorted().joined(separator: ", ") + (recordings.count > 8 ? " and \(recordings.count - 8) more" : "")
        return "recording\(recordings.count == 1 ? "" : "s") \(names)" + (games.isEmpty ? "" : " (the catalog's conversations and games \(games.sorted().prefix(16).joined(separator: ", ")))")
    }

}
