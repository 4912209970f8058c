import Foundation

/// One device tree being checked: its leaves arrive in stored order, the roots at its
/// signed (and known) sizes are compared as the leaves reach them.
package struct TreeCheck {
    let tree: DeviceTree
    /// Valid heads under trusted keys: size -> root.
    var signed: [Int64: [UInt8]] = [:] { didSet { roots.targets = Set(signed.keys).union(known.map(\.size)) } }
    /// Heads known from elsewhere.
    var known: [TreeHead] = [] { didSet { roots.targets = Set(signed.keys).union(known.map(\.size)) } }
    fileprivate var roots = TreeRoots(targets: [])

    init(tree: DeviceTree) { self.tree = tree }

    /// The stored tiles of this tree, each compared with its leaves as they complete it.
    mutating func compareTiles(with nodes: [Range<Int64>: [UInt8]]) { roots.tiles = nodes }

    mutating func add(leaf: Int64, hash: [UInt8], position: Int64) { roots.add(leaf: leaf, hash: hash, position: position) }
    mutating func add(leaf: Int64, hash: Hash32, position: Int64) { roots.add(leaf: leaf, hash: hash, position: position) }
    var leafCount: Int64 { roots.leafCount }
    private var positionAt: [Int64: Int64] { roots.positionAt }
    private var duplicates: [(leaf: Int64, position: Int64)] { roots.duplicates }
    private var frontier: MerkleTree.Frontier { roots.frontier }
    private var pending: [Int64: Hash32] { roots.pendingLeaves }
}

/// A tree's roots at chosen sizes, from leaves given in any order: those that come in
/// index order are folded into a frontier at once (the roots at the chosen sizes taken
/// as it passes them), the others held until the gap before them fills.
public struct TreeRoots: Sendable {
    /// The sizes whose roots are wanted.
    public var targets: Set<Int64>
    public private(set) var frontier = MerkleTree.Frontier()
    /// Leaves past a gap.
    public var pending: [Int64: [UInt8]] { pendingLeaves.mapValues(\.bytes) }
    /// ``pending``, held inline.
    package private(set) var pendingLeaves: [Int64: Hash32] = [:]
    private var rootsReached: [Int64: [UInt8]] = [:]
    /// The position (or line) of the leaf that completed each target size.
    public private(set) var positionAt: [Int64: Int64] = [:]
    /// The position (or line) of leaf 0 and of the leaf after each target size: where
    /// the events a head adds to the one before it begin.
    public private(set) var batchStartAt: [Int64: Int64] = [:]
    /// Leaves given twice: (leaf, position).
    public private(set) var duplicates: [(leaf: Int64, position: Int64)] = []
    /// Stored subtree hashes to compare with the leaves as they complete each one.
    public var tiles: [Range<Int64>: [UInt8]] = [:] {
        didSet {
            // Every stored range that is a perfect subtree is compared as the frontier
            // completes it, whatever its width (not only the tiles appends keep).
            smallestTile = tiles.keys.lazy.filter(Self.isPerfectSubtree).map { $0.upperBound - $0.lowerBound }.min() ?? .max
        }
    }
    private var smallestTile: Int64 = .max
    /// Stored subtree hashes that are not their leaves' hash.
    public private(set) var wrongTiles: [Range<Int64>] = []
    /// Stored ranges the frontier completed and compared (right or wrong).
    public private(set) var comparedTiles: Set<Range<Int64>> = []

    public init(targets: Set<Int64>) { self.targets = targets }

    /// `[lo, hi)` is an aligned power-of-two range: a node of every tree that holds it.
    static func isPerfectSubtree(_ range: Range<Int64>) -> Bool {
        let width = range.upperBound - range.lowerBound
        return width > 0 && width & (width - 1) == 0 && range.lowerBound % width == 0
    }

