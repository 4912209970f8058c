import Crypto
import Foundation

/// A device's Ed25519 signing key: what signs its tree heads.
///
/// A real device makes one with ``random(device:)`` (the system's CSPRNG) once, keeps it
/// outside the log (the keychain on a phone, a key file elsewhere: ``KeyFile``), and
/// hands it to the recorder. ``insecureTestKey(device:)`` exists for reproducible
/// tests only: anyone can compute it, and every head it signs says so.
public struct DeviceKey: Sendable {
    public var device: String
    /// The Ed25519 private key's 32 raw bytes (its seed).
    public let rawKey: [UInt8]
    /// True for a key computed from public inputs (tests): its heads carry a mark that
    /// `verify` reports, an error under `--trust`.
    public let isTestKey: Bool
    public let publicKey: [UInt8]

    public init(device: String, privateKey: Curve25519.Signing.PrivateKey) throws {
        try self.init(device: device, privateKey: privateKey, isTestKey: false)
    }

    private init(device: String, privateKey: Curve25519.Signing.PrivateKey, isTestKey: Bool) throws {
        try DeviceName.check(device)
        self.device = device
        rawKey = Array(privateKey.rawRepresentation)
        publicKey = Array(privateKey.publicKey.rawRepresentation)
        self.isTestKey = isTestKey
    }

    public var privateKey: Curve25519.Signing.PrivateKey {
        // rawKey came from a valid private key, whose 32 bytes always make one again.
        try! Curve25519.Signing.PrivateKey(rawRepresentation: rawKey)
    }

    /// A fresh random key from the system's CSPRNG.
    public static func random(device: String) throws -> DeviceKey {
        try DeviceKey(device: device, privateKey: Curve25519.Signing.PrivateKey())
    }

    /// A key anyone can compute from the device name, for reproducible tests:
    /// `SHA-256("gamelog insecure test key\n" || name)`. Every head it signs is marked as
    /// signed with a test key, and an auditor recognises the key itself, mark or no mark
    /// (``isPublishedTestKey(_:device:)``): it depends on nothing but the name.
    public static func insecureTestKey(device: String) throws -> DeviceKey {
        let material = Array("gamelog insecure test key\n".utf8) + Array(device.utf8)
        return try DeviceKey(device: device, privateKey: try Curve25519.Signing.PrivateKey(rawRepresentation: ChainHash.sha256(material)),
                             isTestKey: true)
    }

    @available(*, unavailable, renamed: "insecureTestKey(device:)",
               message: "test keys depend on the device name only, so that an auditor can recognise one whatever its heads say; drop the seed")
    public static func insecureTestKey(device: String, seed: UInt64) throws -> DeviceKey {
        try insecureTestKey(device: device)
    }

    /// Whether `publicKey` is ``insecureTestKey(device:)`` of `device`: a key anyone can
    /// compute, whatever its heads say.
    public static func isPublishedTestKey(_ publicKey: [UInt8], device: String) -> Bool {
        (try? insecureTestKey(device: device))?.publicKey == publicKey
    }

    /// The key this file holds, in the signed-note private key form
    /// (`PRIVATE+KEY+<name>+<key hash>+<base64(0x01 || key)>`, as Go's `note` package
    /// writes it), so that signed-note tools can use it too.
    public var encoded: String {
        let name = TreeHead.keyName(device: device, publicKey: publicKey)
        let hash = Hex.string(TreeHead.keyHash(name: name, publicKey: publicKey))
        return "PRIVATE+KEY+\(name)+\(hash)+\(Data([1] + rawKey).base64EncodedString())"
    }

    /// The public half in the signed-note verifier key form: `<name>+<key hash>+<base64(0x01 || public key)>`.
    public var verifierKey: String { TreeHead.verifierKey(device: device, publicKey: publicKey) }

    /// Reads ``encoded``.
    public init(encoded text: String) throws {
        let parts = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "+", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "PRIVATE", parts[1] == "KEY",
              let bytes = Data(base64Encoded: String(parts[4])), bytes.count == 33, bytes.first == 1,
              let device = TreeHead.device(fromKeyName: String(parts[2])) else {
            throw KeyError.malformed(detail: "not a gamelog device key (PRIVATE+KEY+<name>+<hash>+<key>)")
        }
        let key: Curve25519.Signing.PrivateKey
        do { key = try Curve25519.Signing.PrivateKey(rawRepresentation: Array(bytes.dropFirst())) } catch {
            throw KeyError.malformed(detail: "the key bytes are not an Ed25519 private key")
        }
        try self.init(device: device, privateKey: key, isTestKey: false)
        guard encoded == text.trimmingCharacters(in: .whitespacesAndNewlines) else {
            throw KeyError.malformed(detail: "its name or key hash does not match its key")
        }
    }
}

/// Device names: what a tree head's origin line carries.
public enum DeviceName {
    /// Names are 1 to 200 bytes of UTF-8 with no control characters, so that a signed
    /// note, a terminal line and a file name all hold them safely.
    public static func check(_ name: String) throws {
        guard (1...200).contains(name.utf8.count) else {
            throw KeyError.badDeviceName(name: name, detail: "a device name has 1 to 200 bytes")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format && $0.value != 0x200D }) else {
            throw KeyError.badDeviceName(name: name, detail: "a device name may not hold control characters")
        }
    }
}

