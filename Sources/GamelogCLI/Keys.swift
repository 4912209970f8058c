import ArgumentParser
import EventStore
import Foundation
import Presentation

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Device signing keys: list those that signed a log, or make a new one.",
        subcommands: [List.self, New.self, Enroll.self], defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the devices' public signing keys found in the log, with what each signed.",
            discussion: """
                The --json form is what `gamelog verify --trust KEYS.json` reads. Keys found in a log \
                prove only that the log is consistent with itself: trust a key because you got it \
                from the device (`gamelog keys new` prints it when the key is made), not from the log \
                under audit.
                """)

        @OptionGroup var options: GlobalOptions
        @Flag(help: "Print JSON: [{\"device\", \"publicKey\" (hex), \"verifierKey\", \"heads\", \"treeSize\", \"checkpoints\", \"testKey\"}].")
        var json = false

        func run() async throws {
            let store = try await options.openReader()
            let keys = try store.signers()
            if json {
                print(try CommandDocuments.text(keys.map(CommandDocuments.Key.init)))
                return
            }
            if keys.isEmpty { print("No signatures in \(store.location): its events are unsigned.") }
            for key in keys {
                var what: [String] = []
                if key.heads > 0 { what.append("\(key.heads) signed heads, tree of \(key.treeSize) events") }
                if key.checkpoints > 0 { what.append("\(key.checkpoints) checkpoints of the older kind") }
                if key.isTestKey { what.append("an insecure test key") }
                print("\(SafeText.line(key.device))  \(hex(key.publicKey))  \(what.joined(separator: ", "))")
            }
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new",
            abstract: "Make a device's signing key from the system's random source and save it readable by you alone (mode 0600).",
            discussion: """
                Example: gamelog keys new --device A --out A.key. Without --out the key goes to the keys \
                folder (--keys, default $GAMELOG_KEYS, else ~/.config/gamelog/keys) as <device>.key, where \
                `demo`, `simulate` and `fork` find it. A key file is never overwritten. The public key \
                is printed (--json: the entry `verify --trust` reads): hand it to auditors.
                """)

        @Option(help: "The device's name, as its recordings name it (e.g. A).") var device: String
        @Option(help: ArgumentHelp("The key file to write.", valueName: "FILE")) var out: String?
        @Option(help: ArgumentHelp("The keys folder, when --out is not given.", valueName: "DIR")) var keys: String?
        @Flag(help: "Print the public key as JSON: [{\"device\", \"publicKey\", \"verifierKey\"}].") var json = false

        func validate() throws {
            do { try DeviceName.check(device) } catch { throw ValidationError("--device: \(error)") }
            if out != nil && keys != nil { throw ValidationError("Give --out FILE or --keys DIR, not both.") }
        }

        func run() throws {
            let key = try DeviceKey.random(device: device)
            let path: String
            if let out {
                path = out
            } else {
                let folder = try KeyFolder(path: keys ?? KeyFile.defaultFolder)
                path = folder.file(of: device)
            }
            try KeyFile.write(key, to: path)
            if json {
                print(try CommandDocuments.text([CommandDocuments.Key(new: key)]))
            } else {
                print("wrote \(path) (mode 0600): the private key of device \(SafeText.line(device)); keep it off the log's media")
                print("public key: \(hex(key.publicKey))")
                print("verifier key: \(key.verifierKey)")
            }
        }
    }
}