    private mutating func fold(_ hash: Hash32) {
        if tiles.isEmpty {
            frontier.append(hash)
        } else {
            var wrong: [Range<Int64>] = [], compared: [Range<Int64>] = []
            frontier.append(hash, completing: smallestTile) { lo, hi, made in
                if let stored = tiles[lo..<hi] {
                    compared.append(lo..<hi)
                    if Hash32(stored) != made { wrong.append(lo..<hi) }
                }
            }
            wrongTiles += wrong
            comparedTiles.formUnion(compared)
        }
    }

    /// Adds leaf `leaf`'s hash (32 bytes: a SHA-256).
    public mutating func add(leaf: Int64, hash: [UInt8], position: Int64) {
        add(leaf: leaf, hash: Hash32(leafHash: hash), position: position)
    }

    package mutating func add(leaf: Int64, hash: Hash32, position: Int64) {
        if leaf == 0 || targets.contains(leaf) { batchStartAt[leaf] = position }
        if leaf < frontier.size || pendingLeaves[leaf] != nil {
            duplicates.append((leaf, position))
            return
        }
        guard leaf == frontier.size else {
            pendingLeaves[leaf] = hash
            return
        }
        fold(hash)
        if targets.contains(frontier.size) { rootsReached[frontier.size] = frontier.root; positionAt[frontier.size] = position }
        while let next = pendingLeaves.removeValue(forKey: frontier.size) {
            fold(next)
            if targets.contains(frontier.size) { rootsReached[frontier.size] = frontier.root; positionAt[frontier.size] = position }
        }
    }

    /// Leaves held: the frontier's and those past a gap.
    public var leafCount: Int64 { frontier.size + Int64(pendingLeaves.count) }

    /// The leaf indexes below `size` that are not held, as ranges in order: linear in the
    /// leaves held, whatever `size` is.
    public func absent(below size: Int64) -> [Range<Int64>] {
        var out: [Range<Int64>] = []
        var next = frontier.size
        for leaf in pendingLeaves.keys.sorted() {
            guard next < size else { break }
            if leaf > next { out.append(next..<min(leaf, size)) }
            next = max(next, leaf + 1)
        }
        if next < size { out.append(next..<size) }
        return out
    }

    /// How many of the leaves `[lo, hi)` are held; `pendingSorted` is `pending`'s keys in order.
    public func heldCount(_ range: Range<Int64>, pendingSorted: [Int64]) -> Int64 {
        let fromFrontier = max(0, min(range.upperBound, frontier.size) - range.lowerBound)
        return fromFrontier + Int64(MerkleTree.lowerBound(pendingSorted, range.upperBound) - MerkleTree.lowerBound(pendingSorted, range.lowerBound))
    }

    /// The root over the first `size` leaves, from the leaves held and `nodes`; nil with
    /// the first missing leaf.
    /// - Parameter within: `nodes`' ranges indexed (built once for many sizes).
    public func root(at size: Int64, nodes: [Range<Int64>: [UInt8]], within: MerkleTree.RangeIndex? = nil) -> (root: [UInt8]?, missing: Int64?) {
        if let reached = rootsReached[size] { return (reached, nil) }
        let ranges = Dictionary(uniqueKeysWithValues: MerkleTree.ranges(of: frontier).map { ($0.lo..<$0.hi, $0.hash) })
        let held = pendingLeaves.keys.sorted()
        let index = within ?? MerkleTree.RangeIndex(nodes.keys)
        var missing: Int64?
        let root = MerkleTree.root(
            size: size,
            known: { ranges[$0..<$1] },
            holds: { lo, hi in lo < frontier.size || MerkleTree.anyLeaf(held, in: lo, hi) },
            leaf: { pendingLeaves[$0]?.bytes },
            proof: { nodes[$0..<$1] },
            proofsWithin: { index.any(within: $0, $1) },
            missing: &missing)
        return (root, missing)
    }
}

