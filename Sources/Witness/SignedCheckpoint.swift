import Crypto
import EventLog
import Foundation

/// A log's key as a witness is told to trust it: the signed-note verifier key form
/// `<name>+<key hash, 8 hex digits>+<base64(0x01 || Ed25519 public key)>` (what `gamelog
/// keys` prints as a device's `verifierKey`). The name is the log's origin.
public struct LogKey: Hashable, Sendable {
    public var name: String
    public var publicKey: [UInt8]

    public init(verifierKey text: String) throws {
        // The name holds no "+", the base64 may: two splits at most.
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let hash = Hex.bytes(String(parts[1]), count: 4),
              let bytes = Data(base64Encoded: String(parts[2])), bytes.count == 33, bytes.first == 1 else {
            throw WitnessError.badConfiguration("not an Ed25519 signed-note verifier key (<name>+<8 hex digits>+<base64 of 0x01 and 32 bytes>): \(SafeText.line(text))")
        }
        let key = Array(bytes.dropFirst())
        guard PublicKeyCheck.isAcceptable(key), TreeHead.keyHash(name: String(parts[0]), publicKey: key) == hash else {
            throw WitnessError.badConfiguration("the verifier key of \(SafeText.line(String(parts[0]))) has a key hash that is not its name's and key's, or a weak key")
        }
        name = String(parts[0])
        publicKey = key
    }
}

/// A C2SP `tlog-checkpoint` in its signed note: the body (origin, size, root, extension
/// lines) and the signature lines, read without trusting any of it.
public struct SignedCheckpoint: Sendable {
    /// The note's text above the blank line, each line with its line feed: what is signed.
    public var body: String
    public var origin: String
    public var size: Int64
    public var root: [UInt8]
    /// `— <name> <base64>` lines below the blank line.
    public var signatures: [(name: String, bytes: [UInt8])]

    /// Reads a signed note; nil for anything else (too large, no blank line, a malformed first three lines).
    public init?(_ text: String) {
        guard text.utf8.count <= 1 << 16, let split = text.range(of: "\n\n") else { return nil }
        body = String(text[..<split.lowerBound]) + "\n"
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        guard lines.count >= 3, lines.allSatisfy({ !$0.isEmpty }), let size = Int64(lines[lines.startIndex + 1]), size >= 0,
              String(size) == lines[lines.startIndex + 1], size <= MerkleTree.maximumSize,
              let root = Data(base64Encoded: String(lines[lines.startIndex + 2])), root.count == 32 else { return nil }
        origin = String(lines[lines.startIndex])
        self.size = size
        self.root = Array(root)
        var signatures: [(String, [UInt8])] = []
        for line in text[split.upperBound...].split(separator: "\n", omittingEmptySubsequences: true) {
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0] == "\u{2014}", let bytes = Data(base64Encoded: String(parts[2])), bytes.count > 4 else { return nil }
            signatures.append((String(parts[1]), Array(bytes)))
        }
        guard !signatures.isEmpty else { return nil }
        self.signatures = signatures
    }

    /// Whether one of the signature lines is `key`'s Ed25519 signature of the body.
    public func isSigned(by key: LogKey) -> Bool {
        guard let verifier = try? Curve25519.Signing.PublicKey(rawRepresentation: key.publicKey) else { return false }
        let hash = TreeHead.keyHash(name: key.name, publicKey: key.publicKey)
        return signatures.contains { name, bytes in
            name == key.name && bytes.count == 68 && Array(bytes.prefix(4)) == hash
                && verifier.isValidSignature(Array(bytes.dropFirst(4)), for: Array(body.utf8))
        }
    }
}

/// Why a witness cannot start or run.
public enum WitnessError: Error, Hashable, Sendable, CustomStringConvertible {
    case badConfiguration(String)
    case state(String)

    public var description: String {
        switch self {
        case .badConfiguration(let text): "the witness's configuration: \(text)"
        case .state(let text): "the witness's state: \(text)"
        }
    }
}