extension Keys {
    struct Enroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enroll",
            abstract: "Enroll a device's public key at a collector, which then accepts that device's uploads.",
            discussion: """
                Needs the collector's administrator's token: --admin-token FILE, else $GAMELOG_ADMIN_TOKEN, else \
                collector-admin.token in the keys folder (where `gamelog collect` writes it on its first start). \
                --public-key reads the JSON `gamelog keys new --json` prints, 64 hex digits, or the device's key file \
                (only its public half is sent).
                """)

        @Option(help: ArgumentHelp("The collector's URL.", valueName: "URL")) var to: String
        @Option(help: "The device's name, as its recordings name it.") var device: String
        @Option(help: ArgumentHelp("The device's public key.", valueName: "FILE")) var publicKey: String
        @Option(help: ArgumentHelp("A file holding the administrator's token.", valueName: "FILE")) var adminToken: String?
        @Option(help: ArgumentHelp("The keys folder (default $GAMELOG_KEYS, else ~/.config/gamelog/keys).", valueName: "DIR")) var keys: String?

        func validate() throws {
            do { try DeviceName.check(device) } catch { throw ValidationError("--device: \(error)") }
        }

        func run() async throws {
            let base = try HTTPClient.baseURL(to, option: "--to")
            let key = try readPublicKey(publicKey, device: device)
            let token = try readAdminToken()
            let body = Data(try CommandDocuments.text(CommandDocuments.Enrollment(device: device, publicKey: key)).utf8)
            let reply = try await HTTPClient.request("POST", base.appending(path: "v1/devices"), body: body, token: token)
            switch reply.status {
            case 201: print("enrolled device \(SafeText.line(device)) (key \(hex(key).prefix(16))...) at \(HTTPClient.shown(to))")
            case 200: print("device \(SafeText.line(device)) was enrolled already with this key at \(HTTPClient.shown(to))")
            case 401: throw CommandFailure("the collector refused the administrator's token: \(reply.message)")
            default: throw CommandFailure("the collector refused the enrollment (HTTP \(reply.status)): \(reply.message)")
            }
        }

        private func readAdminToken() throws -> String {
            let environment = ProcessInfo.processInfo.environment
            let path = adminToken ?? (environment["GAMELOG_ADMIN_TOKEN"] == nil ? (keys ?? KeyFile.defaultFolder) + "/collector-admin.token" : nil)
            guard let path else { return environment["GAMELOG_ADMIN_TOKEN"]!.trimmingCharacters(in: .whitespacesAndNewlines) }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("cannot read the administrator's token at \(path): pass --admin-token FILE (the collector wrote it on its first start).")
            }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

/// A public key from a file: `keys new --json` output (the entry for `device`), 64 hex
/// digits, or a key file (its public half).
func readPublicKey(_ path: String, device: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path), data.count < 1 << 20 else {
        throw ValidationError("--public-key: cannot read \(path).")
    }
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    var key: [UInt8]?
    if let list = try? JSONDecoder().decode([CommandDocuments.KeyReference].self, from: data) {
        key = list.first { $0.device == device }.flatMap { $0.publicKey.flatMap { Hex.bytes($0, count: 32) } }
        if key == nil { throw ValidationError("--public-key: \(path) has no entry for device \(SafeText.line(device)).") }
    } else if let bytes = Hex.bytes(text, count: 32) {
        key = bytes
    } else if text.hasPrefix("PRIVATE+KEY+") {
        key = try KeyFile.read(path).publicKey
    }
    guard let key, PublicKeyCheck.isAcceptable(key) else {
        throw ValidationError("--public-key: \(path) holds no usable Ed25519 public key (`gamelog keys new --json` output, 64 hex digits, or a key file).")
    }
    return key
}

func hex(_ bytes: [UInt8]) -> String { Hex.string(bytes) }

