import Crypto
import Foundation

/// What a device signs: its tree's size and root at a time, as a C2SP `tlog-checkpoint`
/// in the C2SP `signed-note` format, so that transparency-log tools and witnesses
/// (transparency-dev/witness) can read and cosign it:
///
///     gamelog/<device>/<key id>          origin: the device (percent-encoded) and its key
///     <size>                             leaves in the tree, decimal
///     <base64 root>                      RFC 9162 root of the first `size` leaves
///     time <microseconds since 1970>     extension line: when it was signed
///     insecure-test-key                  extension line, only for keys anyone can compute
///
///     — <origin> <base64(key hash (4) || Ed25519 signature (64))>
///
/// The signature covers the body (every line above the blank line, each ending in a
/// line feed). The key name is the origin; the key hash is the first four bytes of
/// `SHA-256(name || 0x0A || 0x01 || public key)`, as signed-note defines for Ed25519.
public struct TreeHead: Hashable, Codable, Sendable {
    public var device: String
    /// The device's Ed25519 public key (32 bytes).
    public var publicKey: [UInt8]
    public var size: Int64
    /// The RFC 9162 root hash of the device's first `size` events (32 bytes).
    public var root: [UInt8]
    public var signedAt: Timestamp
    /// Signed with a key derived from public inputs (``DeviceKey/insecureTestKey(device:)``).
    public var isTestKey: Bool
    /// Ed25519 over ``body`` (64 bytes).
    public var signature: [UInt8]

    public init(device: String, publicKey: [UInt8], size: Int64, root: [UInt8], signedAt: Timestamp, isTestKey: Bool,
                signature: [UInt8]) {
        self.device = device
        self.publicKey = publicKey
        self.size = size
        self.root = root
        self.signedAt = signedAt
        self.isTestKey = isTestKey
        self.signature = signature
    }

    /// `gamelog/<percent-encoded device>/<first 16 hex digits of SHA-256(public key)>`.
    public var origin: String { Self.keyName(device: device, publicKey: publicKey) }

    /// The signed text.
    public var body: String {
        var text = "\(origin)\n\(size)\n\(Data(root).base64EncodedString())\ntime \(signedAt.microsecondsSince1970)\n"
        if isTestKey { text += "insecure-test-key\n" }
        return text
    }

    /// The whole signed note, as `gamelog heads` prints it and witnesses read it.
    public var note: String {
        let stamp = Data(Self.keyHash(name: origin, publicKey: publicKey) + signature).base64EncodedString()
        return body + "\n\u{2014} \(origin) \(stamp)\n"
    }