/// Why a key cannot be used.
public enum KeyError: Error, Hashable, Sendable, CustomStringConvertible {
    case malformed(detail: String)
    case weakPublicKey
    case badDeviceName(name: String, detail: String)
    case unreadable(path: String, detail: String)
    case unsafeLocation(path: String, detail: String)

    public var description: String {
        switch self {
        case .malformed(let detail): "not a device key: \(detail)"
        case .weakPublicKey: "the public key is a small-order or non-canonical Ed25519 point, under which forged signatures verify"
        case .badDeviceName(let name, let detail): "\(SafeText.line(name)) cannot name a device: \(detail)"
        case .unreadable(let path, let detail): "cannot read or write the key file \(path): \(detail)"
        case .unsafeLocation(let path, let detail): "will not keep device keys in \(path): \(detail)"
        }
    }
}

/// Ed25519 public keys that must never be trusted: the points of small order (and
/// their non-canonical encodings), under which a signature can verify for any message.
/// The list is libsodium's (`ed25519_is_small_order` and its non-canonical checks).
public enum PublicKeyCheck {
    private static let blocked: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32),
        [1] + [UInt8](repeating: 0, count: 31),
        Hex.bytes("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", count: 32)!,
        Hex.bytes("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", count: 32)!,
        [0xEC] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
        [0xED] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
        [0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F],
    ]

    /// Whether `key` is a usable Ed25519 public key: 32 bytes, a point on the curve, not
    /// of small order. The sign bit is ignored when comparing, as libsodium does.
    public static func isAcceptable(_ key: [UInt8]) -> Bool {
        guard key.count == 32 else { return false }
        var masked = key
        masked[31] &= 0x7F
        if blocked.contains(masked) { return false }
        return (try? Curve25519.Signing.PublicKey(rawRepresentation: key)) != nil
    }
}

/// Key files on disk: one private key per file, readable by its owner alone.
public enum KeyFile {
    /// Writes `key` to `path` with mode 0600, refusing to replace an existing file.
    public static func write(_ key: DeviceKey, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw KeyError.unreadable(path: path, detail: errno == EEXIST ? "it exists already (a key is never overwritten)" : String(cString: strerror(errno)))
        }
        defer { close(fd) }
        let bytes = Array((key.encoded + "\n").utf8)
        guard bytes.withUnsafeBytes({ Foundation.write(fd, $0.baseAddress, $0.count) }) == bytes.count, fsync(fd) == 0 else {
            throw KeyError.unreadable(path: path, detail: String(cString: strerror(errno)))
        }
    }

    /// Reads a key file; refuses one others may read (group or world bits set).
    public static func read(_ path: String) throws -> DeviceKey {
        var info = stat()
        guard stat(path, &info) == 0 else { throw KeyError.unreadable(path: path, detail: String(cString: strerror(errno))) }
        guard info.st_mode & 0o077 == 0 else {
            throw KeyError.unreadable(path: path, detail: "others may read it (mode \(String(info.st_mode & 0o777, radix: 8))); run chmod 600 on it")
        }
        guard let data = FileManager.default.contents(atPath: path), data.count < 4096 else {
            throw KeyError.unreadable(path: path, detail: "it cannot be read, or is too large to be a key")
        }
        return try DeviceKey(encoded: String(decoding: data, as: UTF8.self))
    }

    /// The folder that keeps a user's device keys when none is named:
    /// `$GAMELOG_KEYS`, else `$XDG_CONFIG_HOME/gamelog/keys`, else `~/.config/gamelog/keys`.
    public static var defaultFolder: String {
        let environment = ProcessInfo.processInfo.environment
        if let named = environment["GAMELOG_KEYS"], !named.isEmpty { return named }
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return config + "/gamelog/keys" }
        return NSHomeDirectory() + "/.config/gamelog/keys"
    }
}

/// A folder of device keys, `<device>.key` each: a device's key is made (random) the
/// first time it is asked for and read from its file after that.
public final class KeyFolder: @unchecked Sendable {
    public let path: String
    private var keys: [String: DeviceKey] = [:]
    private let lock = NSLock()

    /// - Parameter logPath: the log these keys will sign; the folder may not be the
    ///   log's own, where whoever is handed the log would find them.
    public init(path: String, logPath: String? = nil) throws {
        self.path = path
        if let logPath {
            let folder = URL(fileURLWithPath: logPath).deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL.path
            let mine = URL(fileURLWithPath: path).resolvingSymlinksInPath().standardizedFileURL.path
            guard folder != mine else {
                throw KeyError.unsafeLocation(path: path, detail: "it is the log's own folder, where anyone handed the log would find them")
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KeyError.unreadable(path: path, detail: (error as NSError).localizedDescription)
        }
    }

    /// The file a device's key is kept in: its name, percent-encoded where a file name could not hold it.
    public func file(of device: String) -> String {
        path + "/" + TreeHead.encode(device) + ".key"
    }

    /// The device's key, made and saved on first use.
    public func key(for device: String) throws -> DeviceKey {
        lock.lock()
        defer { lock.unlock() }
        if let known = keys[device] { return known }
        let file = file(of: device)
        let key: DeviceKey
        if FileManager.default.fileExists(atPath: file) {
            key = try KeyFile.read(file)
            guard key.device == device else {
                throw KeyError.malformed(detail: "\(file) holds the key of device \(SafeText.line(key.device)), not \(SafeText.line(device))")
            }
        } else {
            key = try DeviceKey.random(device: device)
            try KeyFile.write(key, to: file)
        }
        keys[device] = key
        return key
    }
}
