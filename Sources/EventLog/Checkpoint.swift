import Crypto
import Foundation

/// A stream's chain head: its hash after `version` events.
public struct SignedHead: Hashable, Codable, Sendable {
    public var stream: UUID
    public var version: Int64
    /// The stream hash at `version` (32 bytes).
    public var hash: [UInt8]

    public init(stream: UUID, version: Int64, hash: [UInt8]) {
        self.stream = stream
        self.version = version
        self.hash = hash
    }
}

/// A device's signature over the heads of its streams, as gamelog signed before device
/// trees (schema step 7): still read and checked, and reported as the older, weaker kind
/// (it signs streams one by one, so a whole recording removed leaves no trace).
///
/// The signed message is, integers big-endian:
/// `"gamelog checkpoint v1\n"`, the device name's UTF-8 length (2) and bytes, the
/// sequence (8), the previous checkpoint's digest (32), `signed_at` (8), the number
/// of heads (4), then per head, by stream bytes: stream (16), version (8), hash (32).
/// The digest of a checkpoint is SHA-256(message || signature).
public struct Checkpoint: Hashable, Codable, Sendable {
    public var device: String
    /// The device's Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    /// 1, 2, 3, ... per key.
    public var sequence: Int64
    /// The digest of this key's previous checkpoint; 32 zero bytes for the first.
    public var previous: [UInt8]
    public var signedAt: Timestamp
    public var heads: [SignedHead]
    /// Ed25519 over ``message`` (64 bytes).
    public var signature: [UInt8]

    public init(device: String, publicKey: [UInt8], sequence: Int64, previous: [UInt8], signedAt: Timestamp,
                heads: [SignedHead], signature: [UInt8]) {
        self.device = device
        self.publicKey = publicKey
        self.sequence = sequence
        self.previous = previous
        self.signedAt = signedAt
        self.heads = heads.sorted { $0.stream.bytes.lexicographicallyPrecedes($1.stream.bytes) }
        self.signature = signature
    }

    static let domain = Array("gamelog checkpoint v1\n".utf8)

    /// The bytes signed.
    public var message: [UInt8] {
        var out = Self.domain
        let name = Array(device.utf8)
        append(UInt16(name.count), to: &out)
        out += name
        append(UInt64(bitPattern: sequence), to: &out)
        out += previous
        append(UInt64(bitPattern: signedAt.microsecondsSince1970), to: &out)
        append(UInt32(heads.count), to: &out)
        out += Self.packed(heads)
        return out
    }

    /// The heads as stored: 56 bytes each.
    package static func packed(_ heads: [SignedHead]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(heads.count * 56)
        for head in heads {
            out += head.stream.bytes
            append(UInt64(bitPattern: head.version), to: &out)
            out += head.hash
        }
        return out
    }

    package static func unpacked(_ bytes: [UInt8]) -> [SignedHead]? {
        guard bytes.count % 56 == 0 else { return nil }
        return stride(from: 0, to: bytes.count, by: 56).map { start in
            let version = bytes[(start + 16)..<(start + 24)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return SignedHead(stream: UUID(bytes: bytes[start..<(start + 16)])!, version: Int64(bitPattern: version),
                              hash: Array(bytes[(start + 24)..<(start + 56)]))
        }
    }

    /// SHA-256 of the message and the signature: what the next checkpoint names as `previous`.
    public var digest: [UInt8] { ChainHash.sha256(message + signature) }

    /// Whether `signature` is this key's signature of ``message``.
    public func isSigned(by key: [UInt8]) -> Bool {
        guard let publicKey = try? Curve25519.Signing.PublicKey(rawRepresentation: key) else { return false }
        return publicKey.isValidSignature(signature, for: message)
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { out += $0 }
    }

    private func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) { Self.append(value, to: &out) }
}
