import ArgumentParser
import EventStore
import Foundation

struct Keys: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the devices' public signing keys found in the log, with how many checkpoints each signed.",
        discussion: """
            The --json form is what `gamelog verify --trust KEYS.json` reads. Keys found in a log \
            prove only that the log is consistent with itself: trust a key because you got it \
            from the device, not from the log under audit.
            """)

    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print JSON: [{\"device\", \"publicKey\" (hex), \"checkpoints\"}].") var json = false

    func run() throws {
        try reportingErrors {
            let store = try options.openForReading()
            var counts: [String: (device: String, key: [UInt8], count: Int)] = [:]
            for checkpoint in try store.checkpoints() {
                counts[hex(checkpoint.publicKey), default: (checkpoint.device, checkpoint.publicKey, 0)].count += 1
            }
            let keys = counts.values.sorted { ($0.device, hex($0.key)) < ($1.device, hex($1.key)) }
            if json {
                let object = keys.map { ["device": $0.device, "publicKey": hex($0.key), "checkpoints": $0.count] as [String: Any] }
                print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                return
            }
            if keys.isEmpty { print("No signed checkpoints in \(store.path): its events are unsigned.") }
            for key in keys { print("\(key.device)  \(hex(key.key))  \(key.count) checkpoints") }
        }
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Reads a keys file: `gamelog keys --json` output, or an object of device → hex key.
func readTrustedKeys(_ path: String) throws -> [String: [UInt8]] {
    guard let data = FileManager.default.contents(atPath: path) else {
        throw ValidationError("--trust: cannot read \(path).")
    }
    func bytes(_ text: String) -> [UInt8]? {
        guard text.count == 64 else { return nil }
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
    let object = try? JSONSerialization.jsonObject(with: data)
    var keys: [String: [UInt8]] = [:]
    if let list = object as? [[String: Any]] {
        for entry in list {
            guard let device = entry["device"] as? String, let key = (entry["publicKey"] as? String).flatMap(bytes) else {
                throw ValidationError("--trust: \(path) has an entry without a device and a 64-digit hex publicKey.")
            }
            keys[device] = key
        }
    } else if let map = object as? [String: String] {
        for (device, text) in map {
            guard let key = bytes(text) else { throw ValidationError("--trust: the key of \(device) in \(path) is not 64 hex digits.") }
            keys[device] = key
        }
    } else {
        throw ValidationError("--trust: \(path) is not a keys file (the JSON `gamelog keys --json` prints).")
    }
    return keys
}
