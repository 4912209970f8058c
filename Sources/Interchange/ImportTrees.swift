import EventStore
import Foundation

/// The device trees an import carries: tree lines (which recordings are whose leaves,
/// and proof nodes), signed heads, and each event's leaf. Checked before anything is
/// stored: every head must verify under its key, and every head's root must come out
/// of the events' leaves (and the proof nodes), so a changed, added or removed event
/// of a signed device is refused.
public struct ImportTrees: Sendable {
    struct Tree {
        var owner: TreeOwner
        var streams: Set<UUID> = []
        var nodes: [Range<Int64>: [UInt8]] = [:]
        var leaves: [Int64: (hash: Hash32, file: String, line: Int)] = [:]
        var file: String
        var line: Int
    }

    private(set) var trees: [[UInt8]: Tree] = [:]
    private(set) var heads: [(head: TreeHead, file: String, line: Int)] = []
    /// The tree each recording belongs to.
    private(set) var owners: [UUID: TreeOwner] = [:]

    public init() {}

    /// The proof nodes to store.
    var nodes: [(owner: TreeOwner, lo: Int64, hi: Int64, hash: [UInt8])] {
        trees.values.flatMap { tree in tree.nodes.map { (tree.owner, $0.key.lowerBound, $0.key.upperBound, $0.value) } }
    }

    private static func decode<Line: Decodable>(_ type: Line.Type, _ line: UnsafeRawBufferPointer, kind: String,
                                                file: String, line number: Int) throws -> Line {
        do {
            return try JSONDecoder().decode(Line.self, from: Data(line))
        } catch {
            throw InterchangeError.malformedLine(file: file, line: number, detail: "a \(kind) line lacks a field or has one of the wrong kind")
        }
    }

    /// Reads a tree or head line; false for any other line.
    mutating func read(_ line: UnsafeRawBufferPointer, file: String, line number: Int) throws -> Bool {
        // Asked of every line of an upload: compared in place (an array of the prefix was
        // an allocation a line).
        if Interchange.starts(line, with: #"{"head":"#) {
            let exported = try Self.decode(ExportedHead.Line.self, line, kind: "head", file: file, line: number).head
            let head: TreeHead
            do { head = try exported.head() } catch {
                throw InterchangeError.badHead(file: file, line: number, detail: "its signed head cannot be read (\(error))")
            }
            guard head.isValid else {
                throw InterchangeError.badHead(file: file, line: number, detail: PublicKeyCheck.isAcceptable(head.publicKey)
                    ? "device \(SafeText.line(head.device))'s head at \(head.size) events does not verify under its key"
                    : "device \(SafeText.line(head.device))'s key is a small-order or malformed Ed25519 point, under which forged signatures verify")
            }
            heads.append((head, file, number))
            return true
        }
        if Interchange.starts(line, with: #"{"tree":"#) {
            let exported = try Self.decode(ExportedTree.Line.self, line, kind: "tree", file: file, line: number).tree
            guard let key = Hex.bytes(exported.publicKey, count: 32), PublicKeyCheck.isAcceptable(key) else {
                throw InterchangeError.badHead(file: file, line: number, detail: "its public key is not a usable Ed25519 key")
            }
            do { try DeviceName.check(exported.device) } catch {
                throw InterchangeError.badHead(file: file, line: number, detail: String(describing: error))
            }
            let owner = TreeOwner(device: exported.device, publicKey: key)
            var tree = trees[key] ?? Tree(owner: owner, file: file, line: number)
            guard tree.owner == owner else {
                throw InterchangeError.badHead(file: file, line: number, detail: "one key signs as two devices")
            }
            for stream in exported.streams {
                if let other = owners[stream], other != owner {
                    throw InterchangeError.badHead(file: file, line: number, detail:
                        "recording \(stream.uuidString.prefix(8).lowercased()) is claimed by two devices' trees")
                }
                owners[stream] = owner
                tree.streams.insert(stream)
            }
            for node in exported.nodes {
                guard node.lo >= 0, node.hi > node.lo, let hash = Hex.bytes(node.hash, count: 32) else {
                    throw InterchangeError.malformedLine(file: file, line: number, detail: "a proof node is not lo < hi with a 32-byte hash")
                }
                tree.nodes[node.lo..<node.hi] = hash
            }
            trees[key] = tree
            return true
        }
        return false
    }

    /// Records an event's leaf. Every event of a recording in a tree must have one,
    /// and no other event may.
    /// Returns the leaf's hash (nil: its recording is in no tree).
    @discardableResult
    mutating func add(_ fields: ExportLine.Fields, leafData: [UInt8], file: String, line: Int) throws -> Hash32? {
        try add(fields, leafHash: { Hash32(MerkleTree.leafHash(leafData))! }, file: file, line: line)
    }

