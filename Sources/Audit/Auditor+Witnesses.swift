import EventStore
import Foundation

/// What an auditor asks of the witnesses: whose keys to check cosignatures against and
/// how many of them must have cosigned each device's newest head (C2SP tlog-witness's
/// "k of n").
public struct WitnessPolicy: Hashable, Sendable {
    /// The witnesses' keys, from a source other than the log under audit.
    public var keys: [WitnessKey]
    /// How many of ``keys`` must have cosigned each device's newest head (0: none; the
    /// cosignatures present are still checked).
    public var required: Int

    public init(keys: [WitnessKey], required: Int = 0) {
        self.keys = keys
        self.required = required
    }
}

/// Which head sizes each witness was seen to cosign: witness name -> device -> the
/// largest size it cosigned (valid cosignatures only).
public typealias WitnessSightings = [String: [String: Int64]]

extension Auditor {
    /// Every cosignature the log holds or the auditor brought (``cosignedElsewhere``)
    /// checked: one that does not verify, or that names a policy witness but is signed by
    /// another key, is an error; and, under a policy, each device's newest valid head
    /// must carry valid cosignatures of ``WitnessPolicy/required`` of its witnesses.
    /// - Parameter trees: the devices whose newest heads the policy applies to (one
    ///   game's, or the whole log's).
    func witnessFindings(_ store: any SignedLogReader, trees: [DeviceTree]) throws -> (findings: [Finding], sightings: WitnessSightings) {
        var findings = try store.invalidCosignatures().map {
            Finding(.error, .signature, position: nil, rule: "cosignature", expected: "a witness's cosignature of a head the log holds", found: $0)
        }
        var all: [(head: TreeHead, cosignature: Cosignature)] = []
        for cosigned in try store.cosignedHeads() { all += cosigned.cosignatures.map { (cosigned.head, $0) } }
        for cosigned in cosignedElsewhere {
            for cosignature in cosigned.cosignatures {
                guard cosignature.isValid(for: cosigned.head) else {
                    findings.append(Finding(.error, .signature, position: nil, device: cosigned.head.device, rule: "cosignature",
                                            expected: "a witness's cosignature of the head it names",
                                            found: "witness \(SafeText.line(cosignature.witness))'s cosignature of device \(SafeText.line(cosigned.head.device))'s head of \(cosigned.head.size) events (a heads file) does not verify"))
                    continue
                }
                all.append((cosigned.head, cosignature))
            }
        }
        let policy = witnessPolicy
        let trusted = Dictionary((policy?.keys ?? []).map { ($0.name, $0.publicKey) }, uniquingKeysWith: { first, _ in first })
        var sightings: WitnessSightings = [:]
        // Valid cosignatures by head (key, size, root) and witness, under the policy's keys.
        var cosigners: [[UInt8]: [Int64: [[UInt8]: Set<String>]]] = [:]
        for (head, cosignature) in all {
            if let key = trusted[cosignature.witness], key != cosignature.witnessKey {
                findings.append(Finding(.error, .signature, position: nil, device: head.device, rule: "cosignature",
                                        expected: "witness \(SafeText.line(cosignature.witness))'s cosignatures made with its key \(Hex.string(key).prefix(16))…",
                                        found: "a cosignature of device \(SafeText.line(head.device))'s head of \(head.size) events in its name is made with key \(Hex.string(cosignature.witnessKey).prefix(16))…"))
                continue
            }
            guard policy == nil || trusted[cosignature.witness] != nil else { continue }
            sightings[cosignature.witness, default: [:]][head.device] = max(sightings[cosignature.witness]?[head.device] ?? 0, head.size)
            cosigners[head.publicKey, default: [:]][head.size, default: [:]][head.root, default: []].insert(cosignature.witness)
        }
        guard let policy, policy.required > 0 else { return (findings, sightings) }
        for tree in trees {
            guard let newest = tree.heads.last(where: \.isValid) else { continue }
            let seen = cosigners[tree.owner.publicKey]?[newest.size]?[newest.root] ?? []
            guard seen.count < policy.required else { continue }
            let others = policy.keys.map(\.name).filter { !seen.contains($0) }.map { name in
                sightings[name]?[tree.owner.device].map { "\(SafeText.line(name)) saw \($0) events" } ?? "\(SafeText.line(name)) saw none"
            }
            findings.append(Finding(.error, .signature, position: nil, device: tree.owner.device, rule: "witnesses",
                                    expected: "device \(SafeText.line(tree.owner.device))'s newest head (\(newest.size) events) cosigned by \(policy.required) of the \(policy.keys.count) witnesses",
                                    found: "\(seen.count) cosigned it" + (seen.isEmpty ? "" : " (\(seen.sorted().map(SafeText.line).joined(separator: ", ")))")
                                        + (others.isEmpty ? "" : "; " + others.joined(separator: ", "))))
        }
        return (findings, sightings)
    }
}
