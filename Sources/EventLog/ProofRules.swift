import Foundation

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

/// The rules a device tree's signed heads are checked by, whichever store holds them.
package enum ProofRules {
    /// A tree's heads checked: signatures, the key's trust, test keys. The check that
    /// comes back holds the roots of the valid heads under trusted keys.
    package static func checkHeads(of tree: DeviceTree, trusted: [String: [UInt8]]?) -> (TreeCheck, [ProofProblem], Signer) {
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
    package static func keysPerDevice(_ trees: some Sequence<DeviceTree>, strict: Bool) -> [ProofProblem] {
        var keysOfDevice: [String: Set<[UInt8]>] = [:]
        for tree in trees { keysOfDevice[tree.owner.device, default: []].insert(tree.owner.publicKey) }
        return keysOfDevice.filter { $0.value.count > 1 }.sorted { $0.key < $1.key }.map { device, keys in
            ProofProblem(kind: .twoKeysForDevice, device: device, detail:
                "device \(SafeText.line(device)) signs with \(keys.count) different keys: only one can be the phone's own", isError: strict)
        }
    }

    /// Heads known from elsewhere, handed to the checks of their trees.
    package static func attach(_ known: [TreeHead], to checks: inout [Int64: TreeCheck], trees: [Int64: DeviceTree],
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
}
