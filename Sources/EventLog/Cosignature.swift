import Crypto
import Foundation

/// A witness's countersignature of a device's signed head, in the C2SP
/// `tlog-cosignature/v1` form: the witness says it saw that head at `cosignedAt` and
/// checked that it extends every head of the same device it had seen before. A device
/// rolled back or forked after a witness cosigned its head cannot reach that head again.
///
/// The signed message is `cosignature/v1\ntime <seconds>\n` followed by the head's body;
/// the note signature line is `— <witness> base64(key ID (4) || seconds (8, big-endian) ||
/// Ed25519 signature (64))`, the key ID being `SHA-256(witness || 0x0A || 0x04 || key)[0..<4]`.
public struct Cosignature: Hashable, Codable, Sendable {
    /// The witness's key name (a schema-less URL, e.g. `collector.example.com/gamelog`).
    public var witness: String
    /// The witness's Ed25519 public key (32 bytes).
    public var witnessKey: [UInt8]
    /// Seconds since 1970, as the cosignature carries it.
    public var cosignedAt: UInt64
    /// Ed25519 over ``message(for:at:)`` (64 bytes).
    public var signature: [UInt8]

    public init(witness: String, witnessKey: [UInt8], cosignedAt: UInt64, signature: [UInt8]) {
        self.witness = witness
        self.witnessKey = witnessKey
        self.cosignedAt = cosignedAt
        self.signature = signature
    }

    /// The bytes a witness signs for `head` at `seconds`.
    public static func message(for head: TreeHead, at seconds: UInt64) -> [UInt8] {
        message(body: head.body, at: seconds)
    }

    /// The bytes a witness signs for a checkpoint whose note body (its lines above the
    /// blank line, each with its line feed) is `body`: any log's, not only a device's.
    public static func message(body: String, at seconds: UInt64) -> [UInt8] {
        Array("cosignature/v1\ntime \(seconds)\n\(body)".utf8)
    }

    /// `SHA-256(name || 0x0A || 0x04 || public key)[0..<4]`, tlog-cosignature's key ID.
    public static func keyID(witness: String, publicKey: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: Array(witness.utf8) + [0x0A, 0x04] + publicKey).prefix(4))
    }

    /// The witness's signed-note verifier key: `<name>+<key ID, hex>+<base64(0x04 || key)>`.
    public static func verifierKey(witness: String, publicKey: [UInt8]) -> String {
        "\(witness)+\(Hex.string(keyID(witness: witness, publicKey: publicKey)))+\(Data([4] + publicKey).base64EncodedString())"
    }

    /// Cosigns `head` with `key` (whose device name is unused: `witness` names it).
    public static func signing(_ head: TreeHead, witness: String, key: DeviceKey, at date: Date = Date()) throws -> Cosignature {
        try signing(body: head.body, witness: witness, key: key, at: date)
    }

    /// Cosigns the checkpoint whose note body is `body`.
    public static func signing(body: String, witness: String, key: DeviceKey, at date: Date = Date()) throws -> Cosignature {
        let seconds = UInt64(max(0, date.timeIntervalSince1970))
        let signature = Array(try key.privateKey.signature(for: message(body: body, at: seconds)))
        return Cosignature(witness: witness, witnessKey: key.publicKey, cosignedAt: seconds, signature: signature)
    }

    /// Whether this is the witness's signature of `head` (and its key is a usable one).
    public func isValid(for head: TreeHead) -> Bool {
        guard PublicKeyCheck.isAcceptable(witnessKey), signature.count == 64,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: witnessKey) else { return false }
        return key.isValidSignature(signature, for: Self.message(for: head, at: cosignedAt))
    }

    /// The note signature line to append to the head's note.
    public var line: String {
        var seconds = cosignedAt.bigEndian
        let stamp = Self.keyID(witness: witness, publicKey: witnessKey) + withUnsafeBytes(of: &seconds) { Array($0) } + signature
        return "\u{2014} \(witness) \(Data(stamp).base64EncodedString())"
    }

    /// Reads a signature line made by ``line``, given the witness key it claims; nil if
    /// it is not that witness's line.
    public init?(line: String, witnessKey: [UInt8]) {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "\u{2014}", !parts[1].isEmpty, let stamp = Data(base64Encoded: String(parts[2])),
              stamp.count == 76 else { return nil }
        let witness = String(parts[1])
        guard Array(stamp.prefix(4)) == Self.keyID(witness: witness, publicKey: witnessKey) else { return nil }
        let seconds = stamp.dropFirst(4).prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        self.init(witness: witness, witnessKey: witnessKey, cosignedAt: seconds, signature: Array(stamp.suffix(64)))
    }
}

/// A witness's public key as an auditor names it: the signed-note verifier key form of a
/// `tlog-cosignature/v1` key, `<name>+<key ID, 8 hex digits>+<base64(0x04 || 32-byte key)>`
/// (what ``Cosignature/verifierKey(witness:publicKey:)`` prints and a collector's start line shows).
public struct WitnessKey: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var publicKey: [UInt8]

    public init(name: String, publicKey: [UInt8]) {
        self.name = name
        self.publicKey = publicKey
    }

    /// Reads a verifier key; the key ID must be the one the name and key give.
    public init(verifierKey text: String) throws {
        // The name holds no "+", the base64 may: two splits at most.
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[1].count == 8, let id = Hex.bytes(String(parts[1]), count: 4),
              let bytes = Data(base64Encoded: String(parts[2])), bytes.count == 33 else {
            throw HeadError.malformedWitnessKey("not the form <name>+<8 hex digits>+<base64 of 33 bytes>")
        }
        guard bytes.first == 4 else {
            throw HeadError.malformedWitnessKey("its key type is \(bytes.first!), not 4 (a tlog-cosignature/v1 Ed25519 key)")
        }
        let key = Array(bytes.dropFirst())
        guard PublicKeyCheck.isAcceptable(key) else { throw HeadError.malformedWitnessKey("its key is a small-order or malformed Ed25519 point") }
        guard Cosignature.keyID(witness: String(parts[0]), publicKey: key) == id else {
            throw HeadError.malformedWitnessKey("its key ID is not the one its name and key give")
        }
        self.init(name: String(parts[0]), publicKey: key)
    }

    public var verifierKey: String { Cosignature.verifierKey(witness: name, publicKey: publicKey) }
    public var description: String { verifierKey }
}

/// A device's head with the cosignatures a log holds for it.
public struct CosignedHead: Hashable, Sendable {
    public var head: TreeHead
    public var cosignatures: [Cosignature]

    public init(head: TreeHead, cosignatures: [Cosignature]) {
        self.head = head
        self.cosignatures = cosignatures
    }

    /// The head's note with a signature line per cosignature, as witnesses exchange it.
    public var note: String {
        head.note + cosignatures.map { $0.line + "\n" }.joined()
    }
}
