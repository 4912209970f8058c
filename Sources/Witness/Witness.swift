import Crypto
import EventLog
import Foundation

/// A C2SP `tlog-witness`: it keeps, for each log it knows (by origin and key), the latest
/// checkpoint it cosigned (size and root, and nothing else), and cosigns a new checkpoint
/// only if a consistency proof shows it extends that one. Its state is a folder:
///
/// - `witness.key`: its signing key (mode 0600), made on first start;
/// - `logs`: the logs it knows, one signed-note verifier key a line (`#` starts a
///   comment), read again on every request, so a log is added without a restart;
/// - `checkpoints/<SHA-256 of the origin, hex>`: each log's latest cosigned size and
///   root, written to a new file, flushed to disk and renamed before the answer goes.
public final class Witness: @unchecked Sendable {
    /// Its key name in cosignatures (a schema-less URL naming it).
    public let name: String
    public let key: DeviceKey
    public let folder: String
    /// Check and record happen under one lock: two requests never both pass the check of
    /// one size and then roll the record back (the race tlog-witness describes).
    private let lock = NSLock()

    /// The most consistency proof lines a request may carry (tlog-witness: 63).
    public static let maximumProofLines = 63
    /// The largest request body read: a checkpoint and 63 hashes fit many times over.
    public static let maximumRequest = 64 << 10