extension TreeCheck {
    /// What the tree's leaves, stored subtree hashes and heads say.
    /// - Parameters:
    ///   - partial: the auditor accepts a log that holds part of the tree (an import of
    ///     `export --game`): absent leaves are listed, not errors.
    ///   - readLeaves: the stored leaf hashes of a range, to check a stored subtree hash
    ///     the scan could not (one over leaves past a gap, or not a perfect subtree).
    ///   - holders: what the log says the absent leaves held (recordings, games), for the finding.
    func verdicts(nodes: [Range<Int64>: [UInt8]], strict: Bool, partial: Bool = false,
                  readLeaves: ((Range<Int64>) throws -> [Int64: [UInt8]])? = nil,
                  holders: () -> String = { "" }) throws -> [ProofProblem] {
        var out: [ProofProblem] = []
        let device = tree.owner.device, name = SafeText.line(device)
        let within = MerkleTree.RangeIndex(nodes.keys)
        var lastGood: Int64 = 0
        var latest: Int64 = 0
        // Every head after a broken one breaks too: the first says where, the count how far.
        var changed: (first: Int64, position: Int64?, from: Int64, count: Int)?
        var absent: (size: Int64, leaf: Int64?, count: Int)?
        for size in signed.keys.sorted() {
            let (root, missing) = roots.root(at: size, nodes: nodes, within: within)
            latest = size
            if let root {
                if root == signed[size] {
                    lastGood = size
                } else if changed == nil {
                    changed = (size, roots.batchStartAt[lastGood] ?? positionAt[size], lastGood + 1, 1)
                } else {
                    changed!.count += 1
                }
            } else if absent == nil {
                absent = (size, missing, 1)
            } else {
                absent!.count += 1
            }
        }
        if let changed {
            let last = positionAt[changed.first]
            let at = changed.position.map { first in " (positions \(first)" + (last.map { " to \($0)" } ?? "") + ")" } ?? ""
            let later = changed.count > 1 ? ", and so do its \(changed.count - 1) later heads" : ""
            out.append(ProofProblem(kind: .changedEvent, device: device, position: changed.position, detail:
                "device \(name)'s events \(changed.from) to \(changed.first) differ from what it signed at \(changed.first) events\(at)\(later): one was changed, added or moved"))
        }
        if let absent {
            let later = absent.count > 1 ? " (\(absent.count) of its heads cannot be checked)" : ""
            out.append(ProofProblem(kind: .missingEvent, device: device, detail:
                "device \(name) signed \(absent.size) events, and its event \(absent.leaf.map { "\($0 + 1)" } ?? "?") (leaf \(absent.leaf ?? -1)) is not in the log\(later): an event, a recording or a game was removed"))
        }
        for head in known {
            let (root, _) = roots.root(at: head.size, nodes: nodes, within: within)
            if head.size > leafCount && root == nil && nodes.isEmpty || (root == nil && head.size > tree.size) {
                out.append(ProofProblem(kind: .rolledBack, device: device, detail:
                    "device \(name) had signed \(head.size) events (a known head), and the log holds \(leafCount) of its tree: it is behind, rolled back or cut"))
            } else if let root, root != head.root {
                out.append(ProofProblem(kind: .forkedHistory, device: device, detail:
                    "the log's first \(head.size) events of device \(name) are not the ones of its known head: its history was rewritten (a fork)"))
            } else if root == nil {
                out.append(ProofProblem(kind: .rolledBack, device: device, detail:
                    "device \(name) had signed \(head.size) events (a known head), and the log lacks some of them"))
            }
        }
        // Every leaf below the largest head used is held or named absent: a subtree hash
        // stands in for leaves in a proof, never silently for a whole log's history.
        // (A known head past what the file knows of the tree is a rollback, said above once.)
        let reach = max(latest, known.map(\.size).filter { $0 <= tree.size }.max() ?? 0)
        let absentRanges = roots.absent(below: min(reach, MerkleTree.maximumSize))
        if !absentRanges.isEmpty {
            let count = absentRanges.reduce(Int64(0)) { $0 + Int64($1.count) }
            let listed = absentRanges.prefix(8).map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound - 1)" }
                .joined(separator: ", ") + (absentRanges.count > 8 ? " and \(absentRanges.count - 8) more ranges" : "")
            let held = holders()
            out.append(ProofProblem(kind: .absentLeaves, device: device, detail:
                "\(count) of the \(reach) leaves device \(name) signed are not in this log (leaves \(listed))"
                + (held.isEmpty ? "" : "; the log says they held \(held)")
                + (partial ? ": this log holds part of the device's history, and what it does not cover is unchecked"
                           : ": a whole log lacks part of the device's signed history (events, recordings or games were removed, whatever subtree hashes stand in for them)"),
                isError: !partial))
        }
        // Every stored subtree hash is checked: against its leaves where the log holds any
        // of them, as a stand-in for absent leaves otherwise (named above).
        var wrong = roots.wrongTiles, unchecked: [Range<Int64>] = [], stray: [Range<Int64>] = []
        var reads = 0
        let pendingSorted = roots.pendingLeaves.keys.sorted()
        for range in nodes.keys.sorted(by: { $0.lowerBound < $1.lowerBound }) where !roots.comparedTiles.contains(range) {
            guard range.lowerBound >= 0, range.upperBound <= MerkleTree.maximumSize, !range.isEmpty else { stray.append(range); continue }
            let held = roots.heldCount(range, pendingSorted: pendingSorted)
            if held == 0 {
                if range.upperBound > reach { stray.append(range) }
                continue
            }
            // Honest logs need this only for merged partial imports: a few ranges. A file
            // that asks for more is not read further (each read is bounded by the range's leaves).
            guard let readLeaves, reads < 64 else { unchecked.append(range); continue }
            reads += 1
            let leaves = try readLeaves(range)
            let heldIndexes = leaves.keys.sorted()
            var missing: Int64?
            let made = MerkleTree.subtree(lo: range.lowerBound, hi: range.upperBound, known: { _, _ in nil },
                                          holds: { MerkleTree.anyLeaf(heldIndexes, in: $0, $1) }, leaf: { leaves[$0] },
                                          proof: { lo, hi in lo..<hi == range ? nil : nodes[lo..<hi] },
                                          proofsWithin: { within.any(within: $0, $1) }, missing: &missing)
            if let made { if made != nodes[range] { wrong.append(range) } } else { unchecked.append(range) }
        }
        for (list, what) in [(wrong, "are not the hash of their leaves: derived data was changed"),
                             (unchecked, "cover leaves this log holds in part and cannot be checked against them"),
                             (stray, "are over leaves no head of the device reaches, or outside any tree")] {
            guard let first = list.min(by: { $0.lowerBound < $1.lowerBound }) else { continue }
            out.append(ProofProblem(kind: .wrongStreamHead, device: device, detail:
                "\(list.count) stored subtree hashes of device \(name)'s tree (the first over leaves \(first.lowerBound) to \(first.upperBound - 1)) \(what)"))
        }
        for duplicate in duplicates.prefix(10) {
            out.append(ProofProblem(kind: .duplicateLeaf, device: device, position: duplicate.position, detail:
                "the event at position \(duplicate.position) claims leaf \(duplicate.leaf) of device \(name)'s tree, which another event holds"))
        }
        let unsigned = max(0, frontier.size - latest) + Int64(pending.keys.filter { $0 >= latest }.count)
        if unsigned > 0 {
            out.append(ProofProblem(kind: .unsignedTail, device: device, detail: latest == 0
                ? "device \(name)'s \(unsigned) events carry no valid signature of a trusted key"
                : "\(unsigned) events of device \(name) come after its last valid signed head (\(latest) events): unsigned",
                isError: strict))
        }
        return out
    }
}