    /// Whether ``signature`` is the device key's signature of ``body``, the key is not
    /// one under which forgeries verify, and the size is one a tree can have (1 to
    /// ``MerkleTree/maximumSize``: no larger size is ever checked, whoever signed it).
    public var isValid: Bool {
        guard PublicKeyCheck.isAcceptable(publicKey), signature.count == 64, root.count == 32, size >= 1, size <= MerkleTree.maximumSize,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: Array(body.utf8))
    }

    /// A head signed with `key`.
    public static func signing(size: Int64, root: [UInt8], key: DeviceKey, at time: Timestamp) throws -> TreeHead {
        var head = TreeHead(device: key.device, publicKey: key.publicKey, size: size, root: root, signedAt: time,
                            isTestKey: key.isTestKey, signature: [])
        head.signature = Array(try key.privateKey.signature(for: Array(head.body.utf8)))
        return head
    }

    /// Reads a signed note made by ``note``, given the public key it claims to be signed
    /// with (the key's hash in the signature line must match). The signature itself is
    /// checked by ``isValid``, not here.
    public init(note: String, publicKey: [UInt8]) throws {
        // The blank line found by bytes: `String.range(of:)` with Foundation imported is a
        // locale-aware search (a collector parses every head of every upload).
        guard note.utf8.count <= 4096, let blank = note.utf8.indices.first(where: {
            note.utf8[$0] == 0x0A && $0 > note.utf8.startIndex && note.utf8[note.utf8.index(before: $0)] == 0x0A
        }) else {
            throw HeadError.malformed("a signed note is a body, a blank line and signature lines")
        }
        let split = note.utf8.index(before: blank)..<note.utf8.index(after: blank)
        let body = String(note[..<split.upperBound].dropLast())
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        guard lines.count >= 4, let size = Int64(lines[1]), size >= 1, String(size) == lines[1],
              let root = Data(base64Encoded: lines[2]), root.count == 32,
              lines[3].hasPrefix("time "), let micros = Int64(lines[3].dropFirst(5)), String(micros) == String(lines[3].dropFirst(5)) else {
            throw HeadError.malformed("the body is not origin, size, root and time lines")
        }
        let extra = lines.dropFirst(4)
        guard extra.isEmpty || Array(extra) == ["insecure-test-key"] else {
            throw HeadError.malformed("unknown extension lines in the body")
        }
        let parts = lines[0].split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "gamelog", let device = Self.device(fromKeyName: lines[0]) else {
            throw HeadError.malformed("the origin is not gamelog/<device>/<key id>")
        }
        let signatures = note[split.upperBound...].split(separator: "\n").map(String.init)
        let prefix = "\u{2014} \(lines[0]) "
        let keyHash = Self.keyHash(name: lines[0], publicKey: publicKey)
        var signature: [UInt8]?
        for line in signatures where line.hasPrefix(prefix) {
            guard let stamp = Data(base64Encoded: String(line.dropFirst(prefix.count))), stamp.count == 68 else { continue }
            if Array(stamp.prefix(4)) == keyHash { signature = Array(stamp.dropFirst(4)) }
        }
        guard let signature else { throw HeadError.malformed("no signature line by the key \(lines[0])") }
        self.init(device: device, publicKey: publicKey, size: size, root: Array(root), signedAt: Timestamp(microsecondsSince1970: micros),
                  isTestKey: !extra.isEmpty, signature: signature)
        guard self.body == body else { throw HeadError.malformed("the origin does not name this key") }
    }

    // MARK: Names

    /// The signed-note key name (and origin) of a device's key.
    public static func keyName(device: String, publicKey: [UInt8]) -> String {
        let id = Hex.string(Array(ChainHash.sha256(publicKey).prefix(8)))
        return "gamelog/\(encode(device))/\(id)"
    }

    /// `SHA-256(name || 0x0A || 0x01 || public key)[0..<4]`.
    public static func keyHash(name: String, publicKey: [UInt8]) -> [UInt8] {
        Array(ChainHash.sha256(Array(name.utf8) + [0x0A, 0x01] + publicKey).prefix(4))
    }

    /// The signed-note verifier key: `<name>+<key hash, hex>+<base64(0x01 || public key)>`.
    public static func verifierKey(device: String, publicKey: [UInt8]) -> String {
        let name = keyName(device: device, publicKey: publicKey)
        let hash = Hex.string(keyHash(name: name, publicKey: publicKey))
        return "\(name)+\(hash)+\(Data([1] + publicKey).base64EncodedString())"
    }

    /// The device a key name names.
    static func device(fromKeyName name: String) -> String? {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "gamelog", parts[2].count == 16 else { return nil }
        return decode(String(parts[1]))
    }

    /// Percent-encoding of every byte outside `A-Z a-z 0-9 - . _ ~`: a key name may hold
    /// no space, `+` or line break, and an origin no slash of its own.
    static func encode(_ device: String) -> String {
        var out = ""
        for byte in device.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    static func decode(_ encoded: String) -> String? {
        guard let text = encoded.removingPercentEncoding, !text.isEmpty, encode(text) == encoded else { return nil }
        return text
    }
}

/// Why a signed head cannot be read.
public enum HeadError: Error, Hashable, Sendable, CustomStringConvertible {
    case malformed(String)
    /// A witness key (`verify --witness-key`) that is not a tlog-cosignature/v1 verifier key.
    case malformedWitnessKey(String)

    public var description: String {
        switch self {
        case .malformed(let detail): "not a gamelog tree head: \(detail)"
        case .malformedWitnessKey(let detail): "not a witness key: \(detail)"
        }
    }
}