    /// Whether ``add(_:leafHash:file:line:)`` will ask for the event's leaf hash: its
    /// recording is in a tree and it claims a leaf.
    func isLeaf(_ fields: ExportLine.Fields) -> Bool {
        owners[fields.stream] != nil && fields.leaf != nil
    }

    /// ``add(_:leafData:file:line:)`` with the leaf's hash worked out elsewhere (asked
    /// for only when ``isLeaf(_:)``).
    @discardableResult
    mutating func add(_ fields: ExportLine.Fields, leafHash: () -> Hash32, file: String, line: Int) throws -> Hash32? {
        guard let owner = owners[fields.stream] else {
            if fields.leaf != nil {
                throw InterchangeError.badHead(file: file, line: line, detail: "the event claims a leaf, and no tree line names its recording")
            }
            return nil
        }
        guard let leaf = fields.leaf else {
            throw InterchangeError.badHead(file: file, line: line, detail:
                "the event is not a leaf of device \(SafeText.line(owner.device))'s tree, which holds its recording")
        }
        let hash = leafHash()
        // The tree found once: a key of bytes is hashed a byte at a time, and this runs for
        // every event of every upload a collector checks.
        let tree = trees.index(forKey: owner.publicKey)!
        if let other = trees.values[tree].leaves[leaf] {
            guard other.hash == hash else {
                throw InterchangeError.badHead(file: file, line: line, detail:
                    "leaf \(leaf) of device \(SafeText.line(owner.device))'s tree is also another event (\(other.file):\(other.line))")
            }
            return hash
        }
        trees.values[tree].leaves[leaf] = (hash, file, line)
        return hash
    }

    /// Every head's root must come out of its tree's leaves and proof nodes.
    func checkRoots() throws {
        for (head, file, line) in heads {
            guard let tree = trees[head.publicKey] else {
                throw InterchangeError.badHead(file: file, line: line, detail:
                    "no tree line names device \(SafeText.line(head.device))'s recordings")
            }
            guard tree.owner.device == head.device else {
                throw InterchangeError.badHead(file: file, line: line, detail: "the head's device is not its tree's")
            }
        }
        for tree in trees.values {
            let mine = heads.filter { $0.head.publicKey == tree.owner.publicKey }
            var roots = TreeRoots(targets: Set(mine.map(\.head.size)))
            for (leaf, entry) in tree.leaves.sorted(by: { $0.key < $1.key }) { roots.add(leaf: leaf, hash: entry.hash, position: Int64(entry.line)) }
            for (head, file, line) in mine {
                let (root, missing) = roots.root(at: head.size, nodes: tree.nodes)
                guard let root else {
                    throw InterchangeError.badHead(file: file, line: line, detail:
                        "device \(SafeText.line(head.device)) signed \(head.size) events, and the files lack its event \((missing ?? 0) + 1) (leaf \(missing ?? 0)) with no proof for it: events were removed")
                }
                guard root == head.root else {
                    throw InterchangeError.editedLine(file: file, line: line, detail:
                        "device \(SafeText.line(head.device))'s events do not give the tree it signed at \(head.size) events: an event was changed, added or removed")
                }
            }
        }
    }

    /// The trees of `others` added to these: nil if two of them are one device's tree,
    /// or claim one recording (each must be checked alone then).
    func adding(_ others: ImportTrees) -> ImportTrees? {
        guard Set(trees.keys).isDisjoint(with: others.trees.keys), Set(owners.keys).isDisjoint(with: others.owners.keys) else { return nil }
        var merged = self
        merged.trees.merge(others.trees) { mine, _ in mine }
        merged.heads += others.heads
        merged.owners.merge(others.owners) { mine, _ in mine }
        return merged
    }

    /// Events that no head in the files covers.
    func unsignedEvents(_ plan: ImportPlan) -> Int {
        var count = 0
        var latest: [[UInt8]: Int64] = [:]
        for (head, _, _) in heads { latest[head.publicKey] = max(latest[head.publicKey] ?? 0, head.size) }
        for tree in trees.values {
            // Looked up once a tree, not once a leaf (a writer counts these under the store's lock).
            let signed = latest[tree.owner.publicKey] ?? 0
            count += tree.leaves.keys.lazy.filter { $0 >= signed }.count
        }
        let signedStreams = Set(owners.keys)
        count += plan.keys.filter { !signedStreams.contains($0.stream) }.count
        return count
    }
}