/// Reads keys files (`gamelog keys --json` output, or an object of device → hex key)
/// into one map. A device given two different keys, or a key under which forgeries
/// verify, is refused.
func readTrustedKeys(_ paths: [String]) throws -> [String: [UInt8]] {
    var keys: [String: [UInt8]] = [:]
    for path in paths {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("--trust: cannot read \(path).")
        }
        var entries: [(String, [UInt8])] = []
        if let list = try? JSONDecoder().decode([CommandDocuments.KeyReference].self, from: data) {
            for entry in list {
                guard let device = entry.device, let key = entry.publicKey.flatMap({ Hex.bytes($0, count: 32) }) else {
                    throw ValidationError("--trust: \(path) has an entry without a device and a 64-digit hex publicKey.")
                }
                // What the auditor knows of a key counts, not what the log's heads say of it.
                if entry.testKey == true {
                    throw ValidationError("--trust: \(path) marks the key of \(SafeText.line(device)) as a test key (\"testKey\": true), which anyone can compute; it cannot be trusted. Use the keys of the devices themselves (`gamelog keys new` on each).")
                }
                entries.append((device, key))
            }
        } else if let map = try? JSONDecoder().decode([String: String].self, from: data) {
            for (device, text) in map {
                guard let key = Hex.bytes(text, count: 32) else { throw ValidationError("--trust: the key of \(SafeText.line(device)) in \(path) is not 64 hex digits.") }
                entries.append((device, key))
            }
        } else {
            throw ValidationError("--trust: \(path) is not a keys file (the JSON `gamelog keys --json` prints).")
        }
        for (device, key) in entries {
            if DeviceKey.isPublishedTestKey(key, device: device) {
                throw ValidationError("--trust: the key of \(SafeText.line(device)) in \(path) is a test key (`--insecure-test-keys`), which anyone can compute; it cannot be trusted. Use the keys of the devices themselves (`gamelog keys new` on each).")
            }
            guard PublicKeyCheck.isAcceptable(key) else {
                throw ValidationError("--trust: the key of \(SafeText.line(device)) in \(path) is a small-order or malformed Ed25519 point, under which forged signatures verify; it cannot be trusted.")
            }
            if let other = keys[device], other != key {
                throw ValidationError("--trust: device \(SafeText.line(device)) is given two different keys; trust one key per device.")
            }
            keys[device] = key
        }
    }
    return keys
}

/// Reads heads files with the witnesses' cosignatures each entry carries. A cosignature
/// entry that is not a cosignature line of the key it names refuses the file; whether one
/// verifies is the audit's to say.
func readCosignedHeads(_ paths: [String]) async throws -> [CosignedHead] {
    var heads: [CosignedHead] = []
    for path in paths {
        var data = FileManager.default.contents(atPath: path)
        if path.hasPrefix("http://") || path.hasPrefix("https://") {
            // A collector's heads (GET /v1/heads), in the same form; a bare collector URL means that route.
            var url = try HTTPClient.baseURL(path, option: "--heads")
            if !url.path.hasSuffix("/v1/heads") { url = url.appending(path: "v1/heads") }
            let token = ProcessInfo.processInfo.environment["GAMELOG_READER_TOKEN"]
            let reply = try await HTTPClient.request("GET", url, token: token)
            guard reply.status == 200 else {
                throw CommandFailure("--heads: \(HTTPClient.shown(url.absoluteString)) answered \(reply.status): \(reply.message)" + (reply.status == 401 ? " (set GAMELOG_READER_TOKEN)" : ""))
            }
            data = reply.body
        }
        guard let data, let list = try? JSONDecoder().decode([CommandDocuments.HeadReference].self, from: data) else {
            throw ValidationError("--heads: \(HTTPClient.shown(path)) is not a heads file (the JSON `gamelog heads --json` prints, or a collector's URL).")
        }
        for entry in list {
            guard let note = entry.note, let key = entry.publicKey.flatMap({ Hex.bytes($0, count: 32) }) else {
                throw ValidationError("--heads: \(HTTPClient.shown(path)) has an entry without a note and a 64-digit hex publicKey.")
            }
            let head: TreeHead
            do { head = try TreeHead(note: note, publicKey: key) } catch {
                throw ValidationError("--heads: \(HTTPClient.shown(path)): \(error).")
            }
            var cosignatures: [Cosignature] = []
            for entry in entry.cosignatures ?? [] {
                guard let witnessKey = Hex.bytes(entry.publicKey, count: 32), let cosignature = Cosignature(line: entry.line, witnessKey: witnessKey),
                      cosignature.witness == entry.witness else {
                    throw ValidationError("--heads: \(HTTPClient.shown(path)): a cosignature of device \(SafeText.line(head.device))'s head of \(head.size) events is not a tlog-cosignature line of the witness and key it names (it was changed).")
                }
                cosignatures.append(cosignature)
            }
            heads.append(CosignedHead(head: head, cosignatures: cosignatures))
        }
    }
    return heads
}