/// Checkpoints of the older kind (schema 4 to 6): each signs heads of stream chains.
struct LegacyCheckpoints {
    let checkpoints: [Checkpoint]
    let trusted: [String: [UInt8]]?
    /// Recordings in a device tree, which the tree's heads cover instead.
    let skip: Set<UUID>
    private var required: [UUID: [Int64: (hash: [UInt8], device: String)]] = [:]
    private var lastSignedVersion: [UUID: Int64] = [:]
    private var deviceOfStream: [UUID: String] = [:]
    private(set) var signers: [(device: String, publicKey: [UInt8], count: Int)] = []

    init(checkpoints: [Checkpoint], trusted: [String: [UInt8]]?, skip: Set<UUID>) {
        self.checkpoints = checkpoints
        self.trusted = trusted
        self.skip = skip
    }

    /// Recordings some valid checkpoint covers.
    var covered: Set<UUID> { Set(lastSignedVersion.keys) }

    mutating func checkSignatures() -> [ProofProblem] {
        var problems: [ProofProblem] = []
        for (key, chain) in Dictionary(grouping: checkpoints, by: \.publicKey).sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let device = chain[0].device, name = SafeText.line(device)
            signers.append((device, key, chain.count))
            if let trusted, trusted[device] != key {
                problems.append(ProofProblem(kind: .untrustedKey, device: device, detail: trusted[device] == nil
                    ? "\(chain.count) checkpoints are signed as device \(name), which the trusted keys do not name"
                    : "\(chain.count) checkpoints of device \(name) are signed with key \(Hex.string(key).prefix(16))…, not the trusted one"))
                continue
            }
            var previous = ChainHash.genesis
            for (index, checkpoint) in chain.enumerated() {
                let expectedSequence = Int64(index + 1)
                if checkpoint.sequence != expectedSequence || checkpoint.previous != previous || checkpoint.device != device {
                    problems.append(ProofProblem(kind: .brokenCheckpointChain, device: device, detail:
                        "device \(name)'s checkpoint \(checkpoint.sequence) does not follow checkpoint \(expectedSequence - 1): one was removed or replaced"))
                }
                previous = checkpoint.digest
                guard PublicKeyCheck.isAcceptable(key), checkpoint.isSigned(by: key) else {
                    problems.append(ProofProblem(kind: .badSignature, device: device, detail:
                        "device \(name)'s checkpoint \(checkpoint.sequence) does not verify under its key: it was changed after signing"))
                    continue
                }
                for head in checkpoint.heads where !skip.contains(head.stream) {
                    required[head.stream, default: [:]][head.version] = (head.hash, device)
                    lastSignedVersion[head.stream] = max(lastSignedVersion[head.stream] ?? 0, head.version)
                    deviceOfStream[head.stream] = device
                }
            }
        }
        return problems
    }

    func lastSigned(_ stream: UUID) -> Int64 { lastSignedVersion[stream] ?? 0 }
    func device(of stream: UUID) -> String? { deviceOfStream[stream] }

    func check(_ event: StoredEvent, hash: [UInt8], into problems: inout [ProofProblem]) {
        guard let signed = required[event.stream]?[event.streamVersion], signed.hash != hash else { return }
        problems.append(ProofProblem(kind: .changedEvent, device: signed.device, stream: event.stream, position: event.position, detail:
            "event at position \(event.position) (stream \(short(event.stream)) version \(event.streamVersion), or one before it in its stream) differs from what device \(SafeText.line(signed.device)) signed"))
    }

    func cut(_ stream: UUID, holding version: Int64) -> ProofProblem? {
        guard let signed = required[stream], let highest = signed.keys.max(), highest > version else { return nil }
        return ProofProblem(kind: .cutBelowCheckpoint, device: signed[highest]?.device, stream: stream, detail:
            "stream \(short(stream)) holds \(version) events, but device \(SafeText.line(signed[highest]!.device)) signed \(highest): its tail was cut")
    }
}

func short(_ id: UUID) -> String { String(id.uuidString.prefix(8)).lowercased() }