    /// Opens (or makes) the state folder and its key.
    public init(folder: String, name: String) throws {
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0 == "+" }) else {
            throw WitnessError.badConfiguration("the name \(SafeText.line(name)) has a space or a '+'")
        }
        try FileManager.default.createDirectory(atPath: folder + "/checkpoints", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let keyPath = folder + "/witness.key"
        if FileManager.default.fileExists(atPath: keyPath) {
            key = try KeyFile.read(keyPath)
        } else {
            key = try DeviceKey.random(device: "witness")
            try KeyFile.write(key, to: keyPath)
        }
        if !FileManager.default.fileExists(atPath: folder + "/logs") {
            _ = FileManager.default.createFile(atPath: folder + "/logs", contents: Data("""
                # The logs this witness cosigns: one signed-note verifier key a line
                # (`gamelog keys --json` gives each device's "verifierKey").

                """.utf8))
        }
        self.name = name
        self.folder = folder
    }

    /// The witness's signed-note verifier key: `<name>+<key ID>+<base64(0x04 || key)>`.
    public var verifierKey: String { Cosignature.verifierKey(witness: name, publicKey: key.publicKey) }

    /// The logs it knows now.
    public func knownLogs() throws -> [LogKey] {
        guard let data = FileManager.default.contents(atPath: folder + "/logs"), data.count <= 1 << 20 else {
            throw WitnessError.badConfiguration("\(folder)/logs cannot be read, or is over 1 MiB")
        }
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            let text = line.trimmingCharacters(in: .whitespaces)
            return text.isEmpty || text.hasPrefix("#") ? nil : try LogKey(verifierKey: text)
        }
    }

    /// An answer: an HTTP status, its content type and body.
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var contentType: String
        public var body: String
    }

    /// The latest checkpoint cosigned for `origin`: its size (0 if none) and root.
    public func latest(origin: String) throws -> (size: Int64, root: [UInt8]?) {
        let path = statePath(origin)
        guard let data = FileManager.default.contents(atPath: path) else { return (0, nil) }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 3, lines[0] == origin, let size = Int64(lines[1]), size >= 0,
              let root = Data(base64Encoded: String(lines[2])), root.count == 32 else {
            throw WitnessError.state("\(path) is not a checkpoint record (it was changed outside the witness)")
        }
        return (size, Array(root))
    }

    /// `add-checkpoint`: the request body as tlog-witness gives it (an `old <size>` line,
    /// up to 63 base64 proof lines, an empty line, the signed checkpoint).
    public func addCheckpoint(_ request: [UInt8], now: Date = Date()) -> Answer {
        func refuse(_ status: Int, _ text: String) -> Answer { Answer(status: status, contentType: "text/plain; charset=utf-8", body: text + "\n") }
        guard request.count <= Self.maximumRequest, let text = String(validating: request, as: UTF8.self),
              let blank = text.range(of: "\n\n") else {
            return refuse(400, "the body is not an old size line, proof lines, an empty line and a checkpoint")
        }
        let head = text[..<blank.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = head.first, first.hasPrefix("old "), let old = Int64(first.dropFirst(4)), old >= 0,
              String(old) == first.dropFirst(4) else {
            return refuse(400, "the first line is not `old <size>` in decimal")
        }
        guard head.count - 1 <= Self.maximumProofLines else { return refuse(400, "more than \(Self.maximumProofLines) proof lines") }
        var proof: [[UInt8]] = []
        for line in head.dropFirst() {
            guard let hash = Data(base64Encoded: String(line)), hash.count == 32 else { return refuse(400, "a proof line is not a base64 32-byte hash") }
            proof.append(Array(hash))
        }
        guard let checkpoint = SignedCheckpoint(String(text[blank.upperBound...])) else {
            return refuse(400, "the checkpoint is not a signed note (origin, size, root, a blank line, signature lines)")
        }
        let keys: [LogKey]
        do { keys = try knownLogs().filter { $0.name == checkpoint.origin } } catch { return refuse(500, "\(error)") }
        guard !keys.isEmpty else { return refuse(404, "this witness does not know the log \(SafeText.line(checkpoint.origin))") }
        guard keys.contains(where: checkpoint.isSigned) else {
            return refuse(403, "no signature of the checkpoint verifies under the keys this witness trusts for \(SafeText.line(checkpoint.origin))")
        }
        guard old <= checkpoint.size else { return refuse(400, "the old size \(old) is larger than the checkpoint's \(checkpoint.size)") }
        lock.lock()
        defer { lock.unlock() }
        do {
            let latest = try self.latest(origin: checkpoint.origin)
            guard old == latest.size else {
                return Answer(status: 409, contentType: "text/x.tlog.size", body: "\(latest.size)\n")
            }
            if old == checkpoint.size, let root = latest.root, root != checkpoint.root {
                // The same size with another root: the log forked.
                return Answer(status: 409, contentType: "text/x.tlog.size", body: "\(latest.size)\n")
            }
            if old == 0 {
                guard proof.isEmpty else { return refuse(400, "a proof from size 0 is empty") }
            } else if old < checkpoint.size {
                guard let root = latest.root, MerkleTree.verifyConsistency(from: old, to: checkpoint.size, oldRoot: root,
                                                                          newRoot: checkpoint.root, proof: proof) else {
                    return refuse(422, "the consistency proof from \(old) to \(checkpoint.size) does not verify")
                }
            }
            try record(origin: checkpoint.origin, size: checkpoint.size, root: checkpoint.root)
            let cosignature = try Cosignature.signing(body: checkpoint.body, witness: name, key: key, at: now)
            return Answer(status: 200, contentType: "text/plain; charset=utf-8", body: cosignature.line + "\n")
        } catch {
            return refuse(500, "\(error)")
        }
    }

    private func statePath(_ origin: String) -> String {
        folder + "/checkpoints/" + Hex.string(Array(SHA256.hash(data: Array(origin.utf8))))
    }

    /// Writes a log's record durably: a new file, flushed, renamed over the old, and the
    /// folder flushed, so a crash leaves the old record or the new one, never neither.
    private func record(origin: String, size: Int64, root: [UInt8]) throws {
        let path = statePath(origin), temporary = path + ".new"
        let data = Data("\(origin)\n\(size)\n\(Data(root).base64EncodedString())\n".utf8)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw WitnessError.state("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor)
        close(descriptor)
        guard written == data.count, synced == 0, rename(temporary, path) == 0 else {
            throw WitnessError.state("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        let directory = open(folder + "/checkpoints", O_RDONLY)
        if directory >= 0 { fsync(directory); close(directory) }
    }
}
